#!/usr/bin/env python3
"""FlashAttention forward of Triton's tutorial 06, timed as the tutorial's own benchmark times it
(triton.testing.do_bench around `attention(q, k, v, causal, sm_scale)`), for the table of
bench/RESULTS.md: run once with Triton compiling the kernel and once under dtsim's Triton frontend
on the GPU, with the same configuration (BLOCK_M, BLOCK_N, num_warps, num_stages) in both.

usage (on a GPU machine, from the repository root; TUTORIAL is a copy of 06-fused-attention.py):
  python3 bench/attention_vs_triton.py TUTORIAL --label triton --configs-out cfg.json > triton.jsonl
  python3 -m dtsim --backend=cuda --sanitize=none bench/attention_vs_triton.py TUTORIAL --label dtsim \\
      --configs-in cfg.json > dtsim.jsonl
  python3 bench/attention_vs_triton.py --table triton.jsonl dtsim.jsonl
or both in one process, alternated (the configurations pinned as above):
  python3 -m dtsim --backend=cuda --sanitize=none bench/attention_vs_triton.py TUTORIAL --label dtsim \\
      --configs-in cfg.json --alternate 6 > both.jsonl
  python3 bench/attention_vs_triton.py --table both.jsonl

The first run autotunes (the tutorial's own configurations) and writes the configuration Triton chose
for each shape; the second runs exactly those. Each line printed is one JSON object: label, shape,
causal, the configuration, ms (median), TFLOP/s (the tutorial's count: causal halves the work), and
the largest difference from a torch reference (softmax(q k^T * scale) v in float32).
"""
import argparse
import importlib.util
import json
import sys

SHAPES = [(1024, 64), (4096, 64), (16384, 64), (1024, 128), (4096, 128), (16384, 128)]
# One batch: the tutorial's TMA forward (at the commit of the copies used here) places batch z of head h
# at row z + h * N_CTX of the flattened tensors, so with more than one batch two program instances
# write the same rows (dtsim's conflict check reports it, on the CPU and on the GPU) and the output
# is wrong under Triton as well.
BATCH, HEADS = 1, 32


def load_tutorial(path):
    spec = importlib.util.spec_from_file_location("fused_attention_tutorial", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def kernel_of(mod, use_tma):
    return mod._attn_fwd_tma if use_tma else mod._attn_fwd


def config_text(cfg):
    return {"kwargs": dict(cfg.kwargs), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages}


def reference_error(torch, q, k, v, causal, scale, o):
    # One (batch, head) pair is enough to catch a wrong kernel and keeps the reference cheap.
    qf, kf, vf = q[0, 0].float(), k[0, 0].float(), v[0, 0].float()
    s = qf @ kf.T * scale
    if causal:
        n = s.shape[0]
        s = s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool, device=s.device), 1), float("-inf"))
    ref = torch.softmax(s, -1) @ vf
    return float((ref - o[0, 0].float()).abs().max())


def run(a):
    import torch
    import triton
    mod = load_tutorial(a.tutorial)
    use_tma = mod.supports_tma() if hasattr(mod, "supports_tma") else False
    kern = kernel_of(mod, use_tma)
    chosen = {}
    all_configs = list(kern.configs)
    pinned = json.load(open(a.configs_in)) if a.configs_in else {}
    only = {tuple(int(x) for x in sh.split("x")) for sh in a.shapes.split(",")} if a.shapes else None
    for n_ctx, d in SHAPES:
        if a.max_ctx and n_ctx > a.max_ctx or only is not None and (n_ctx, d) not in only:
            continue
        for causal in {"both": (False, True), "no": (False,), "yes": (True,)}[a.causal]:
            key = f"{n_ctx}x{d}"
            if key in pinned:
                # the tutorial's own Config object (it carries the pre_hook that sets the descriptors' blocks)
                match = [c for c in all_configs if config_text(c) == pinned[key]]
                if not match:
                    raise SystemExit(f"{key}: the pinned configuration {pinned[key]} is not among the tutorial's")
                kern.configs = match[:1]
                kern.cache.clear()
            torch.manual_seed(0)
            q, k, v = (torch.randn((a.batch, HEADS, n_ctx, d), dtype=torch.float16, device="cuda") for _ in range(3))
            scale = 0.5
            rec = {"label": a.label, "batch": a.batch, "n_ctx": n_ctx, "head_dim": d, "causal": causal, "tma": use_tma}
            try:
                o = mod.attention(q, k, v, causal, scale)
                torch.cuda.synchronize()
                if a.once:  # one launch (under a profiler): nothing timed or compared
                    print(json.dumps(rec), flush=True)
                    continue
                rec["max_err"] = reference_error(torch, q, k, v, causal, scale, o)
                flops = 4.0 * a.batch * HEADS * n_ctx * n_ctx * d * (0.5 if causal else 1.0)
                if a.alternate:
                    alternate(a, mod, kern, torch, triton, q, k, v, causal, scale, rec, flops)
                    del q, k, v
                    continue
                ms = triton.testing.do_bench(lambda: mod.attention(q, k, v, causal, scale))
                best = getattr(kern, "best_config", None) or kern.configs[0]
                chosen.setdefault(key, config_text(best))
                rec.update(ms=ms, tflops=flops / (ms * 1e-3) / 1e12, config=config_text(best))
            except Exception as e:  # a row that fails is reported, the others still run
                lines = str(e).strip().splitlines()
                rec["error"] = f"{type(e).__name__}: {lines[0] if lines else ''}"[:300]
            print(json.dumps(rec), flush=True)
            del q, k, v
    if a.configs_out:
        json.dump(chosen, open(a.configs_out, "w"), indent=1)


def alternate(a, mod, kern, torch, triton, q, k, v, causal, scale, rec, flops):
    """Both in this process (under `python -m dtsim --backend=cuda`): the same launch timed through
    Triton's own compiler and through dtsim, `a.alternate` rounds in the order A B B A ..., each round
    one do_bench (median); prints a record per label with the median over rounds, and the dtsim
    record carries each round's ratio (Triton's time / dtsim's). With `a.graph`, each round times replays
    of a CUDA graph captured from the calls (both paths launch on torch's current stream)."""
    from dtsim.triton_launch import triton_launches
    fn = lambda: mod.attention(q, k, v, causal, scale)  # noqa: E731
    with triton_launches():
        o = fn()
        torch.cuda.synchronize()
        err_triton = reference_error(torch, q, k, v, causal, scale, o)
    best = config_text(getattr(kern, "best_config", None) or kern.configs[0])
    times = {"triton": [], a.label: []}

    def timed():
        if a.graph:  # replays of a CUDA graph of the calls: the host's cost per call left out
            return triton.testing.do_bench_cudagraph(fn, rep=a.rep_ms)
        return triton.testing.do_bench(fn, warmup=a.warmup_ms, rep=a.rep_ms)

    def bench(label):
        if label == "triton":
            with triton_launches():
                return timed()
        return timed()

    for r in range(a.alternate):
        order = ("triton", a.label) if r % 2 == 0 else (a.label, "triton")
        for label in order:
            times[label].append(bench(label))
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    ratios = [t / d for t, d in zip(times["triton"], times[a.label])]
    for label in ("triton", a.label):
        out = dict(rec, label=label, config=best, rounds=times[label])
        out["ms"] = med(times[label])
        out["tflops"] = flops / (out["ms"] * 1e-3) / 1e12
        if label == "triton":
            out["max_err"] = err_triton
        else:
            out["ratio_rounds"] = ratios
        print(json.dumps(out), flush=True)


def table(paths):
    rows = {}
    labels = []
    for p in paths:
        for line in open(p):
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r["label"] not in labels:
                labels.append(r["label"])
            rows.setdefault((r["n_ctx"], r["head_dim"], r["causal"]), {})[r["label"]] = r
    base = labels[0]
    print("| N_CTX | head dim | causal | config | " + " | ".join(f"{l} ms (TFLOP/s)" for l in labels) +
          " | " + " | ".join(f"{l} / {base}" for l in labels[1:]) + " | max err |")
    print("|---" * (4 + len(labels) + len(labels) - 1 + 1) + "|")
    for (n, d, c), by in sorted(rows.items()):
        cfg = next((r.get("config") for r in by.values() if r.get("config")), None)
        cfg_s = (f"{cfg['kwargs'].get('BLOCK_M')}x{cfg['kwargs'].get('BLOCK_N')} w{cfg['num_warps']} s{cfg['num_stages']}" if cfg else "-")
        cells = []
        for l in labels:
            r = by.get(l, {})
            cells.append(f"{r['ms']:.3f} ({r['tflops']:.0f})" if "ms" in r else r.get("error", "-")[:60])
        ratios = []
        for l in labels[1:]:
            r, b = by.get(l, {}), by.get(base, {})
            ratios.append(f"{b['ms'] / r['ms']:.2f}x" if "ms" in r and "ms" in b else "-")
        err = max((r.get("max_err", 0.0) for r in by.values()), default=0.0)
        for l in labels[1:]:
            rr = by.get(l, {}).get("ratio_rounds")
            if rr:  # --alternate: the per-round ratios' range next to the ratio of medians
                i = labels.index(l) - 1
                ratios[i] += f" ({min(rr):.2f}-{max(rr):.2f})"
        print(f"| {n} | {d} | {'yes' if c else 'no'} | {cfg_s} | " + " | ".join(cells) + " | " + " | ".join(ratios) + f" | {err:.2e} |")
    print(f"\nratio: {base}'s time / the other's (above 1.00: faster than {base}); with --alternate, the range of"
          " the rounds' ratios in parentheses.")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tutorial", nargs="?")
    ap.add_argument("--label", default="triton")
    ap.add_argument("--configs-out")
    ap.add_argument("--configs-in")
    ap.add_argument("--batch", type=int, default=BATCH, help="batches (more than 1: see BATCH above)")
    ap.add_argument("--max-ctx", type=int, default=0, help="skip shapes with a longer sequence")
    ap.add_argument("--shapes", help="only these shapes, N_CTXxHEAD_DIM[,...] (e.g. 16384x128)")
    ap.add_argument("--causal", choices=("both", "no", "yes"), default="both")
    ap.add_argument("--once", action="store_true",
                    help="launch each row's kernel once, without timing or the reference (for a profiler: ncu -c 1)")
    ap.add_argument("--alternate", type=int, default=0, metavar="R",
                    help="under `python -m dtsim --backend=cuda`: time Triton's own launch and dtsim's in this process,"
                         " R rounds alternated (A B B A ...), the median of each")
    ap.add_argument("--warmup-ms", type=int, default=25, help="do_bench warm-up per round (--alternate)")
    ap.add_argument("--rep-ms", type=int, default=200, help="do_bench repetition time per round (--alternate)")
    ap.add_argument("--graph", action="store_true",
                    help="with --alternate: time replays of a CUDA graph of the calls (do_bench_cudagraph), so a"
                         " short kernel is not hidden by the host's cost of calling attention()")
    ap.add_argument("--table", nargs="+", help="print the table of these JSON-lines files")
    a = ap.parse_args()
    if a.table:
        table(a.table)
        return 0
    if not a.tutorial:
        ap.error("the tutorial's path is needed")
    run(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
