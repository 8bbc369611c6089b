#!/usr/bin/python3
"""Writes tests/golden/optim_optimizers_golden.inc for tests/optim/optimizers_test.cpp:
trajectories of Optax's remaining optimizers and transformations on the non-quadratic
function of gen_optim_core.py, from Optax's updates (optax/_src/alias.py, transform.py,
factorized.py, optax/transforms/*.py) written out here in NumPy float64, independently of
jx, and cross-checked against torch.optim where the two define the same update.

f(w) = sum(log(cosh(w * s))) + 0.1 * sum(w^4), s = (1, 2, ...) / 3: grad = s tanh(w s) + 0.4 w^3.
Each trajectory: 25 steps from w0; the golden holds w after every step. "default_<name>"
rows: 3 steps of each alias built with nothing but its learning rate, so that every
default hyper-parameter shows in the numbers.

torch.optim cross-checks (rtol 1e-12), where the two define the same update:
  agree:  Adamax; Adagrad with Optax's initial_accumulator_value and eps = 0 (Optax adds
          eps inside the sqrt, PyTorch outside, so only eps = 0 is the same update);
          RMSprop with eps_in_sqrt=False (plain, centered, with momentum: Optax's trace of
          the lr-scaled step is PyTorch's momentum buffer times lr); Adadelta (lr 1 and 0.5,
          with coupled weight decay); RAdam with eps = 0 (PyTorch divides by
          sqrt(nu) + eps and multiplies by sqrt(1 - b2^t), Optax by sqrt(nu_hat) + eps;
          PyTorch switches at rho_t > 5, Optax at rho_t >= 5, never equal here).
  differ: Optax's default RMSprop (eps inside the sqrt) and default Adagrad (eps 1e-7 inside
          the sqrt, accumulator 0.1; PyTorch: 1e-10 outside, 0); AMSGrad (Optax takes the
          maximum of the bias-corrected nu, PyTorch of the raw nu and then corrects it);
          NAdam (PyTorch's momentum-decay schedule mu_t = b1 (1 - 0.5 * 0.96^(t/250)));
          AdamaxW (PyTorch's Adamax weight decay is coupled, added to the gradient).
  none in PyTorch 1.13: Lion, LAMB, LARS, NovoGrad, Yogi, AdaBelief, Adafactor, noisy SGD.
add_noise's noise is JAX's jax.random.normal(float64) for the split keys, from the
threefry reference ../shared/reference/threefry_ref.py and XLA's erf_inv expansion as
tests/golden/gen_random_normal.py writes them.

Run: /usr/bin/python3 tests/golden/gen_optim_optimizers.py
"""
import ctypes
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_random_normal as grn  # noqa: E402  (also puts threefry_ref on the path)
import threefry_ref as tf  # noqa: E402

STEPS = 25
w0 = np.array([[1.5, -0.7, 0.3], [-2.0, 0.9, 0.05]])
s = np.arange(1, w0.size + 1, dtype=np.float64).reshape(w0.shape) / 3.0


def grad(w):
    return s * np.tanh(w * s) + 0.4 * w ** 3


def rsqrt(x):
    return 1.0 / np.sqrt(x)


def norm(x):
    return np.sqrt(np.sum(x * x))


# ---- transformations: (init(w) -> state, update(g, state, w) -> (u, state)) ----

def chain(*txs):
    def init(w):
        return [t[0](w) for t in txs]

    def update(g, st, w):
        out = []
        for t, si in zip(txs, st):
            g, si = t[1](g, si, w)
            out.append(si)
        return g, out
    return init, update


def stateless(fn):
    return (lambda w: None), (lambda g, st, w: (fn(g, w), None))


def scale(c):
    return stateless(lambda g, w: c * g)


def lr_step(lr, flip=True):
    m = -1.0 if flip else 1.0
    if callable(lr):  # a schedule of the count
        def update(g, t, w):
            return m * lr(t) * g, t + 1
        return (lambda w: 0), update
    return scale(m * lr)


def identity():
    return stateless(lambda g, w: g)


def add_decayed_weights(wd):
    return stateless(lambda g, w: g + wd * w)


def trace(decay, nesterov=False):
    def update(g, tr, w):
        tr = g + decay * tr
        return (g + decay * tr if nesterov else tr), tr
    return (lambda w: np.zeros_like(w)), update


def bc(m, decay, t):
    return m / (1 - decay ** t)


def mu_hat(mu, g, b1, t, nesterov):
    if nesterov:
        return b1 * bc(mu, b1, t + 1) + (1 - b1) * bc(g, b1, t)
    return bc(mu, b1, t)


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, nesterov=False):
    def update(g, st, w):
        t, mu, nu = st
        mu = (1 - b1) * g + b1 * mu
        nu = (1 - b2) * g * g + b2 * nu
        t += 1
        u = mu_hat(mu, g, b1, t, nesterov) / (np.sqrt(bc(nu, b2, t) + eps_root) + eps)
        return u, (t, mu, nu)
    return (lambda w: (0, np.zeros_like(w), np.zeros_like(w))), update


def scale_by_adamax(b1=0.9, b2=0.999, eps=1e-8):
    def update(g, st, w):
        t, mu, nu = st
        t += 1
        mu = (1 - b1) * g + b1 * mu
        nu = np.maximum(np.abs(g) + eps, b2 * nu)
        return bc(mu, b1, t) / nu, (t, mu, nu)
    return (lambda w: (0, np.zeros_like(w), np.zeros_like(w))), update


def scale_by_amsgrad(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, bc_mu=True, bc_nu=True):
    def update(g, st, w):
        t, mu, nu, nu_max = st
        mu = (1 - b1) * g + b1 * mu
        nu = (1 - b2) * g * g + b2 * nu
        t += 1
        mh = bc(mu, b1, t) if bc_mu else mu
        ne = bc(nu, b2, t) if bc_nu else nu
        nu_max = np.maximum(nu_max, ne)
        return mh / (np.sqrt(nu_max + eps_root) + eps), (t, mu, nu, nu_max)
    return (lambda w: (0, np.zeros_like(w), np.zeros_like(w), np.zeros_like(w))), update


def rms_scaling(n, eps, eps_in_sqrt):
    return rsqrt(n + eps) if eps_in_sqrt else 1 / (np.sqrt(n) + eps)


def scale_by_rms(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True, bias_correction=False):
    def update(g, st, w):
        t, nu = st
        nu = (1 - decay) * g * g + decay * nu
        t += 1
        nh = bc(nu, decay, t) if bias_correction else nu
        return rms_scaling(nh, eps, eps_in_sqrt) * g, (t, nu)
    return (lambda w: (0, np.full_like(w, initial_scale))), update


def scale_by_stddev(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True, bias_correction=False):
    def update(g, st, w):
        t, mu, nu = st
        mu = (1 - decay) * g + decay * mu
        nu = (1 - decay) * g * g + decay * nu
        t += 1
        mh, nh = (bc(mu, decay, t), bc(nu, decay, t)) if bias_correction else (mu, nu)
        return rms_scaling(nh - mh * mh, eps, eps_in_sqrt) * g, (t, mu, nu)
    return (lambda w: (0, np.zeros_like(w), np.full_like(w, initial_scale))), update


def scale_by_rss(initial_accumulator_value=0.1, eps=1e-7):
    def update(g, sos, w):
        sos = g * g + sos
        return np.where(sos > 0, rsqrt(sos + eps), 0.0) * g, sos
    return (lambda w: np.full_like(w, initial_accumulator_value)), update


def scale_by_lion(b1=0.9, b2=0.99):
    def update(g, st, w):
        t, mu = st
        u = np.sign((1 - b1) * g + b1 * mu)
        mu = (1 - b2) * g + b2 * mu
        return u, (t + 1, mu)
    return (lambda w: (0, np.zeros_like(w))), update


def safe_norm(x, min_norm):
    n = norm(x)
    return min_norm if n <= min_norm else n


def scale_by_trust_ratio(min_norm=0.0, trust_coefficient=1.0, eps=0.0):
    def fn(g, w):
        pn, un = safe_norm(w, min_norm), safe_norm(g, min_norm)
        ratio = 1.0 if (pn == 0.0 or un == 0.0) else trust_coefficient * pn / (un + eps)
        return g * ratio
    return stateless(fn)


def scale_by_belief(b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16, nesterov=False):
    def update(g, st, w):
        t, mu, nu = st
        mu = (1 - b1) * g + b1 * mu
        pe = g - mu
        nu = (1 - b2) * pe * pe + b2 * nu + eps_root
        t += 1
        return mu_hat(mu, g, b1, t, nesterov) / (np.sqrt(bc(nu, b2, t)) + eps), (t, mu, nu)
    return (lambda w: (0, np.zeros_like(w), np.zeros_like(w))), update


def scale_by_yogi(b1=0.9, b2=0.999, eps=1e-3, eps_root=0.0, initial_accumulator_value=1e-6):
    def update(g, st, w):
        t, mu, nu = st
        mu = (1 - b1) * g + b1 * mu
        nu = nu - (1 - b2) * np.sign(nu - g * g) * (g * g)
        t += 1
        return bc(mu, b1, t) / (np.sqrt(bc(nu, b2, t) + eps_root) + eps), (t, mu, nu)
    iav = initial_accumulator_value
    return (lambda w: (0, np.full_like(w, iav), np.full_like(w, iav))), update


def scale_by_radam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, threshold=5.0, nesterov=False):
    ro_inf = 2.0 / (1.0 - b2) - 1.0

    def update(g, st, w):
        t, mu, nu = st
        mu = (1 - b1) * g + b1 * mu
        nu = (1 - b2) * g * g + b2 * nu
        t += 1
        b2t = b2 ** t
        ro = ro_inf - 2 * t * b2t / (1 - b2t)
        mh, nh = mu_hat(mu, g, b1, t, nesterov), bc(nu, b2, t)
        if ro >= threshold:
            r = math.sqrt((ro - 4.0) * (ro - 2.0) * ro_inf / ((ro_inf - 4.0) * (ro_inf - 2.0) * ro))
            u = r * mh / (np.sqrt(nh + eps_root) + eps)
        else:
            u = mh
        return u, (t, mu, nu)
    return (lambda w: (0, np.zeros_like(w), np.zeros_like(w))), update


def scale_by_novograd(b1=0.9, b2=0.25, eps=1e-8, eps_root=0.0, weight_decay=0.0):
    def update(g, st, w):
        t, mu, nu = st
        t += 1
        n2 = np.linalg.norm(g) ** 2
        nu = n2 if t == 1 else (1 - b2) * n2 + b2 * nu
        a = g / (np.sqrt(nu + eps_root) + eps) + weight_decay * w
        mu = a if t == 1 else b1 * mu + a
        return mu, (t, mu, nu)
    return (lambda w: (0, np.zeros_like(w), 0.0)), update


def scale_by_adadelta(rho=0.9, eps=1e-6):
    def update(g, st, w):
        e_g, e_x = st
        e_g = (1 - rho) * g * g + rho * e_g
        u = (np.sqrt(e_x + eps) / np.sqrt(e_g + eps)) * g
        e_x = (1 - rho) * u * u + rho * e_x
        return u, (e_g, e_x)
    return (lambda w: (np.zeros_like(w), np.zeros_like(w))), update


_libm = ctypes.CDLL("libm.so.6")
_libm.powf.restype = ctypes.c_float
_libm.powf.argtypes = [ctypes.c_float, ctypes.c_float]


def powf(x, y):
    """glibc's scalar float32 pow (NumPy's float32 power is SVML's here, off by an ulp at times)."""
    return np.float32(_libm.powf(float(x), float(y)))


def factored_dims(shape, factored, min_dim):
    if not factored or len(shape) < 2:
        return None
    order = np.argsort(shape, kind='stable')
    if shape[order[-2]] < min_dim:
        return None
    return int(order[-2]), int(order[-1])


def scale_by_factored_rms(factored=True, decay_rate=0.8, step_offset=0, min_dim_size_to_factor=128, epsilon=1e-30):
    dims_of = lambda w: factored_dims(w.shape, factored, min_dim_size_to_factor)  # noqa: E731

    def init(w):
        d = dims_of(w)
        if d:
            return 0, np.zeros(np.delete(w.shape, d[1])), np.zeros(np.delete(w.shape, d[0])), np.zeros(1)
        return 0, np.zeros(1), np.zeros(1), np.zeros(w.shape)

    def update(g, st, w):
        t, vr, vc, v = st
        # Optax's _decay_rate_pow runs in float32; JAX promotes it to float64 afterwards.
        tt = np.float32(t - step_offset) + np.float32(1.0)
        dr32 = np.float32(1.0) - powf(tt, np.float32(-decay_rate))
        om32 = np.float32(1.0) - dr32
        dr, om = np.float64(dr32), np.float64(om32)
        g2 = g * g + epsilon
        d = dims_of(w)
        if d:
            d1, d0 = d
            vr = dr * vr + om * np.mean(g2, axis=d0)
            vc = dr * vc + om * np.mean(g2, axis=d1)
            rd1 = d1 - 1 if d1 > d0 else d1
            rcm = np.mean(vr, axis=rd1, keepdims=True)
            u = g * np.expand_dims((vr / rcm) ** -0.5, d0) * np.expand_dims(vc ** -0.5, d1)
        else:
            v = dr * v + om * g2
            u = g * v ** -0.5
        return u, (t + 1, vr, vc, v)
    return init, update


def scale_by_param_block_rms(min_scale=1e-3):
    def fn(g, w):
        r = np.sqrt(np.mean(w * w))
        return g * (min_scale if r <= min_scale else r)
    return stateless(fn)


def scale_by_param_block_norm(min_scale=1e-3):
    return stateless(lambda g, w: g * safe_norm(w, min_scale))


def ema(decay, debias=True, acc_dtype=None):
    def update(g, st, w):
        t, e = st
        # JAX: the weak Python decay times a float32 buffer is a float32 product.
        de = (np.float32(decay) * e) if e.dtype == np.float32 else decay * e
        new = (1 - decay) * g + de
        t += 1
        u = bc(new, decay, t) if debias else new
        return u, (t, new.astype(acc_dtype) if acc_dtype else new)
    return (lambda w: (0, np.zeros_like(w, dtype=acc_dtype or w.dtype))), update


def clip_by_block_rms(threshold):
    return stateless(lambda g, w: g / max(1.0, np.sqrt(np.mean(g * g)) / threshold))


def adaptive_grad_clip(clipping, eps=1e-3):
    def unitwise(x):  # rank-2 leaves: units are columns (axis 0)
        return np.broadcast_to(np.sqrt(np.sum(x * x, axis=0, keepdims=True)), x.shape)

    def fn(g, w):
        gn = unitwise(g)
        mx = clipping * np.maximum(unitwise(w), eps)
        return np.where(gn < mx, g, g * (mx / np.maximum(gn, 1e-6)))
    return stateless(fn)


def centralize():
    return stateless(lambda g, w: g - g.mean(axis=tuple(range(1, g.ndim)), keepdims=True))


def keep_params_nonnegative():
    return stateless(lambda g, w: np.where(w + g < 0.0, -w, g))


def normal64_key(key, n):
    """jax.random.normal(key, (n,), float64), as gen_random_normal.normal64 but from a key."""
    lo = math.nextafter(-1.0, 0.0)
    out = []
    for b in tf.random_bits(key, 64, n):
        f = grn.bits_f64((b >> 12) | 0x3FF0000000000000) - 1.0
        u = max(lo, grn.fma64(f, 1.0 - lo, lo))
        out.append(math.sqrt(2) * grn.erf_inv64(u))
    return np.array(out)


def add_noise(eta, gamma, key):
    def update(g, st, w):
        t, k = st
        t += 1
        std = math.sqrt(eta / t ** gamma)
        k, sample = tf.split(k, 2)
        leaf_key = tf.split(sample, 1)[0]  # one key per leaf: a single leaf here
        return g + std * normal64_key(leaf_key, g.size).reshape(g.shape), (t, k)
    return (lambda w: (0, list(key))), update


# ---- aliases (alias.py), Optax's defaults as Python defaults ----

def adamax(lr, b1=0.9, b2=0.999, eps=1e-8):
    return chain(scale_by_adamax(b1, b2, eps), lr_step(lr))


def adamaxw(lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4):
    return chain(scale_by_adamax(b1, b2, eps), add_decayed_weights(weight_decay), lr_step(lr))


def amsgrad(lr, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, bc_mu=True, bc_nu=True):
    return chain(scale_by_amsgrad(b1, b2, eps, eps_root, bc_mu, bc_nu), lr_step(lr))


def radam(lr, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, threshold=5.0, nesterov=False):
    return chain(scale_by_radam(b1, b2, eps, eps_root, threshold, nesterov), lr_step(lr))


def adagrad(lr, initial_accumulator_value=0.1, eps=1e-7):
    return chain(scale_by_rss(initial_accumulator_value, eps), lr_step(lr))


def adadelta(lr=None, rho=0.9, eps=1e-6, weight_decay=0.0):
    # jx: no learning rate is Adadelta's own step (lr 1, descending); see the docs.
    return chain(add_decayed_weights(weight_decay), scale_by_adadelta(rho, eps), lr_step(1.0 if lr is None else lr))


def adafactor(lr=None, min_dim_size_to_factor=128, decay_rate=0.8, decay_offset=0, multiply_by_parameter_scale=True,
              clipping_threshold=1.0, momentum=None, dtype_momentum=np.float32, weight_decay_rate=None, eps=1e-30,
              factored=True):
    tx = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor, eps)]
    if clipping_threshold is not None:
        tx.append(clip_by_block_rms(clipping_threshold))
    if lr is not None:
        tx.append(lr_step(lr, flip=False))
    if multiply_by_parameter_scale:
        tx.append(scale_by_param_block_rms())
    if momentum is not None:
        tx.append(ema(momentum, debias=False, acc_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        tx.append(add_decayed_weights(weight_decay_rate))
    tx.append(scale(-1.0))
    return chain(*tx)


def rmsprop(lr, decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True, centered=False, momentum=None,
            nesterov=False, bias_correction=False):
    rms = (scale_by_stddev if centered else scale_by_rms)(decay, eps, initial_scale, eps_in_sqrt, bias_correction)
    return chain(rms, lr_step(lr), trace(momentum, nesterov) if momentum is not None else identity())


def lamb(lr, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0, weight_decay=0.0):
    return chain(scale_by_adam(b1, b2, eps, eps_root), add_decayed_weights(weight_decay), scale_by_trust_ratio(),
                 lr_step(lr))


def lars(lr, weight_decay=0.0, trust_coefficient=0.001, eps=0.0, momentum=0.9, nesterov=False):
    return chain(add_decayed_weights(weight_decay), scale_by_trust_ratio(trust_coefficient=trust_coefficient, eps=eps),
                 lr_step(lr), trace(momentum, nesterov))


def lion(lr, b1=0.9, b2=0.99, weight_decay=1e-3):
    return chain(scale_by_lion(b1, b2), add_decayed_weights(weight_decay), lr_step(lr))


def novograd(lr, b1=0.9, b2=0.25, eps=1e-6, eps_root=0.0, weight_decay=0.0):
    return chain(scale_by_novograd(b1, b2, eps, eps_root, weight_decay), lr_step(lr))


def yogi(lr, b1=0.9, b2=0.999, eps=1e-3):
    return chain(scale_by_yogi(b1, b2, eps), lr_step(lr))


def adabelief(lr, b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16, weight_decay=None, nesterov=False):
    tx = [scale_by_belief(b1, b2, eps, eps_root, nesterov)]
    if weight_decay is not None:
        tx.append(add_decayed_weights(weight_decay))
    return chain(*tx, lr_step(lr))


def noisy_sgd(lr, eta=0.01, gamma=0.55, seed=0):
    return chain(add_noise(eta, gamma, tf.seed(seed)), lr_step(lr))


def run(opt, steps=STEPS):
    init, update = opt
    w = w0.copy()
    st = init(w)
    out = []
    for _ in range(steps):
        u, st = update(grad(w), st, w)
        w = w + u
        out.append(w.copy())
    return out


def torch_run(make):
    w = torch.tensor(w0.copy(), requires_grad=True)
    opt = make([w])
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        w.grad = torch.tensor(grad(w.detach().numpy()))
        opt.step()
        out.append(w.detach().numpy().copy())
    return out


def agree(a, b, what):
    for x, y in zip(a, b):
        assert np.allclose(x, y, rtol=1e-12, atol=1e-14), what


def warmup(count):  # the schedule driving an optimizer: linear 0.01 -> 0.05 over 10 steps
    return 0.01 + 0.04 * min(count, 10) / 10


cases = {
    "adamax": run(adamax(0.05)),
    "adamaxw": run(adamaxw(0.05, weight_decay=1e-2)),
    "amsgrad": run(amsgrad(0.05)),
    "amsgrad_paper": run(amsgrad(0.05, bc_mu=False, bc_nu=False)),
    "radam": run(radam(0.05)),
    "radam_eps0": run(radam(0.05, eps=0.0)),
    "radam_nesterov": run(radam(0.05, nesterov=True)),
    "adagrad": run(adagrad(0.1)),
    "adagrad_eps0": run(adagrad(0.1, eps=0.0)),
    "adadelta": run(adadelta()),
    "adadelta_wd": run(adadelta(0.5, weight_decay=1e-2)),
    "adafactor": run(adafactor(0.05)),
    "adafactor_factored": run(adafactor(0.05, min_dim_size_to_factor=2)),
    "adafactor_momentum": run(adafactor(0.05, min_dim_size_to_factor=2, momentum=0.9, weight_decay_rate=1e-2,
                                        clipping_threshold=None, multiply_by_parameter_scale=False)),
    "rmsprop": run(rmsprop(0.01)),
    "rmsprop_torch": run(rmsprop(0.01, eps_in_sqrt=False)),
    "rmsprop_centered_momentum": run(rmsprop(0.01, eps_in_sqrt=False, centered=True, momentum=0.9)),
    "rmsprop_nesterov_bc": run(rmsprop(0.01, initial_scale=1.0, momentum=0.9, nesterov=True, bias_correction=True)),
    "rmsprop_centered_bc": run(rmsprop(0.01, eps=1e-2, centered=True, bias_correction=True)),
    "lamb": run(lamb(0.05, weight_decay=1e-2)),
    "lars": run(lars(1.0, weight_decay=1e-2, trust_coefficient=0.05)),
    "lars_nesterov": run(lars(1.0, trust_coefficient=0.05, nesterov=True)),
    "lion": run(lion(0.01)),
    "novograd": run(novograd(0.05)),
    "novograd_wd": run(novograd(0.05, weight_decay=1e-2)),
    "yogi": run(yogi(0.05)),
    "adabelief": run(adabelief(0.05)),
    "adabelief_nesterov_wd": run(adabelief(0.05, weight_decay=1e-2, nesterov=True)),
    "noisy_sgd": run(noisy_sgd(0.05)),
    "noisy_sgd_key7": run(chain(add_noise(0.1, 0.55, tf.seed(7)), lr_step(0.05))),
    # Transformations not only used inside one alias, each chained with a plain step.
    "ema": run(chain(ema(0.9), scale(-0.05))),
    "ema_nodebias": run(chain(ema(0.9, debias=False), scale(-0.05))),
    "clip": run(chain(stateless(lambda g, w: np.clip(g, -0.5, 0.5)), scale(-0.1))),
    "clip_by_block_rms": run(chain(clip_by_block_rms(0.5), scale(-0.1))),
    "adaptive_grad_clip": run(chain(adaptive_grad_clip(0.1), scale(-0.1))),
    "centralize": run(chain(centralize(), scale(-0.1))),
    "keep_params_nonnegative": run(chain(scale(-0.3), keep_params_nonnegative())),
    "param_block_norm": run(chain(scale_by_param_block_norm(), scale(-0.05))),
    "trust_ratio": run(chain(scale_by_trust_ratio(min_norm=0.5, trust_coefficient=0.1, eps=1e-3), scale(-1.0))),
    "stddev_eps_outside": run(chain(scale_by_stddev(0.95, 1e-4, 0.1, False, False), scale(-0.01))),
    "schedule_adamax": run(adamax(warmup)),
}

# Each alias with its defaults (the learning rate the only argument), 3 steps.
defaults = {
    "adamax": adamax(1e-2), "adamaxw": adamaxw(1e-2), "amsgrad": amsgrad(1e-2), "radam": radam(1e-2),
    "adagrad": adagrad(1e-2), "adadelta": adadelta(), "adafactor": adafactor(), "rmsprop": rmsprop(1e-2),
    "lamb": lamb(1e-2), "lars": lars(1e-2), "lion": lion(1e-2), "novograd": novograd(1e-2), "yogi": yogi(1e-2),
    "adabelief": adabelief(1e-2), "noisy_sgd": noisy_sgd(1e-2),
}
for name, opt in defaults.items():
    cases["default_" + name] = run(opt, steps=3)

agree(cases["adamax"], torch_run(lambda p: torch.optim.Adamax(p, lr=0.05)), "adamax")
agree(cases["adagrad_eps0"], torch_run(lambda p: torch.optim.Adagrad(p, lr=0.1, initial_accumulator_value=0.1, eps=0.0)),
      "adagrad")
agree(cases["rmsprop_torch"], torch_run(lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8)), "rmsprop")
agree(cases["rmsprop_centered_momentum"],
      torch_run(lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8, centered=True, momentum=0.9)),
      "rmsprop centered momentum")
agree(cases["adadelta"], torch_run(lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.9, eps=1e-6)), "adadelta")
agree(cases["adadelta_wd"], torch_run(lambda p: torch.optim.Adadelta(p, lr=0.5, rho=0.9, eps=1e-6, weight_decay=1e-2)),
      "adadelta wd")
agree(cases["radam_eps0"], torch_run(lambda p: torch.optim.RAdam(p, lr=0.05, eps=0.0)), "radam")


def differs(a, b):
    return any(not np.allclose(x, y, rtol=1e-9, atol=0) for x, y in zip(a, b))


# The documented differences really are differences on this problem.
assert differs(cases["rmsprop"], cases["rmsprop_torch"])
assert differs(cases["amsgrad"], torch_run(lambda p: torch.optim.Adam(p, lr=0.05, amsgrad=True)))
assert differs(cases["adagrad"], torch_run(lambda p: torch.optim.Adagrad(p, lr=0.1, initial_accumulator_value=0.1)))

rows = [f'  {{"w0", {{{", ".join(map(str, w0.shape))}}}, {{{", ".join(repr(float(x)) for x in w0.ravel())}}}}},']
for name, traj in cases.items():
    v = np.stack(traj)
    assert np.all(np.isfinite(v)), name
    rows.append(f'  {{"{name}", {{{", ".join(map(str, v.shape))}}}, {{{", ".join(repr(float(x)) for x in v.ravel())}}}}},')
path = os.path.join(HERE, "optim_optimizers_golden.inc")
with open(path, "w") as f:
    f.write("// Generated by tests/golden/gen_optim_optimizers.py. Do not edit.\n// clang-format off\n")
    f.write("const std::vector<jx::testing::NamedGolden> kOptimOptimizersGolden = {\n" + "\n".join(rows) + "\n};\n")
print("wrote", path, len(cases), "trajectories")
