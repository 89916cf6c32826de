# expect-error: 11:9: 'acc' changes type from f32[64] to f16[64] inside a runtime if/for/while; a 
# args: --buf x_ptr=f32[64] --buf z_ptr=f32[64] --grid 1
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, z_ptr):
    acc = tl.zeros([64], dtype=tl.float32)
    for i in range(4):
        acc = acc.to(tl.float16)
    tl.store(z_ptr + tl.arange(0, 64), acc)
