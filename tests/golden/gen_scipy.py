#!/usr/bin/python3
"""Writes tests/golden/scipy_golden.inc: float64 reference values for jx::scipy
(tests/scipy/special_test.cpp, stats_test.cpp, special_functions_test.cpp and
stats_more_test.cpp), computed with SciPy 1.10.

Run with /usr/bin/python3 (NumPy 1.24, SciPy 1.10: Debian python3-scipy, needed only to
regenerate) from the repository root:
    /usr/bin/python3 tests/golden/gen_scipy.py
Rows are NamedGolden {"name", {shape}, {values}} (tests/testing/golden.h). Each function's
inputs are written as rows too ("<name>_x", ...), so the tests read them from here.

igamma_grad_a (no SciPy function) is d/da of mpmath's regularized gammainc at 50 digits
(mpmath 1.2, Debian python3-mpmath). Only points where JAX and SciPy agree are here. Where
JAX deliberately differs (gamma and gammasgn at 0 and the poles, ndtri outside [0, 1],
xlogy(0, nan), betainc with a or b = 0, zeta's odd-order poles), the tests check JAX's
documented value by hand (tests/lax/special_test.cpp for the special primitives).
"""
import math
import os

import numpy as np
import scipy
import scipy.special as sc
import scipy.stats as st
import mpmath

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scipy_golden.inc")
ROWS = []
INF = np.inf
NAN = np.nan


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def add(name, a):
    a = np.asarray(a, dtype=np.float64)
    shape = ", ".join(str(d) for d in a.shape)
    ROWS.append('{"%s", {%s}, {%s}},' % (name, shape, ", ".join(lit(v) for v in a.ravel())))


def arr(xs):
    return np.array(xs, dtype=np.float64)


# Inputs are exactly representable in float32 (the float32 tests round them), except the
# far-tail probabilities, which the float32 tests leave out.
X = arr([-INF, -40.0, -10.5, -3.0, -1.5, -0.5, -0.125, 0.0, 0.25, 0.75, 1.0, 2.5, 6.0, 30.0,
         INF, NAN])


def special():
    add("x", X)
    add("erf", sc.erf(X))
    add("erfc", sc.erfc(X))
    add("expit", sc.expit(X))
    add("entr", sc.entr(X))
    # erfinv: the ends, the inside, and outside (NaN).
    e = arr([-1.5, -1.0, -0.999, -0.5, -0.0625, 0.0, 0.25, 0.875, 0.999, 1.0, 1.5, NAN])
    add("erfinv_x", e)
    add("erfinv", sc.erfinv(e))
    # gamma family at non-pole points: negative non-integers, small, large, +inf.
    g = arr([-3.5, -2.5, -0.5, 0.125, 0.5, 1.0, 1.5, 2.0, 3.25, 10.0, 30.5, 171.5, 1e5, INF, NAN])
    add("gamma_x", g)
    add("gammaln", sc.gammaln(g))
    add("gamma", sc.gamma(g))
    add("gammasgn", sc.gammasgn(g))
    add("digamma", sc.digamma(g))
    f = arr([-2.0, -0.5, 0.0, 1.0, 3.0, 4.5, 10.0])
    add("factorial_x", f)
    add("factorial", sc.factorial(f))
    # beta / betaln: the cdflib branch (max >= 8), large arguments, a negative non-integer.
    a = arr([0.5, 1.0, 2.5, 10.0, 7.5, 1e6, 3.0, -0.5, 20.0, 0.25])
    b = arr([0.5, 3.0, 1.5, 20.0, 8.5, 2.5, 1e7, 2.5, 20.0, 100.0])
    add("beta_a", a)
    add("beta_b", b)
    add("betaln", sc.betaln(a, b))
    add("beta", sc.beta(a, b))
    # multigammaln(a, d) for a of shape [3].
    m = arr([2.5, 3.0, 10.25])
    add("multigammaln_a", m)
    for d in (1, 2, 3, 5):
        add("multigammaln_d%d" % d, sc.multigammaln(m, d))
    # xlogy / xlog1py: x == 0 gives 0 (also at y == 0, resp. y == -1).
    xx = arr([0.0, 0.0, 0.0, 2.0, -1.5, 0.5, 3.0, 1.0])
    yy = arr([0.0, 2.0, -1.0, 0.0, 2.5, 1e-3, 10.0, INF])
    add("xlogy_x", xx)
    add("xlogy_y", yy)
    add("xlogy", sc.xlogy(xx, yy))
    add("xlog1py", sc.xlog1py(xx, yy))
    # logit: the ends give -+inf.
    p = arr([0.0, 1e-6, 0.125, 0.5, 0.75, 0.999, 1.0])
    add("logit_x", p)
    add("logit", sc.logit(p))
    # rel_entr / kl_div: p == 0 with q >= 0 is 0, q == 0 < p and p < 0 are +inf.
    rp = arr([0.0, 0.0, 0.5, 0.5, 2.0, -1.0, 1.0])
    rq = arr([0.0, 1.5, 0.0, 0.25, 3.0, 1.0, 1.0])
    add("rel_entr_p", rp)
    add("rel_entr_q", rq)
    add("rel_entr", sc.rel_entr(rp, rq))
    add("kl_div", sc.kl_div(rp, rq))


def normal():
    # ndtr and log_ndtr over every branch (float64: series below -20, -ndtr(-x) above 8;
    # float32: below -10 and above 5), the far tails included.
    n = arr([-INF, -1e3, -40.0, -37.5, -20.5, -20.0, -15.0, -10.5, -10.0, -5.0, -1.0, -0.5, 0.0,
             0.5, 1.0, 4.5, 5.5, 7.5, 8.5, 10.0, 40.0, INF, NAN])
    add("ndtr_x", n)
    add("ndtr", sc.ndtr(n))
    add("log_ndtr", sc.log_ndtr(n))
    # ndtri: both tails (1e-300), each approximation region (exp(-2) ~ 0.135, z >= 8 below
    # p ~ exp(-32) ~ 1.3e-14), the ends.
    q = arr([0.0, 1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.01, 0.125, 0.25, 0.5, 0.75, 0.875,
             0.99, 1 - 1e-10, 1.0, NAN])
    add("ndtri_x", q)
    add("ndtri", sc.ndtri(q))
    # float32-representable probabilities for the float32 test.
    q32 = np.array([1e-30, 1e-20, 1e-10, 1e-5, 0.01, 0.125, 0.25, 0.5, 0.75, 0.875, 0.99,
                    0.9999], dtype=np.float32).astype(np.float64)
    add("ndtri32_x", q32)
    add("ndtri32", sc.ndtri(q32))


def logsumexp():
    a = arr([[0.5, -1.25, 2.0, 0.0],
             [-INF, -INF, -INF, -INF],
             [3.0, -INF, 1.0, 700.0]])
    add("lse_a", a)
    add("lse_all", sc.logsumexp(a))
    add("lse_axis0", sc.logsumexp(a, axis=0))
    add("lse_axis1", sc.logsumexp(a, axis=1))
    add("lse_axis1_keepdims", sc.logsumexp(a, axis=1, keepdims=True))
    # b with zeros (dropped entries) and negative weights, broadcast along rows.
    m = arr([[0.5, -1.25, 2.0, 0.0],
             [1.0, 2.0, 3.0, 4.0],
             [-2.0, 0.25, 1.5, -0.75]])
    b = arr([[1.0, 0.0, 2.0, 0.5],
             [-1.0, 1.0, -1.0, 1.0],
             [-1.0, -2.0, 0.5, 0.0]])
    add("lse_m", m)
    add("lse_b", b)
    out, sign = sc.logsumexp(m, axis=1, b=b, return_sign=True)
    add("lse_b_axis1", out)
    add("lse_b_axis1_sign", sign)
    with np.errstate(invalid="ignore"):
        add("lse_b_axis1_nosign", sc.logsumexp(m, axis=1, b=b))
    out, sign = sc.logsumexp(m, b=b, return_sign=True)
    add("lse_b_all", out)
    add("lse_b_all_sign", sign)
    bv = arr([2.0, 0.5, 0.0, 1.0])  # broadcast along the last axis
    add("lse_bv", bv)
    add("lse_bv_axis1", sc.logsumexp(m, axis=1, b=bv))
    add("softmax_all", sc.softmax(m))
    add("softmax_axis1", sc.softmax(m, axis=1))
    add("log_softmax_all", sc.log_softmax(m))
    add("log_softmax_axis0", sc.log_softmax(m, axis=0))


def stats():
    x = arr([-INF, -40.0, -3.0, -1.5, -0.5, 0.0, 0.25, 0.5, 1.0, 2.5, 4.0, 40.0, INF])
    add("stats_x", x)
    for name, dist in (("norm", st.norm), ("laplace", st.laplace), ("cauchy", st.cauchy),
                       ("logistic", st.logistic), ("uniform", st.uniform),
                       ("expon", st.expon)):
        add(name + "_logpdf", dist.logpdf(x))
        add(name + "_logpdf_loc_scale", dist.logpdf(x, 0.5, 2.0))
        add(name + "_pdf_loc_scale", dist.pdf(x, 0.5, 2.0))
    for name, dist in (("norm", st.norm), ("laplace", st.laplace), ("logistic", st.logistic)):
        add(name + "_cdf", dist.cdf(x))
        add(name + "_cdf_loc_scale", dist.cdf(x, 0.5, 2.0))
    add("norm_logcdf", st.norm.logcdf(x))
    add("norm_logcdf_loc_scale", st.norm.logcdf(x, 0.5, 2.0))
    add("norm_sf", st.norm.sf(x))
    add("norm_logsf", st.norm.logsf(x))
    add("norm_logsf_loc_scale", st.norm.logsf(x, 0.5, 2.0))
    q = arr([0.0, 1e-300, 1e-10, 0.125, 0.5, 0.875, 1.0])
    add("norm_q", q)
    add("norm_ppf", st.norm.ppf(q))
    add("norm_ppf_loc_scale", st.norm.ppf(q, 0.5, 2.0))
    # isf is ppf(1 - q), as JAX: 1 - q loses tiny q, so only q that survive it.
    qi = arr([0.0, 0.125, 0.5, 0.875, 1.0])
    add("norm_isf_q", qi)
    add("norm_isf_loc_scale", st.norm.isf(qi, 0.5, 2.0))
    # Discrete: k outside the support, at its ends, and p / mu at the boundary 0.
    kb = arr([-1.0, 0.0, 1.0, 2.0])
    add("bernoulli_k", kb)
    add("bernoulli_logpmf", st.bernoulli.logpmf(kb, 0.3))
    add("bernoulli_pmf", st.bernoulli.pmf(kb, 0.3))
    add("bernoulli_logpmf_p0", st.bernoulli.logpmf(kb, 0.0))
    add("bernoulli_logpmf_p1", st.bernoulli.logpmf(kb, 1.0))
    add("bernoulli_logpmf_loc", st.bernoulli.logpmf(kb, 0.3, loc=1))
    kp = arr([-1.0, 0.0, 1.0, 2.0, 5.0, 10.0, 2.5, 100.0])
    add("poisson_k", kp)
    add("poisson_logpmf", st.poisson.logpmf(kp, 3.5))
    add("poisson_pmf", st.poisson.pmf(kp, 3.5))
    add("poisson_logpmf_mu0", st.poisson.logpmf(kp, 0.0))
    add("poisson_logpmf_loc", st.poisson.logpmf(kp, 3.5, loc=2))
    # Continuous with shapes: the support ends (0 and 1 for beta), outside, inside.
    xb = arr([-0.5, 0.0, 0.125, 0.5, 0.75, 1.0, 1.5])
    add("beta_x", xb)
    add("beta_logpdf", st.beta.logpdf(xb, 2.5, 1.5))
    add("beta_pdf", st.beta.pdf(xb, 2.5, 1.5))
    add("beta_logpdf_a1", st.beta.logpdf(xb, 1.0, 3.0))
    add("beta_logpdf_loc_scale", st.beta.logpdf(xb, 2.5, 1.5, -0.25, 1.5))
    xg = arr([-1.0, 0.0, 0.125, 1.0, 2.5, 10.0, 100.0])
    add("gamma_stats_x", xg)
    add("gamma_logpdf", st.gamma.logpdf(xg, 2.5))
    add("gamma_pdf", st.gamma.pdf(xg, 2.5))
    add("gamma_logpdf_a1", st.gamma.logpdf(xg, 1.0))
    add("gamma_logpdf_loc_scale", st.gamma.logpdf(xg, 2.5, 0.5, 2.0))


def cols(rows):
    """Columns of a list of argument tuples, as float64 arrays."""
    return [arr(c) for c in zip(*rows)]


# The special primitives (lax.igamma, igammac, igamma_grad_a, betainc, zeta, polygamma,
# bessel_i0e/i1e). Every input is exactly a float32, so the float32 tests see the same
# points; each case says what it covers.
def incomplete():
    g = [(0.5, 0.0), (0.5, 0.25), (1.0, 1.0), (2.5, 1.5), (2.5, 6.0), (10.0, 3.0),
         (10.0, 12.0), (30.5, 29.0), (100.0, 90.0), (100.0, 130.0),  # both sides of x = a
         (0.0078125, 0.5), (0.001953125, 2.0), (0.001953125, 0.001953125),  # a -> 0
         (5.0, 1000.0), (200.0, 1.0), (1000.0, 1000.0), (1e4, 9900.0),  # tails, large a
         (1.5, INF), (3.0, NAN), (NAN, 1.0), (-1.0, 1.0), (1.0, -1.0), (0.0, 0.0),
         (0.0, 0.5), (0.0, 2.0), (INF, 1.0), (INF, INF)]
    a, x = cols(g)
    add("gammainc_a", a)
    add("gammainc_x", x)
    add("gammainc", sc.gammainc(a, x))
    add("gammaincc", sc.gammaincc(a, x))
    # dP/da: series (x <= a or x < 1) and continued-fraction (x > a, x > 1) branches.
    d = [(0.5, 0.25), (1.0, 1.0), (2.5, 1.5), (2.5, 6.0), (10.0, 3.0), (10.0, 12.0),
         (30.5, 29.0), (100.0, 130.0), (0.0078125, 0.5), (5.0, 40.0)]
    a, x = cols(d)
    mpmath.mp.dps = 50
    grad = [float(mpmath.diff(lambda s: mpmath.gammainc(s, 0, mpmath.mpf(xv), regularized=True),
                              mpmath.mpf(av))) for av, xv in d]
    add("igamma_grad_a_a", a)
    add("igamma_grad_a_x", x)
    add("igamma_grad_a", grad)
    # I_x(a, b): both sides of the switch x = (a + 1) / (a + b + 2), small and large a, b,
    # the ends of [0, 1], outside it and negative a (NaN).
    b3 = [(2.5, 1.5, 0.125), (2.5, 1.5, 0.875), (0.5, 0.5, 0.5), (1.0, 3.0, 0.25),
          (10.0, 20.0, 0.25), (10.0, 20.0, 0.5), (200.0, 150.0, 0.5625), (0.0078125, 2.0, 0.5),
          (3.0, 0.0078125, 0.5), (50.0, 0.5, 0.9921875), (2.0, 3.0, 0.0), (2.0, 3.0, 1.0),
          (2.0, 3.0, 1.5), (2.0, 3.0, -0.5), (-1.0, 2.0, 0.5), (2.0, 3.0, NAN)]
    a, b, x = cols(b3)
    add("betainc_a", a)
    add("betainc_b", b)
    add("betainc_x", x)
    add("betainc", sc.betainc(a, b, x))


def zeta_polygamma():
    # zeta(x, q): q small, 1 (Riemann), large, negative with integer x (the sum runs past
    # the poles), x near 1, x = 1 (+inf), x < 1 and non-integer x at q <= 0 (NaN), the
    # even-x poles (+inf).
    z = [(2.0, 1.0), (3.0, 1.0), (1.5, 1.0), (1.0078125, 1.0), (2.0, 0.5), (4.5, 0.125),
         (2.0, 10.0), (3.0, 1e4), (10.0, 3.0), (30.0, 2.0), (2.0, -1.5), (3.0, -10.5),
         (4.0, -20.5), (1.0, 2.0), (0.5, 2.0), (2.5, -1.5), (2.0, 0.0), (2.0, -3.0),
         (2.0, INF), (NAN, 1.0), (2.0, NAN)]
    x, q = cols(z)
    add("zeta_x", x)
    add("zeta_q", q)
    add("zeta", sc.zeta(x, q))
    # polygamma(n, x): n = 0 (digamma) to 6, positive, small, large and negative
    # non-integer x, the even-order pole at 0 (+inf), non-integer or negative n (NaN).
    p = [(0, 2.5), (1, 0.5), (1, 1.0), (1, 30.0), (2, 1.5), (3, 0.125), (4, 10.0), (6, 2.0),
         (1, -1.5), (2, -2.5), (3, -10.5), (1, 0.0), (1, 1e4), (2, NAN)]
    n, x = cols(p)
    add("polygamma_n", n)
    add("polygamma_x", x)
    add("polygamma", sc.polygamma(n.astype(np.int64), x))
    # i0e, i1e and i0, i1: both Chebyshev ranges (|x| <= 8 and above), odd/even symmetry,
    # 0, the limits at +-inf and NaN; i0/i1 overflow beyond ~713.
    b = arr([-INF, -750.0, -30.0, -8.0, -2.5, -0.5, -0.0078125, 0.0, 0.0078125, 0.5, 1.0,
             2.5, 7.9921875, 8.0, 8.0078125, 30.0, 700.0, 750.0, INF, NAN])
    add("bessel_x", b)
    add("i0e", sc.i0e(b))
    add("i1e", sc.i1e(b))
    add("i0", sc.i0(b))
    add("i1", sc.i1(b))


def stats_more():
    # CDFs from the incomplete gamma and beta functions; x below loc gives 0 (sf 1).
    xg = arr([-1.0, 0.0, 0.125, 1.0, 2.5, 10.0, 40.0])
    add("gamma_cdf_x", xg)
    add("gamma_cdf", st.gamma.cdf(xg, 2.5))
    add("gamma_cdf_loc_scale", st.gamma.cdf(xg, 2.5, 0.5, 2.0))
    add("gamma_sf", st.gamma.sf(xg, 2.5))
    add("gamma_sf_loc_scale", st.gamma.sf(xg, 2.5, 0.5, 2.0))
    kp = arr([-1.0, 0.0, 1.0, 2.5, 3.0, 10.0, 30.0])
    add("poisson_cdf_k", kp)
    add("poisson_cdf", st.poisson.cdf(kp, 3.5))
    add("poisson_cdf_loc", st.poisson.cdf(kp, 3.5, loc=2))
    xb = arr([-0.5, 0.0, 0.125, 0.5, 0.75, 1.0, 1.5])
    add("beta_cdf_x", xb)
    add("beta_cdf", st.beta.cdf(xb, 2.5, 1.5))
    add("beta_cdf_loc_scale", st.beta.cdf(xb, 2.5, 1.5, -0.25, 1.5))
    # chi2: df = 2 at x = loc is finite (log 1/2); x < loc is outside the support.
    xc = arr([-1.0, 0.0, 0.5, 1.0, 3.0, 10.0, 50.0])
    add("chi2_x", xc)
    for df in (2, 3):
        add("chi2_logpdf_df%d" % df, st.chi2.logpdf(xc, df))
        add("chi2_pdf_df%d" % df, st.chi2.pdf(xc, df))
        add("chi2_cdf_df%d" % df, st.chi2.cdf(xc, df))
        add("chi2_sf_df%d" % df, st.chi2.sf(xc, df))
    add("chi2_logpdf_loc_scale", st.chi2.logpdf(xc, 3, 0.5, 2.0))
    add("chi2_cdf_loc_scale", st.chi2.cdf(xc, 3, 0.5, 2.0))
    # Student's t: heavy tails (df = 1 is Cauchy), moderate and large df.
    xt = arr([-40.0, -3.0, -0.5, 0.0, 0.25, 2.0, 40.0])
    add("t_x", xt)
    for df in (1, 3, 1000):
        add("t_logpdf_df%d" % df, st.t.logpdf(xt, df))
    add("t_pdf_df3", st.t.pdf(xt, 3))
    add("t_logpdf_loc_scale", st.t.logpdf(xt, 4.5, 0.5, 2.0))
    # multivariate_normal: a [4, 3] batch against mean [3] and an SPD covariance; a scalar
    # covariance with a vector mean; the 1-d case (scalar mean and covariance).
    mean = arr([0.5, -1.0, 2.0])
    cov = arr([[2.0, 0.5, 0.25], [0.5, 1.5, -0.25], [0.25, -0.25, 1.0]])
    xm = arr([[0.0, 0.0, 0.0], [0.5, -1.0, 2.0], [1.5, 0.25, -1.0], [-2.0, 3.0, 4.0]])
    add("mvn_mean", mean)
    add("mvn_cov", cov)
    add("mvn_x", xm)
    add("mvn_logpdf", st.multivariate_normal.logpdf(xm, mean, cov))
    add("mvn_pdf", st.multivariate_normal.pdf(xm, mean, cov))
    add("mvn_logpdf_scalar_cov", st.multivariate_normal.logpdf(xm, mean, 1.5))
    x1 = arr([-1.0, 0.5, 3.0])
    add("mvn1_x", x1)
    add("mvn1_logpdf", [st.multivariate_normal.logpdf(v, 0.5, 2.0) for v in x1])


def main():
    with np.errstate(divide="ignore", over="ignore"):
        special()
        normal()
        logsumexp()
        stats()
        incomplete()
        zeta_polygamma()
        stats_more()
    with open(OUT, "w") as f:
        f.write("// Generated by tests/golden/gen_scipy.py (NumPy %s, SciPy %s); do not edit.\n"
                % (np.__version__, scipy.__version__))
        f.write("\n".join(ROWS) + "\n")


if __name__ == "__main__":
    main()
