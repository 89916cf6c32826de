# The launch path's keying of backend='cuda' launchers, without a GPU: _dtsim.cuda_launcher replaced by
# a recorder and GPU tensors faked (is_cuda, data_ptr, __cuda_array_interface__). One launcher per
# launch signature and scalar values (other addresses reuse it and are passed at each launch, in
# argument order), a new one for another scalar value (-0.0 is not 0.0) or sanitize mode, none for an
# empty grid.
import numpy as np
import triton
import dtsim
from dtsim import _dtsim
from fake_cuda import FakeCuda, axpy

made, calls = [], []


class FakeLauncher:
    def __init__(self, compiled, scalars, device, san):
        self.scalars, self.device, self.san = dict(scalars), list(device), san
        made.append(self)

    def launch(self, ptrs, stream):
        calls.append((self, list(ptrs), stream))


_dtsim.cuda_launcher = lambda c, s, d, san: FakeLauncher(c, s, d, san)


dtsim.config(backend="cuda", sanitize="none")
n = 1000
for i, a in enumerate([2.0, 2.0, 0.5, 2.0]):
    x, y, o = FakeCuda(n, 4096 * (3 * i + 1)), FakeCuda(n, 4096 * (3 * i + 2)), FakeCuda(n, 4096 * (3 * i + 3))
    axpy[(triton.cdiv(n, 256),)](x, y, o, n, a, BLOCK=256)
axpy[(0,)](x, y, o, n, 2.0, BLOCK=256)  # an empty grid launches nothing
assert len(made) == 2 and len(calls) == 4
assert calls[1][0] is calls[0][0] and calls[3][0] is calls[0][0] and calls[2][0] is made[1]
assert calls[3][1] == [4096 * 10, 4096 * 11, 4096 * 12]
assert [d[0] for d in made[0].device] == ["x_ptr", "y_ptr", "out_ptr"]
dtsim.config(sanitize="bounds")
axpy[(triton.cdiv(n, 256),)](x, y, o, n, 2.0, BLOCK=256)
assert len(made) == 3 and made[2].san == "bounds"
# 0.0 == -0.0 (and they hash alike), but the kernel reads the sign: -0.0 gets a launcher of its own
for a in [0.0, -0.0, 0.0, -0.0]:
    axpy[(triton.cdiv(n, 256),)](x, y, o, n, a, BLOCK=256)
assert [l.scalars["a"] for l in made[3:]] == ["0.0", "-0.0"], [l.scalars for l in made[3:]]
assert [c[0] for c in calls[-4:]] == [made[3], made[4], made[3], made[4]]
print("launchers keyed by signature and scalar values, addresses passed per launch: ok")
