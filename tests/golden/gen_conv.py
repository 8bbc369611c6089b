#!/usr/bin/python3
"""Writes tests/golden/conv_golden.inc: PyTorch (float64) values and gradients of
convolutions for tests/ops/conv_test.cpp, and NumPy's convolve/correlate.

Each case gives jx's conv_general_dilated arguments; the reference is computed by
torch.nn.functional.conv{1,2,3}d in NC.../OI... layout after permuting the operands by the
dimension-number strings. What torch has no argument for is built around it with plain
tensor ops: asymmetric or negative padding with F.pad, lhs dilation by scattering the input
into a zero tensor, batch groups by one convolution per group (lhs batch rows and output
features split group-major, as XLA's transpose rules use them). Gradients are those of
sum(out * ct) for a random cotangent ct, by torch.autograd.

Run: /usr/bin/python3 tests/golden/gen_conv.py
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(20261201)

# name, lhs dims string, rhs dims string, out dims string, sizes by letter for lhs
# (N, C, spatial) and rhs (O, spatial), strides, padding, lhs_dilation, rhs_dilation,
# feature groups, batch groups.
CASES = [
    ("nchw_valid", "NCHW", "OIHW", "NCHW", dict(N=2, C=3, H=5, W=6), dict(O=4, H=3, W=2), (1, 1), "VALID", None, None, 1, 1),
    ("nhwc_same", "NHWC", "HWIO", "NHWC", dict(N=2, C=3, H=5, W=5), dict(O=4, H=3, W=3), (1, 1), "SAME", None, None, 1, 1),
    ("nhwc_same_stride2", "NHWC", "HWIO", "NHWC", dict(N=2, C=2, H=7, W=6), dict(O=3, H=3, W=3), (2, 2), "SAME", None, None, 1, 1),
    ("same_lower_even_kernel", "NHWC", "HWIO", "NHWC", dict(N=1, C=2, H=6, W=5), dict(O=2, H=2, W=4), (1, 2), "SAME_LOWER", None, None, 1, 1),
    ("strided_valid", "NCHW", "OIHW", "NCHW", dict(N=2, C=2, H=9, W=7), dict(O=3, H=3, W=2), (2, 3), "VALID", None, None, 1, 1),
    ("asymmetric_padding", "NCHW", "OIHW", "NCHW", dict(N=2, C=2, H=5, W=4), dict(O=3, H=3, W=3), (1, 1), [(2, 0), (1, 3)], None, None, 1, 1),
    ("negative_padding", "NCHW", "OIHW", "NCHW", dict(N=1, C=2, H=7, W=6), dict(O=2, H=2, W=2), (1, 2), [(-1, 1), (0, -2)], None, None, 1, 1),
    ("rhs_dilation", "NHWC", "HWIO", "NHWC", dict(N=2, C=2, H=8, W=7), dict(O=3, H=3, W=2), (1, 1), "SAME", None, (2, 3), 1, 1),
    ("lhs_dilation", "NCHW", "OIHW", "NCHW", dict(N=2, C=2, H=4, W=3), dict(O=3, H=3, W=2), (1, 1), [(2, 2), (1, 1)], (2, 3), None, 1, 1),
    ("lhs_dilation_strided", "NCHW", "OIHW", "NCHW", dict(N=1, C=2, H=4, W=4), dict(O=2, H=2, W=3), (2, 1), [(1, 0), (2, 1)], (3, 2), (1, 2), 1, 1),
    ("feature_groups", "NCHW", "OIHW", "NCHW", dict(N=2, C=6, H=5, W=5), dict(O=4, H=3, W=3), (1, 1), "SAME", None, None, 2, 1),
    ("depthwise", "NHWC", "HWIO", "NHWC", dict(N=2, C=3, H=6, W=5), dict(O=6, H=3, W=3), (1, 1), "SAME", None, None, 3, 1),
    ("batch_groups", "NCHW", "OIHW", "NCHW", dict(N=4, C=3, H=5, W=4), dict(O=4, H=2, W=3), (1, 1), "VALID", None, None, 1, 2),
    ("batch_groups_nhwc", "NHWC", "HWIO", "NHWC", dict(N=6, C=2, H=4, W=5), dict(O=3, H=3, W=2), (2, 1), [(1, 1), (0, 1)], None, None, 1, 3),
    ("conv1d", "NCH", "OIH", "NCH", dict(N=2, C=3, H=9), dict(O=2, H=4), (2,), [(1, 2)], None, (2,), 1, 1),
    ("conv1d_nwc", "NWC", "WIO", "NWC", dict(N=3, C=2, W=8), dict(O=4, W=3), (1,), "SAME", None, None, 1, 1),
    ("conv3d", "NCDHW", "OIDHW", "NCDHW", dict(N=1, C=2, D=4, H=5, W=4), dict(O=3, D=2, H=3, W=2), (1, 2, 1), "SAME", None, None, 1, 1),
    ("conv3d_ndhwc", "NDHWC", "DHWIO", "NDHWC", dict(N=2, C=2, D=3, H=4, W=4), dict(O=2, D=2, H=2, W=3), (1, 1, 2), [(0, 1), (1, 0), (1, 1)], None, (1, 2, 1), 1, 1),
    ("permuted_dims", "HNWC", "OHWI", "WCNH", dict(N=2, C=3, H=5, W=4), dict(O=2, H=2, W=3), (1, 1), "SAME", None, None, 1, 1),
    ("kernel_as_large_as_input", "NHWC", "HWIO", "NHWC", dict(N=3, C=4, H=6, W=6), dict(O=2, H=6, W=6), (1, 1), "VALID", None, None, 1, 1),
    ("mnist_layer_shape", "NHWC", "HWIO", "NHWC", dict(N=2, C=1, H=8, W=8), dict(O=4, H=3, W=3), (1, 1), "SAME", None, None, 1, 1),
]


def fmt(v):
    return repr(float(v))


def padtype_to_pads(in_shape, window, strides, padding):
    if padding == "VALID":
        return [(0, 0)] * len(in_shape)
    out = [(i + s - 1) // s for i, s in zip(in_shape, strides)]
    pads = [max((o - 1) * s + w - i, 0) for o, s, w, i in zip(out, strides, window, in_shape)]
    if padding == "SAME":
        return [(p // 2, p - p // 2) for p in pads]
    return [(p - p // 2, p // 2) for p in pads]


def reference(lhs, rhs, case):
    """lhs (N, C, sp...), rhs (O, I, sp...) as torch tensors; returns (N/B, O, sp...)."""
    _, _, _, _, _, _, strides, padding, lhs_dil, rhs_dil, groups, batch_groups = case
    ns = lhs.dim() - 2
    lhs_dil = lhs_dil or (1,) * ns
    rhs_dil = rhs_dil or (1,) * ns
    if lhs_dil != (1,) * ns:
        shape = list(lhs.shape[:2]) + [(s - 1) * d + 1 for s, d in zip(lhs.shape[2:], lhs_dil)]
        dilated = torch.zeros(shape, dtype=lhs.dtype)
        index = (slice(None), slice(None)) + tuple(slice(None, None, d) for d in lhs_dil)
        dilated[index] = lhs
        lhs = dilated
    if isinstance(padding, str):
        window = [(k - 1) * d + 1 for k, d in zip(rhs.shape[2:], rhs_dil)]
        padding = padtype_to_pads(list(lhs.shape[2:]), window, strides, padding)
    flat = []
    for lo, hi in reversed(padding):
        flat += [lo, hi]
    lhs = F.pad(lhs, flat)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[ns]
    if batch_groups == 1:
        return conv(lhs, rhs, stride=strides, dilation=rhs_dil, groups=groups)
    nb = lhs.shape[0] // batch_groups
    ob = rhs.shape[0] // batch_groups
    parts = [conv(lhs[g * nb:(g + 1) * nb], rhs[g * ob:(g + 1) * ob], stride=strides, dilation=rhs_dil)
             for g in range(batch_groups)]
    return torch.cat(parts, dim=1)


def perm_to_canonical(spec, a, b, rhs_spec):
    """Positions of (a, b, spatial in rhs order) in `spec`: jax's conv_general_permutations."""
    spatial = [c for c in rhs_spec if c not in "OI"]
    return [spec.index(a), spec.index(b)] + [spec.index(c) for c in spatial]


def main():
    rows = []
    cases = []
    for case in CASES:
        name, ls, rs, os_, lsz, rsz, strides, padding, lhs_dil, rhs_dil, groups, bgroups = case
        lhs_shape = [lsz[c] for c in ls]
        rsz = dict(rsz)
        rsz["I"] = lsz["C"] // groups
        rhs_shape = [rsz[c] for c in rs]
        lhs = rng.uniform(-1, 1, size=lhs_shape)
        rhs = rng.uniform(-1, 1, size=rhs_shape)
        lp = perm_to_canonical(ls, "N", "C", rs)
        rp = perm_to_canonical(rs, "O", "I", rs)
        op = perm_to_canonical(os_, "N", "C", rs)
        tl = torch.tensor(lhs).permute(*lp).contiguous().requires_grad_(True)
        tr = torch.tensor(rhs).permute(*rp).contiguous().requires_grad_(True)
        out_c = reference(tl, tr, case)
        inv = np.argsort(op)
        out = out_c.permute(*inv.tolist())
        ct = torch.tensor(rng.uniform(-1, 1, size=tuple(out.shape)))
        (out * ct).sum().backward()
        dl = tl.grad.permute(*np.argsort(lp).tolist())
        dr = tr.grad.permute(*np.argsort(rp).tolist())
        for suffix, v in [("lhs", lhs), ("rhs", rhs), ("ct", ct), ("out", out.detach()),
                          ("dlhs", dl), ("drhs", dr)]:
            v = np.asarray(v.detach().numpy() if torch.is_tensor(v) else v, dtype=np.float64)
            rows.append(f'  {{"{name}_{suffix}", {{{", ".join(map(str, v.shape))}}}, '
                        f'{{{", ".join(fmt(x) for x in v.ravel())}}}}},')
        if isinstance(padding, str):
            pad = f'lax::Padding("{padding}")'
        else:
            pad = "lax::Padding(lax::Padding::Pairs{" + ", ".join(f"{{{lo}, {hi}}}" for lo, hi in padding) + "})"
        ints = lambda t: "{" + ", ".join(map(str, t or ())) + "}"
        cases.append(f'  {{"{name}", {ints(strides)}, {pad}, {ints(lhs_dil)}, {ints(rhs_dil)}, '
                     f'{{"{ls}", "{rs}", "{os_}"}}, {groups}, {bgroups}}},')
    # jnp.convolve / jnp.correlate against NumPy, both operand orders (the shorter is the
    # kernel), every mode.
    a = rng.uniform(-1, 1, size=7)
    v = rng.uniform(-1, 1, size=3)
    for mode in ["full", "same", "valid"]:
        for name, x, y in [("av", a, v), ("va", v, a)]:
            for fn in ["convolve", "correlate"]:
                r = getattr(np, fn)(x, y, mode=mode)
                rows.append(f'  {{"np_{fn}_{mode}_{name}", {{{len(r)}}}, {{{", ".join(fmt(t) for t in r)}}}}},')
    for nm, arr in [("np_a", a), ("np_v", v)]:
        rows.append(f'  {{"{nm}", {{{len(arr)}}}, {{{", ".join(fmt(t) for t in arr)}}}}},')
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_golden.inc")
    with open(path, "w") as f:
        f.write(f"// Generated by tests/golden/gen_conv.py with PyTorch {torch.__version__}. Do not edit.\n")
        f.write("// clang-format off\n")
        f.write("const std::vector<ConvCase> kConvCases = {\n" + "\n".join(cases) + "\n};\n")
        f.write("const std::vector<jx::testing::NamedGolden> kConvGolden = {\n" + "\n".join(rows) + "\n};\n")


if __name__ == "__main__":
    main()
