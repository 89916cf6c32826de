#!/usr/bin/env python3
"""The Python package's per-launch cost for a cached kernel: examples/triton/add.py on 256 elements
(one program instance), launched N times from Python. Prints microseconds per launch: the whole
`kernel[grid](...)` call, its Python part (binding, typing, cache lookup), and the C++ run
(_dtsim.run: binding the arrays, the interpreter). Then the same launch over 64 MiB arrays (the
kernel still adds the first 256 elements): what binding large arrays costs per launch (copies in
and out, or none). Needs build/python on PYTHONPATH.
  python_launch.py [--quick]"""
import importlib.util
import os
import sys
import time

import numpy as np

from dtsim import _dtsim

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def main():
    n_launch = 50 if "--quick" in sys.argv else 3000
    spec = importlib.util.spec_from_file_location("bench_add", os.path.join(ROOT, "examples", "triton", "add.py"))
    from dtsim.dropin import install
    install()
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    k = mod.add_kernel
    x, y = np.ones(256, np.float32), np.ones(256, np.float32)
    out = np.empty_like(x)
    k[(1,)](x, y, out, 256)  # the first launch lowers the kernel
    assert np.array_equal(out, x + y)
    t = time.perf_counter()
    for _ in range(n_launch):
        k[(1,)](x, y, out, 256)
    total = (time.perf_counter() - t) / n_launch
    t = time.perf_counter()
    for _ in range(n_launch):
        c, s, a = k.prepare((x, y, out, 256), {}, (1,))[:3]
    prep = (time.perf_counter() - t) / n_launch
    t = time.perf_counter()
    for _ in range(n_launch):
        _dtsim.run(c, s, a, "all", 1, "sequential", False, [], [])
    run = (time.perf_counter() - t) / n_launch
    print("python launch (add, 256 elements, %d launches): total %.1f us, Python part %.1f us, _dtsim.run %.1f us"
          % (n_launch, total * 1e6, prep * 1e6, run * 1e6))
    big = [np.ones(1 << 24, np.float32) for _ in range(3)]
    k[(1,)](*big, 256)
    n_big = 5 if "--quick" in sys.argv else 50
    t = time.perf_counter()
    for _ in range(n_big):
        k[(1,)](*big, 256)
    total_big = (time.perf_counter() - t) / n_big
    assert big[2][0] == 2 and big[2][256] == 1
    print("python launch (add, 256 of 3 x 64 MiB arrays, %d launches): total %.1f us" % (n_big, total_big * 1e6))


if __name__ == "__main__":
    main()
