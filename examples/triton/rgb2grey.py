# Greyscale an RGB image (h x w x 3, row-major) on a 2-D grid of bs0 x bs1 blocks, as in the
# practitioner's guide: grey = 0.2989 r + 0.5870 g + 0.1140 b.
#   dtsim run examples/triton/rgb2grey.py --in x_ptr=img.npy --buf out_ptr=f32[h,w] --arg h=.. --arg w=.. \
#       --grid 'cdiv(h, bs0), cdiv(w, bs1)'
import triton
import triton.language as tl


@triton.jit
def rgb2grey_k(x_ptr, out_ptr, h, w, bs0: tl.constexpr = 16, bs1: tl.constexpr = 32):
    pid_0 = tl.program_id(0)
    pid_1 = tl.program_id(1)

    offs_0 = pid_0 * bs0 + tl.arange(0, bs0)  # rows
    offs_1 = pid_1 * bs1 + tl.arange(0, bs1)  # columns

    offs = w * offs_0[:, None] + offs_1[None, :]  # 2-D offsets into one channel plane
    mask = (offs_0[:, None] < h) & (offs_1[None, :] < w)

    r = tl.load(x_ptr + 3 * offs + 0, mask=mask)
    g = tl.load(x_ptr + 3 * offs + 1, mask=mask)
    b = tl.load(x_ptr + 3 * offs + 2, mask=mask)

    out = 0.2989 * r + 0.5870 * g + 0.1140 * b
    tl.store(out_ptr + offs, out, mask=mask)
