// gamma / loggamma / beta / dirichlet / chisquare / t and poisson. JAX draws gamma with
// Marsaglia-Tsang rejection, one while_loop per element under vmap (each element from its
// own split key), and poisson with batched Knuth / transformed-rejection loops. With
// concrete inputs and no active transformation the loops run eagerly over whole arrays
// (each iteration computes the lanes whose loop condition still holds, which is what vmap
// of while_loop computes); otherwise they are staged as lax::while_loop over all lanes,
// selecting the new state only where a lane's condition holds (vmap of while_loop).
#include <cmath>
#include <cstring>

#include "core/array_impl.h"
#include "jx/control_flow.h"
#include "jx/lax.h"
#include "jx/random.h"
#include "numpy/promote.h"
#include "random/internal.h"
#include "support/check.h"
#include "support/str.h"
#include "transforms/key_reuse.h"
#include "transforms/trace.h"

namespace jx::random {

using detail::const_f;
using detail::Keys;

namespace {

// The eager loops read predicates and raw buffers, so they need concrete inputs and no
// active trace (under jit even concrete closure values are staged).
bool run_eagerly(const Keys& k, const Array& x) {
  return tr::current_trace() == nullptr && k.concrete() && x.is_concrete();
}

void require_concrete(const Array& pred) {
  JX_CHECK(pred.is_concrete(), "[jx::random] eager rejection loop reached a traced predicate");
}

bool any(const Array& pred) {
  require_concrete(pred);
  for (bool b : pred.to_vector<bool>())
    if (b) return true;
  return false;
}

Array full(double v, DType dt, const Shape& shape) {
  return lax::broadcast_in_dim(const_f(v, dt), shape, {});
}

// Lanes of 1-d arrays, for running each rejection loop on its still-active lanes only:
// every lane's state evolves by its own body alone, so the result equals vmap of
// while_loop (which computes all lanes and selects) at a fraction of the work.
using Lanes = std::vector<int64_t>;

Array take(const Array& a, const Lanes& idx) {
  Array out = jx::detail::empty_array(Shape{int64_t(idx.size())}, a.dtype(), a.weak_type());
  const size_t w = a.itemsize();
  const auto* src = static_cast<const char*>(jx::detail::raw_data(a));
  auto* dst = static_cast<char*>(jx::detail::raw_data(out));
  for (size_t i = 0; i < idx.size(); ++i) std::memcpy(dst + i * w, src + size_t(idx[i]) * w, w);
  return out;
}

Keys take(const Keys& k, const Lanes& idx) { return {take(k.k0, idx), take(k.k1, idx)}; }

// a with a[idx[i]] = v[i] (a copy; arrays are immutable).
Array put(const Array& a, const Lanes& idx, const Array& v) {
  Array out = jx::detail::empty_array(a.shape(), a.dtype(), a.weak_type());
  const size_t w = a.itemsize();
  std::memcpy(jx::detail::raw_data(out), jx::detail::raw_data(a), size_t(a.size()) * w);
  const auto* src = static_cast<const char*>(jx::detail::raw_data(v));
  auto* dst = static_cast<char*>(jx::detail::raw_data(out));
  for (size_t i = 0; i < idx.size(); ++i) std::memcpy(dst + size_t(idx[i]) * w, src + i * w, w);
  return out;
}

// The entries of idx (lanes) whose pred (aligned with idx) holds.
Lanes where(const Array& pred, const Lanes& idx) {
  require_concrete(pred);
  const bool* p = jx::detail::data<bool>(pred);
  Lanes out;
  for (size_t i = 0; i < idx.size(); ++i)
    if (p[i]) out.push_back(idx[i]);
  return out;
}

Lanes iota_lanes(int64_t n) {
  Lanes l(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) l[size_t(i)] = i;
  return l;
}

// The per-lane constants of _gamma_one (alphas of shape [N]).
struct GammaSetup {
  Array boost_mask, d, c;
};

GammaSetup gamma_setup(const Array& alpha_orig) {
  const DType dt = alpha_orig.dtype();
  const Shape& shp = alpha_orig.shape();
  Array boost_mask = lax::ge(alpha_orig, full(1, dt, shp));
  Array alpha = lax::select(boost_mask, alpha_orig, lax::add(alpha_orig, full(1, dt, shp)));
  Array d = lax::sub(alpha, full(1.0 / 3.0, dt, shp));
  Array c = lax::div(full(1.0 / 3.0, dt, shp), lax::sqrt(d));
  return {boost_mask, d, c};
}

// _gamma_one's loop condition: true while the sample (X, V, U) is rejected.
Array gamma_rejected(const Array& X, const Array& V, const Array& U, const Array& d) {
  const DType dt = X.dtype();
  auto c = [&](double v) { return full(v, dt, X.shape()); };
  return lax::bitwise_and(
      lax::ge(U, lax::sub(c(1), lax::mul(c(0.0331), lax::mul(X, X)))),
      lax::ge(lax::log(U),
              lax::add(lax::mul(X, c(0.5)), lax::mul(d, lax::add(lax::sub(c(1), V), lax::log(V))))));
}

// The end of _gamma_one: d * V with the alpha < 1 boost (or its log).
Array gamma_finish(const Keys& subkey, const Array& alpha_orig, const GammaSetup& g,
                   const Array& V, bool log_space) {
  const DType dt = alpha_orig.dtype();
  const Array zero = full(0, dt, alpha_orig.shape()), one = full(1, dt, alpha_orig.shape());
  if (log_space) {
    Array log_samples = lax::neg(detail::exponential_keys(subkey, Shape{}, dt));
    Array log_boost = lax::select(lax::bitwise_or(g.boost_mask, lax::eq(log_samples, zero)), zero,
                                  lax::mul(log_samples, lax::div(one, alpha_orig)));
    return lax::add(lax::add(lax::log(g.d), lax::log(V)), log_boost);
  }
  Array samples = lax::sub(one, detail::uniform_keys(subkey, Shape{}, dt, const_f(0.0, dt),
                                                     const_f(1.0, dt)));
  Array boost = lax::select(g.boost_mask, one, lax::pow(samples, lax::div(one, alpha_orig)));
  return lax::mul(lax::mul(g.d, V), boost);
}

// _gamma_one for a batch of keys and alphas (both of shape [N]), eagerly.
Array gamma_one(const Keys& keys, const Array& alpha_orig, bool log_space) {
  const DType dt = alpha_orig.dtype();
  const int64_t n = alpha_orig.shape().numel();
  auto c = [&](double v, int64_t m) { return full(v, dt, Shape{m}); };
  const GammaSetup g = gamma_setup(alpha_orig);
  const Array& d = g.d;
  const Array& cc = g.c;

  std::vector<Keys> ks = detail::split_n(keys, 2);
  Keys key = ks[0];
  const Keys subkey = ks[1];
  // The initial state (X, V, U) = (0, 1, 2) always enters the body.
  Array V = c(1, n);
  Lanes active = iota_lanes(n);
  while (!active.empty()) {
    const int64_t m = int64_t(active.size());
    Keys ka = take(key, active);
    Array ca = take(cc, active), da = take(d, active);
    std::vector<Keys> k3 = detail::split_n(ka, 3);
    // Inner loop: redraw x until v = 1 + x*c > 0, on the lanes that still need it.
    Keys kk = k3[1];
    Array x = c(0, m), v = c(-1, m);
    Lanes need = iota_lanes(m);
    while (!need.empty()) {
      const int64_t r = int64_t(need.size());
      std::vector<Keys> k2 = detail::split_n(take(kk, need), 2);
      Array xn = detail::normal_keys(k2[1], Shape{}, dt);
      Array vn = lax::add(c(1, r), lax::mul(xn, take(ca, need)));
      kk = {put(kk.k0, need, k2[0].k0), put(kk.k1, need, k2[0].k1)};
      x = put(x, need, xn);
      v = put(v, need, vn);
      need = where(lax::le(vn, c(0, r)), need);
    }
    Array Xn = lax::mul(x, x);
    Array Vn = lax::mul(lax::mul(v, v), v);
    Array Un = detail::uniform_keys(k3[2], Shape{}, dt, const_f(0.0, dt), const_f(1.0, dt));
    key = {put(key.k0, active, k3[0].k0), put(key.k1, active, k3[0].k1)};
    V = put(V, active, Vn);
    active = where(gamma_rejected(Xn, Vn, Un, da), active);
  }
  return gamma_finish(subkey, alpha_orig, g, V, log_space);
}

using Carry = std::vector<Array>;

Array any_lane(const Array& pred) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < pred.ndim(); ++i) axes.push_back(i);
  return axes.empty() ? pred : lax::reduce_or(pred, axes);
}

// _gamma_one vmapped over N keys/alphas, staged: both loops are lax::while_loop over all N
// lanes, running while any lane's condition holds and replacing a lane's carry only where
// its own condition holds. That is how vmap batches a while_loop with a batched predicate,
// so every lane gets the values the eager loop (and JAX) computes.
Array gamma_one_traced(const Keys& keys, const Array& alpha_orig, bool log_space) {
  const DType dt = alpha_orig.dtype();
  const Shape lanes = alpha_orig.shape();
  auto c = [&](double v) { return full(v, dt, lanes); };
  const GammaSetup g = gamma_setup(alpha_orig);
  std::vector<Keys> ks = detail::split_n(keys, 2);

  // Carry (key0, key1, X, V, U); the initial (0, 1, 2) is rejected in every lane.
  auto rejected = [&](const Carry& s) { return gamma_rejected(s[2], s[3], s[4], g.d); };
  auto redraw = [&](const Carry& s) {
    // Inner carry (key0, key1, x, v): redraw x while v = 1 + x*c <= 0.
    Array need = lax::le(s[3], c(0));
    std::vector<Keys> k2 = detail::split_n(Keys{s[0], s[1]}, 2);
    Array xn = detail::normal_keys(k2[1], Shape{}, dt);
    Array vn = lax::add(c(1), lax::mul(xn, g.c));
    return Carry{lax::select(need, k2[0].k0, s[0]), lax::select(need, k2[0].k1, s[1]),
                 lax::select(need, xn, s[2]), lax::select(need, vn, s[3])};
  };
  auto body = [&](const Carry& s) {
    Array active = rejected(s);
    std::vector<Keys> k3 = detail::split_n(Keys{s[0], s[1]}, 3);
    Carry xv = lax::while_loop([&](const Carry& t) { return any_lane(lax::le(t[3], c(0))); },
                               redraw, Carry{k3[1].k0, k3[1].k1, c(0), c(-1)});
    Array X = lax::mul(xv[2], xv[2]);
    Array V = lax::mul(lax::mul(xv[3], xv[3]), xv[3]);
    Array U = detail::uniform_keys(k3[2], Shape{}, dt, const_f(0.0, dt), const_f(1.0, dt));
    return Carry{lax::select(active, k3[0].k0, s[0]), lax::select(active, k3[0].k1, s[1]),
                 lax::select(active, X, s[2]), lax::select(active, V, s[3]),
                 lax::select(active, U, s[4])};
  };
  Carry out = lax::while_loop([&](const Carry& s) { return any_lane(rejected(s)); }, body,
                              Carry{ks[0].k0, ks[0].k1, c(0), c(1), c(2)});
  return gamma_finish(ks[1], alpha_orig, g, out[3], log_space);
}

// _gamma: a broadcast to shape, one split key per element.
Array gamma_impl(const char* fn, const Array& key, const Array& a, OptionalShape shape_opt,
                 DType dtype, bool log_space) {
  Keys k = detail::unpack(fn, key);
  detail::KeyUse use(fn, key);
  detail::require_float(fn, dtype);
  Shape shape = shape_opt ? *shape_opt : a.shape();
  detail::check_shape(fn, shape);
  detail::check_broadcast(fn, shape, a.shape());
  Array aa = lax::convert_element_type(a, dtype);
  if (aa.shape() != shape) aa = numpy::detail::broadcast_to(fn, aa, shape);
  const int64_t n = shape.numel();
  if (n == 0) return lax::reshape(aa, shape);
  Keys keys = detail::split(k, Shape{n});
  Array flat = lax::reshape(aa, Shape{n});
  Array out = run_eagerly(keys, flat) ? gamma_one(keys, flat, log_space)
                                      : gamma_one_traced(keys, flat, log_space);
  return lax::reshape(out, shape);
}

Array softmax_last(const Array& x) {
  const int64_t last = x.ndim() - 1;
  Shape keep = x.shape();
  keep[size_t(last)] = 1;
  Array m = lax::reshape(lax::reduce_max(x, {last}), keep);
  Array e = lax::exp(lax::sub(x, m));
  return lax::div(e, lax::reshape(lax::reduce_sum(e, {last}), keep));
}

}  // namespace

Array gamma(const Array& key, const Array& a, OptionalShape shape, DType dtype) {
  return gamma_impl("gamma", key, a, shape, dtype, false);
}

Array loggamma(const Array& key, const Array& a, OptionalShape shape, DType dtype) {
  return gamma_impl("loggamma", key, a, shape, dtype, true);
}

Array beta(const Array& key, const Array& a, const Array& b, OptionalShape shape_opt,
           DType dtype) {
  Keys k = detail::unpack("beta", key);
  detail::KeyUse use("beta", key);
  detail::require_float("beta", dtype);
  Shape shape;
  if (shape_opt) {
    shape = *shape_opt;
    detail::check_shape("beta", shape);
    detail::check_broadcast("beta", shape, a.shape(), b.shape());
  } else {
    shape = detail::broadcast_all("beta", a.shape(), b.shape());
  }
  std::vector<Keys> ks = detail::split_n(k, 2);
  Array lga = loggamma(detail::pack(ks[0]), a, shape, dtype);
  Array lgb = loggamma(detail::pack(ks[1]), b, shape, dtype);
  Array m = lax::max(lga, lgb);
  Array ga = lax::exp(lax::sub(lga, m));
  Array gb = lax::exp(lax::sub(lgb, m));
  return lax::div(ga, lax::add(ga, gb));
}

Array dirichlet(const Array& key, const Array& alpha, OptionalShape shape_opt,
                DType dtype) {
  detail::unpack("dirichlet", key);
  detail::KeyUse use("dirichlet", key);
  detail::require_float("dirichlet", dtype);
  if (alpha.ndim() < 1)
    throw ShapeError(str("[dirichlet] requires alpha.ndim >= 1, got alpha.ndim == ", alpha.ndim()));
  Shape batch(alpha.shape().begin(), alpha.shape().end() - 1);
  Shape shape = batch;
  if (shape_opt) {
    shape = *shape_opt;
    detail::check_shape("dirichlet", shape);
    detail::check_broadcast("dirichlet", shape, batch);
  }
  shape.push_back(alpha.shape(-1));
  return softmax_last(loggamma(key, alpha, shape, dtype));
}

Array chisquare(const Array& key, const Array& df, OptionalShape shape_opt, DType dtype) {
  detail::unpack("chisquare", key);
  detail::KeyUse use("chisquare", key);
  detail::require_float("chisquare", dtype);
  Shape shape = shape_opt ? *shape_opt : df.shape();
  Array d = lax::convert_element_type(df, dtype);
  Array half_df = lax::div(d, const_f(2.0, dtype, size_t(d.ndim())));
  Array lg = loggamma(key, half_df, shape, dtype);
  return lax::mul(lax::exp(lg), const_f(2.0, dtype, shape.size()));
}

Array t(const Array& key, const Array& df, const Shape& shape, DType dtype) {
  Keys k = detail::unpack("t", key);
  detail::KeyUse use("t", key);
  detail::require_float("t", dtype);
  detail::check_shape("t", shape);
  detail::check_broadcast("t", shape, df.shape());
  std::vector<Keys> ks = detail::split_n(k, 2);
  Array n = detail::normal_keys(ks[0], shape, dtype);
  Array d = detail::to_rank("t", lax::convert_element_type(df, dtype), shape.size());
  Array half_df = lax::div(d, const_f(2.0, dtype, shape.size()));
  Array g = gamma(detail::pack(ks[1]), half_df, shape, dtype);
  return lax::mul(n, lax::sqrt(lax::div(half_df, g)));
}

namespace {

// Runs `body` while any element of cond(carry) holds: eagerly when every carry value is
// concrete and nothing is being traced, else as one lax::while_loop (same values).
template <class Cond, class Body>
Carry loop_while_any(Cond cond, Body body, Carry init) {
  bool eager = tr::current_trace() == nullptr;
  for (const Array& x : init) eager = eager && x.is_concrete();
  if (!eager)
    return lax::while_loop([&](const Carry& s) { return any_lane(cond(s)); }, body, init);
  while (any(cond(init))) init = body(init);
  return init;
}

// _poisson_knuth: carry (key0, key1, k, log_prod) over the whole shape, one key.
Array poisson_knuth(const Keys& key, const Array& lam, const Shape& shape, DType dtype) {
  const DType f = DType::Float32;
  Array neg_lam = lax::neg(lam);
  Array one = lax::broadcast_in_dim(detail::const_i(1, dtype), shape, {});
  auto running = [&](const Carry& s) { return lax::gt(s[3], neg_lam); };
  auto body = [&](const Carry& s) {
    std::vector<Keys> ks = detail::split_n(Keys{s[0], s[1]}, 2);
    Array k = lax::select(running(s), lax::add(s[2], one), s[2]);
    Array u = detail::uniform_keys(ks[1], shape, f, const_f(0.0, f), const_f(1.0, f));
    return Carry{ks[0].k0, ks[0].k1, k, lax::add(s[3], lax::log(u))};
  };
  Carry out = loop_while_any(running, body,
                             Carry{key.k0, key.k1,
                                   lax::broadcast_in_dim(detail::const_i(0, dtype), shape, {}),
                                   full(0.0, f, shape)});
  return lax::sub(out[2], one);
}

// _poisson_rejection (transformed rejection, Hormann 1993): carry (key0, key1, k_out,
// accepted).
Array poisson_rejection(const Keys& key, const Array& lam, const Shape& shape, DType dtype) {
  const DType f = DType::Float32;
  auto c = [&](double v) { return full(v, f, shape); };
  Array log_lam = lax::log(lam);
  Array b = lax::add(c(0.931), lax::mul(c(2.53), lax::sqrt(lam)));
  Array a = lax::add(c(-0.059), lax::mul(c(0.02483), b));
  Array inv_alpha = lax::add(c(1.1239), lax::div(c(1.1328), lax::sub(b, c(3.4))));
  Array v_r = lax::sub(c(0.9277), lax::div(c(3.6224), lax::sub(b, c(2.0))));
  auto pending = [](const Carry& s) { return lax::bitwise_not(s[3]); };
  auto body = [&](const Carry& s) {
    std::vector<Keys> ks = detail::split_n(Keys{s[0], s[1]}, 3);
    Array u = lax::sub(detail::uniform_keys(ks[1], shape, f, const_f(0.0, f), const_f(1.0, f)),
                       c(0.5));
    Array v = detail::uniform_keys(ks[2], shape, f, const_f(0.0, f), const_f(1.0, f));
    Array us = lax::sub(c(0.5), lax::abs(u));
    Array k = lax::floor(lax::add(
        lax::add(lax::mul(lax::add(lax::div(lax::mul(c(2.0), a), us), b), u), lam), c(0.43)));
    Array s_ = lax::log(lax::div(lax::mul(v, inv_alpha), lax::add(lax::div(a, lax::mul(us, us)), b)));
    Array t = lax::sub(lax::add(lax::neg(lam), lax::mul(k, log_lam)), lax::lgamma(lax::add(k, c(1.0))));
    Array accept1 = lax::bitwise_and(lax::ge(us, c(0.07)), lax::le(v, v_r));
    Array reject = lax::bitwise_or(lax::lt(k, c(0.0)),
                                   lax::bitwise_and(lax::lt(us, c(0.013)), lax::gt(v, us)));
    Array accept2 = lax::le(s_, t);
    Array accept = lax::bitwise_or(accept1, lax::bitwise_and(lax::bitwise_not(reject), accept2));
    return Carry{ks[0].k0, ks[0].k1, lax::select(accept, k, s[2]), lax::bitwise_or(s[3], accept)};
  };
  Carry out = loop_while_any(pending, body,
                             Carry{key.k0, key.k1, c(-1.0),
                                   lax::broadcast_in_dim(Array(false), shape, {})});
  return lax::convert_element_type(out[2], dtype);
}

}  // namespace

Array poisson(const Array& key, const Array& lam_in, OptionalShape shape_opt, DType dtype) {
  Keys k = detail::unpack("poisson", key);
  detail::KeyUse use("poisson", key);
  if (!is_integer(dtype))
    throw DTypeError(str("[poisson] dtype must be an integer dtype, got ", dtype_name(dtype),
                         "; use int32 (the default) or another integer dtype"));
  Shape shape = shape_opt ? *shape_opt : lam_in.shape();
  detail::check_shape("poisson", shape);
  const DType f = DType::Float32;
  Array lam = lax::convert_element_type(numpy::detail::broadcast_to("poisson", lam_in, shape), f);
  if (shape.numel() == 0) return lax::convert_element_type(lam, dtype);
  Array use_knuth = lax::bitwise_or(lax::ne(lam, lam), lax::lt(lam, full(10.0, f, shape)));
  Array lam_knuth = lax::select(use_knuth, lam, full(0.0, f, shape));
  Array lam_rej = lax::select(use_knuth, full(1e5, f, shape), lam);
  Array result = lax::select(use_knuth, poisson_knuth(k, lam_knuth, shape, dtype),
                             poisson_rejection(k, lam_rej, shape, dtype));
  Array zero = lax::broadcast_in_dim(detail::const_i(0, dtype), shape, {});
  return lax::select(lax::eq(lam, full(0.0, f, shape)), zero, result);
}

}  // namespace jx::random
