# Host code for repl_session.py: launches examples/triton/copy_break.py, whose kernel calls the guide's
# breakpoint_if('=1', pid_0=pid): the REPL stops there in pid 1 only.
import importlib.util
import os

import numpy as np
import triton

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "triton", "copy_break.py")
spec = importlib.util.spec_from_file_location("copy_break", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
x = np.arange(12, dtype=np.float32)
z = np.zeros_like(x)
mod.copy_k[(triton.cdiv(12, 4),)](x, z, 12)
assert np.array_equal(x, z)
print("copy ok")
