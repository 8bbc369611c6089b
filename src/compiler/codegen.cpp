// Kernel source generation. Values are emitted on demand ("elemental" emission, as XLA's
// loop fusion): a value is a `const` local computed from its operands' locals, defined in
// the outermost loop scope where its indices exist (a per-row value of a row kernel
// is computed once per row, not once per element), memoized per scope. Loop-invariant
// values -- computed only from literals, one-element inputs and broadcasts of such values
// (Adam's bias corrections 1 / (1 - pow(0.9, t))) -- go to a prologue before every loop,
// so they are computed once per call instead of once per element.
#include "compiler/codegen.h"
#include "compiler/codegen_writer.h"
#include "compiler/toolchain.h"

#include <cmath>
#include <cstdio>

#include "compiler/complex_scalar_source.h"
#include "core/array_impl.h"
#include "ops/emit_prelude.h"
#include "support/check.h"

namespace jx::compiler {
namespace gen {

using ops::Aval;

bool is_costly(Prim p) {
  switch (p) {
    case Prim::Exp: case Prim::Exp2: case Prim::Log: case Prim::Log1p: case Prim::Expm1:
    case Prim::Tanh: case Prim::Logistic: case Prim::Sin: case Prim::Cos: case Prim::Tan:
    case Prim::Asin: case Prim::Acos: case Prim::Atan: case Prim::Sinh: case Prim::Cosh:
    case Prim::Asinh:
      return true;
    default:
      return false;
  }
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string ctype(DType t) {
  const char* c = ops::c_type(t);
  JX_CHECK(c, "no C type for ", dtype_name(t));
  return c;
}

namespace {

std::string float_literal(double v, bool is_f32) {
  const char* sfx = is_f32 ? "f" : "";
  if (std::isnan(v))
    return str("(", std::signbit(v) ? "-" : "", is_f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")", ")");
  if (std::isinf(v)) return str("(", v < 0 ? "-" : "", is_f32 ? "__builtin_inff()" : "__builtin_inf()", ")");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);  // hex: exact, no rounding on the way back
  return str("(", buf, sfx, ")");
}

}  // namespace

std::string literal(const Array& a) {
  const void* p = detail::raw_data(a);
  const DType t = a.dtype();
  auto typed = [&](auto v, const char* suffix) { return str("((", ctype(t), ")", v, suffix, ")"); };
  switch (t) {
    case DType::Bool: return *static_cast<const bool*>(p) ? "true" : "false";
    case DType::Float32: return float_literal(double(*static_cast<const float*>(p)), true);
    case DType::Float64: return float_literal(*static_cast<const double*>(p), false);
    case DType::Int8: return typed(int64_t(*static_cast<const int8_t*>(p)), "LL");
    case DType::Int16: return typed(int64_t(*static_cast<const int16_t*>(p)), "LL");
    case DType::Int32: return typed(int64_t(*static_cast<const int32_t*>(p)), "LL");
    case DType::Int64: {
      int64_t v = *static_cast<const int64_t*>(p);
      if (v == INT64_MIN) return "((int64_t)(-9223372036854775807LL - 1))";
      return typed(v, "LL");
    }
    case DType::UInt8: return typed(uint64_t(*static_cast<const uint8_t*>(p)), "ULL");
    case DType::UInt16: return typed(uint64_t(*static_cast<const uint16_t*>(p)), "ULL");
    case DType::UInt32: return typed(uint64_t(*static_cast<const uint32_t*>(p)), "ULL");
    case DType::UInt64: return typed(*static_cast<const uint64_t*>(p), "ULL");
    case DType::Complex64: {
      const auto* c = static_cast<const float*>(p);
      return str(ctype(t), "(", float_literal(double(c[0]), true), ", ", float_literal(double(c[1]), true), ")");
    }
    case DType::Complex128: {
      const auto* c = static_cast<const double*>(p);
      return str(ctype(t), "(", float_literal(c[0], false), ", ", float_literal(c[1], false), ")");
    }
    default: break;
  }
  JX_CHECK(false, "literal of dtype ", dtype_name(t), " in generated code");
  return "";
}

bool step_has_complex(const ir::Jaxpr& j, const FusedStep& st) {
  for (int i : st.eqns) {
    const ir::Eqn& e = j.eqns[size_t(i)];
    for (const ir::Atom& a : e.inputs)
      if (is_complex(j.aval_of(a).dtype)) return true;
    for (int v : e.outputs)
      if (is_complex(j.avals[size_t(v)].dtype)) return true;
  }
  return false;
}

bool is_reduce(Prim p) {
  switch (p) {
    case Prim::ReduceSum: case Prim::ReduceProd: case Prim::ReduceMax: case Prim::ReduceMin:
    case Prim::ReduceAnd: case Prim::ReduceOr: case Prim::ReduceXor:
      return true;
    default:
      return false;
  }
}

std::string KernelWriter::write(const std::string& symbol) {
  std::string head = str("void ", symbol, "(const void* const* jx_in, void* const* jx_out) {\n");
  for (size_t k = 0; k < st_.inputs.size(); ++k) {
    const DType t = j_.avals[size_t(st_.inputs[k])].dtype;
    const std::string T = t == DType::Bool ? "uint8_t" : ctype(t);  // see load()
    head += str("  const ", T, "* in", k, " = static_cast<const ", T, "*>(jx_in[", k, "]);\n");
  }
  for (size_t k = 0; k < st_.outputs.size(); ++k) {
    const std::string T = ctype(j_.avals[size_t(st_.outputs[k])].dtype);
    head += str("  ", T, "* out", k, " = static_cast<", T, "*>(jx_out[", k, "]);\n");
  }
  std::string body;
  if (numel(st_.domain) == 0 && !st_.has_reduction()) {
    body = "  // empty domain: nothing to compute\n";
  } else if (st_.has_reduction()) {
    body = use_cols() ? cols() : rows();
  } else {
    mode_ = Mode::Flat;
    body = flat();
    if (flat_failed_) {
      mode_ = Mode::Nested;
      scopes_.clear();
      prologue_ = Prologue{};
      prologue_stores_.clear();
      body = nested();
    }
  }
  // The prologue's stores come after all its reads: a donated one-element input may
  // share its buffer with a one-element output.
  std::string code = head + indent_block(prologue_code() + prologue_stores_, "  ") + body + "}\n";
  return step_has_complex(j_, st_) ? without_omp_simd(code) : code;
}

// A kernel with complex values loses its `omp simd` pragmas. OpenMP lowering runs before
// inlining, while a std::complex local still has its address taken (its operators are
// member functions), so it becomes a per-lane array in memory and GCC then does not
// vectorize the loop at all: a fused z * w + conj(z) * 0.5 ran 16x slower than the same
// loop without the pragma, which GCC's own vectorizer does vectorize after inlining.
std::string without_omp_simd(const std::string& code) {
  std::string out;
  size_t start = 0;
  while (start < code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    const std::string line = code.substr(start, end - start);
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line.compare(first, 16, "#pragma omp simd") != 0) out += line + "\n";
    start = end + 1;
  }
  return out;
}

// True when var's value does not depend on the loop indices: it is computed (inside the
// kernel) only from literals, one-element inputs and other invariant values. A
// reduction or an iota over a non-unit dim depends on the indices.
bool KernelWriter::invariant(int var) {
  if (!inside(var)) return numel(shape_of(var)) == 1;
  auto it = invariant_memo_.find(var);
  if (it != invariant_memo_.end()) return it->second;
  const ir::Eqn& e = j_.eqns[size_t(producer_.at(var))];
  bool inv = !is_reduce(e.prim) && (e.prim != Prim::Iota || numel(shape_of(var)) == 1);
  for (const ir::Atom& a : e.inputs)
    if (inv && a.is_var()) inv = invariant(a.var);
  invariant_memo_[var] = inv;
  return inv;
}

// The scope a value with placement/map m is defined in: per-row values of a row kernel
// live in the row scope (0); everything else in the innermost scope.
int KernelWriter::scope_for(const Map& m) const {
  if (mode_ == Mode::Rows && !refs_reduced(m)) return 0;
  if (mode_ == Mode::Cols) {
    if (refs_reduced(m)) {
      JX_CHECK(scopes_.size() == 3, "an element value used outside the element loop");
      return 2;
    }
    for (int d : m)
      if (is_inner(d)) return 1;
    return 0;
  }
  return int(scopes_.size()) - 1;
}

std::string KernelWriter::idx(int d) {
  if (mode_ == Mode::Flat) {
    if (nonunit_.size() == 1 && nonunit_[0] == d) return "i";
    flat_failed_ = true;
    return "0";
  }
  int owner = 0;  // Lanes: every index is decomposed from the flat one, per element
  if (mode_ == Mode::Nested && d == nonunit_.back()) owner = 1;
  if (mode_ == Mode::Rows && is_reduced(d)) owner = 1;
  if (mode_ == Mode::Cols && is_inner(d)) {
    // Decomposed from the column index in whichever column or element loop uses it.
    for (size_t k = 1; k < scopes_.size(); ++k) scopes_[k].used_dims.insert(d);
    return str("i", d);
  }
  if (mode_ == Mode::Cols && is_reduced(d)) owner = 2;
  JX_CHECK(owner < int(scopes_.size()), "index of dim ", d, " used outside its loop");
  scopes_[size_t(owner)].used_dims.insert(d);
  return str("i", d);
}

// Element offset of index map m in a row-major buffer of `shape`.
std::string KernelWriter::offset(const Shape& shape, const Map& m) {
  std::vector<int> refs;
  for (int d : m)
    if (d >= 0) refs.push_back(d);
  if (mode_ == Mode::Flat) {
    if (refs.empty()) return "0";
    if (refs == nonunit_) return "i";
    flat_failed_ = true;
    return "0";
  }
  if (mode_ == Mode::Cols || (mode_ == Mode::Rows && !red_.empty())) return cols_offset(shape, m);
  std::string s;
  int64_t stride = 1;
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    if (m[size_t(d)] >= 0 && shape[size_t(d)] != 1)
      s = str(idx(m[size_t(d)]), stride == 1 ? std::string() : str("*", stride, "LL"), s.empty() ? "" : " + ", s);
    stride *= shape[size_t(d)];
  }
  return s.empty() ? "0" : s;
}

// In a row or column kernel the reduced dims (when contiguous in the buffer) are read
// through the flat reduced index r, and in a column kernel the inner kept dims through
// the column index, so that the loops do no division per row or per element.
std::string KernelWriter::cols_offset(const Shape& shape, const Map& m) {
  std::vector<std::pair<int, int64_t>> dims;  // (domain dim, buffer stride), outermost first
  int64_t stride = 1;
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    if (m[size_t(d)] >= 0 && shape[size_t(d)] != 1) dims.insert(dims.begin(), {m[size_t(d)], stride});
    stride *= shape[size_t(d)];
  }
  std::vector<std::string> terms;
  auto term = [&](const std::string& v, int64_t st) {
    terms.push_back(st == 1 ? v : str(v, "*", st, "LL"));
  };
  size_t k = 0;
  while (k < dims.size()) {
    const std::vector<int>* run = is_reduced(dims[k].first) ? &red_ : is_inner(dims[k].first) ? &inner_ : nullptr;
    bool whole = run && k + run->size() <= dims.size();
    for (size_t q = 0; whole && q < run->size(); ++q) whole = dims[k + q].first == (*run)[q];
    if (whole) {
      term(run == &red_ ? "r" : col_index(), dims[k + run->size() - 1].second);
      k += run->size();
    } else {
      term(idx(dims[k].first), dims[k].second);
      ++k;
    }
  }
  if (terms.empty()) return "0";
  std::string s = terms[0];
  for (size_t q = 1; q < terms.size(); ++q) s = str(s, " + ", terms[q]);
  return s;
}

std::string KernelWriter::lookup(const std::string& key) const {
  for (int s = int(scopes_.size()) - 1; s >= 0; --s) {
    auto it = scopes_[size_t(s)].memo.find(key);
    if (it != scopes_[size_t(s)].memo.end()) return it->second;
  }
  auto it = prologue_.memo.find(key);
  return it != prologue_.memo.end() ? it->second : std::string();
}

std::string KernelWriter::define(int scope, DType t, const std::string& prefix, const std::string& key,
              const std::string& expr) {
  std::string name = str(prefix_, prefix, counter_++);
  const std::string T = ctype(t);
  Scope& sc = scope_at(scope);
  sc.code += str("const ", T, " ", name, " = static_cast<", T, ">(", expr, ");\n");
  if (scope == kPrologue) prologue_.names.emplace_back(T, name);
  if (mode_ == Mode::Cols && scope == 1) {
    // Read by the element loop (another loop) and later phases through an array.
    scopes_[0].code = str(T, " ", name, "_c[", col_tile_, "];\n", scopes_[0].code);
    sc.code += str(name, "_c[jx_c] = ", name, ";\n");
    name = str(name, "_c[jx_c]");
    sc.memo[key] = name;
    col_names_.emplace_back(key, name);
  }
  sc.memo[key] = name;
  return name;
}

std::string KernelWriter::prologue_code() const {
  if (prologue_.names.empty()) return "";
  std::string s = prologue_.decls, exports, finals;
  for (const auto& [T, name] : prologue_.names) {
    s += str(T, " ", name, "_lanes[", kLanes, "];\n");
    exports += str(name, "_lanes[l] = ", name, ";\n");
    finals += str("const ", T, " ", name, " = ", name, "_lanes[0];\n");
  }
  if (!prologue_.fills.empty())
    s += str("for (int64_t l = 0; l < ", kLanes, "LL; ++l) {\n", indent_block(prologue_.fills, "  "), "}\n");
  s += str("#pragma omp simd\nfor (int64_t l = 0; l < ", kLanes, "LL; ++l) {\n",
           indent_block(prologue_.code + exports, "  "), "}\n");
  return s + finals;
}

// Element `off` of input `slot`. Bool inputs are declared as bytes (write()) and read as
// a comparison: GCC 12 does not vectorize a loop that loads a `bool` and selects or
// converts on it, but it does one that compares a byte with zero.
std::string KernelWriter::load(int var, int slot, const std::string& off) const {
  const std::string e = str("in", slot, "[", off, "]");
  return dtype_of(var) == DType::Bool ? str("(", e, " != 0)") : e;
}

std::string KernelWriter::read(int var, const Shape& shape, const Map& m) {
  auto it = in_slot_.find(var);
  JX_CHECK(it != in_slot_.end(), "kernel reads var ", var, " that is not one of its inputs");
  if (numel(shape) == 1) {  // a scalar input: read once, before the loops
    const std::string key = str("x", var, "[0]");
    std::string hit = lookup(key);
    if (!hit.empty()) return hit;
    const std::string pad = pad_copy(prologue_.decls, prologue_.fills, dtype_of(var), load(var, it->second, "0"));
    return define(kPrologue, dtype_of(var), "x", key, pad + "[l]");
  }
  const int scope = scope_for(m);
  // Index variables of the scope: offsets are computed there.
  const int saved = int(scopes_.size());
  std::string off = offset(shape, m);
  JX_CHECK(saved == int(scopes_.size()), "scope changed");
  std::string key = str("x", var, "[", off, "]");
  std::string hit = lookup(key);
  if (!hit.empty()) return hit;
  if (mode_ == Mode::Lanes) return lane_pad(dtype_of(var), key, load(var, it->second, off));
  return define(scope, dtype_of(var), "x", key, load(var, it->second, off));
}

std::string KernelWriter::value(int var) {
  const std::string key = str("v", var);
  std::string hit = lookup(key);
  if (!hit.empty()) return hit;
  const ir::Eqn& e = j_.eqns[size_t(producer_.at(var))];
  const Map& P = plan_.placement[size_t(var)];
  const Shape& S = shape_of(var);
  JX_CHECK(!is_reduce(e.prim), "reduction ", var, " read before its phase finished");
  if (e.prim == Prim::Reshape || e.prim == Prim::Squeeze || e.prim == Prim::BroadcastInDim) {
    const ir::Atom& x = e.inputs[0];
    if (!x.is_var()) return literal(x.literal);
    if (inside(x.var)) return value(x.var);
    const Shape& sx = shape_of(x.var);
    if (e.prim == Prim::Reshape) return read(x.var, S, P);  // contiguous: same flat offsets
    Map mx(sx.size(), -1);
    if (e.prim == Prim::Squeeze) {
      std::vector<bool> drop(sx.size(), false);
      for (int64_t d : e.params.ints("dimensions")) drop[size_t(d)] = true;
      size_t k = 0;
      for (size_t d = 0; d < sx.size(); ++d)
        if (!drop[d]) mx[d] = P[k++];
    } else {
      const auto& bd = e.params.ints("broadcast_dimensions");
      for (size_t i = 0; i < sx.size(); ++i)
        if (sx[i] != 1) mx[i] = P[size_t(bd[i])];
    }
    return read(x.var, sx, mx);
  }
  const int scope = invariant(var) ? kPrologue : scope_for(P);
  if (e.prim == Prim::Iota) {
    int d = P[size_t(e.params.i("dimension"))];
    // In a lane loop the index is filled in with the padded reads: an int64 division in
    // the loop would keep GCC from vectorizing it.
    if (mode_ == Mode::Lanes && scope != kPrologue && d >= 0) return lane_pad(dtype_of(var), key, idx(d));
    return define(scope, dtype_of(var), "v", key, d >= 0 ? idx(d) : "0");
  }
  std::vector<std::string> args;
  std::vector<Aval> in;
  for (const ir::Atom& a : e.inputs) {
    in.push_back(j_.aval_of(a));
    args.push_back(atom(a, operand_map(j_.aval_of(a).shape, P)));
  }
  std::string expr = ops::info(e.prim).emit(args, in, e.params);
  JX_CHECK(!expr.empty(), "emit rule of ", ops::name(e.prim), " declined after fusion accepted it");
  std::string name = define(scope, dtype_of(var), "v", key, expr);
  if (mode_ == Mode::Rows && row_cache_len_ > 0 && scope == 1 && is_costly(e.prim)) {
    // A row kernel's phases are separate loops over the row: a transcendental value read
    // by a later phase (softmax's exp(x - max) by the sum and by the final pass) is kept
    // in a row-local array instead of being computed again.
    const std::string T = ctype(dtype_of(var));
    scopes_[0].code = str(T, " ", name, "_r[", row_cache_len_, "];\n", scopes_[0].code);
    scopes_[1].code += str(name, "_r[r] = ", name, ";\n");
    scopes_[0].memo[key] = str(name, "_r[r]");
  }
  return name;
}

// `const int64_t iD = (f / stride) % size;` for each used dim of `dims` (in order).
std::string KernelWriter::decompose(const std::vector<int>& dims, const std::set<int>& used, const char* f,
              const std::string& indent) const {
  std::string s;
  int64_t stride = 1;
  std::vector<int64_t> strides(dims.size());
  for (int k = int(dims.size()) - 1; k >= 0; --k) {
    strides[size_t(k)] = stride;
    stride *= st_.domain[size_t(dims[size_t(k)])];
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    int d = dims[k];
    if (!used.count(d)) continue;
    std::string e = f;
    if (strides[k] != 1) e = str("(", e, " / ", strides[k], "LL)");
    if (k > 0) e = str("(", e, " % ", st_.domain[size_t(d)], "LL)");
    s += str(indent, "const int64_t i", d, " = ", e, ";\n");
  }
  return s;
}

std::string KernelWriter::indent_block(const std::string& code, const std::string& indent) {
  std::string s;
  size_t start = 0;
  while (start < code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    s += indent + code.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return s;
}

std::string KernelWriter::store(int slot, int var) {
  const Map& P = plan_.placement[size_t(var)];
  if (numel(shape_of(var)) == 1 && invariant(var)) {  // written once, in the prologue
    prologue_stores_ += str("out", slot, "[0] = ", value(var), ";\n");
    return "";
  }
  std::string v = value(var);
  std::string s = str("out", slot, "[", offset(shape_of(var), P), "] = ", v, ";\n");
  // A one-element output of a larger loop (a scalar fused in) is written once.
  if (numel(shape_of(var)) == 1 && numel(st_.domain) > 1) {
    std::string first = mode_ == Mode::Flat     ? "i == 0"
                        : mode_ == Mode::Nested ? str("o == 0 && i", nonunit_.back(), " == 0")
                        : mode_ == Mode::Cols   ? str("o == 0 && ", col_index(), " == 0",
                                                      scopes_.size() == 3 ? " && r == 0" : "")
                                                : "o == 0";
    s = str("if (", first, ") ", s);
  }
  return s;
}

std::string KernelWriter::flat() {
  scopes_.assign(1, Scope{});
  std::string stores;
  for (size_t k = 0; k < st_.outputs.size(); ++k) stores += store(int(k), st_.outputs[k]);
  // Everything hoisted (only one-element outputs): no loop, and no thread fork for it.
  if (scopes_[0].code.empty() && stores.empty()) return "";
  const int64_t n = numel(st_.domain), body = n - n % kLanes;
  const std::string code = scopes_[0].code + stores;
  std::string s;
  if (body >= kParallelMin) {
    s += "  #pragma omp parallel for schedule(static)\n";
    s += str("  for (int64_t jx_c = 0; jx_c < ", body, "LL; jx_c += ", kChunk, "LL) {\n");
    s += str("    const int64_t jx_e = jx_c + ", kChunk, "LL < ", body, "LL ? jx_c + ", kChunk,
             "LL : ", body, "LL;\n");
    s += "    #pragma omp simd\n    for (int64_t i = jx_c; i < jx_e; ++i) {\n";
    s += indent_block(code, "      ") + "    }\n  }\n";
  } else if (body > 0) {
    s += "  #pragma omp simd\n";
    s += str("  for (int64_t i = 0; i < ", body, "LL; ++i) {\n");
    s += indent_block(code, "    ") + "  }\n";
  }
  if (body < n) s += indent_block(remainder(str(body, "LL"), str(n - body, "LL")), "  ");
  return s;
}

std::string KernelWriter::nested() {
  scopes_.assign(2, Scope{});
  std::string stores;
  for (size_t k = 0; k < st_.outputs.size(); ++k) stores += store(int(k), st_.outputs[k]);
  if (scopes_[0].code.empty() && scopes_[1].code.empty() && stores.empty()) return "";
  const int inner = nonunit_.back();
  std::vector<int> outer(nonunit_.begin(), nonunit_.end() - 1);
  int64_t n_outer = 1;
  for (int d : outer) n_outer *= st_.domain[size_t(d)];
  const int64_t n_inner = st_.domain[size_t(inner)], body = n_inner - n_inner % kLanes;
  if (body == 0) return lanes_kernel();  // rows shorter than a vector
  std::string s;
  if (n_outer * n_inner >= kParallelMin && n_outer > 1) s += "  #pragma omp parallel for schedule(static)\n";
  s += str("  for (int64_t o = 0; o < ", n_outer, "LL; ++o) {\n");
  s += decompose(outer, scopes_[0].used_dims, "o", "    ");
  s += indent_block(scopes_[0].code, "    ");
  s += "    #pragma omp simd\n";
  s += str("    for (int64_t i", inner, " = 0; i", inner, " < ", body, "LL; ++i", inner, ") {\n");
  s += indent_block(scopes_[1].code + stores, "      ");
  s += "    }\n";
  if (body < n_inner)
    s += indent_block(remainder(str("o * ", n_inner, "LL + ", body, "LL"), str(n_inner - body, "LL")), "    ");
  return s + "  }\n";
}

// The elements [base, base + count) (flat indices, count <= kLanes) of every output,
// computed by a separate writer in Lanes mode; its loop-invariant values join our
// prologue (before the prologue's stores).
std::string KernelWriter::remainder(const std::string& base, const std::string& count) {
  KernelWriter lanes(j_, plan_, st_, prefix_ + "t");
  std::string block = lanes.lanes_block(base, count);
  prologue_.code += lanes.prologue_.code;
  prologue_.decls += lanes.prologue_.decls;
  prologue_.fills += lanes.prologue_.fills;
  for (auto& n : lanes.prologue_.names) prologue_.names.push_back(n);
  return block;
}

// A whole kernel as lanes blocks: for rows too short for a simd loop of their own.
std::string KernelWriter::lanes_kernel() {
  const int64_t n = numel(st_.domain);
  std::string s;
  if (n >= kParallelMin) s += "  #pragma omp parallel for schedule(static)\n";
  s += str("  for (int64_t jx_b = 0; jx_b < ", n, "LL; jx_b += ", kLanes, "LL) {\n");
  const std::string count = str("(", n, "LL - jx_b < ", kLanes, "LL ? ", n, "LL - jx_b : ", kLanes, "LL)");
  s += indent_block(remainder("jx_b", count), "    ");
  return s + "  }\n";
}

// Lanes padded past `count` repeat element `base`, so every read is in bounds and the
// simd loop is whole; only the first `count` results are copied out. The copies are
// read before anything is written, so a donated input may share an output's buffer.
std::string KernelWriter::lanes_block(const std::string& base, const std::string& count) {
  mode_ = Mode::Lanes;
  scopes_.assign(1, Scope{});
  std::string out_decls, lane_stores, copies;
  for (size_t k = 0; k < st_.outputs.size(); ++k) {
    const int var = st_.outputs[k];
    const bool scalar = numel(shape_of(var)) == 1;
    if (scalar && invariant(var)) continue;  // written by the main writer's prologue
    const std::string v = value(var), pad = str(prefix_, "out", k);
    out_decls += str(ctype(dtype_of(var)), " ", pad, "[", kLanes, "];\n");
    lane_stores += str(pad, "[l] = ", v, ";\n");
    copies += scalar ? str("if (jx_f == 0) out", k, "[0] = ", pad, "[l];\n")
                     : str("out", k, "[", offset(shape_of(var), plan_.placement[size_t(var)]), "] = ", pad, "[l];\n");
  }
  const std::set<int>& used = scopes_[0].used_dims;
  std::string s = str("{\n  const int64_t jx_base = ", base, ", jx_count = ", count, ";\n");
  s += indent_block(pad_decls_ + out_decls, "  ");
  if (!pad_fills_.empty()) {
    s += str("  for (int64_t l = 0; l < ", kLanes, "LL; ++l) {\n");
    s += "    const int64_t jx_f = jx_base + (l < jx_count ? l : 0);\n";
    s += decompose(nonunit_, used, "jx_f", "    ");
    s += indent_block(pad_fills_, "    ") + "  }\n";
  }
  s += str("  #pragma omp simd\n  for (int64_t l = 0; l < ", kLanes, "LL; ++l) {\n");
  s += indent_block(scopes_[0].code + lane_stores, "    ") + "  }\n";
  s += "  for (int64_t l = 0; l < jx_count; ++l) {\n    const int64_t jx_f = jx_base + l;\n";
  s += decompose(nonunit_, used, "jx_f", "    ");
  s += indent_block(copies, "    ") + "  }\n}\n";
  return s;
}

}  // namespace gen

std::string kernel_symbol(int k) { return str("jx_kernel_", k); }

namespace {

bool has_complex_kernel(const ir::Jaxpr& j, const FusionPlan& plan) {
  for (const FusedStep& st : plan.steps)
    if (st.is_kernel && gen::step_has_complex(j, st)) return true;
  return false;
}

}  // namespace

std::string generate_source(const ir::Jaxpr& j, const FusionPlan& plan, const std::string& name) {
  std::string src = str("// Generated by jx for '", name, "': ", plan.steps.size(),
                        " steps. Do not edit; see src/compiler/codegen.h.\n");
  src += ops::kEmitPrelude;
  // The eager kernels' scalar complex arithmetic (ops/emit_prelude.h), only where needed:
  // <complex> adds to every unit's parse.
  if (has_complex_kernel(j, plan))
    src += str("#include <complex>\nnamespace jx_cx {\n", kComplexScalarSource, "}  // namespace jx_cx\n");
  // One part per kernel (toolchain.h): large programs compile as parallel units.
  int k = 0;
  for (const FusedStep& st : plan.steps) {
    if (!st.is_kernel) continue;
    src += str("\n", kPartMarker, "\nextern \"C\" {\n");
    src += gen::KernelWriter(j, plan, st).write(kernel_symbol(k++));
    src += "}  // extern \"C\"\n";
  }
  return src;
}

}  // namespace jx::compiler
