// Special-function primitives of jax.lax (jax/_src/lax/special.py): igamma, igammac,
// igamma_grad_a, regularized_incomplete_beta, zeta, polygamma, bessel_i0e, bessel_i1e.
// Elementwise over floating operands of one dtype that broadcast by size-1 dims (the
// binary primitives' departure from lax); the result is weak only if every operand is.
//
// Eager impl: the kernels of backend/cpu/special.cpp (XLA's algorithms, in double). Under
// jit they stay library calls, as lgamma and digamma do: the emit rule returns "", since
// the per-element loops of special_math.h are not expressions of the generated code.
// Autodiff: JAX's rules, and where JAX has none a documented choice (docs/scipy.md): the
// derivative of igamma_grad_a in x (JAX: none), of zeta in q (JAX: none); the arguments
// JAX cannot differentiate (betainc's a and b, polygamma's m, zeta's x, igamma_grad_a's
// a) throw ValueError when a tangent reaches them. None is linear.
#include <cmath>
#include <limits>
#include <utility>

#include "backend/cpu/special.h"
#include "jx/lax/special.h"
#include "ops/ad_rules.h"
#include "ops/batching.h"
#include "ops/common.h"
#include "support/check.h"

namespace jx::ops {
namespace {

struct SpecialSpec {
  Prim prim;
  cpu::SpecialOp op;
  const char* args;  // the operands' names, for error messages
  const char* scipy;  // the jx::scipy::special function that promotes its arguments
};

constexpr SpecialSpec kSpecs[] = {
    {Prim::Igamma, cpu::SpecialOp::Igamma, "(a, x)", "gammainc"},
    {Prim::Igammac, cpu::SpecialOp::Igammac, "(a, x)", "gammaincc"},
    {Prim::IgammaGradA, cpu::SpecialOp::IgammaGradA, "(a, x)", "gammainc"},
    {Prim::RegularizedIncompleteBeta, cpu::SpecialOp::Betainc, "(a, b, x)", "betainc"},
    {Prim::Zeta, cpu::SpecialOp::Zeta, "(x, q)", "zeta"},
    {Prim::Polygamma, cpu::SpecialOp::Polygamma, "(m, x)", "polygamma"},
    {Prim::BesselI0e, cpu::SpecialOp::BesselI0e, "(x)", "i0e"},
    {Prim::BesselI1e, cpu::SpecialOp::BesselI1e, "(x)", "i1e"},
};

const SpecialSpec& spec_of(Prim p) {
  for (const auto& s : kSpecs)
    if (s.prim == p) return s;
  throw InternalError("jx internal error: not a special-function primitive");
}

template <Prim P>
Avals special_abstract_eval(std::span<const Aval> in, const Params&) {
  const SpecialSpec& s = spec_of(P);
  const char* op = name(P);
  JX_CHECK(int(in.size()) == cpu::special_arity(s.op), "[", op, "] takes ",
           cpu::special_arity(s.op), " operands, got ", in.size());
  require_same_dtype(op, in);
  if (!is_floating(in[0].dtype))
    throw DTypeError(str("[", op, "] needs floating operands ", s.args, ", got ", avals_str(in),
                         "; convert with astype(jx::float32), or use jx::scipy::special::",
                         s.scipy, ", which promotes integers to float"));
  return {Aval{elementwise_shape(op, in), in[0].dtype, all_weak(in)}};
}

template <Prim P>
void special_impl(std::span<const Array> in, std::span<Array> out, const Params&) {
  const void* data[3];
  const int64_t* shapes[3];
  for (size_t k = 0; k < in.size(); ++k) {
    const auto& a = detail::impl_of(in[k]);
    data[k] = a.buffer->data();
    shapes[k] = a.shape.data();
  }
  const auto& o = detail::impl_of(out[0]);
  cpu::special(spec_of(P).op, o.dtype, data, shapes, detail::raw_data(out[0]), o.shape.data(),
               int(o.shape.size()));
}

// ---- autodiff ----

// A tangent reached an argument the primitive is not differentiable in.
[[noreturn]] void not_differentiable(Prim p, const char* arg, const char* why) {
  throw ValueError(str("[", name(p), "] is not differentiable with respect to ", arg, " (", why,
                       "); pass it as a constant, e.g. through jx::stop_gradient, or "
                       "differentiate only the other arguments"));
}

// d/dx P(a, x): the gamma density exp(-x + (a - 1) log x - lgamma(a)), as JAX's
// igamma_gradx.
Array igamma_dx(const Array& a, const Array& x) {
  auto c = [&](double v) { return ad_rules::constant(v, x); };
  return lax::exp(lax::sub(lax::add(lax::neg(x), lax::mul(lax::sub(a, c(1.0)), lax::log(x))),
                           lax::lgamma(a)));
}

// finfo(dtype).eps of a floating dtype.
double finfo_eps(DType t) {
  switch (t) {
    case DType::Float16: return 0x1p-10;
    case DType::BFloat16: return 0x1p-7;
    case DType::Float32: return 0x1p-23;
    default: return 0x1p-52;
  }
}

// The contribution of operand I's (non-zero) tangent g to the output tangent.
template <Prim P, int I>
Array special_tangent(const Array& g, std::span<const Array> in, const Array& ans) {
  [[maybe_unused]] auto c = [&](double v) { return ad_rules::constant(v, ans); };
  if constexpr (P == Prim::Igamma || P == Prim::Igammac) {
    const Array &a = in[0], &x = in[1];
    Array d = I == 0 ? lax::igamma_grad_a(a, x) : igamma_dx(a, x);
    Array t = lax::mul(g, d);
    return P == Prim::Igamma ? t : lax::neg(t);
  } else if constexpr (P == Prim::IgammaGradA) {
    // JAX defines no derivative here. In x it is d/da of the density:
    // igamma_dx(a, x) (log x - digamma(a)); in a it would need d2P/da2, which XLA has not.
    if constexpr (I == 0) {
      not_differentiable(P, "a", "igamma_grad_a has no derivative in a; JAX defines none");
    } else {
      const Array &a = in[0], &x = in[1];
      return lax::mul(g, lax::mul(igamma_dx(a, x), lax::sub(lax::log(x), lax::digamma(a))));
    }
  } else if constexpr (P == Prim::RegularizedIncompleteBeta) {
    // JAX's betainc_gradx: the beta density x^(a-1) (1-x)^(b-1) / B(a, b).
    if constexpr (I < 2) {
      not_differentiable(P, I == 0 ? "a" : "b", "JAX differentiates betainc in x only");
    } else {
      const Array &a = in[0], &b = in[1], &x = in[2];
      Array lbeta = lax::sub(lax::add(lax::lgamma(a), lax::lgamma(b)), lax::lgamma(lax::add(a, b)));
      Array log_density =
          lax::sub(lax::add(lax::mul(lax::sub(b, c(1.0)), lax::log1p(lax::neg(x))),
                            lax::mul(lax::sub(a, c(1.0)), lax::log(x))),
                   lbeta);
      return lax::mul(lax::exp(log_density), g);
    }
  } else if constexpr (P == Prim::Zeta) {
    // d/dq zeta(x, q) = -x zeta(x + 1, q) (JAX defines no derivative for zeta).
    if constexpr (I == 0) {
      not_differentiable(P, "x", "zeta has no derivative in its order x; JAX defines none");
    } else {
      const Array &x = in[0], &q = in[1];
      return lax::mul(g, lax::neg(lax::mul(x, lax::zeta(lax::add(x, c(1.0)), q))));
    }
  } else if constexpr (P == Prim::Polygamma) {
    // JAX's polygamma_gradx: the next order.
    if constexpr (I == 0) {
      not_differentiable(P, "m", "the order m is an integer, as in JAX");
    } else {
      const Array &m = in[0], &x = in[1];
      return lax::mul(g, lax::polygamma(lax::add(m, c(1.0)), x));
    }
  } else if constexpr (P == Prim::BesselI0e) {
    // i0e' = i1e - sign(x) i0e (JAX's defjvp2 form, reusing the output).
    const Array& x = in[0];
    return lax::mul(g, lax::sub(lax::bessel_i1e(x), lax::mul(lax::sign(x), ans)));
  } else if constexpr (P == Prim::BesselI1e) {
    // i1e' = i0e - i1e (sign(x) + 1/x), with JAX's limit 1/2 for |x| <= eps, where i1e / x
    // would be 0 / 0 at 0 and cancel against i0e just above it.
    const Array& x = in[0];
    const double eps = finfo_eps(x.dtype());
    Array not_tiny = lax::gt(lax::abs(x), c(eps));
    Array safe_x = lax::select(not_tiny, x, c(eps));
    Array dy_dx = lax::sub(lax::bessel_i0e(safe_x),
                           lax::mul(ans, lax::add(lax::sign(safe_x), lax::div(c(1.0), safe_x))));
    dy_dx = lax::select(not_tiny, dy_dx, c(0.5));
    return lax::mul(g, dy_dx);
  } else {
    static_assert(P == Prim::Igamma, "no tangent formula for this primitive");
  }
}

template <Prim P, size_t... I>
Array sum_tangents(std::span<const Array> primals, std::span<const Array> tangents,
                   const Array& ans, std::index_sequence<I...>) {
  Array t;
  ((t = ad_rules::is_zero(tangents[I])
            ? t
            : ad_rules::add_tangents(t, special_tangent<P, int(I)>(tangents[I], primals, ans))),
   ...);
  return t;
}

template <Prim P>
constexpr size_t kArity = P == Prim::RegularizedIncompleteBeta                ? 3
                          : (P == Prim::BesselI0e || P == Prim::BesselI1e) ? 1
                                                                           : 2;

template <Prim P>
Arrays special_jvp(std::span<const Array> primals, std::span<const Array> outs,
                   std::span<const Array> tangents, const Params&) {
  Array t = sum_tangents<P>(primals, tangents, outs[0], std::make_index_sequence<kArity<P>>());
  // A tangent of an operand with size-1 dims is broadcast up to the output.
  return {ad_rules::bcast(t, outs[0])};
}

// The special functions are loops (series, continued fractions) in backend/cpu, not
// expressions: jit runs each equation as a library call of that kernel.
std::string special_emit(std::span<const std::string>, std::span<const Aval>, const Params&) {
  return "";
}

template <Prim P>
void reg() {
  PrimitiveInfo& pi = mutable_info(P);
  pi.abstract_eval = special_abstract_eval<P>;
  pi.impl = special_impl<P>;
  pi.jvp = special_jvp<P>;
  pi.batch = batching::elementwise<P>;
  pi.emit = special_emit;
  pi.not_linear = true;
}

}  // namespace

void register_special() {
  reg<Prim::Igamma>();
  reg<Prim::Igammac>();
  reg<Prim::IgammaGradA>();
  reg<Prim::RegularizedIncompleteBeta>();
  reg<Prim::Zeta>();
  reg<Prim::Polygamma>();
  reg<Prim::BesselI0e>();
  reg<Prim::BesselI1e>();
}

}  // namespace jx::ops
