#include <array>
#include <mutex>
#include <sstream>

#include "core/array_impl.h"
#include "ops/primitive.h"

namespace jx::ops {

// One registration function per family file.
void register_unary();
void register_binary();
void register_convert_select();
void register_reduce();
void register_cumulative_sort();
void register_shape();
void register_indexing();
void register_dot();
void register_conv();
void register_linalg();
void register_schur();
void register_fft();
void register_special();
void register_windowed();
void register_random();
void register_collective();
void register_ad();
void register_control();  // src/control
void register_custom();   // src/control
void register_jit();      // src/jit

namespace {

std::array<PrimitiveInfo, kNumPrims> build_table() {
  std::array<PrimitiveInfo, kNumPrims> t{};
  int i = 0;
#define JX_PRIMITIVE(id_, name_, family_, kind_) \
  t[size_t(i)].id = Prim::id_;                   \
  t[size_t(i)].name = name_;                     \
  t[size_t(i)].family = #family_;                \
  t[size_t(i)].fusion = FusionKind::kind_;       \
  ++i;
#include "ops/primitives.def"
#undef JX_PRIMITIVE
  return t;
}

std::array<PrimitiveInfo, kNumPrims>& table() {
  static std::array<PrimitiveInfo, kNumPrims> t = build_table();
  return t;
}

void register_all() {
  register_unary();
  register_binary();
  register_convert_select();
  register_reduce();
  register_cumulative_sort();
  register_shape();
  register_indexing();
  register_dot();
  register_conv();
  register_linalg();
  register_schur();
  register_fft();
  register_special();
  register_windowed();
  register_random();
  register_collective();
  register_ad();
  register_control();
  register_custom();
  register_jit();
  // The primitives that take complex operands (docs/complex.md). Their kernels and rules
  // handle complex; every other primitive rejects it in abstract_eval() below. Higher-order
  // primitives pass complex through to their bodies, whose primitives are checked in turn.
  for (Prim p : {Prim::Neg, Prim::Sign, Prim::IsFinite, Prim::Exp, Prim::Log, Prim::Log1p,
                 Prim::Expm1, Prim::Tanh, Prim::Sin, Prim::Cos, Prim::Tan, Prim::Asin, Prim::Acos,
                 Prim::Atan, Prim::Sinh, Prim::Cosh, Prim::Asinh, Prim::Acosh, Prim::Atanh,
                 Prim::Abs, Prim::Sqrt, Prim::Rsqrt, Prim::Square, Prim::IntegerPow, Prim::Copy,
                 Prim::Real, Prim::Imag, Prim::Conj, Prim::Complex,
                 Prim::Add, Prim::Sub, Prim::Mul, Prim::Div, Prim::Pow, Prim::Eq, Prim::Ne,
                 Prim::Max, Prim::Min, Prim::ReduceMax, Prim::ReduceMin, Prim::Argmax,
                 Prim::Argmin, Prim::Sort,
                 Prim::ConvertElementType, Prim::SelectN, Prim::ReduceSum, Prim::ReduceProd,
                 Prim::Cumsum, Prim::Cumprod, Prim::Cummax, Prim::Cummin, Prim::DotGeneral,
                 Prim::Cholesky, Prim::TriangularSolve, Prim::Lu, Prim::Qr, Prim::Eigh, Prim::Svd,
                 Prim::Eig, Prim::Schur, Prim::Fft,
                 Prim::Reshape, Prim::BroadcastInDim, Prim::Transpose, Prim::Squeeze, Prim::Rev,
                 Prim::Concatenate, Prim::Pad, Prim::Slice, Prim::DynamicSlice,
                 Prim::DynamicUpdateSlice, Prim::Gather, Prim::Scatter, Prim::ScatterAdd,
                 Prim::ScatterMul, Prim::StopGradient, Prim::Cond, Prim::While, Prim::Scan,
                 Prim::CustomJvpCall, Prim::CustomVjpCall, Prim::CustomLin, Prim::Remat,
                 Prim::Pjit})
    table()[size_t(p)].complex = true;
}

std::array<PrimitiveInfo, kNumPrims>& registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    table();
    register_all();
  });
  return table();
}

}  // namespace

const PrimitiveInfo& info(Prim p) { return registered()[size_t(p)]; }
PrimitiveInfo& mutable_info(Prim p) { return table()[size_t(p)]; }
const char* name(Prim p) { return table()[size_t(p)].name; }

namespace {
[[noreturn]] void no_complex(Prim p, const Aval& a, const char* role) {
  // lax's ordered comparisons take real operands only, as JAX's; jnp's order complex values.
  const bool ordered = p == Prim::Lt || p == Prim::Le || p == Prim::Gt || p == Prim::Ge;
  throw DTypeError(str("[", name(p), "] does not support complex dtypes, got ", role, " ",
                       type_str(a.dtype, a.shape), "; complex numbers in jx cover elementwise arithmetic, "
                       "max/min, sorting, reductions by sum, product, max and min, dot_general, fft, "
                       "linear algebra and data movement (docs/complex.md). ",
                       ordered ? "jnp::less, less_equal, greater and greater_equal compare complex "
                                 "values lexicographically by (real, imag)"
                               : "Work on jnp::real(x) and jnp::imag(x) instead"));
}
}  // namespace

Avals abstract_eval(Prim p, std::span<const Aval> in, const Params& params) {
  const PrimitiveInfo& pi = info(p);
  auto complex = [](const Aval& a) {
    return a.dtype == DType::Complex64 || a.dtype == DType::Complex128;
  };
  if (!pi.complex)
    for (const Aval& a : in)
      if (complex(a)) no_complex(p, a, "an operand");
  Avals out = pi.abstract_eval(in, params);
  if (!pi.complex)
    for (const Aval& a : out)
      if (complex(a)) no_complex(p, a, "a result");
  return out;
}

Aval aval_of(const Array& a) {
  const auto& im = detail::impl_of(a);
  return {im.shape, im.dtype, im.weak};
}

std::vector<std::string> missing_rules(RuleSet req) {
  std::vector<std::string> out;
  for (const PrimitiveInfo& p : registered()) {
    std::string n = p.name;
    if (!p.abstract_eval) out.push_back(n + ": no abstract_eval rule");
    if (!p.impl) out.push_back(n + ": no impl rule");
    if (req.jvp && !p.jvp && !p.full_jvp && !p.zero_tangent) out.push_back(n + ": no jvp rule");
    if (req.transpose && !p.transpose && !p.not_linear) out.push_back(n + ": no transpose rule");
    if (req.batch && !p.batch) out.push_back(n + ": no batching rule");
    bool fusible = p.fusion == FusionKind::Elementwise;
    if (req.emit && fusible && !p.emit) out.push_back(n + ": no codegen rule");
  }
  return out;
}

void check_registry() {
  auto missing = missing_rules({});
  if (missing.empty()) return;
  std::ostringstream os;
  os << "jx internal error: the primitive registry is incomplete:";
  for (auto& m : missing) os << "\n  " << m;
  throw InternalError(os.str());
}

// ---- Params ----
namespace {
struct ParamPrinter {
  std::ostream& os;
  void operator()(bool v) const { os << (v ? "True" : "False"); }
  void operator()(int64_t v) const { os << v; }
  void operator()(double v) const { os << v; }
  void operator()(const std::string& v) const { os << v; }
  void operator()(DType v) const { os << dtype_name(v); }
  void operator()(const std::vector<int64_t>& v) const {
    os << "(";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    if (v.size() == 1) os << ",";
    os << ")";
  }
  void operator()(const std::shared_ptr<const ParamObject>& v) const {
    os << (v ? v->str() : "None");
  }
};
}  // namespace

std::string Params::str() const {
  std::ostringstream os;
  for (size_t i = 0; i < items_.size(); ++i) {
    os << (i ? " " : "") << items_[i].first << "=";
    std::visit(ParamPrinter{os}, items_[i].second);
  }
  return os.str();
}

bool operator==(const Params& a, const Params& b) {
  if (a.items_.size() != b.items_.size()) return false;
  for (size_t i = 0; i < a.items_.size(); ++i) {
    const auto& [ka, va] = a.items_[i];
    const auto& [kb, vb] = b.items_[i];
    if (ka != kb || va.index() != vb.index()) return false;
    if (auto* pa = std::get_if<std::shared_ptr<const ParamObject>>(&va)) {
      auto& pb = std::get<std::shared_ptr<const ParamObject>>(vb);
      if (bool(*pa) != bool(pb) || (*pa && !(*pa)->equals(*pb))) return false;
    } else if (!(va == vb)) {
      return false;
    }
  }
  return true;
}

size_t Params::hash() const {
  size_t h = items_.size();
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const auto& [k, v] : items_) {
    mix(std::hash<std::string_view>()(k));
    mix(v.index());
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            for (auto e : x) mix(std::hash<int64_t>()(e));
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const ParamObject>>) {
            mix(x ? x->hash() : 0);
          } else if constexpr (std::is_same_v<T, DType>) {
            mix(size_t(x));
          } else {
            mix(std::hash<T>()(x));
          }
        },
        v);
  }
  return h;
}

}  // namespace jx::ops
