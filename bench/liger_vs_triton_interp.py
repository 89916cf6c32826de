#!/usr/bin/env python3
"""Liger-Kernel's ops launched by Liger's own host code (its autograd Functions, on CPU tensors),
once under `python -m dtsim` (Triton's own package, kernels read through Triton's frontend and run
on dtsim's interpreter: one thread, sanitizer `all`, the default) and once under TRITON_INTERPRET=1,
in one call. Each op's forward + backward is timed best of REPS after a warm-up (which compiles);
the two sides' outputs and gradients are compared.

usage (with triton, torch and liger-kernel installed, dtsim's package on PYTHONPATH):
  python3 bench/liger_vs_triton_interp.py [--reps R] [--only NAME] [--processes P]
e.g. the embedding row of issue 28's speed line, in 4 dtsim processes (the slowest's best counts):
  python3 bench/liger_vs_triton_interp.py --only embedding --reps 30 --processes 4

Prints a table: Triton's interpreter ms, dtsim ms, the ratio, the ratio of the process CPU times
(best of REPS each; on a machine shared with other work it moves less than the wall-clock ratio),
the time inside the kernel launches alone (best of REPS each side: a rep without the torch work
around its launches) and its ratio, the max difference, and the geometric means of the ratios. An
op that Triton's interpreter cannot run is listed with its error and left out of the mean. Exit status 1 when dtsim fails or an output differs beyond the op's tolerance."""
import json
import math
import os
import sys
import time

# name: (description, tolerance on the max abs difference between the two runs)
OPS = {
    "rms_norm": ("rms_norm 256x1024 f32", 1e-4),
    "layer_norm": ("layer_norm 256x1024 f32", 1e-4),
    "swiglu": ("swiglu 256x1024 f32", 1e-5),
    "geglu": ("geglu 256x1024 f32", 1e-4),
    "softmax": ("softmax 256x1024 f32", 1e-5),
    "rope": ("rope b2 h8 s128 d64 f32", 1e-4),
    "kl_div": ("kl_div 128x1024 f32", 1e-5),
    "jsd": ("jsd 128x1024 f32", 1e-5),
    "dyt": ("dyt 256x1024 f32", 1e-4),
    "group_norm": ("group_norm 8x64x256 (atomics) f32", 1e-3),
    "sparsemax": ("sparsemax 256x512 (cumsum) f32", 1e-5),
    "embedding": ("embedding 1000x256, 4096 ids (atomics) f32", 1e-5),
}


def make(name, torch):
    """(callable running forward + backward, tensors whose values the two sides compare)."""
    g = torch.Generator().manual_seed(0)

    def randn(*shape, grad=False):
        return torch.randn(*shape, generator=g).requires_grad_(grad)

    if name == "rms_norm":
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction as F
        x, w = randn(256, 1024, grad=True), randn(1024, grad=True)

        def run():
            x.grad = w.grad = None
            y = F.apply(x, w, 1e-6)
            y.sum().backward()
            return [y, x.grad, w.grad]
    elif name == "layer_norm":
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction as F
        x, w, b = randn(256, 1024, grad=True), randn(1024, grad=True), randn(1024, grad=True)

        def run():
            x.grad = w.grad = b.grad = None
            y = F.apply(x, w, b, 1e-6)
            y.sum().backward()
            return [y, x.grad, w.grad, b.grad]
    elif name in ("swiglu", "geglu"):
        if name == "swiglu":
            from liger_kernel.ops.swiglu import LigerSiLUMulFunction as F
        else:
            from liger_kernel.ops.geglu import LigerGELUMulFunction as F
        a, b = randn(256, 1024, grad=True), randn(256, 1024, grad=True)

        def run():
            a.grad = b.grad = None
            y = F.apply(a, b)
            y.sum().backward()
            return [y, a.grad, b.grad]
    elif name == "softmax":
        from liger_kernel.ops.softmax import LigerSoftmaxFunction as F
        x = randn(256, 1024, grad=True)

        def run():
            x.grad = None
            y = F.apply(x)
            (y * y).sum().backward()
            return [y, x.grad]
    elif name == "rope":
        from liger_kernel.ops.rope import LigerRopeFunction as F
        q, k = randn(2, 8, 128, 64, grad=True), randn(2, 8, 128, 64, grad=True)
        pos = torch.arange(128, dtype=torch.float32)[:, None] / (10000 ** (torch.arange(0, 64, 2) / 64))[None, :]
        emb = torch.cat([pos, pos], -1)
        cos, sin = emb.cos()[None], emb.sin()[None]

        def run():
            q.grad = k.grad = None
            qo, ko = F.apply(q, k, cos, sin)
            (qo.sum() + ko.sum()).backward()
            return [qo, ko, q.grad, k.grad]
    elif name in ("kl_div", "jsd"):
        x = torch.log_softmax(randn(128, 1024), -1).requires_grad_(True)
        t = torch.log_softmax(randn(128, 1024), -1)
        if name == "kl_div":
            from liger_kernel.ops.kl_div import LigerKLDivLossFunction as F

            def call():
                return F.apply(x, t, "batchmean", True, 1e-10)
        else:
            from liger_kernel.ops.jsd import LigerJSDFunction as F

            def call():
                return F.apply(x, t, None, 0.5, -100)

        def run():
            x.grad = None
            y = call()
            y.backward()
            return [y, x.grad]
    elif name == "dyt":
        from liger_kernel.ops.dyt import LigerDyTFunction as F
        x, alpha, gamma, beta = randn(256, 1024, grad=True), randn(1, grad=True), randn(1024, grad=True), randn(1024, grad=True)

        def run():
            y = F.apply(x, alpha, gamma, beta)
            return [y]
    elif name == "group_norm":
        from liger_kernel.ops.group_norm import LigerGroupNormFunction as F
        x, w, b = randn(8, 64, 256, grad=True), randn(64, grad=True), randn(64, grad=True)

        def run():
            x.grad = w.grad = b.grad = None
            y = F.apply(x, w, b, 64, 8, 1e-5)
            y.sum().backward()
            return [y, x.grad, w.grad, b.grad]
    elif name == "sparsemax":
        from liger_kernel.ops.sparsemax import LigerSparsemaxFunction as F
        x = randn(256, 512, grad=True)

        def run():
            x.grad = None
            y = F.apply(x, -1)
            (y * y).sum().backward()
            return [y, x.grad]
    elif name == "embedding":
        from liger_kernel.ops.experimental.embedding import LigerEmbeddingFunction as F
        table = randn(1000, 256, grad=True)
        idx = torch.randint(0, 1000, (4096,), generator=g)

        def run():
            table.grad = None
            y = F.apply(table, idx)
            y.sum().backward()
            return [y, table.grad]
    else:
        raise KeyError(name)
    return run


def time_launches():
    """Wraps the launch method of Triton's kernel objects (`JITFunction.run`, which `python -m dtsim`
    routes to dtsim, and `InterpretedFunction.run` under TRITON_INTERPRET=1) so that the seconds
    spent inside launches add up in the returned one-element list: a rep's kernel time without the
    torch operations around the launches (allocations, `sum`, autograd)."""
    total = [0.0]

    def wrap(cls):
        inner = cls.run

        def run(self, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(self, *args, **kwargs)
            finally:
                total[0] += time.perf_counter() - t0
        cls.run = run

    from triton.runtime import jit
    wrap(jit.JITFunction)
    if os.environ.get("TRITON_INTERPRET") == "1":
        from triton.runtime import interpreter
        wrap(interpreter.InterpretedFunction)
    return total


def side(which, reps, only, out_json):
    import numpy as np
    import torch
    if which == "dtsim":
        import triton
        assert hasattr(triton, "dtsim"), "run through python -m dtsim with Triton installed"
        import dtsim
        dtsim.config(sanitize="all", threads=1)
    else:
        assert os.environ.get("TRITON_INTERPRET") == "1"
    torch.set_num_threads(1)
    launch_s = time_launches()
    outdir = os.path.dirname(out_json)
    result = {}
    for name in OPS:
        if only and name not in only:
            continue
        try:
            run = make(name, torch)
            run()  # warm-up: compiles
            best = best_cpu = best_launch = math.inf
            for _ in range(reps):
                launch_s[0] = 0.0
                t0, c0 = time.perf_counter(), time.process_time()
                outs = run()
                best = min(best, time.perf_counter() - t0)
                best_cpu = min(best_cpu, time.process_time() - c0)
                best_launch = min(best_launch, launch_s[0])
        except Exception as e:  # noqa: BLE001 (reported per op)
            msg = (str(e).strip().splitlines() or [type(e).__name__])[-1]
            result[name] = {"error": msg[:200]}
            print("%s %-12s failed: %s" % (which, name, msg), file=sys.stderr, flush=True)
            continue
        path = os.path.join(outdir, "%s_%s.npz" % (which, name))
        np.savez(path, *[o.detach().float().numpy() for o in outs if o is not None])
        result[name] = {"ms": best * 1e3, "cpu_ms": best_cpu * 1e3, "launch_ms": best_launch * 1e3, "out": path}
        print("%s %-12s %.2f ms" % (which, name, best * 1e3), file=sys.stderr, flush=True)
    with open(out_json, "w") as f:
        json.dump(result, f)


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from python_vs_triton_interp import run_sides
    got = run_sides(__doc__, OPS, side, "liger_vs_triton_")
    if got is None:
        return 0
    if got[1] is None:
        return 1
    runs = got[1]
    import numpy as np
    bad, rows, ratios, cpu_ratios, launch_ratios = 0, [], [], [], []
    for name, (desc, tol) in OPS.items():
        if name not in runs["dtsim"]:
            continue
        d, t = runs["dtsim"][name], runs["triton"].get(name, {"error": "not run"})
        if "error" in d:
            rows.append("| %s | | dtsim failed: %s | | | | | | |" % (desc, d["error"]))
            bad += 1
            continue
        if "error" in t:
            rows.append("| %s | Triton's interpreter failed: %s | %.2f | | | | | | |" % (desc, t["error"], d["ms"]))
            continue
        a_out, b_out = np.load(d["out"]), np.load(t["out"])
        err = max((float(np.max(np.abs(a_out[k].astype(np.float64) - b_out[k].astype(np.float64)))) if a_out[k].size else 0.0)
                  for k in a_out.files)
        same = err <= tol * max(1.0, max(float(np.max(np.abs(b_out[k]))) for k in b_out.files))
        bad += not same
        ratios.append(t["ms"] / d["ms"])
        cpu_ratios.append(t["cpu_ms"] / d["cpu_ms"])
        dms = "%.2f" % d["ms"]
        if "ms_range" in d:  # several processes: the slowest's best, then the fastest's
            dms += " (fastest process %.2f)" % d["ms_range"][0]
        launch_ratios.append(t["launch_ms"] / d["launch_ms"])
        lms = "%.2f / %.2f" % (t["launch_ms"], d["launch_ms"])
        if "launch_ms_range" in d:
            lms += " (fastest process %.2f)" % d["launch_ms_range"][0]
        rows.append("| %s | %.1f | %s | %.0fx | %.0fx | %s | %.0fx | %.3g | %s |" % (
            desc, t["ms"], dms, t["ms"] / d["ms"], cpu_ratios[-1], lms, launch_ratios[-1], err, "same" if same else "DIFFER"))
    print("| Liger op (forward + backward) | Triton interpreter ms | dtsim ms (sanitizer all, 1 thread) | x | x (CPU time) "
          "| launches only: Triton / dtsim ms | x (launches) | max abs diff | outputs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(r)
    if ratios:
        gm = lambda rs: math.exp(sum(map(math.log, rs)) / len(rs))  # noqa: E731
        print("| geometric mean | | | **%.0fx** | %.0fx | | %.0fx | | |" % (gm(ratios), gm(cpu_ratios), gm(launch_ratios)))
    return 1 if bad or not ratios else 0


if __name__ == "__main__":
    sys.exit(main())
