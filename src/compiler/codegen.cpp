// Kernel source generation. Values are emitted on demand ("elemental" emission, as XLA's
// loop fusion): a value is a `const` local computed from its operands' locals, defined in
// the outermost loop scope where its indices exist (a per-row value of a row kernel
// is computed once per row, not once per element), memoized per scope. Loop-invariant
// values -- computed only from literals, one-element inputs and broadcasts of such values
// (Adam's bias corrections 1 / (1 - pow(0.9, t))) -- go to a prologue before every loop,
// so they are computed once per call instead of once per element.
#include "compiler/codegen.h"
#include "compiler/toolchain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "core/array_impl.h"
#include "ops/emit_prelude.h"
#include "support/check.h"
#include "support/str.h"

namespace jx::compiler {
namespace {

using ops::Prim;
using Map = std::vector<int>;
using ops::Aval;

// Below this many elements of work a kernel runs on one thread: an OpenMP fork/join
// costs a few microseconds, more than the loop itself.
constexpr int64_t kParallelMin = int64_t(1) << 16;
// Longest row whose transcendental values a row kernel keeps in a local array (16 KB of
// float32) across its phases.
constexpr int64_t kRowCacheMax = 4096;

// Elementwise primitives that call libm (tens of cycles per element): worth keeping in a
// row buffer rather than recomputing in a later phase.
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

// Simd loops run whole blocks of kLanes elements (64 bytes of float32), as the eager
// kernels do (backend/cpu/unary.cpp's block): GCC's epilogue for a loop's remainder calls
// the scalar libm, which rounds some inputs differently from the vector variant, so an
// element's bits would depend on where it sits. The remainder runs through the same
// full-width code on padded copies ("lanes" blocks below).
constexpr int64_t kLanes = 16;
// Elements per parallel chunk of a flat loop: a multiple of kLanes, so that no thread's
// share ends in a partial vector.
constexpr int64_t kChunk = 8192;

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

std::string float_literal(double v, bool is_f32) {
  const char* sfx = is_f32 ? "f" : "";
  if (std::isnan(v))
    return str("(", std::signbit(v) ? "-" : "", is_f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")", ")");
  if (std::isinf(v)) return str("(", v < 0 ? "-" : "", is_f32 ? "__builtin_inff()" : "__builtin_inf()", ")");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);  // hex: exact, no rounding on the way back
  return str("(", buf, sfx, ")");
}

// A 0-d literal as a C++ expression of its dtype's C type.
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
    default: break;
  }
  JX_CHECK(false, "literal of dtype ", dtype_name(t), " in generated code");
  return "";
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

// Code for one reduction: accumulator declaration, simd reduction clause, update, and
// the final value. Integers accumulate unsigned (wrapping, as XLA) and at least 32 bits
// wide so that no int promotion overflows; bools accumulate as unsigned 0/1.
struct ReductionCode {
  std::string decl, clause, update, result;
};

ReductionCode reduction_code(Prim p, DType t, const std::string& acc, const std::string& x) {
  const std::string T = ctype(t);
  const bool fl = t == DType::Float32 || t == DType::Float64;
  const bool bl = t == DType::Bool;
  const std::string U = fl ? T : (bl ? "unsigned" : (itemsize(t) == 8 ? "uint64_t" : "uint32_t"));
  ReductionCode c;
  auto simple = [&](const char* init, const char* op, const std::string& upd) {
    c.decl = str(U, " ", acc, " = ", init, ";");
    c.clause = str(op, ":", acc);
    c.update = upd;
    c.result = bl ? str("(bool)(", acc, " & 1u)") : str("(", T, ")", acc);
  };
  switch (p) {
    case Prim::ReduceSum: simple("0", "+", str(acc, " += (", U, ")", x, ";")); break;
    case Prim::ReduceProd: simple("1", "*", str(acc, " *= (", U, ")", x, ";")); break;
    case Prim::ReduceAnd: simple(bl ? "1u" : "~(U)0", "&", str(acc, " &= (", U, ")", x, ";")); break;
    case Prim::ReduceOr: simple("0", "|", str(acc, " |= (", U, ")", x, ";")); break;
    case Prim::ReduceXor: simple("0", "^", str(acc, " ^= (", U, ")", x, ";")); break;
    case Prim::ReduceMax:
    case Prim::ReduceMin: {
      const bool mx = p == Prim::ReduceMax;
      if (bl) {
        simple(mx ? "0" : "1u", mx ? "|" : "&", str(acc, mx ? " |= " : " &= ", "(unsigned)", x, ";"));
      } else if (fl) {
        // NaN propagates: track it apart so that the max/min itself stays a plain simd
        // reduction.
        const std::string nan = acc + "_nan";
        c.decl = str(T, " ", acc, " = ", mx ? "-" : "", "(", T, ")__builtin_inf(); unsigned ", nan, " = 0;");
        c.clause = str(mx ? "max" : "min", ":", acc, ") reduction(|:", nan);
        c.update = str(acc, " = ", x, mx ? " > " : " < ", acc, " ? ", x, " : ", acc, "; ", nan,
                       " |= (unsigned)(", x, " != ", x, ");");
        c.result = str(nan, " ? (", T, ")__builtin_nan(\"\") : ", acc);
      } else {
        c.decl = str(T, " ", acc, " = ", mx ? "std::numeric_limits<" + T + ">::lowest()"
                                           : "std::numeric_limits<" + T + ">::max()", ";");
        c.clause = str(mx ? "max" : "min", ":", acc);
        c.update = str(acc, " = ", x, mx ? " > " : " < ", acc, " ? ", x, " : ", acc, ";");
        c.result = acc;
      }
      break;
    }
    default:
      JX_CHECK(false, "not a fusible reduction: ", ops::name(p));
  }
  // "~(U)0" names the accumulator type.
  if (c.decl.find("~(U)0") != std::string::npos)
    c.decl.replace(c.decl.find("~(U)0"), 5, str("~(", U, ")0"));
  return c;
}

// The same reductions as element-wise operations on accumulator lvalues (a column
// kernel's per-column arrays, a split row's per-thread partials): init values, update
// with an element, combine with another partial, and the final value. `a` is the
// accumulator, `n` its NaN flag (float max/min only).
struct RedOps {
  Prim p;
  std::string T, U;
  bool fl = false, bl = false, nan = false;
  RedOps(Prim prim, DType t) : p(prim), T(ctype(t)) {
    fl = t == DType::Float32 || t == DType::Float64;
    bl = t == DType::Bool;
    const bool extreme = p == Prim::ReduceMax || p == Prim::ReduceMin;
    // Integer max/min compare in their own type; other integer reductions wrap unsigned.
    U = fl || (extreme && !bl) ? T : (bl ? "unsigned" : (itemsize(t) == 8 ? "uint64_t" : "uint32_t"));
    nan = fl && extreme;
  }
  bool is_max() const { return p == Prim::ReduceMax; }
  std::string init() const {
    switch (p) {
      case Prim::ReduceSum: case Prim::ReduceOr: case Prim::ReduceXor: return str("(", U, ")0");
      case Prim::ReduceProd: return str("(", U, ")1");
      case Prim::ReduceAnd: return bl ? "1u" : str("~(", U, ")0");
      default: break;
    }
    if (bl) return is_max() ? "0u" : "1u";
    if (fl) return str(is_max() ? "-" : "", "(", T, ")__builtin_inf()");
    return is_max() ? str("std::numeric_limits<", T, ">::lowest()") : str("std::numeric_limits<", T, ">::max()");
  }
  // a = a (op) x, where x is an element (not yet converted) or another accumulator.
  std::string combine(const std::string& a, const std::string& x) const {
    switch (p) {
      case Prim::ReduceSum: return str(a, " += (", U, ")", x, ";");
      case Prim::ReduceProd: return str(a, " *= (", U, ")", x, ";");
      case Prim::ReduceAnd: return str(a, " &= (", U, ")", x, ";");
      case Prim::ReduceOr: return str(a, " |= (", U, ")", x, ";");
      case Prim::ReduceXor: return str(a, " ^= (", U, ")", x, ";");
      default: break;
    }
    if (bl) return str(a, is_max() ? " |= " : " &= ", "(unsigned)", x, ";");
    return str(a, " = ", x, is_max() ? " > " : " < ", a, " ? ", x, " : ", a, ";");
  }
  std::string update(const std::string& a, const std::string& n, const std::string& x) const {
    std::string s = combine(a, x);
    return nan ? str(s, " ", n, " |= (unsigned)(", x, " != ", x, ");") : s;
  }
  std::string merge(const std::string& a, const std::string& n, const std::string& b,
                    const std::string& bn) const {
    std::string s = combine(a, b);
    return nan ? str(s, " ", n, " |= ", bn, ";") : s;
  }
  std::string result(const std::string& a, const std::string& n) const {
    if (bl) return str("(bool)(", a, " & 1u)");
    if (nan) return str("(", n, " ? (", T, ")__builtin_nan(\"\") : ", a, ")");
    return str("((", T, ")", a, ")");
  }
};

// Threads a kernel that splits one row (or one block of columns) across threads may use:
// the per-thread partials are published in arrays of this many entries.
constexpr int kMaxThreads = 64;
// Columns per block of a column kernel: its per-column accumulators and values are local
// arrays of this many elements.
constexpr int64_t kColTile = 1024;
// Float sums of a column kernel add blocks of this many rows first, then the block into
// the column's total: the rounding error grows with rows / 64 + 64 instead of rows.
constexpr int64_t kSumBlock = 64;
// Column blocks below which a large column kernel splits each block's rows across threads
// instead of giving whole blocks to threads.
constexpr int64_t kMinParallelUnits = 8;

class KernelWriter {
 public:
  KernelWriter(const ir::Jaxpr& j, const FusionPlan& plan, const FusedStep& st,
               std::string prefix = "")
      : j_(j), plan_(plan), st_(st), prefix_(std::move(prefix)) {
    for (int i : st.eqns)
      for (int v : j.eqns[size_t(i)].outputs) producer_[v] = i;
    for (size_t k = 0; k < st.inputs.size(); ++k) in_slot_[st.inputs[k]] = int(k);
    for (size_t d = 0; d < st.domain.size(); ++d)
      if (st.domain[d] != 1) nonunit_.push_back(int(d));
  }

  std::string write(const std::string& symbol) {
    std::string head = str("void ", symbol, "(const void* const* jx_in, void* const* jx_out) {\n");
    for (size_t k = 0; k < st_.inputs.size(); ++k) {
      const std::string T = ctype(j_.avals[size_t(st_.inputs[k])].dtype);
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
    return head + indent_block(prologue_code() + prologue_stores_, "  ") + body + "}\n";
  }

 private:
  // Lanes: values of kLanes consecutive elements (by flat index) computed from padded
  // copies of their inputs, for the remainder of a simd loop (lanes_block).
  // Cols: a row kernel whose innermost dims are kept (column reductions, see cols()).
  enum class Mode { Flat, Nested, Rows, Cols, Lanes };
  struct Scope {
    std::string code;
    std::map<std::string, std::string> memo;
    std::set<int> used_dims;
  };

  const ir::Jaxpr& j_;
  const FusionPlan& plan_;
  const FusedStep& st_;
  const std::string prefix_;       // of every name this writer defines ("t" for lanes code)
  std::unordered_map<int, int> producer_;
  std::unordered_map<int, int> in_slot_;
  std::vector<int> nonunit_;
  Mode mode_ = Mode::Flat;
  bool flat_failed_ = false;
  std::vector<Scope> scopes_;
  // Loop-invariant values, computed once before every loop -- but in a kLanes-wide simd
  // loop with every lane alike, not as scalar code: a scalar libm call may round
  // differently from the vector variant that the eager kernel of a 0-d array calls. The
  // one-element reads are padded copies (so the compiler cannot hoist the calls out of
  // the lane loop); every value is exported from lane 0 (prologue_code).
  struct Prologue : Scope {
    std::string decls, fills;
    std::vector<std::pair<std::string, std::string>> names;  // (C type, name) of each value
  };
  Prologue prologue_;
  std::string prologue_stores_;    // one-element outputs computed in the prologue
  std::unordered_map<int, bool> invariant_memo_;
  int counter_ = 0;
  // Lanes mode: declarations and fills of the padded copies read by the lane loop.
  std::string pad_decls_, pad_fills_;
  static constexpr int kPrologue = -1;  // scope index of the prologue
  // Cols mode: the reduced dims, the kept dims after the last reduced one (the columns,
  // contiguous in memory) and the other kept dims; columns per block; the values defined
  // in the open column loop (key, name), and whether blocks split their rows by thread.
  std::vector<int> red_, inner_, outer_;
  int64_t col_tile_ = 0, n_tiles_ = 1;
  std::vector<std::pair<std::string, std::string>> col_names_;
  bool coop_ = false;
  // Rows mode: the reduced length of a row when transcendental values may be kept in a
  // row-local array across phases (0: not this kernel).
  int64_t row_cache_len_ = 0;

  const Shape& shape_of(int v) const { return j_.avals[size_t(v)].shape; }
  DType dtype_of(int v) const { return j_.avals[size_t(v)].dtype; }
  bool inside(int v) const { return producer_.count(v) > 0; }
  bool is_reduced(int d) const { return d >= 0 && st_.reduced[size_t(d)]; }
  bool is_inner(int d) const { return std::find(inner_.begin(), inner_.end(), d) != inner_.end(); }
  std::string col_index() const { return n_tiles_ > 1 ? "(jx_c0 + jx_c)" : "jx_c"; }
  bool refs_reduced(const Map& m) const {
    for (int d : m)
      if (is_reduced(d)) return true;
    return false;
  }

  // True when var's value does not depend on the loop indices: it is computed (inside the
  // kernel) only from literals, one-element inputs and other invariant values. A
  // reduction or an iota over a non-unit dim depends on the indices.
  bool invariant(int var) {
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

  // ---- scopes and indices ----
  // The scope a value with placement/map m is defined in: per-row values of a row kernel
  // live in the row scope (0); everything else in the innermost scope.
  int scope_for(const Map& m) const {
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
  std::string idx(int d) {
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
  std::string offset(const Shape& shape, const Map& m) {
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
  std::string cols_offset(const Shape& shape, const Map& m) {
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
  std::string lookup(const std::string& key) const {
    for (int s = int(scopes_.size()) - 1; s >= 0; --s) {
      auto it = scopes_[size_t(s)].memo.find(key);
      if (it != scopes_[size_t(s)].memo.end()) return it->second;
    }
    auto it = prologue_.memo.find(key);
    return it != prologue_.memo.end() ? it->second : std::string();
  }
  Scope& scope_at(int scope) { return scope == kPrologue ? prologue_ : scopes_[size_t(scope)]; }
  std::string define(int scope, DType t, const std::string& prefix, const std::string& key,
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

  std::string prologue_code() const {
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

  // ---- values ----
  std::string read(int var, const Shape& shape, const Map& m) {
    auto it = in_slot_.find(var);
    JX_CHECK(it != in_slot_.end(), "kernel reads var ", var, " that is not one of its inputs");
    if (numel(shape) == 1) {  // a scalar input: read once, before the loops
      const std::string key = str("x", var, "[0]");
      std::string hit = lookup(key);
      if (!hit.empty()) return hit;
      const std::string pad =
          pad_copy(prologue_.decls, prologue_.fills, dtype_of(var), str("in", it->second, "[0]"));
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
    if (mode_ == Mode::Lanes) return lane_pad(dtype_of(var), key, str("in", it->second, "[", off, "]"));
    return define(scope, dtype_of(var), "x", key, str("in", it->second, "[", off, "]"));
  }
  static Map operand_map(const Shape& operand, const Map& out) {
    if (operand.empty()) return {};
    Map m(operand.size(), -1);
    for (size_t d = 0; d < operand.size(); ++d)
      if (operand[d] != 1) m[d] = out[d];
    return m;
  }
  std::string atom(const ir::Atom& a, const Map& m_if_external) {
    if (!a.is_var()) return literal(a.literal);
    if (inside(a.var)) return value(a.var);
    return read(a.var, shape_of(a.var), m_if_external);
  }

  std::string value(int var) {
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

  // ---- loop nests ----
  // `const int64_t iD = (f / stride) % size;` for each used dim of `dims` (in order).
  std::string decompose(const std::vector<int>& dims, const std::set<int>& used, const char* f,
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
  static std::string indent_block(const std::string& code, const std::string& indent) {
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
  std::string store(int slot, int var) {
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

  std::string flat() {
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

  std::string nested() {
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

  // ---- lanes: remainders through the full-width loop ----
  // The elements [base, base + count) (flat indices, count <= kLanes) of every output,
  // computed by a separate writer in Lanes mode; its loop-invariant values join our
  // prologue (before the prologue's stores).
  std::string remainder(const std::string& base, const std::string& count) {
    KernelWriter lanes(j_, plan_, st_, prefix_ + "t");
    std::string block = lanes.lanes_block(base, count);
    prologue_.code += lanes.prologue_.code;
    prologue_.decls += lanes.prologue_.decls;
    prologue_.fills += lanes.prologue_.fills;
    for (auto& n : lanes.prologue_.names) prologue_.names.push_back(n);
    return block;
  }

  // A whole kernel as lanes blocks: for rows too short for a simd loop of their own.
  std::string lanes_kernel() {
    const int64_t n = numel(st_.domain);
    std::string s;
    if (n >= kParallelMin) s += "  #pragma omp parallel for schedule(static)\n";
    s += str("  for (int64_t jx_b = 0; jx_b < ", n, "LL; jx_b += ", kLanes, "LL) {\n");
    const std::string count = str("(", n, "LL - jx_b < ", kLanes, "LL ? ", n, "LL - jx_b : ", kLanes, "LL)");
    s += indent_block(remainder("jx_b", count), "    ");
    return s + "  }\n";
  }

  // A padded copy of one read (or index) of every lane, filled before the lane loop.
  std::string lane_pad(DType t, const std::string& key, const std::string& expr) {
    return define(0, t, "x", key, pad_copy(pad_decls_, pad_fills_, t, expr) + "[l]");
  }
  // A kLanes array of `t` declared in `decls` and filled (lane l) with `expr` in `fills`.
  std::string pad_copy(std::string& decls, std::string& fills, DType t, const std::string& expr) {
    const std::string T = ctype(t), pad = str(prefix_, "pad", counter_++);
    decls += str(T, " ", pad, "[", kLanes, "];\n");
    fills += str(pad, "[l] = static_cast<", T, ">(", expr, ");\n");
    return pad;
  }

  // Lanes padded past `count` repeat element `base`, so every read is in bounds and the
  // simd loop is whole; only the first `count` results are copied out. The copies are
  // read before anything is written, so a donated input may share an output's buffer.
  std::string lanes_block(const std::string& base, const std::string& count) {
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

  // Phase of each reduction: 1 + the latest phase it depends on, so that independent
  // reductions (sum and max of one input) share one pass over the row.
  int need(int var, std::unordered_map<int, int>& memo) {
    if (!inside(var)) return 0;
    auto it = memo.find(var);
    if (it != memo.end()) return it->second;
    const ir::Eqn& e = j_.eqns[size_t(producer_.at(var))];
    int n = 0;
    for (const ir::Atom& a : e.inputs)
      if (a.is_var()) n = std::max(n, need(a.var, memo));
    if (is_reduce(e.prim)) n += 1;  // its own phase is n; readers come after
    memo[var] = n;
    return n;
  }

  // ---- column kernels ----
  // A row kernel whose innermost non-unit dim is kept reads each row (fixed kept index)
  // with a stride; the column form instead walks the reduced index in the outer loop and
  // the kept (contiguous) index in the inner simd loop, accumulating into per-column
  // arrays (BatchNorm's statistics over N, H, W of NHWC; a bias gradient).
  bool use_cols() {
    std::vector<int> kept, red;
    for (int d : nonunit_) (st_.reduced[size_t(d)] ? red : kept).push_back(d);
    if (red.empty() || kept.empty() || st_.reduced[size_t(nonunit_.back())]) return false;
    for (int v : st_.outputs)  // a one-element output computed in the loops: the row form
      if (numel(shape_of(v)) == 1 && !invariant(v)) return false;
    red_ = red;
    for (int d : kept) (d > red.back() ? inner_ : outer_).push_back(d);
    return true;
  }

  // For each block of columns (a unit: one index of the outer kept dims and up to
  // kColTile columns): per phase of independent reductions, a column loop computing the
  // per-column values that phase reads and resetting its accumulators, then the rows
  // r = 0..n_red, each a simd loop over the columns; then the per-column outputs and a
  // final pass writing the elementwise outputs. Units go to threads; with fewer units
  // than kMinParallelUnits, every thread takes a share of each unit's rows and the
  // per-thread partials combine in thread order after each phase.
  std::string cols() {
    mode_ = Mode::Cols;
    int64_t K = 1, n_out = 1, n_red = 1;
    for (int d : inner_) K *= st_.domain[size_t(d)];
    for (int d : outer_) n_out *= st_.domain[size_t(d)];
    for (int d : red_) n_red *= st_.domain[size_t(d)];
    if (K == 0 || n_out == 0) return "  // no columns: nothing to compute\n";
    col_tile_ = K <= 2 * kColTile ? K : kColTile;
    n_tiles_ = (K + col_tile_ - 1) / col_tile_;
    const int64_t units = n_out * n_tiles_;
    const bool parallel = numel(st_.domain) >= kParallelMin;
    coop_ = parallel && units < kMinParallelUnits && n_red > 1;
    const std::string cn = n_tiles_ > 1 ? "jx_cn" : str(K, "LL");
    const std::string r0 = coop_ ? "jx_r0" : "0", r1 = coop_ ? "jx_r1" : str(n_red, "LL");
    const std::string ci = col_index();
    auto col_loop = [&](const std::set<int>& used, const std::string& code) {
      if (code.empty()) return std::string();
      return str("#pragma omp simd\nfor (int64_t jx_c = 0; jx_c < ", cn, "; ++jx_c) {\n",
                 decompose(inner_, used, ci.c_str(), "  "), indent_block(code, "  "), "}\n");
    };
    auto row_loop = [&](const Scope& elem, const std::string& code, const std::string& a,
                        const std::string& b, const std::string& tail = "") {
      return str("for (int64_t r = ", a, "; r < ", b, "; ++r) {\n", decompose(red_, elem.used_dims, "r", "  "),
                 indent_block(col_loop(elem.used_dims, code) + tail, "  "), "}\n");
    };
    // Values of the column loop just closed are read from their arrays from now on.
    auto retire_columns = [&] {
      for (auto& [key, name] : col_names_) scopes_[0].memo[key] = name;
      col_names_.clear();
    };
    scopes_.assign(1, Scope{});
    std::unordered_map<int, int> memo;
    std::map<int, std::vector<int>> phases;
    for (int i : st_.eqns)
      if (is_reduce(j_.eqns[size_t(i)].prim)) {
        int v = j_.eqns[size_t(i)].outputs[0];
        phases[need(v, memo) - 1].push_back(v);
      }
    std::vector<int> early, x_level;
    for (size_t k = 0; k < st_.outputs.size(); ++k) {
      int v = st_.outputs[k];
      if (refs_reduced(plan_.placement[size_t(v)])) (need(v, memo) == 0 ? early : x_level).push_back(int(k));
    }
    std::string shared;  // before the parallel region (coop): the partials' addresses
    Map ident(st_.domain.size(), -1);
    for (int d : nonunit_) ident[size_t(d)] = d;
    bool first_phase = true;
    for (auto& [phase, vars] : phases) {
      std::string decls, resets, updates, blk_resets, flushes, publish, combine;
      bool blocked = false;
      scopes_.push_back(Scope{});  // 1: columns
      scopes_.push_back(Scope{});  // 2: elements
      for (int v : vars) {
        const ir::Eqn& e = j_.eqns[size_t(producer_.at(v))];
        RedOps o(e.prim, dtype_of(v));
        const std::string a = str("jx_a", v), an = str("jx_an", v), p = coop_ ? str("jx_p", v) : a,
                          pn = coop_ ? str("jx_pn", v) : an;
        for (const std::string& arr : coop_ ? std::vector<std::string>{a, p} : std::vector<std::string>{a}) {
          decls += str(o.U, " ", arr, "[", col_tile_, "];\n");
          if (o.nan) decls += str("unsigned ", arr == a ? an : pn, "[", col_tile_, "];\n");
        }
        resets += str(p, "[jx_c] = ", o.init(), ";\n");
        if (o.nan) resets += str(pn, "[jx_c] = 0u;\n");
        std::string x = atom(e.inputs[0], ident);
        if (o.fl && e.prim == Prim::ReduceSum) {
          blocked = true;
          decls += str(o.U, " jx_b", v, "[", col_tile_, "];\n");
          resets += str("jx_b", v, "[jx_c] = 0;\n");
          blk_resets += str("jx_b", v, "[jx_c] = 0;\n");
          updates += o.update(str("jx_b", v, "[jx_c]"), "", x) + "\n";
          flushes += o.merge(str(p, "[jx_c]"), "", str("jx_b", v, "[jx_c]"), "") + "\n";
        } else {
          updates += o.update(str(p, "[jx_c]"), str(pn, "[jx_c]"), x) + "\n";
        }
        if (coop_) {
          shared += str("const ", o.U, "* jx_s", v, "[", kMaxThreads, "];\n");
          publish += str("jx_s", v, "[jx_t] = ", p, ";\n");
          combine += str(a, "[jx_c] = jx_s", v, "[0][jx_c];\n");
          std::string m = o.merge(str(a, "[jx_c]"), str(an, "[jx_c]"), str("jx_s", v, "[jx_k][jx_c]"),
                                  str("jx_sn", v, "[jx_k][jx_c]"));
          if (o.nan) {
            shared += str("const unsigned* jx_sn", v, "[", kMaxThreads, "];\n");
            publish += str("jx_sn", v, "[jx_t] = ", pn, ";\n");
            combine += str(an, "[jx_c] = jx_sn", v, "[0][jx_c];\n");
          }
          combine += str("for (int jx_k = 1; jx_k < jx_nt; ++jx_k) { ", m, " }\n");
        }
      }
      if (first_phase)
        for (int k : early) scopes_.back().code += store(k, st_.outputs[size_t(k)]);
      Scope elem = std::move(scopes_.back());
      scopes_.pop_back();
      Scope col = std::move(scopes_.back());
      scopes_.pop_back();
      std::string code = decls + col_loop(col.used_dims, col.code + resets);
      // Blocked float sums: after every kSumBlock rows (and the last), the block's sums
      // go into the totals.
      const std::string tail =
          blocked ? str("if ((r - ", r0, ") % ", kSumBlock, "LL == ", kSumBlock - 1, "LL || r + 1 == ", r1, ") {\n",
                        indent_block(col_loop({}, flushes + blk_resets), "  "), "}\n")
                  : "";
      code += row_loop(elem, elem.code + updates, r0, r1, tail);
      if (coop_) {
        // The combined value is the same in every thread; each keeps its own copy.
        code += publish + "#pragma omp barrier\n";
        code += str("#pragma omp simd\nfor (int64_t jx_c = 0; jx_c < ", cn, "; ++jx_c) {\n", indent_block(combine, "  "), "}\n");
      }
      scopes_[0].code += code;
      retire_columns();
      for (int v : vars) {
        RedOps o(j_.eqns[size_t(producer_.at(v))].prim, dtype_of(v));
        scopes_[0].memo[str("v", v)] = o.result(str("jx_a", v, "[jx_c]"), str("jx_an", v, "[jx_c]"));
      }
      first_phase = false;
    }
    // Per-column values and outputs (thread 0 of a split unit writes the outputs).
    scopes_.push_back(Scope{});
    std::string stores;
    for (size_t k = 0; k < st_.outputs.size(); ++k)
      if (!refs_reduced(plan_.placement[size_t(st_.outputs[k])])) stores += store(int(k), st_.outputs[k]);
    Scope col = std::move(scopes_.back());
    scopes_.pop_back();
    // Every thread computes the per-column values (the final pass reads them from its own
    // copies); only the stores are thread 0's.
    std::string body = coop_ && !stores.empty()
                           ? col.code + str("if (jx_t == 0) {\n", indent_block(stores, "  "), "}\n")
                           : col.code + stores;
    scopes_[0].code += body.empty() ? "" : col_loop(col.used_dims, body);
    retire_columns();
    if (!x_level.empty() && n_red > 0) {
      scopes_.push_back(Scope{});
      scopes_.push_back(Scope{});
      std::string st;
      for (int k : x_level) st += store(k, st_.outputs[size_t(k)]);
      Scope elem = std::move(scopes_.back());
      scopes_.pop_back();
      Scope c2 = std::move(scopes_.back());
      scopes_.pop_back();
      scopes_[0].code += col_loop(c2.used_dims, c2.code) + row_loop(elem, elem.code + st, r0, r1);
    }
    std::string unit = str("for (int64_t jx_u = 0; jx_u < ", units, "LL; ++jx_u) {\n");
    unit += n_tiles_ > 1 ? str("  const int64_t o = jx_u / ", n_tiles_, "LL, jx_c0 = jx_u % ", n_tiles_, "LL * ",
                               col_tile_, "LL;\n  const int64_t jx_cn = ", K, "LL - jx_c0 < ", col_tile_, "LL ? ", K,
                               "LL - jx_c0 : ", col_tile_, "LL;\n")
                         : "  const int64_t o = jx_u;\n";
    unit += decompose(outer_, scopes_[0].used_dims, "o", "  ");
    unit += indent_block(scopes_[0].code, "  ");
    if (coop_) unit += "  #pragma omp barrier\n";  // before the next unit resets the partials
    unit += "}\n";
    if (!coop_) {
      std::string pragma = parallel && units > 1 ? "#pragma omp parallel for schedule(static)\n" : "";
      return indent_block(pragma + unit, "  ");
    }
    std::string s = shared;
    s += str("#pragma omp parallel num_threads(omp_get_max_threads() < ", kMaxThreads, " ? omp_get_max_threads() : ",
             kMaxThreads, ")\n{\n");
    s += "  const int jx_t = omp_get_thread_num(), jx_nt = omp_get_num_threads();\n";
    s += str("  const int64_t jx_r0 = ", n_red, "LL * jx_t / jx_nt, jx_r1 = ", n_red, "LL * (jx_t + 1) / jx_nt;\n");
    s += indent_block(unit, "  ") + "}\n";
    return indent_block(s, "  ");
  }

  std::string rows() {
    mode_ = Mode::Rows;
    scopes_.assign(1, Scope{});
    std::vector<int> kept, red;
    for (int d : nonunit_) (st_.reduced[size_t(d)] ? red : kept).push_back(d);
    red_ = red;
    int64_t n_rows = 1, n_red = 1;
    for (int d : kept) n_rows *= st_.domain[size_t(d)];
    for (int d : red) n_red *= st_.domain[size_t(d)];
    if (n_rows == 0) return "  // no rows: nothing to compute\n";
    // One large row (a full reduction to a scalar): every thread takes a share of the
    // reduced range; the partials combine in thread order after each phase.
    const bool coop = n_rows == 1 && n_red >= kParallelMin;
    const std::string r0 = coop ? "jx_r0" : "0", r1 = coop ? "jx_r1" : str(n_red, "LL");
    std::string shared;
    row_cache_len_ = !coop && n_red > 0 && n_red <= kRowCacheMax ? n_red : 0;

    std::unordered_map<int, int> memo;
    std::map<int, std::vector<int>> phases;  // phase -> reduction output vars
    for (int i : st_.eqns) {
      const ir::Eqn& e = j_.eqns[size_t(i)];
      if (!is_reduce(e.prim)) continue;
      int v = e.outputs[0];
      phases[need(v, memo) - 1].push_back(v);
    }
    auto open_loop = [&] { scopes_.push_back(Scope{}); };
    auto close_loop = [&](const std::string& pragma) {
      Scope inner = std::move(scopes_.back());
      scopes_.pop_back();
      std::string s = pragma;
      s += str("for (int64_t r = ", r0, "; r < ", r1, "; ++r) {\n");
      s += decompose(red, inner.used_dims, "r", "  ");
      s += indent_block(inner.code, "  ");
      scopes_[0].code += s + "}\n";
    };
    // X-level outputs that use no reduction result are written by the first phase's loop,
    // which computes their values anyway (a bias gradient's column sum and the elementwise
    // gradient it sums), instead of being recomputed by a final pass over the row.
    std::vector<int> early, x_level;
    for (size_t k = 0; k < st_.outputs.size(); ++k) {
      int v = st_.outputs[k];
      if (!refs_reduced(plan_.placement[size_t(v)])) continue;
      (need(v, memo) == 0 ? early : x_level).push_back(int(k));
    }
    bool first_phase = true;
    for (auto& [phase, vars] : phases) {
      std::string clauses;
      for (int v : vars) {
        ReductionCode c = reduction_code(j_.eqns[size_t(producer_.at(v))].prim, dtype_of(v),
                                         str("acc", v), "");
        scopes_[0].code += c.decl + "\n";
      }
      if (n_red > 0) {
        open_loop();
        for (int v : vars) {
          const ir::Eqn& e = j_.eqns[size_t(producer_.at(v))];
          // The operand is X-shaped: read at the identity index when it is an input.
          Map ident(st_.domain.size(), -1);
          for (int d : nonunit_) ident[size_t(d)] = d;
          std::string x = atom(e.inputs[0], ident);
          ReductionCode c = reduction_code(e.prim, dtype_of(v), str("acc", v), x);
          scopes_.back().code += c.update + "\n";
          clauses += str(" reduction(", c.clause, ")");
        }
        if (first_phase)
          for (int k : early) scopes_.back().code += store(k, st_.outputs[size_t(k)]);
        close_loop(str("#pragma omp simd", clauses, "\n"));
        if (coop) {
          std::string publish, combine;
          for (int v : vars) {
            RedOps o(j_.eqns[size_t(producer_.at(v))].prim, dtype_of(v));
            const std::string a = str("acc", v), an = str(a, "_nan");
            shared += str(o.U, " jx_s", v, "[", kMaxThreads, "];\n");
            publish += str("jx_s", v, "[jx_t] = ", a, ";\n");
            combine += str(a, " = jx_s", v, "[0];\n");
            if (o.nan) {
              shared += str("unsigned jx_sn", v, "[", kMaxThreads, "];\n");
              publish += str("jx_sn", v, "[jx_t] = ", an, ";\n");
              combine += str(an, " = jx_sn", v, "[0];\n");
            }
            combine += str("for (int jx_k = 1; jx_k < jx_nt; ++jx_k) { ",
                           o.merge(a, an, str("jx_s", v, "[jx_k]"), str("jx_sn", v, "[jx_k]")), " }\n");
          }
          scopes_[0].code += publish + "#pragma omp barrier\n" + combine;
        }
      }
      for (int v : vars) {
        ReductionCode c = reduction_code(j_.eqns[size_t(producer_.at(v))].prim, dtype_of(v),
                                         str("acc", v), "");
        define(0, dtype_of(v), "red", str("v", v), c.result);
      }
      first_phase = false;
    }
    for (size_t k = 0; k < st_.outputs.size(); ++k) {
      int v = st_.outputs[k];
      if (refs_reduced(plan_.placement[size_t(v)])) continue;
      std::string st = store(int(k), v);
      scopes_[0].code += coop && !st.empty() ? str("if (jx_t == 0) ", st) : st;
    }
    if (!x_level.empty() && n_red > 0) {
      open_loop();
      for (int k : x_level) scopes_.back().code += store(k, st_.outputs[size_t(k)]);
      close_loop("#pragma omp simd\n");
    }
    std::string s;
    if (n_rows > 1 && n_rows * n_red >= kParallelMin) s += "#pragma omp parallel for schedule(static)\n";
    s += str("for (int64_t o = 0; o < ", n_rows, "LL; ++o) {\n");
    s += decompose(kept, scopes_[0].used_dims, "o", "  ");
    s += indent_block(scopes_[0].code, "  ");
    s += "}\n";
    if (coop) {
      s = str(shared, "#pragma omp parallel num_threads(omp_get_max_threads() < ", kMaxThreads,
              " ? omp_get_max_threads() : ", kMaxThreads, ")\n{\n",
              "  const int jx_t = omp_get_thread_num(), jx_nt = omp_get_num_threads();\n",
              str("  const int64_t jx_r0 = ", n_red, "LL * jx_t / jx_nt, jx_r1 = ", n_red, "LL * (jx_t + 1) / jx_nt;\n"),
              indent_block(s, "  "), "}\n");
    }
    row_cache_len_ = 0;
    return indent_block(s, "  ");
  }
};

}  // namespace

std::string kernel_symbol(int k) { return str("jx_kernel_", k); }

std::string generate_source(const ir::Jaxpr& j, const FusionPlan& plan, const std::string& name) {
  std::string src = str("// Generated by jx for '", name, "': ", plan.steps.size(),
                        " steps. Do not edit; see src/compiler/codegen.h.\n");
  src += ops::kEmitPrelude;
  // One part per kernel (toolchain.h): large programs compile as parallel units.
  int k = 0;
  for (const FusedStep& st : plan.steps) {
    if (!st.is_kernel) continue;
    src += str("\n", kPartMarker, "\nextern \"C\" {\n");
    src += KernelWriter(j, plan, st).write(kernel_symbol(k++));
    src += "}  // extern \"C\"\n";
  }
  return src;
}

}  // namespace jx::compiler
