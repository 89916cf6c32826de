# The guide's second copy kernel (offs = pid * n + ...: a planted bug), defined in this script with
# the guide's host code: under `python -m dtsim` the out-of-bounds load raises dtsim.KernelError
# naming this file's line and the first faulting pid. Exits 0 when it does.
import os
import sys

os.environ['TRITON_INTERPRET'] = '1'

import numpy as np
import triton
import triton.language as tl
import dtsim


def test_pid_conds(conds, pid_0=[0], pid_1=[0], pid_2=[0]):
    pids = pid_0[0], pid_1[0], pid_2[0]
    for cond, pid in zip(conds.replace(' ', '').split(','), pids):
        if cond == '':
            continue
        op, threshold = cond[0], int(cond[1:])
        op = '==' if op == '=' else op
        if not eval(f'{pid} {op} {threshold}'):
            return False
    return True


assert test_pid_conds('')
assert test_pid_conds('>0', [1], [1])


def cdiv(a, b):
    return (a + b - 1) // b


@triton.jit
def copy_k(x_ptr, z_ptr, n, bs: tl.constexpr):
    pid = tl.program_id(0)
    mask = pid * bs + tl.arange(0, bs) < n
    offs = pid * n + tl.arange(0, bs)
    x = tl.load(x_ptr + offs, mask)
    tl.store(z_ptr + offs, x, mask)


def copy(x, bs, kernel_fn):
    z = np.zeros_like(x)
    n = x.size
    kernel_fn[(cdiv(n, bs),)](x, z, n, bs)
    return z


if __name__ == '__main__':
    x = np.arange(12, dtype=np.float32)
    try:
        copy(x, 4, copy_k)
    except dtsim.KernelError as e:
        print(e)
        load_line = next(i for i, l in enumerate(open(__file__), 1) if "x = tl.load(x_ptr + offs, mask)" in l)
        assert e.kind == "out-of-bounds", e.kind
        assert e.line == load_line, (e.line, load_line)
        assert os.path.samefile(e.file, __file__), e.file
        assert e.pid == (1, 0, 0), e.pid
        assert e.buffer == "x_ptr", e.buffer
        assert "planted_bug.py:%d" % load_line in str(e)
        print("KernelError at line %d, pid %s" % (e.line, e.pid))
        sys.exit(0)
    sys.exit("the planted bug was not reported")
