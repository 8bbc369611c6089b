#!/usr/bin/python3
"""Writes tests/golden/optim_losses_golden.inc: float64 reference values and gradients of
Optax's losses for tests/optim/losses_test.cpp, computed independently of jx: with PyTorch's
torch.nn.functional where it has the loss (cross_entropy, binary_cross_entropy_with_logits,
mse_loss, huber_loss, kl_div, cosine_similarity, ctc_loss; reduction='none'), else with
NumPy / torch autograd and the formula in Optax's docstring.

Run with /usr/bin/python3 (NumPy 1.24, PyTorch 1.13) from the repository root:
    /usr/bin/python3 tests/golden/gen_optim_losses.py
Rows are NamedGolden {"name", {shape}, {values}} (tests/testing/golden.h). Inputs are rows
too ("in_*"); "<loss>" rows are values, "<loss>_grad" rows the gradient of sum(loss) with
respect to the first argument.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim_losses_golden.inc")
ROWS = []
rng = np.random.RandomState(14)


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def add(name, a):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a, dtype=np.float64)
    shape = ", ".join(str(d) for d in a.shape)
    ROWS.append('{"%s", {%s}, {%s}},' % (name, shape, ", ".join(lit(v) for v in a.ravel())))


def t(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def value_and_grad(name, fn, x, *rest):
    """Adds fn(x, *rest) and d sum(fn) / dx."""
    xt = t(x, grad=True)
    y = fn(xt, *rest)
    y.sum().backward()
    add(name, y)
    add(name + "_grad", xt.grad)


def classification():
    logits = rng.normal(size=(4, 5)) * 2.0
    soft = rng.uniform(size=(4, 5))
    soft /= soft.sum(-1, keepdims=True)
    ids = np.array([3, 0, 4, 1])
    add("in_logits", logits)
    add("in_soft_labels", soft)
    add("in_int_labels", ids)
    # softmax_cross_entropy: probabilities as targets (torch >= 1.10).
    value_and_grad("softmax_ce", lambda x: F.cross_entropy(x, t(soft), reduction="none"), logits)
    # ... and its gradient in the labels: d/dlabels = -log_softmax(logits).
    lt = t(soft, grad=True)
    F.cross_entropy(t(logits), lt, reduction="none").sum().backward()
    add("softmax_ce_labels_grad", lt.grad)
    value_and_grad("int_ce", lambda x: F.cross_entropy(x, torch.tensor(ids), reduction="none"),
                   logits)
    # Two class axes (1, 2) of a [2, 3, 4] array: a label is a flat index into [3, 4].
    logits3 = rng.normal(size=(2, 3, 4))
    ids3 = np.array([5, 11])
    add("in_logits3", logits3)
    add("in_int_labels3", ids3)
    value_and_grad("int_ce_axes12",
                   lambda x: F.cross_entropy(x.reshape(2, 12), torch.tensor(ids3), reduction="none"),
                   logits3)
    # sigmoid BCE and focal loss: hard and soft labels, logits of both signs.
    x = np.array([-8.0, -3.0, -1.0, -0.25, -0.05, 0.5, 1.5, 4.0, 9.0, -2.0, 2.5, 0.1])
    y = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.3, 0.8, 0.5])
    add("in_bce_logits", x)
    add("in_bce_labels", y)
    value_and_grad("bce", lambda v: F.binary_cross_entropy_with_logits(v, t(y), reduction="none"),
                   x)

    def focal(v, gamma, alpha=None):  # torchvision.ops.sigmoid_focal_loss's formula
        p = torch.sigmoid(v)
        ce = F.binary_cross_entropy_with_logits(v, t(y), reduction="none")
        p_t = p * t(y) + (1 - p) * (1 - t(y))
        loss = ce * (1 - p_t) ** gamma
        if alpha is not None:
            loss = (alpha * t(y) + (1 - alpha) * (1 - t(y))) * loss
        return loss
    value_and_grad("focal", lambda v: focal(v, 2.0), x)
    value_and_grad("focal_a0p25_g1p5", lambda v: focal(v, 1.5, 0.25), x)
    # hinge: targets in {-1, 1}; no point on the kink.
    h = np.array([-2.0, -0.5, 0.3, 0.9, 1.7, 3.0])
    s = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    add("in_hinge_outputs", h)
    add("in_hinge_targets", s)
    add("hinge", np.maximum(0.0, 1.0 - h * s))
    # KL divergence: log-predictions of a softmax, strictly positive targets (+ one zero).
    logq = torch.log_softmax(t(rng.normal(size=(3, 4))), -1).numpy()
    p = rng.uniform(0.1, 1.0, size=(3, 4))
    p /= p.sum(-1, keepdims=True)
    p0 = p.copy()
    p0[1, 2] = 0.0
    add("in_kl_log_predictions", logq)
    add("in_kl_targets", p)
    add("in_kl_targets_zero", p0)
    value_and_grad("kl", lambda v: F.kl_div(v, t(p), reduction="none").sum(-1), logq)
    add("kl_zero", F.kl_div(t(logq), t(p0), reduction="none").sum(-1))
    value_and_grad("kl_log_targets",
                   lambda v: F.kl_div(v, t(np.log(p)), reduction="none", log_target=True).sum(-1),
                   logq)
    # safe_softmax_cross_entropy: a -inf logit with label 0 contributes 0 (0 log 0 = 0).
    sl = np.array([[-np.inf, 1.0, 2.0, 0.5], [0.3, -0.2, -np.inf, 1.5]])
    sy = np.array([[0.0, 0.25, 0.75, 0.0], [0.5, 0.5, 0.0, 0.0]])
    add("in_safe_logits", sl)
    add("in_safe_labels", sy)
    finite = np.where(np.isinf(sl), -1e300, sl)
    lse = np.log(np.exp(finite - finite.max(-1, keepdims=True)).sum(-1, keepdims=True)) + \
        finite.max(-1, keepdims=True)
    add("safe_ce", -(np.where(sy == 0, 0.0, sy * (finite - lse))).sum(-1))
    probs = np.exp(finite - lse)
    add("safe_ce_grad", probs * sy.sum(-1, keepdims=True) - sy)


def regression():
    pred = np.array([-3.0, -1.2, -0.4, 0.2, 0.7, 1.1, 2.5, 6.0])
    targ = np.array([0.5, -1.0, 0.3, 0.1, -0.6, 2.9, 2.0, -1.0])
    add("in_pred", pred)
    add("in_targ", targ)
    value_and_grad("squared_error", lambda v: F.mse_loss(v, t(targ), reduction="none"), pred)
    value_and_grad("l2", lambda v: 0.5 * F.mse_loss(v, t(targ), reduction="none"), pred)
    value_and_grad("huber", lambda v: F.huber_loss(v, t(targ), reduction="none", delta=1.0), pred)
    value_and_grad("huber_d0p75", lambda v: F.huber_loss(v, t(targ), reduction="none", delta=0.75),
                   pred)
    value_and_grad("log_cosh", lambda v: torch.log(torch.cosh(v - t(targ))), pred)
    value_and_grad("log_cosh_no_targets", lambda v: torch.log(torch.cosh(v)), pred)
    a = rng.normal(size=(3, 5))
    b = rng.normal(size=(3, 5))
    add("in_cos_a", a)
    add("in_cos_b", b)
    value_and_grad("cosine_similarity", lambda v: F.cosine_similarity(v, t(b), dim=-1, eps=0.0), a)
    value_and_grad("cosine_distance",
                   lambda v: 1.0 - F.cosine_similarity(v, t(b), dim=-1, eps=0.0), a)
    value_and_grad("cosine_similarity_axis0",
                   lambda v: F.cosine_similarity(v, t(b), dim=0, eps=0.0), a)
    # Optax's epsilon bounds each squared norm: sum(a b) / sqrt(max(|a|^2, e) max(|b|^2, e)).
    small = a * 0.1
    add("in_cos_small", small)
    eps = 0.5
    na = np.sqrt(np.maximum((small ** 2).sum(-1), eps))
    nb = np.sqrt(np.maximum((b ** 2).sum(-1), eps))
    add("cosine_similarity_eps0p5", (small * b).sum(-1) / (na * nb))
    # smooth_labels: (1 - alpha) y + alpha / K.
    onehot = np.eye(5)[[1, 4, 0]]
    add("in_onehot", onehot)
    add("smooth_labels_0p1", 0.9 * onehot + 0.1 / 5)
    add("smooth_labels_axis0", 0.8 * onehot + 0.2 / 3)


def ctc():
    B, T, K, N = 3, 12, 5, 4
    logits = rng.normal(size=(B, T, K)) * 1.5
    labels = np.array([[1, 1, 2, 3], [4, 2, 0, 0], [3, 3, 3, 1]])  # repeats, padding
    label_lens = np.array([4, 2, 4])
    input_lens = np.array([12, 9, 11])
    logit_pad = (np.arange(T)[None, :] >= input_lens[:, None]).astype(np.float64)
    label_pad = (np.arange(N)[None, :] >= label_lens[:, None]).astype(np.float64)
    add("in_ctc_logits", logits)
    add("in_ctc_labels", labels)
    add("in_ctc_logit_paddings", logit_pad)
    add("in_ctc_label_paddings", label_pad)

    def loss(v):
        logp = torch.log_softmax(v, -1).transpose(0, 1)  # [T, B, K]
        return F.ctc_loss(logp, torch.tensor(labels), torch.tensor(input_lens),
                          torch.tensor(label_lens), blank=0, reduction="none")
    value_and_grad("ctc", loss, logits)
    # blank_id = 4: relabel so that class 4 is the blank and no label uses it.
    labels4 = np.array([[0, 0, 2, 3], [1, 2, 1, 1], [3, 3, 3, 1]])
    add("in_ctc_labels_blank4", labels4)

    def loss4(v):
        logp = torch.log_softmax(v, -1).transpose(0, 1)
        return F.ctc_loss(logp, torch.tensor(labels4), torch.tensor(input_lens),
                          torch.tensor(label_lens), blank=4, reduction="none")
    value_and_grad("ctc_blank4", loss4, logits)


def main():
    classification()
    regression()
    ctc()
    with open(OUT, "w") as out:
        out.write("// Generated by tests/golden/gen_optim_losses.py (NumPy %s, PyTorch %s); do not "
                  "edit.\n" % (np.__version__, torch.__version__))
        out.write("\n".join(ROWS) + "\n")


if __name__ == "__main__":
    main()
