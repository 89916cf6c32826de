# A pid swizzle, as in the practitioner's guide: each instance of a 2-D grid copies one element of
# x into z at the position tl.swizzle2d gives it (groups of group_sz rows, column-major within a
# group), so z shows the order in which a grouped matmul visits its blocks.
#   dtsim run examples/triton/swizzle.py --in x_ptr=x.npy --buf z_ptr=i32[5,4] --grid 5,4
import triton
import triton.language as tl


@triton.jit
def swizzle_k(x_ptr, z_ptr, group_sz: tl.constexpr = 3):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    num_pid_m, num_pid_n = tl.num_programs(0), tl.num_programs(1)

    pid_m_, pid_n_ = tl.swizzle2d(pid_m, pid_n, num_pid_m, num_pid_n, group_sz)

    offs_m = pid_m * 1 + tl.arange(0, 1)
    offs_n = pid_n * 1 + tl.arange(0, 1)
    offs = offs_m[:, None] * num_pid_n + offs_n[None, :]

    offs_sw_m = pid_m_ * 1 + tl.arange(0, 1)
    offs_sw_n = pid_n_ * 1 + tl.arange(0, 1)
    offs_sw = offs_sw_m[:, None] * num_pid_n + offs_sw_n[None, :]

    x = tl.load(x_ptr + offs)
    tl.store(z_ptr + offs_sw, x)
