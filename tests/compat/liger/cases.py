"""Drivers for Liger-Kernel's ops: each case calls one op through its public entry (the autograd Function
classes of liger_kernel.ops) on small CPU tensors, forward and (where cheap) backward, and compares the
result with a plain torch reference written here.

One case per process, so that one op's failure cannot hide another's:

    python -m dtsim tests/compat/liger/cases.py CASE      # run one case under dtsim
    python tests/compat/liger/cases.py --list             # the case names

A case prints CASE-PASS on success, exits 3 with one `MISMATCH: ...` line when a result differs from the
reference, and fails with the op's own exception otherwise (tests/compat/run_liger.py tells these apart).
"""
import math
import sys

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# Kernels whose tl.dot takes f32 operands: Triton's default input precision on the GPU target is TF32
# (10-bit mantissas, a relative error near 1e-3 per product), and dtsim computes such dots as TF32 too.
TF32_TOL = 5e-3


class Mismatch(Exception):
    pass


def close(what, got, ref, atol=1e-5, rtol=1e-5):
    import torch
    if got is None or ref is None:
        raise Mismatch(f"{what}: got {type(got).__name__}, expected {type(ref).__name__}")
    got = torch.as_tensor(got)
    ref = torch.as_tensor(ref)
    if tuple(got.shape) != tuple(ref.shape):
        raise Mismatch(f"{what}: shape {tuple(got.shape)}, expected {tuple(ref.shape)}")
    g = got.detach().double()
    r = ref.detach().double()
    if not torch.isfinite(g).all() and torch.isfinite(r).all():
        raise Mismatch(f"{what}: non-finite values where the reference is finite")
    if not torch.allclose(g, r, atol=atol, rtol=rtol, equal_nan=True):
        err = (g - r).abs().max().item()
        raise Mismatch(f"{what}: max abs error {err:.3g} (atol {atol:g}, rtol {rtol:g})")


def ya_device(outs):
    """The device of the first tensor output (the upstream gradient is drawn there)."""
    import torch
    for o in outs:
        if isinstance(o, torch.Tensor):
            return o.device
    return torch.device("cpu")


def run_pair(liger_fn, ref_fn, inputs, needs_grad, atol=1e-5, rtol=1e-5, backward=True, out_index=None):
    """Calls liger_fn and ref_fn on separate copies of `inputs`; compares the outputs and, with `backward`,
    the gradients of the inputs whose index is in `needs_grad` for the same random upstream gradient."""
    import torch
    a = [x.detach().clone().requires_grad_(i in needs_grad) if isinstance(x, torch.Tensor) else x
         for i, x in enumerate(inputs)]
    b = [x.detach().clone().requires_grad_(i in needs_grad) if isinstance(x, torch.Tensor) else x
         for i, x in enumerate(inputs)]
    ya = liger_fn(*a)
    yb = ref_fn(*b)
    if out_index is not None:
        ya, yb = ya[out_index], yb[out_index]
    outs_a = ya if isinstance(ya, (tuple, list)) else (ya,)
    outs_b = yb if isinstance(yb, (tuple, list)) else (yb,)
    for k, (oa, ob) in enumerate(zip(outs_a, outs_b)):
        close(f"output {k}", oa, ob, atol, rtol)
    if not backward:
        return
    gen = torch.Generator(device=ya_device(outs_a)).manual_seed(1)
    loss_a = 0
    loss_b = 0
    for oa, ob in zip(outs_a, outs_b):
        if not oa.requires_grad:
            continue
        g = torch.randn(ob.shape, generator=gen, dtype=torch.float32).to(ob.dtype)
        loss_a = loss_a + (oa * g).sum()
        loss_b = loss_b + (ob * g).sum()
    loss_a.backward()
    loss_b.backward()
    for i in sorted(needs_grad):
        close(f"grad of input {i}", a[i].grad, b[i].grad, atol, rtol)


def randn(*shape, dtype=None, scale=1.0):
    import torch
    return torch.randn(*shape, dtype=dtype or torch.float32) * scale


# ---- torch references ----

def ref_rms_norm(x, w, eps, offset=0.0):
    import torch
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (y * (offset + w.float())).to(x.dtype)


def rotate_half(x):
    import torch
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def ref_jsd(log_q, log_p, beta):
    """Generalized JSD of Liger's convention: log_q is the student's (input), log_p the teacher's (target);
    beta weighs the teacher; per row summed over the vocabulary, averaged over the rows."""
    import torch
    q = log_q.exp()
    p = log_p.exp()
    m = beta * p + (1 - beta) * q
    log_m = m.log()
    per = beta * p * (log_p - log_m) + (1 - beta) * q * (log_q - log_m)
    return per.sum() / log_q.shape[0]


def ref_sparsemax(z, dim=-1):
    import torch
    z = z.transpose(dim, -1)
    zs, _ = torch.sort(z, dim=-1, descending=True)
    k = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    cs = zs.cumsum(-1)
    support = (1 + k * zs) > cs
    kz = support.sum(-1, keepdim=True)
    tau = (cs.gather(-1, kz - 1) - 1) / kz.to(z.dtype)
    return torch.clamp(z - tau, min=0).transpose(dim, -1)


def ref_poly_norm(x, w, b, eps):
    import torch

    def norm(u):
        return u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + eps)
    return w[0] * norm(x ** 3) + w[1] * norm(x ** 2) + w[2] * norm(x) + b


# ---- normalization ----

@case
def rms_norm():
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    x, w = randn(6, 96), randn(96)
    run_pair(lambda x, w: LigerRMSNormFunction.apply(x, w, 1e-6),
             lambda x, w: ref_rms_norm(x, w, 1e-6), [x, w], {0, 1}, atol=1e-4, rtol=1e-4)


@case
def rms_norm_gemma_offset():
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    x, w = randn(2, 5, 80), randn(80, scale=0.1)
    run_pair(lambda x, w: LigerRMSNormFunction.apply(x, w, 1e-6, 1.0, "gemma"),
             lambda x, w: ref_rms_norm(x, w, 1e-6, offset=1.0), [x, w], {0, 1}, atol=1e-4, rtol=1e-4)


@case
def fused_add_rms_norm():
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
    x, r, w = randn(7, 64), randn(7, 64), randn(64)

    def ref(x, r, w):
        s = x + r
        return ref_rms_norm(s, w, 1e-6), s
    run_pair(lambda x, r, w: LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6),
             ref, [x, r, w], {0, 1, 2}, atol=1e-4, rtol=1e-4)


@case
def modulated_rms_norm():
    from liger_kernel.ops.modulated_rms_norm import LigerModulatedRMSNormFunction
    x, w, scale, shift = randn(2, 3, 64), randn(64), randn(2, 64, scale=0.5), randn(2, 64)

    def ref(x, w, scale, shift):
        return (1 + scale[:, None, :]) * ref_rms_norm(x, w, 1e-6) + shift[:, None, :]
    run_pair(lambda x, w, scale, shift: LigerModulatedRMSNormFunction.apply(x, w, scale, shift, 1e-6, 0.0, "llama",
                                                                            False),
             ref, [x, w, scale, shift], {0, 1, 2, 3}, atol=1e-4, rtol=1e-4)


@case
def layer_norm():
    import torch
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction
    x, w, b = randn(9, 100), randn(100), randn(100)
    run_pair(lambda x, w, b: LigerLayerNormFunction.apply(x, w, b, 1e-5),
             lambda x, w, b: torch.nn.functional.layer_norm(x, (100,), w, b, 1e-5),
             [x, w, b], {0, 1, 2}, atol=1e-4, rtol=1e-4)


@case
def group_norm():
    import torch
    from liger_kernel.ops.group_norm import LigerGroupNormFunction
    x, w, b = randn(3, 8, 20), randn(8), randn(8)
    run_pair(lambda x, w, b: LigerGroupNormFunction.apply(x, w, b, 8, 4, 1e-5),
             lambda x, w, b: torch.nn.functional.group_norm(x, 4, w, b, 1e-5),
             [x, w, b], {0, 1, 2}, atol=1e-4, rtol=1e-4)


@case
def poly_norm():
    from liger_kernel.ops.poly_norm import LigerPolyNormFunction
    x, w, b = randn(5, 48, scale=0.7), randn(3, scale=0.5), randn(())  # Liger's PolyNorm bias is 0-d
    run_pair(lambda x, w, b: LigerPolyNormFunction.apply(x, w, b, 1e-6, False),
             lambda x, w, b: ref_poly_norm(x, w, b, 1e-6), [x, w, b], {0, 1, 2}, atol=1e-4, rtol=1e-4)


@case
def dyt():
    # forward only: Liger's backward sizes its partial sums by the device's SM count, which its host code
    # asks only of cuda/xpu/npu devices (infer_device() is "cpu" on a machine without a GPU)
    import torch
    from liger_kernel.ops.dyt import LigerDyTFunction
    x, alpha, gamma, beta = randn(6, 40), randn(1, scale=0.5), randn(40), randn(40)
    run_pair(lambda x, a, g, b: LigerDyTFunction.apply(x, a, g, b),
             lambda x, a, g, b: g * torch.tanh(a * x) + b,
             [x, alpha, gamma, beta], set(), atol=1e-5, rtol=1e-5, backward=False)


# ---- activations ----

@case
def swiglu():
    import torch
    from liger_kernel.ops.swiglu import LigerSiLUMulFunction
    a, b = randn(4, 70), randn(4, 70)
    run_pair(lambda a, b: LigerSiLUMulFunction.apply(a, b),
             lambda a, b: torch.nn.functional.silu(a) * b, [a, b], {0, 1}, atol=1e-5, rtol=1e-5)


@case
def swiglu_fused_gate_up():
    import torch
    from liger_kernel.ops.swiglu import LigerFusedGateUpSiLUMulFunction
    y = randn(5, 2 * 48)

    def ref(y):
        g, u = y.chunk(2, dim=-1)
        return torch.nn.functional.silu(g) * u
    run_pair(lambda y: LigerFusedGateUpSiLUMulFunction.apply(y, False), ref, [y], {0}, atol=1e-5, rtol=1e-5)


@case
def geglu():
    import torch
    from liger_kernel.ops.geglu import LigerGELUMulFunction
    a, b = randn(4, 70), randn(4, 70)
    run_pair(lambda a, b: LigerGELUMulFunction.apply(a, b),
             lambda a, b: torch.nn.functional.gelu(a, approximate="tanh") * b, [a, b], {0, 1}, atol=1e-5, rtol=1e-5)


@case
def relu_squared():
    import torch
    from liger_kernel.ops.relu_squared import LigerReLUSquaredFunction
    x = randn(6, 33)
    run_pair(lambda x: LigerReLUSquaredFunction.apply(x), lambda x: torch.relu(x) ** 2, [x], {0})


@case
def softmax():
    import torch
    from liger_kernel.ops.softmax import LigerSoftmaxFunction
    x = randn(7, 130, scale=3.0)
    run_pair(lambda x: LigerSoftmaxFunction.apply(x), lambda x: torch.softmax(x, -1), [x], {0}, atol=1e-6, rtol=1e-5)


@case
def sparsemax():
    from liger_kernel.ops.sparsemax import LigerSparsemaxFunction
    x = randn(5, 37, scale=2.0)
    run_pair(lambda x: LigerSparsemaxFunction.apply(x, -1), lambda x: ref_sparsemax(x, -1), [x], {0},
             atol=1e-5, rtol=1e-5)


# ---- positional embeddings ----

@case
def rope():
    from liger_kernel.ops.rope import LigerRopeFunction
    bsz, nh, nkv, seq, hd = 2, 4, 2, 6, 16
    q, k = randn(bsz, nh, seq, hd), randn(bsz, nkv, seq, hd)
    ang = randn(1, seq, hd // 2)
    cos = ang.cos().repeat(1, 1, 2)
    sin = ang.sin().repeat(1, 1, 2)

    def ref(q, k, cos, sin):
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)
        return q * c + rotate_half(q) * s, k * c + rotate_half(k) * s
    run_pair(lambda q, k, cos, sin: LigerRopeFunction.apply(q, k, cos, sin),
             ref, [q, k, cos, sin], {0, 1}, atol=1e-5, rtol=1e-5)


@case
def qwen2vl_mrope():
    import torch
    from liger_kernel.ops.qwen2vl_mrope import LigerQwen2VLMRopeFunction
    bsz, nh, nkv, seq, hd = 1, 4, 2, 5, 16
    section = [2, 3, 3]
    q, k = randn(bsz, nh, seq, hd), randn(bsz, nkv, seq, hd)
    ang = randn(3, bsz, seq, hd // 2)
    cos = ang.cos().repeat(1, 1, 1, 2)
    sin = ang.sin().repeat(1, 1, 1, 2)

    def ref(q, k, cos, sin):
        sec = section * 2
        c = torch.cat([m[i % 3] for i, m in enumerate(cos.split(sec, dim=-1))], dim=-1).unsqueeze(1)
        s = torch.cat([m[i % 3] for i, m in enumerate(sin.split(sec, dim=-1))], dim=-1).unsqueeze(1)
        return q * c + rotate_half(q) * s, k * c + rotate_half(k) * s
    run_pair(lambda q, k, cos, sin: LigerQwen2VLMRopeFunction.apply(q, k, cos, sin, section, 1),
             ref, [q, k, cos, sin], {0, 1}, atol=1e-5, rtol=1e-5)


@case
def llama4_rope():
    import torch
    from liger_kernel.ops.llama4_rope import LigerLlama4RopeFunction
    bsz, seq, nh, nkv, hd = 2, 5, 4, 2, 16
    q, k = randn(bsz, seq, nh, hd), randn(bsz, seq, nkv, hd)
    freqs = torch.polar(torch.ones(seq, hd // 2), randn(seq, hd // 2))

    def ref(q, k):
        def rot(x):
            xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(xc * freqs[None, :, None, :]).flatten(3).to(x.dtype)
        return rot(q), rot(k)
    run_pair(lambda q, k: LigerLlama4RopeFunction.apply(q, k, freqs), ref, [q, k], {0, 1}, atol=1e-5, rtol=1e-5)


# ---- losses ----

@case
def cross_entropy():
    import torch
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    logits = randn(8, 300, scale=2.0)
    target = torch.randint(0, 300, (8,))
    target[3] = -100
    run_pair(lambda x: LigerCrossEntropyFunction.apply(x, target, None)[0],
             lambda x: torch.nn.functional.cross_entropy(x, target, ignore_index=-100),
             [logits], {0}, atol=1e-5, rtol=1e-5)


@case
def cross_entropy_label_smoothing_sum():
    import torch
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    logits = randn(6, 129, scale=2.0)
    target = torch.randint(0, 129, (6,))
    run_pair(lambda x: LigerCrossEntropyFunction.apply(x, target, None, -100, 0.0, 0.1, "sum")[0],
             lambda x: torch.nn.functional.cross_entropy(x, target, reduction="sum", label_smoothing=0.1),
             [logits], {0}, atol=1e-4, rtol=1e-5)


@case
def fused_linear_cross_entropy():
    import torch
    from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction
    x, w = randn(8, 32), randn(200, 32, scale=0.3)
    target = torch.randint(0, 200, (8,))
    run_pair(lambda x, w: LigerFusedLinearCrossEntropyFunction.apply(x, w, target)[0],
             lambda x, w: torch.nn.functional.cross_entropy(x @ w.t(), target),
             [x, w], {0, 1}, atol=1e-4, rtol=1e-4)


@case
def kl_div():
    import torch
    from liger_kernel.ops.kl_div import LigerKLDivLossFunction
    y_pred = torch.log_softmax(randn(6, 90), -1)
    y_true = torch.softmax(randn(6, 90), -1)
    run_pair(lambda p, t: LigerKLDivLossFunction.apply(p, t, "batchmean", False),
             lambda p, t: torch.nn.functional.kl_div(p, t, reduction="batchmean", log_target=False),
             [y_pred, y_true], {0}, atol=1e-5, rtol=1e-5)


@case
def jsd():
    import torch
    from liger_kernel.ops.jsd import LigerJSDFunction
    x = torch.log_softmax(randn(6, 80), -1)
    y = torch.log_softmax(randn(6, 80), -1)
    run_pair(lambda x, y: LigerJSDFunction.apply(x, y, None, 0.5),
             lambda x, y: ref_jsd(x, y, 0.5), [x, y], {0}, atol=1e-5, rtol=1e-5)


@case
def tvd():
    import torch
    from liger_kernel.ops.tvd import LigerTVDLossFunction
    p = torch.softmax(randn(6, 70), -1)
    q = torch.softmax(randn(6, 70), -1)
    run_pair(lambda p, q: LigerTVDLossFunction.apply(p, q, None, "batchmean"),
             lambda p, q: 0.5 * (p - q).abs().sum() / p.shape[0], [p, q], {0}, atol=1e-6, rtol=1e-5)


@case
def fused_linear_jsd():
    import torch
    from liger_kernel.ops.fused_linear_jsd import LigerFusedLinearJSDFunction
    sx, sw = randn(6, 24), randn(100, 24, scale=0.3)
    tx, tw = randn(6, 24), randn(100, 24, scale=0.3)

    def ref(sx, sw):
        return ref_jsd(torch.log_softmax(sx @ sw.t(), -1), torch.log_softmax(tx @ tw.t(), -1), 0.5)
    run_pair(lambda sx, sw: LigerFusedLinearJSDFunction.apply(sx, sw, tx, tw, None, 0.5),
             ref, [sx, sw], {0, 1}, atol=1e-5, rtol=1e-4)


@case
def fused_linear_kl_div():
    import torch
    from liger_kernel.ops.fused_linear_kl_div import LigerFusedLinearKLDivFunction
    x, w = randn(6, 24), randn(100, 24, scale=0.3)
    target = torch.softmax(randn(6, 100), -1)

    def ref(x, w):
        return torch.nn.functional.kl_div(torch.log_softmax(x @ w.t(), -1), target, reduction="batchmean")
    run_pair(lambda x, w: LigerFusedLinearKLDivFunction.apply(x, w, target),
             ref, [x, w], {0, 1}, atol=1e-5, rtol=1e-4)


@case
def fused_ce_tvd():
    import torch
    from liger_kernel.ops.fused_ce_tvd import LigerFusedCETVDFunction
    s, t = randn(6, 90), randn(6, 90)
    target = torch.randint(0, 90, (6,))

    def ref(s):
        ce = torch.nn.functional.cross_entropy(s, target, reduction="none")
        tv = 0.5 * (torch.softmax(s, -1) - torch.softmax(t, -1)).abs().sum(-1)
        return ce, tv
    run_pair(lambda s: LigerFusedCETVDFunction.apply(s, t, target), ref, [s], {0}, atol=1e-5, rtol=1e-4)


# ---- attention-like and other ops ----

@case
def multi_token_attention():
    import torch
    from liger_kernel.ops.multi_token_attention import LigerMultiTokenAttentionFunction
    B, C, L = 1, 2, 8
    scores, weight, bias = randn(B, C, L, L), randn(C, C, 3, 3, scale=0.3), randn(C, scale=0.1)
    future = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)

    def ref(s, w, b):
        p = torch.softmax(s.masked_fill(future, -1e9), -1)
        out = torch.nn.functional.conv2d(p, w, b, stride=1, padding=1)
        return out.masked_fill(future, 0.0)
    run_pair(lambda s, w, b: LigerMultiTokenAttentionFunction.apply(s, w, b, 1, 1),
             ref, [scores, weight, bias], {0, 1, 2}, atol=1e-5, rtol=1e-4)


@case
def fused_neighborhood_attention():
    import torch
    from liger_kernel.ops.fused_neighborhood_attention import LigerFusedNeighborhoodAttentionFunction
    B, H, S, D, ks = 1, 2, 12, 16, 5
    q, k, v = randn(B, H, S, D), randn(B, H, S, D), randn(B, H, S, D)
    i = torch.arange(S)
    allowed = (i[:, None] - i[None, :]).abs() <= ks // 2

    def ref(q, k, v):
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        return torch.softmax(s.masked_fill(~allowed, float("-inf")), -1) @ v
    # f32 tl.dot defaults to TF32 inputs on the GPU target (10-bit mantissas), as dtsim computes it: the
    # tolerance is TF32's, not f32's
    run_pair(lambda q, k, v: LigerFusedNeighborhoodAttentionFunction.apply(q, k, v, ks, 1, None),
             ref, [q, k, v], {0, 1, 2}, atol=TF32_TOL, rtol=TF32_TOL)


@case
def attn_res():
    import torch
    from liger_kernel.ops.attn_res import LigerAttnResFunction
    N, B, T, D = 3, 2, 4, 32
    V, wq, wn = randn(N, B, T, D), randn(D), randn(D)

    def ref(V, wq, wn):
        k = ref_rms_norm(V, wn, 1e-6)
        alpha = torch.softmax((k * wq).sum(-1), dim=0)
        return (alpha[..., None] * V).sum(0)
    run_pair(lambda V, wq, wn: LigerAttnResFunction.apply(V, wq, wn, 1e-6), ref, [V, wq, wn], {0, 1, 2},
             atol=1e-4, rtol=1e-4)


@case
def fused_moe():
    import torch
    from liger_kernel.ops.fused_moe import LigerFusedMoEFunction
    T, H, I, E, K = 6, 16, 32, 4, 2
    x, gu, dn = randn(T, H), randn(E, 2 * I, H, scale=0.3), randn(E, H, I, scale=0.3)
    idx = torch.stack([torch.randperm(E)[:K] for _ in range(T)]).to(torch.int32)
    wts = torch.softmax(randn(T, K), -1)

    def ref(x, gu, dn):
        out = torch.zeros(T, H)
        for t in range(T):
            for j in range(K):
                e = int(idx[t, j])
                z = gu[e] @ x[t]
                a = torch.nn.functional.silu(z[:I]) * z[I:]
                out = out.index_add(0, torch.tensor([t]), (wts[t, j] * (dn[e] @ a))[None])
        return out
    run_pair(lambda x, gu, dn: LigerFusedMoEFunction.apply(x, gu, dn, idx, wts), ref, [x, gu, dn], {0, 1, 2},
             atol=TF32_TOL, rtol=TF32_TOL)


@case
def embedding():
    import torch
    from liger_kernel.ops.experimental.embedding import LigerEmbeddingFunction
    table = randn(50, 24)
    idx = torch.randint(0, 50, (3, 7))
    run_pair(lambda t: LigerEmbeddingFunction.apply(t, idx), lambda t: torch.nn.functional.embedding(idx, t),
             [table], {0})


@case
def grpo_loss():
    import torch
    from liger_kernel.ops.grpo_loss import GrpoLossFunction
    B, L, N = 2, 5, 40
    logits = randn(B, L + 1, N)
    ids = torch.randint(0, N, (B, L))
    adv = randn(B)
    old_logp = torch.log_softmax(randn(B, L, N), -1).gather(-1, ids[..., None])[..., 0]
    mask = torch.ones(B, L, dtype=torch.int32)
    mask[1, 3:] = 0

    def ref(logits):
        logp = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[..., None])[..., 0]
        c1 = torch.exp(logp - old_logp)
        c2 = torch.clamp(c1, 1 - 0.2, 1 + 0.2)
        per = -torch.minimum(c1 * adv[:, None], c2 * adv[:, None])
        m = mask.float()
        return ((per * m).sum(-1) / m.sum(-1).clamp(min=1.0)).mean()
    run_pair(lambda logits: GrpoLossFunction.apply(logits, old_logp, None, ids, adv, mask, 1.0, 0.0, 0.2, 0.2,
                                                   False)[0],
             ref, [logits], {0}, atol=1e-5, rtol=1e-4)


@case
def mhc_pre():
    import torch
    from liger_kernel.ops.mhc import LigerMHCPreFunction
    x, h = randn(2, 3, 4, 24), randn(2, 3, 4)
    run_pair(lambda x, h: LigerMHCPreFunction.apply(x, h),
             lambda x, h: torch.einsum("btsc,bts->btc", x, h), [x, h], {0, 1}, atol=1e-5, rtol=1e-5)


@case
def mhc_post_res():
    import torch
    from liger_kernel.ops.mhc import LigerMHCPostResFunction
    x, f, hp, hr = randn(2, 3, 4, 24), randn(2, 3, 24), randn(2, 3, 4), randn(2, 3, 4, 4)

    def ref(x, f, hp, hr):
        return f[:, :, None, :] * hp[..., None] + torch.einsum("btoi,btic->btoc", hr, x)
    run_pair(lambda x, f, hp, hr: LigerMHCPostResFunction.apply(x, f, hp, hr), ref, [x, f, hp, hr],
             {0, 1, 2, 3}, atol=1e-5, rtol=1e-5)


@case
def vocab_parallel_cross_entropy():
    # one rank (tp_group None): the op reduces to per-token cross entropy over the whole vocabulary
    import torch
    from liger_kernel.ops.vocab_parallel_cross_entropy import LigerVocabParallelCEFunction
    S, B, V = 3, 2, 70
    logits = randn(S, B, V, scale=2.0)
    target = torch.randint(0, V, (S, B))
    target[1, 0] = -100

    def ref(x):
        return torch.nn.functional.cross_entropy(x.reshape(-1, V), target.reshape(-1), ignore_index=-100,
                                                 reduction="none", label_smoothing=0.1).reshape(S, B)
    run_pair(lambda x: LigerVocabParallelCEFunction.apply(x, target, None, -100, 0.1, "pytorch", "global"),
             ref, [logits], {0}, atol=1e-5, rtol=1e-5)


def main(argv):
    if argv == ["--list"]:
        print("\n".join(CASES))
        return 0
    if len(argv) != 1 or argv[0] not in CASES:
        print("usage: cases.py --list | cases.py CASE (one of: %s)" % ", ".join(CASES), file=sys.stderr)
        return 2
    import os
    import torch
    torch.manual_seed(0)
    # DTSIM_COMPAT_DEVICE=cuda (run_liger.py --device cuda): every tensor a case makes is made on the GPU
    torch.set_default_device(os.environ.get("DTSIM_COMPAT_DEVICE", "cpu"))
    try:
        CASES[argv[0]]()
    except Mismatch as e:
        print("MISMATCH: %s" % e, flush=True)
        return 3
    print("CASE-PASS", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
