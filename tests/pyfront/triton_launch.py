#!/usr/bin/env python3
"""Launches one examples/triton kernel on Triton's own interpreter (TRITON_INTERPRET=1) with torch
tensors, for run_kernel.py --triton-interpret. Reads a JSON spec (file, kernel, tensors, args, grid,
outputs) and writes the outputs as JSON lists.
usage: triton_launch.py SPEC.json OUT.json"""
import importlib.util
import inspect
import json
import os
import sys
import types

os.environ["TRITON_INTERPRET"] = "1"
import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def numpy_compat():
    """Triton's interpreter (3.6 at least) passes scalar arguments as one-element numpy arrays and
    converts them with int(array) where a kernel uses one as an index (range bounds, grid values);
    numpy 2.5 refuses int() of a 1-D array ("only 0-dimensional arrays can be converted to Python
    scalars"). After the interpreter installs its tensor methods, __index__ and __int__ take the
    array's single element instead, which is what older numpy did. Nothing else changes."""
    try:
        import triton.runtime.interpreter as ti
    except ImportError:
        return
    patch = getattr(ti, "_patch_lang", None)
    if patch is None or getattr(patch, "_dtsim_compat", False):
        return

    def scalar(self):
        return int(np.asarray(self.handle.data).reshape(-1)[0])

    def patched(*args, **kwargs):
        scope = patch(*args, **kwargs)
        tl.core.tensor.__index__ = scalar
        tl.core.tensor.__int__ = scalar
        return scope

    patched._dtsim_compat = True
    ti._patch_lang = patched


def py_value(v):
    """A grid callable's meta value as Python: the interpreter hands scalars over as its tensors."""
    h = getattr(v, "handle", None)
    data = getattr(h, "data", None)
    if data is not None and np.asarray(data).size == 1:
        return np.asarray(data).reshape(-1)[0].item()
    return v


def as_int(p):
    """A pid as the kernel passes it: an int, a one-element list, or an interpreter tensor."""
    for get in (lambda: int(p), lambda: int(p[0]), lambda: int(p.handle.data.item()), lambda: int(p.handle.data.flatten()[0])):
        try:
            return get()
        except Exception:
            pass
    raise TypeError("cannot read a pid from %r" % (p,))


def pid_conds_hold(conds, pids):
    """The guide's condition form: '=0,>1' holds when pid_0 == 0 and pid_1 > 1."""
    for cond, pid in zip(conds.replace(" ", "").split(","), pids):
        if not cond:
            continue
        op = next(o for o in ("<=", ">=", "!=", "<", ">", "=") if cond.startswith(o))
        v, want = as_int(pid), int(cond[len(op):])
        if not {"<=": v <= want, ">=": v >= want, "!=": v != want, "<": v < want, ">": v > want, "=": v == want}[op]:
            return False
    return True


def install_triton_util():
    util = types.ModuleType("triton_util")
    util.print_if = lambda txt, conds, pid_0=[0], pid_1=[0], pid_2=[0]: pid_conds_hold(conds, (pid_0, pid_1, pid_2)) and print(txt)
    util.breakpoint_if = lambda conds, pid_0=[0], pid_1=[0], pid_2=[0]: None
    sys.modules["triton_util"] = util


def value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def main():
    spec = json.load(open(sys.argv[1]))
    numpy_compat()
    install_triton_util()
    sys.path.insert(0, os.path.dirname(spec["file"]))
    m = importlib.util.spec_from_file_location("kernel_under_test", spec["file"])
    mod = importlib.util.module_from_spec(m)
    m.loader.exec_module(mod)
    kernel = getattr(mod, spec["kernel"])
    dt = {"f32": torch.float32, "f16": torch.float16, "i32": torch.int32}
    args = {name: torch.tensor(values, dtype=dt[dtype]).reshape(shape) for name, (shape, dtype, values) in spec["tensors"].items()}
    args.update({k: value(v) for k, v in spec["args"].items()})
    env = {n: p.default for n, p in inspect.signature(kernel.fn).parameters.items() if p.default is not inspect.Parameter.empty}
    env.update(args)
    # Plain integer division: the interpreter evaluates the grid callable while triton.language is
    # patched, where triton.cdiv returns an interpreter tensor that `range(grid[0])` cannot take.
    env["cdiv"] = lambda a, b: -(-int(a) // int(b))
    # A callable of the meta-parameters, as Triton scripts pass it: autotuned kernels get the
    # config's constexprs (block sizes) there.
    grid = lambda meta: tuple(int(eval(g, {}, {**env, **{k: py_value(v) for k, v in meta.items()}})) for g in spec["grid"])
    kernel[grid](**args)
    json.dump({name: args[name].float().flatten().tolist() for name in spec["outputs"]}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
