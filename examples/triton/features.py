# A tour of the supported subset and of the places where Triton's semantics differ from plain
# Python (docs/triton.md). Each result goes to one slot of `out` (f32[64]); the test compares every
# slot with the value Triton gives.
#   dtsim run examples/triton/features.py --buf x_ptr=f32[16] --buf out=f32[64] --arg big=5000000000 \
#       --arg neg=-7 --grid 1
import triton
import triton.language as tl

SEVEN = tl.constexpr(7)
MODE = tl.constexpr("fast")


@triton.jit
def pair(a, b):
    """Returns two values: sum and product."""
    return a + b, a * b


@triton.jit
def pick(x, HOW: tl.constexpr):
    if HOW == "neg":
        return -x
    elif HOW == "twice":
        return 2 * x
    else:
        return x


@triton.jit
def features_k(x_ptr, out, big, neg, C: tl.constexpr = -7):
    o = tl.arange(0, 16)
    x = tl.load(x_ptr + o)                     # x = 0, 1, ..., 15 (the test's input)
    # integer // and %: Python (floor) on constexprs, C (toward zero) on runtime values
    tl.store(out + 0, C // 2)                  # -4
    tl.store(out + 1, C % 2)                   # 1
    tl.store(out + 2, neg // 2)                # -3
    tl.store(out + 3, neg % 2)                 # -1
    # / on integers gives a float
    tl.store(out + 4, neg / 2)                 # -3.5
    # a Python int beyond 32 bits is i64; the scalar argument big (5e9) is i64
    tl.store(out + 5, (big - 4999999999).to(tl.float32))   # 1
    tl.store(out + 6, ((big + 2**33) // 2**33).to(tl.float32))  # 1 (5e9+2^33)//2^33 = 1
    # constexpr folding, static_range unrolling, helpers returning tuples, constexpr string branches
    acc = 0
    for i in tl.static_range(4):
        acc += i                               # 6, at compile time
    s, p = pair(3, SEVEN)
    tl.store(out + 7, acc + s + p)             # 6 + 10 + 21 = 37
    tl.store(out + 8, pick(neg, "neg"))        # 7
    tl.store(out + 9, pick(neg, "twice"))      # -14
    if MODE == "fast":
        tl.store(out + 10, 1.0)
    else:
        tl.store(out + 10, 2.0)
    # runtime if / else: a variable first bound in both branches lives on
    if neg < 0:
        sign = -1
    else:
        sign = 1
    tl.store(out + 11, sign)                   # -1
    # runtime loop with a loop-carried value (a Python int becomes an i32 variable)
    total = 0
    for k in range(0, neg + 12):               # 5 iterations
        total += k
    tl.store(out + 12, total)                  # 10
    # and / or / not on runtime scalars
    tl.store(out + 13, (neg < 0 and big > 0).to(tl.float32))   # 1
    tl.store(out + 14, (not (neg < 0) or big < 0).to(tl.float32))  # 0
    # reductions
    tl.store(out + 15, tl.sum(x, axis=0))      # 120
    tl.store(out + 16, tl.max(x))              # 15
    tl.store(out + 17, tl.argmax(x, axis=0))   # 15
    tl.store(out + 18, tl.argmin(x, 0))        # 0
    m, idx = tl.min(x, axis=0, return_indices=True)
    tl.store(out + 19, m + idx)                # 0
    x2 = tl.reshape(x, (4, 4))
    rows = tl.sum(x2, axis=1, keep_dims=True)  # [4, 1]: 6, 22, 38, 54
    tl.store(out + 20 + tl.arange(0, 4)[:, None], rows)
    # shapes
    t = tl.trans(x2)                           # t[i, j] = x2[j, i]
    tl.store(out + 24, tl.sum(tl.sum(t * (tl.arange(0, 4)[:, None] == 1), axis=0), axis=0))  # row 1 of t: 1+5+9+13 = 28
    pm = tl.permute(x2, (1, 0))
    tl.store(out + 25, tl.sum(tl.sum(pm - t, axis=1), axis=0))  # 0
    b = tl.broadcast_to(tl.expand_dims(tl.arange(0, 4), 0), (4, 4))
    tl.store(out + 26, tl.sum(tl.sum(b, axis=1), axis=0).to(tl.float32))  # 24
    # elementwise math
    tl.store(out + 27, tl.clamp(x, 2.0, 5.0).sum(axis=0))          # 2*3 + 3+4 + 5*11 = 68
    tl.store(out + 28, tl.fma(x, x, 1.0).sum(axis=0))              # 1240 + 16 = 1256
    tl.store(out + 29, tl.sum(tl.sigmoid(x - x), axis=0) / 16)      # 0.5
    f3 = neg * 0 + 3.0                                             # a runtime f32 scalar 3.0
    tl.store(out + 30, tl.exp2(f3) + tl.log2(f3 + 5.0) + tl.rsqrt(f3 + 1.0) + tl.math.sqrt(f3 * 3.0))  # 8+3+0.5+3
    tl.store(out + 31, tl.abs(neg) + tl.minimum(neg, 3) + tl.maximum(neg, 3))  # 7 - 7 + 3 = 3
    tl.store(out + 32, tl.cdiv(neg + 17, 4))                       # cdiv(10, 4) = 3
    z = tl.zeros_like(x) + tl.full((16,), 2, tl.int32)
    tl.store(out + 33, tl.sum(z, axis=0).to(tl.float32))           # 32
    tl.store(out + 34, tl.where(x > 7, 1.0, 0.0).sum(axis=0))      # 8
    tl.store(out + 35, tl.num_programs(0))                         # 1
    w = tl.multiple_of(o, 16)
    tl.static_assert(SEVEN == 7, "module constant")
    tl.device_assert(w >= 0, "offsets are non-negative")
    tl.store(out + 36, (x[None, :] * x[:, None]).sum(axis=1).sum(axis=0))  # 120^2 = 14400
    h = x.to(tl.float16)
    tl.store(out + 37, h.dtype.primitive_bitwidth)                 # 16
    tl.store(out + 38, 7 // 2 + 7 % -3)                            # 3 + (-2) = 1 (Python)
    tl.store(out + 39, tl.where(neg > 0, 5, 6))                    # 6
    # a while loop on compile-time values is unrolled; a conditional expression on a runtime value
    # is a tl.where; a Python assert on runtime values is a device assert
    j = 1
    while j < 100:
        j *= 3
    tl.store(out + 40, j)                                          # 243
    tl.store(out + 41, 2.5 if neg < 0 else 4.5)                    # 2.5
    assert neg < 0, "neg is negative"
