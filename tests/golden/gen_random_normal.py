#!/usr/bin/python3
"""Golden values for tests/random/normal_bits_test.cpp: jax.random.normal / truncated_normal
and lax.erf_inv as XLA's CPU backend computes them, written from XLA's sources (not from
jx): chlo.erf_inv's expansion (stablehlo ChloLegalizeToStablehlo.cpp, erfInv32/erfInv64),
XLA CPU's log1p intrinsic (xla/codegen/intrinsic/log1p.cc: Cephes rational for small
arguments, else log(1 + x)), XLA CPU's float32 log (polynomial_approximations.cc,
GenerateVF32Log) and FMA contraction of every multiply feeding an add (XLA's CPU target
options allow FPOpFusion::Fast). Each fused multiply-add and division is done exactly in
rationals and rounded once; the threefry bits come from ../shared/reference/threefry_ref.py.

Run from the repository root:  /usr/bin/python3 tests/golden/gen_random_normal.py
Writes tests/golden/random_normal_golden.inc.
"""
import math
import os
import struct
import sys
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, '..', 'shared', 'reference'))
import threefry_ref as tf  # noqa: E402

F32 = np.float32


def f32_bits(x):
    return struct.unpack('<I', struct.pack('<f', float(x)))[0]


def bits_f32(b):
    return F32(struct.unpack('<f', struct.pack('<I', b))[0])


def f64_bits(x):
    return struct.unpack('<Q', struct.pack('<d', float(x)))[0]


def bits_f64(b):
    return struct.unpack('<d', struct.pack('<Q', b))[0]


def round_f32(q):
    """Correctly rounded float32 of an exact rational (ties to even)."""
    if q == 0:
        return F32(0.0)
    f = F32(float(q))
    best = None
    for c in (np.nextafter(f, F32(-np.inf)), f, np.nextafter(f, F32(np.inf))):
        d = abs(Fraction(float(c)) - q)
        if best is None or d < best[0] or (d == best[0] and (f32_bits(c) & 1) == 0):
            best = (d, c)
    return F32(best[1])


def fma32(a, b, c):
    return round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def fma64(a, b, c):
    return float(Fraction(a) * Fraction(b) + Fraction(c))  # float(Fraction) rounds once


def c32(v):
    return F32(v)  # a double constant rounded to float, as llvm::ConstantFP::get does


# ---- XLA CPU float32 log (Cephes/Eigen polynomial) ----
def xla_log32(v):
    v = F32(v)
    if np.isnan(v) or v < 0:
        return F32(np.nan)
    if v == 0:
        return F32(-np.inf)
    if np.isinf(v):
        return F32(np.inf)
    t0 = max(v, bits_f32(0x00800000))
    b = f32_bits(t0)
    emm0 = (b >> 23) - 0x7f
    mant = bits_f32((b & ~0x7f800000 & 0xffffffff) | 0x3f000000)
    e = F32(1.0) + F32(emm0)
    below = mant < c32(0.707106781186547524)
    t = F32(mant - F32(1.0))
    e = F32(e - (F32(1.0) if below else F32(0.0)))
    t = F32(t + (mant if below else F32(0.0)))
    x2 = F32(t * t)
    x3 = F32(x2 * t)
    p = [c32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                          1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                          3.3333331174E-1)]
    y = fma32(t, p[0], p[1])
    y1 = fma32(t, p[3], p[4])
    y2 = fma32(t, p[6], p[7])
    y = fma32(y, t, p[2])
    y1 = fma32(y1, t, p[5])
    y2 = fma32(y2, t, p[8])
    y = fma32(y, x3, y1)
    y = fma32(y, x3, y2)
    q1e = F32(c32(-2.12194440e-4) * e)
    y = fma32(y, x3, q1e)            # y * x3 + q1 * e: the first product is fused
    r = fma32(F32(-0.5), x2, t)      # t - 0.5 * x2
    r = F32(r + y)
    return fma32(c32(0.693359375), e, r)


NUM = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
       2.9911919328553073277375E1, 6.0949667980987787057556E1, 5.7112963590585538103336E1,
       2.0039553499201281259648E1)
DEN = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1, 2.2176239823732856465394E2,
       3.0909872225312059774938E2, 2.1642788614495947685003E2, 6.0118660497603843919306E1)


def xla_log1p32(x):
    x = F32(x)
    if abs(x) < c32(0.41421356237309504880):
        n = F32(0.0)
        d = F32(0.0)
        for a, b in zip(NUM, DEN):
            n = fma32(n, x, c32(a))
            d = fma32(d, x, c32(b))
        x2 = F32(x * x)
        s = F32(F32(x * x2) * round_f32(Fraction(float(n)) / Fraction(float(d))))
        s = fma32(F32(-0.5), x2, s)
        return F32(x + s)
    return xla_log32(F32(x + F32(1.0)))


def xla_log1p64(x):
    if -0.29289321881345247560 <= x <= 0.41421356237309504880:
        n = 0.0
        d = 0.0
        for a, b in zip(NUM, DEN):
            n = fma64(n, x, a)
            d = fma64(d, x, b)
        x2 = x * x
        s = (x * x2) * (n / d)
        s = fma64(-0.5, x2, s)
        return x + s
    v = x + 1.0
    if v < 0:
        return math.nan
    if v == 0:
        return -math.inf
    return math.log(v)  # libm's scalar log, which XLA calls for float64


LO32 = [c32(v) for v in (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                         0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)]
HI32 = [c32(v) for v in (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                         0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)]


def erf_inv32(x):
    x = F32(x)
    if np.isnan(x) or abs(x) > 1:
        return F32(np.nan)
    if abs(x) == 1:
        return F32(math.copysign(math.inf, x))
    w = -xla_log1p32(F32(x * -x))
    lt = w < F32(5.0)
    u = F32(w - F32(2.5)) if lt else F32(F32(np.sqrt(w)) - F32(3.0))
    coef = LO32 if lt else HI32
    p = coef[0]
    for c in coef[1:]:
        p = fma32(p, u, c)
    return F32(p * x)


A64 = (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
       1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
       6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
       2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
       1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
       4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
       0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
       0.24015818242558961693, 1.6536545626831027356)
B64 = (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
       1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
       2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
       6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
       0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
       -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
       3.0838856104922207635)
C64 = (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
       -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
       2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
       -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
       7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
       1.0103004648645343977, 4.8499064014085844221)


def erf_inv64(x):
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    w = -xla_log1p64(x * -x)
    if w < 6.25:
        u, coef = w - 3.125, A64
    elif w < 16:
        u, coef = math.sqrt(w) - 3.25, B64
    else:
        u, coef = math.sqrt(w) - 5.0, C64
    p = coef[0]
    for c in coef[1:]:
        p = fma64(p, u, c)
    return p * x


# ---- samplers ----
def uniform32(key, n, lo, hi, part):
    lo, hi = F32(lo), F32(hi)
    scale = F32(hi - lo)
    out = []
    for b in tf.random_bits(key, 32, n, part):
        f = F32(bits_f32((b >> 9) | 0x3F800000) - F32(1.0))
        out.append(max(lo, fma32(f, scale, lo)))
    return out


def normal32(seed, n, part):
    lo = bits_f32(0xBF7FFFFF)  # nextafter(-1, 0)
    return [F32(F32(math.sqrt(2)) * erf_inv32(u)) for u in uniform32(tf.seed(seed), n, lo, 1.0, part)]


def normal64(seed, n, part):
    lo = math.nextafter(-1.0, 0.0)
    out = []
    for b in tf.random_bits(tf.seed(seed), 64, n, part):
        f = bits_f64((b >> 12) | 0x3FF0000000000000) - 1.0
        u = max(lo, fma64(f, 1.0 - lo, lo))
        out.append(math.sqrt(2) * erf_inv64(u))
    return out


def truncated32(seed, n, lower, upper, part):
    """lower/upper whose float32 erf(bound / sqrt(2)) is the same in XLA (Eigen's rational)
    and in libm (checked below), so the golden does not depend on the erf kernel."""
    s2 = F32(math.sqrt(2))
    a = F32(math.erf(float(F32(F32(lower) / s2))))
    b = F32(math.erf(float(F32(F32(upper) / s2))))
    lo_open = np.nextafter(F32(lower), F32(np.inf))
    hi_open = np.nextafter(F32(upper), F32(-np.inf))
    out = []
    for u in uniform32(tf.seed(seed), n, a, b, part):
        z = F32(s2 * erf_inv32(u))
        out.append(min(hi_open, max(lo_open, z)))
    return out


def xla_erf32(x):
    """XLA CPU's float32 erf (xla/codegen/intrinsic/erf.cc), to confirm the bounds above."""
    x = F32(x)
    if abs(x) >= c32(3.832506856900711):
        return F32(math.copysign(1.0, x))
    x2 = F32(x * x)
    p = fma32(x2, c32(0.00022905065861350646), c32(0.0034082910107109506))
    for c in (0.050955695062380861, 0.18520832239976145, 1.128379143519084):
        p = fma32(x2, p, c32(c))
    p = F32(x * p)
    q = fma32(x2, c32(-1.1791602954361697e-7), c32(0.000023547966471313185))
    for c in (0.0010179625278914885, 0.014070470171167667, 0.11098505178285362,
              0.49746925110067538, 1.0):
        q = fma32(x2, q, c32(c))
    return round_f32(Fraction(float(p)) / Fraction(float(q)))


def bf16_round(x):
    b = f32_bits(F32(x))
    b += 0x7FFF + ((b >> 16) & 1)
    return (b >> 16) & 0xFFFF


def main():
    L = ['// Generated by tests/golden/gen_random_normal.py (XLA CPU erf_inv, log1p and log',
         '// written from XLA sources; threefry bits from ../shared/reference/threefry_ref.py).',
         '// Do not edit.', '']
    L.append('struct NormalBits32 { uint32_t seed; int n; bool partitionable; std::vector<uint32_t> bits; };')
    L.append('static const NormalBits32 kNormal32[] = {')
    for seed, n in ((0, 64), (42, 6), (1701, 200), (1193674498, 5)):
        for part in (True, False):
            v = ', '.join('0x%08x' % f32_bits(z) for z in normal32(seed, n, part))
            L.append('    {%du, %d, %s, {%s}},' % (seed, n, 'true' if part else 'false', v))
    L.append('};')
    L.append('struct NormalBits64 { uint32_t seed; int n; bool partitionable; std::vector<uint64_t> bits; };')
    L.append('static const NormalBits64 kNormal64[] = {')
    for seed, n in ((0, 48), (1701, 48)):
        for part in (True, False):
            v = ', '.join('0x%016xull' % f64_bits(z) for z in normal64(seed, n, part))
            L.append('    {%du, %d, %s, {%s}},' % (seed, n, 'true' if part else 'false', v))
    L.append('};')
    L.append('struct TruncBits32 { uint32_t seed; int n; float lo, hi; bool partitionable; std::vector<uint32_t> bits; };')
    L.append('static const TruncBits32 kTrunc32[] = {')
    for seed, n, lo, hi in ((42, 6, -2.0, 2.0), (2846034731, 5, 0.0, 2.0), (7, 100, -2.0, 2.0),
                            (9, 100, -1.0, 3.0)):
        s2 = F32(math.sqrt(2))
        for bound in (lo, hi):
            arg = F32(F32(bound) / s2)
            assert xla_erf32(arg) == F32(math.erf(float(arg))), bound
        for part in (True, False):
            v = ', '.join('0x%08x' % f32_bits(z) for z in truncated32(seed, n, lo, hi, part))
            L.append('    {%du, %d, %.1ff, %.1ff, %s, {%s}},' % (seed, n, lo, hi, 'true' if part else 'false', v))
    L.append('};')
    # erf_inv itself: float32 inputs covering both polynomial ranges, the log1p switch
    # (x^2 near sqrt(2) - 1), tiny and subnormal arguments and the ends.
    rng = np.random.RandomState(5)
    xs = list(rng.uniform(-1, 1, 300).astype(np.float32))
    xs += list((1 - rng.uniform(0, 1e-3, 100)).astype(np.float32))  # w >= 5
    xs += [F32(v) for v in (0.0, -0.0, 1e-30, -1e-20, 1e-45, 0.5, -0.5, 0.64359426, 0.6435943,
                            0.99, 0.999999, np.nextafter(F32(1), F32(0)), -np.nextafter(F32(1), F32(0)),
                            bits_f32(0xBF7FFFFF), 0.9966, 0.99662, 0.9967)]
    L.append('static const uint32_t kErfInv32[][2] = {  // {x bits, erf_inv(x) bits}')
    for x in xs:
        L.append('    {0x%08x, 0x%08x},' % (f32_bits(x), f32_bits(erf_inv32(x))))
    L.append('};')
    xd = list(rng.uniform(-1, 1, 200))
    xd += list(1 - rng.uniform(0, 1e-3, 50))                       # 6.25 <= w < 16
    xd += list(1 - 10 ** rng.uniform(-15, -7.2, 50))              # w >= 16 near the end
    xd += [0.0, 1e-300, -1e-10, 0.5, -0.5, 0.54119610014619701, 0.9, 0.99999999999,
           math.nextafter(1.0, 0.0), -math.nextafter(1.0, 0.0), 0.99806, -0.99999988]
    L.append('static const uint64_t kErfInv64[][2] = {  // {x bits, erf_inv(x) bits}')
    for x in xd:
        L.append('    {0x%016xull, 0x%016xull},' % (f64_bits(x), f64_bits(erf_inv64(x))))
    L.append('};')
    # 16-bit floats: the float32 result rounded (XLA upcasts erf_inv to float32).
    grid = np.linspace(-0.999, 0.999, 97).astype(np.float32)
    L.append('static const uint16_t kErfInvF16[][2] = {  // {x bits, erf_inv(x) bits}')
    for g in grid:
        h = np.float16(g)
        r = np.float16(erf_inv32(F32(h)))
        L.append('    {0x%04x, 0x%04x},' % (int(h.view(np.uint16)), int(r.view(np.uint16))))
    L.append('};')
    L.append('static const uint16_t kErfInvBF16[][2] = {  // {x bits, erf_inv(x) bits}')
    for g in grid:
        hb = bf16_round(g)
        x = bits_f32(hb << 16)
        L.append('    {0x%04x, 0x%04x},' % (hb, bf16_round(erf_inv32(x))))
    L.append('};')
    with open(os.path.join(HERE, 'random_normal_golden.inc'), 'w') as f:
        f.write('\n'.join(L) + '\n')


if __name__ == '__main__':
    main()
