# Host code written for the GPU asks torch about the device once the target says CUDA (Triton's
# tutorials 06, 08, 09: `is_cuda() and torch.cuda.get_device_capability()[0] >= 9`,
# `torch.cuda.get_device_properties("cuda").multi_processor_count`). Under python -m dtsim on a machine
# without a GPU those queries answer as the H100 the CPU driver presents, and a kernel sized from them
# runs on CPU tensors.
import sys

try:
    import torch
except ImportError:
    print("skipped: no torch")
    sys.exit(77)
import triton
import triton.language as tl

if torch.cuda.is_available():
    print("skipped: a GPU is there (the queries are torch's own)")
    sys.exit(77)

target = triton.runtime.driver.active.get_current_target()
assert target.backend == "cuda" and target.arch == 90, target
assert torch.cuda.get_device_capability() == (9, 0), torch.cuda.get_device_capability()
props = torch.cuda.get_device_properties("cuda")
num_sms = props.multi_processor_count
assert num_sms == triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"] == 132
assert "H100" in torch.cuda.get_device_name()


@triton.jit
def persistent_copy(x_ptr, y_ptr, n, NUM_SMS: tl.constexpr, BLOCK: tl.constexpr):
    for tile in tl.range(tl.program_id(0), tl.cdiv(n, BLOCK), NUM_SMS):
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


x = torch.randn(10000)
y = torch.empty_like(x)
persistent_copy[(min(num_sms, triton.cdiv(x.numel(), 64)),)](x, y, x.numel(), NUM_SMS=num_sms, BLOCK=64)
assert torch.equal(y, x * 2)
print("ok")
