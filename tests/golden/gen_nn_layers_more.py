#!/usr/bin/python3
"""Writes tests/golden/nn_layers_more_golden.inc: float64 inputs, weights, outputs and
gradients for jx::nn's DenseGeneral, ConvTranspose, Embed, LayerNorm, GroupNorm, RMSNorm
and attention (tests/nn/layers_more_*_test.cpp), computed independently of jx with PyTorch
(torch.nn.functional where it has the layer, else torch ops following the textbook
formula) and NumPy.

Run with /usr/bin/python3 (NumPy 1.24, PyTorch 1.13) from the repository root:
    /usr/bin/python3 tests/golden/gen_nn_layers_more.py
Rows are NamedGolden {"name", {shape}, {values}} (tests/testing/golden.h). Layouts are
Flax's: inputs channels-last (NHWC), kernels (in..., out...) / HWIO. Every output `y` has a
cotangent `<case>_dy`; `<case>_grad_<p>` is the gradient of sum(y * dy) with respect to p.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_layers_more_golden.inc")
RNG = np.random.RandomState(20240613)
ROWS = []


def add(name, a):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a, dtype=np.float64)
    shape = ", ".join(str(d) for d in a.shape)
    ROWS.append('{"%s", {%s}, {%s}},' % (name, shape, ", ".join(repr(float(v)) for v in a.ravel())))


def rand(name, *shape, scale=1.0):
    """A random float64 tensor that requires grad, recorded as a golden row."""
    a = RNG.uniform(-1.0, 1.0, size=shape) * scale
    add(name, a)
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def finish(case, y, **wrt):
    """Records y, a cotangent dy, and the gradients of sum(y * dy) w.r.t. `wrt`."""
    add(case + "_y", y)
    dy = torch.tensor(RNG.uniform(-1.0, 1.0, size=tuple(y.shape)), dtype=torch.float64)
    add(case + "_dy", dy)
    grads = torch.autograd.grad((y * dy).sum(), list(wrt.values()))
    for (name, _), g in zip(wrt.items(), grads):
        add(case + "_grad_" + name, g)


# ---- DenseGeneral: y = tensordot(x, kernel over the contracted axes) + bias ----
def dense_general():
    x = rand("dg_feat_x", 2, 4, 5)
    k = rand("dg_feat_kernel", 5, 3, 2)
    b = rand("dg_feat_bias", 3, 2)
    finish("dg_feat", torch.einsum("bnd,def->bnef", x, k) + b, x=x, kernel=k)

    x = rand("dg_axes_x", 2, 4, 6, 5)
    k = rand("dg_axes_kernel", 4, 5, 3)
    b = rand("dg_axes_bias", 3)
    finish("dg_axes", torch.einsum("aimj,ijf->amf", x, k) + b, x=x, kernel=k)

    x = rand("dg_batch_x", 2, 4, 5)
    k = rand("dg_batch_kernel", 2, 5, 3)
    b = rand("dg_batch_bias", 2, 3)
    finish("dg_batch", torch.einsum("bnd,bdf->bnf", x, k) + b[:, None, :], x=x, kernel=k)


# ---- ConvTranspose: jax.lax.conv_transpose, x NHWC, kernel HWIO ----
def transpose_padding(k, s, mode):
    """jax's _conv_transpose_padding for one spatial dim (k: the dilated kernel size)."""
    if mode == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(math.ceil(pad_len / 2))
    elif mode == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    else:  # an explicit (lo, hi) pair pads the dilated input as it is (jax's default,
        return mode  # use_consistent_padding=False)
    return pad_a, pad_len - pad_a


def conv_transpose_ref(x, kernel, strides, padding, dilation=(1, 1), transpose_kernel=False):
    """The definition: a stride-1 correlation of the stride-dilated, padded input with the
    (dilated) kernel; with transpose_kernel the kernel is flipped and its I/O swapped."""
    if transpose_kernel:
        kernel = torch.flip(kernel, [0, 1]).permute(0, 1, 3, 2)
    n, h, w, c = x.shape
    kh, kw = kernel.shape[:2]
    xs = torch.zeros(n, c, (h - 1) * strides[0] + 1, (w - 1) * strides[1] + 1, dtype=torch.float64)
    xs[:, :, ::strides[0], ::strides[1]] = x.permute(0, 3, 1, 2)
    pads = []
    for i, (k, s) in enumerate(zip((kh, kw), strides)):
        kd = (k - 1) * dilation[i] + 1
        pads.append(transpose_padding(kd, s, padding if isinstance(padding, str) else padding[i]))
    xs = F.pad(xs, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
    y = F.conv2d(xs, kernel.permute(3, 2, 0, 1), dilation=dilation)
    return y.permute(0, 2, 3, 1)


def conv_transpose():
    # The definition above agrees with torch's own transposed convolution where the two
    # coincide (VALID, kernel >= stride: torch's conv_transpose2d is the flipped kernel's).
    x = torch.tensor(RNG.uniform(-1, 1, (2, 4, 5, 3)))
    k = torch.tensor(RNG.uniform(-1, 1, (3, 3, 3, 4)))
    torch_ref = F.conv_transpose2d(x.permute(0, 3, 1, 2), torch.flip(k, [0, 1]).permute(2, 3, 0, 1),
                                   stride=2).permute(0, 2, 3, 1)
    assert torch.allclose(conv_transpose_ref(x, k, (2, 2), "VALID"), torch_ref, atol=1e-12)
    # transpose_kernel: the gradient of a forward conv with that kernel (HWIO, I = features).
    kt = torch.tensor(RNG.uniform(-1, 1, (3, 3, 4, 3)))
    torch_ref = F.conv_transpose2d(x.permute(0, 3, 1, 2), kt.permute(3, 2, 0, 1),
                                   stride=2).permute(0, 2, 3, 1)
    assert torch.allclose(conv_transpose_ref(x, kt, (2, 2), "VALID", transpose_kernel=True), torch_ref,
                          atol=1e-12)

    cases = [
        # name, x shape, kernel shape, strides, padding, dilation, transpose_kernel
        ("ct_same", (2, 5, 4, 3), (3, 3, 3, 4), (2, 2), "SAME", (1, 1), False),
        ("ct_valid", (2, 4, 5, 3), (3, 2, 3, 4), (2, 2), "VALID", (1, 1), False),
        ("ct_pairs", (1, 4, 4, 2), (3, 3, 2, 3), (2, 1), [(1, 2), (0, 1)], (1, 1), False),
        ("ct_dilated", (1, 5, 4, 2), (2, 3, 2, 3), (1, 2), "SAME", (2, 1), False),
        ("ct_tk_same", (2, 4, 4, 3), (3, 3, 4, 3), (2, 2), "SAME", (1, 1), True),
    ]
    for name, xs, ks, st, pad, dil, tk in cases:
        x = rand(name + "_x", *xs)
        k = rand(name + "_kernel", *ks)
        b = rand(name + "_bias", ks[2] if tk else ks[3])
        finish(name, conv_transpose_ref(x, k, st, pad, dil, tk) + b, x=x, kernel=k)


# ---- Embed ----
def embed():
    table = RNG.uniform(-1, 1, (5, 3))
    add("embed_table", table)
    idx = np.array([[0, 1, 4], [-1, 2, 3]])
    add("embed_idx", idx)
    add("embed_y", table[idx])
    q = RNG.uniform(-1, 1, (2, 4, 3))
    add("embed_query", q)
    add("embed_attend", q @ table.T)


# ---- normalization ----
def normalization():
    eps = 1e-6
    x = rand("ln_x", 2, 3, 4)
    s = rand("ln_scale", 4)
    b = rand("ln_bias", 4)
    finish("ln", F.layer_norm(x, (4,), s, b, eps), x=x, scale=s, bias=b)

    # Statistics over (1, 2), scale and bias over the last axis only.
    x = rand("ln_axes_x", 2, 3, 4)
    s = rand("ln_axes_scale", 4)
    b = rand("ln_axes_bias", 4)
    finish("ln_axes", F.layer_norm(x, (3, 4), None, None, eps) * s + b, x=x, scale=s)

    x = rand("gn_x", 2, 3, 3, 6, scale=2.0)
    s = rand("gn_scale", 6)
    b = rand("gn_bias", 6)
    y = F.group_norm(x.permute(0, 3, 1, 2), 3, s, b, eps).permute(0, 2, 3, 1)
    finish("gn", y, x=x, scale=s, bias=b)

    x = rand("gn_2d_x", 3, 8)
    s = rand("gn_2d_scale", 8)
    b = rand("gn_2d_bias", 8)
    finish("gn_2d", F.group_norm(x, 4, s, b, eps), x=x, scale=s)

    x = rand("rms_x", 2, 3, 4, scale=3.0)
    s = rand("rms_scale", 4)
    finish("rms", x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * s, x=x, scale=s)


# ---- attention ----
def attention_ref(q, k, v, mask=None, bias=None):
    """softmax(q k^T / sqrt(d) + bias, masked with the dtype's min) v over
    (batch, len, heads, d) operands."""
    logits = torch.einsum("bqhd,bkhd->bhqk", q / math.sqrt(q.shape[-1]), k)
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = torch.where(mask != 0, logits, torch.tensor(np.finfo(np.float64).min, dtype=torch.float64))
    return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(logits, -1), v)


def layer_norm_last(x, scale, eps=1e-6):
    return F.layer_norm(x, (x.shape[-1],), scale, None, eps)


def attention():
    q = rand("dpa_q", 2, 3, 2, 4)
    k = rand("dpa_k", 2, 5, 2, 4)
    v = rand("dpa_v", 2, 5, 2, 4)
    bias = rand("dpa_bias", 1, 2, 3, 5)
    mask = np.ones((2, 1, 3, 5))
    mask[0, 0, :, 3:] = 0  # padding in batch 0
    mask[1, 0, 0, 1:] = 0
    add("dpa_mask", mask)
    finish("dpa", attention_ref(q, k, v, torch.tensor(mask), bias), q=q, k=k, v=v)

    # MultiHeadDotProductAttention: num_heads 2, qkv_features 4 (head_dim 2), out 5.
    xq = rand("mha_xq", 2, 3, 6)
    xkv = rand("mha_xkv", 2, 5, 6)
    w = {}
    for p in ("query", "key", "value"):
        w[p + "_kernel"] = rand("mha_" + p + "_kernel", 6, 2, 2)
        w[p + "_bias"] = rand("mha_" + p + "_bias", 2, 2)
    w["out_kernel"] = rand("mha_out_kernel", 2, 2, 5)
    w["out_bias"] = rand("mha_out_bias", 5)
    key_valid = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=np.float64)
    mask = np.ones((2, 3))[:, :, None] * key_valid[:, None, :]  # make_attention_mask(ones, valid)
    mask = mask[:, None]
    add("mha_mask", mask)

    def project(x, p):
        return torch.einsum("bld,dhe->blhe", x, w[p + "_kernel"]) + w[p + "_bias"]

    def out(o):
        return torch.einsum("blhe,heo->blo", o, w["out_kernel"]) + w["out_bias"]

    y = out(attention_ref(project(xq, "query"), project(xkv, "key"), project(xkv, "value"), torch.tensor(mask)))
    finish("mha", y, xq=xq, xkv=xkv, query_kernel=w["query_kernel"], out_kernel=w["out_kernel"])

    # Self-attention with a causal mask and normalize_qk (LayerNorm "query_ln"/"key_ln",
    # scale only, over head_dim).
    x = rand("sa_x", 2, 4, 6)
    ws = {}
    for p in ("query", "key", "value"):
        ws[p + "_kernel"] = rand("sa_" + p + "_kernel", 6, 3, 2)
        ws[p + "_bias"] = rand("sa_" + p + "_bias", 3, 2)
    ws["out_kernel"] = rand("sa_out_kernel", 3, 2, 6)
    ws["out_bias"] = rand("sa_out_bias", 6)
    qs = rand("sa_query_ln_scale", 2)
    ks = rand("sa_key_ln_scale", 2)
    causal = np.tril(np.ones((4, 4)))[None, None].repeat(2, axis=0)
    add("sa_causal", causal)
    pq = torch.einsum("bld,dhe->blhe", x, ws["query_kernel"]) + ws["query_bias"]
    pk = torch.einsum("bld,dhe->blhe", x, ws["key_kernel"]) + ws["key_bias"]
    pv = torch.einsum("bld,dhe->blhe", x, ws["value_kernel"]) + ws["value_bias"]
    o = attention_ref(layer_norm_last(pq, qs), layer_norm_last(pk, ks), pv, torch.tensor(causal))
    y = torch.einsum("blhe,heo->blo", o, ws["out_kernel"]) + ws["out_bias"]
    finish("sa", y, x=x, query_ln_scale=qs)


def main():
    torch.set_default_dtype(torch.float64)
    dense_general()
    conv_transpose()
    embed()
    normalization()
    attention()
    header = ("// Generated by tests/golden/gen_nn_layers_more.py (NumPy %s, PyTorch %s); do not edit.\n"
              % (np.__version__, torch.__version__))
    with open(OUT, "w") as f:
        f.write(header + "\n".join(ROWS) + "\n")


if __name__ == "__main__":
    main()
