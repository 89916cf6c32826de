"""Times examples/triton/matmul_act.py under Triton itself (triton.testing.do_bench, the kernel's own
source) next to torch.matmul, for the configurations `dtsim bench` times the same file in.

    python3 bench/triton/matmul_act_triton.py SIZE[,SIZE...] WARPS[,WARPS...] STAGES[,STAGES...]

Prints one line per configuration: size, warps, stages, Triton's median ms, torch's median ms."""
import importlib.util
import os
import sys

import torch
import triton


def main():
    sizes, warps, stages = ([int(x) for x in a.split(",")] for a in sys.argv[1:4])
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
        for w in warps:
            for s in stages:
                grid = (triton.cdiv(n, 128) * triton.cdiv(n, 128),)

                def run():
                    mod.matmul_kernel[grid](a, b, c, n, n, n, BM=128, BN=128, BK=64, num_warps=w, num_stages=s)
                run()
                err = (c.float() - ref.float()).abs().max().item()
                t = triton.testing.do_bench(run)
                print(f"triton matmul_act.py n={n} warps={w} stages={s}: {t:.4f} ms (torch.matmul {t_torch:.4f} ms, max abs diff {err:.3g})")


if __name__ == "__main__":
    main()
