"""Times examples/triton/matmul_act.py under Triton itself (triton.testing.do_bench, the kernel's own
source) next to torch.matmul, for the configurations `dtsim bench` times the same file in.

    python3 bench/triton/matmul_act_triton.py SIZE[,SIZE...] WARPS[,WARPS...] STAGES[,STAGES...] [BMxBN[,BMxBN...]]

(tiles default to 128x128; BK is 64). Prints one line per configuration: size, tile, warps, stages,
Triton's time and torch.matmul's (do_bench: mean ms)."""
import importlib.util
import os
import sys

import torch
import triton


def main():
    sizes, warps, stages = ([int(x) for x in a.split(",")] for a in sys.argv[1:4])
    tiles = [tuple(int(v) for v in t.split("x")) for t in (sys.argv[4] if len(sys.argv) > 4 else "128x128").split(",")]
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "triton", "matmul_act.py")
    spec = importlib.util.spec_from_file_location("matmul_act", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for n in sizes:
        a = torch.randn(n, n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        c = torch.empty(n, n, device="cuda", dtype=torch.float16)
        ref = a @ b
        t_torch = triton.testing.do_bench(lambda: a @ b)
        for bm, bn in tiles:
            for w in warps:
                for s in stages:
                    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)

                    def run():
                        mod.matmul_kernel[grid](a, b, c, n, n, n, BM=bm, BN=bn, BK=64, num_warps=w, num_stages=s)
                    try:
                        run()
                    except Exception as e:  # e.g. out of shared memory or registers for this configuration
                        print(f"triton matmul_act.py n={n} tile={bm}x{bn} warps={w} stages={s}: failed: {type(e).__name__}")
                        continue
                    err = (c.float() - ref.float()).abs().max().item()
                    t = triton.testing.do_bench(run)
                    print(f"triton matmul_act.py n={n} tile={bm}x{bn} warps={w} stages={s}: {t:.4f} ms "
                          f"(torch.matmul {t_torch:.4f} ms, max abs diff {err:.3g})")


if __name__ == "__main__":
    main()
