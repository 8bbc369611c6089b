// Internal to the code generator (codegen.cpp, codegen_reduce.cpp): the kernel writer
// that turns one fused step into C++ source. codegen.cpp holds value emission (scopes,
// indices, reads, the prologue) and the elementwise loop forms (flat, nested, lanes
// blocks); codegen_reduce.cpp the kernels with reductions (row and column forms). See
// codegen.h for the loop forms and docs/compiler.md for the design.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/fusion.h"
#include "support/str.h"

namespace jx::compiler::gen {

using ops::Prim;
using Map = std::vector<int>;

// Below this many elements of work a kernel runs on one thread: an OpenMP fork/join
// costs a few microseconds, more than the loop itself.
constexpr int64_t kParallelMin = int64_t(1) << 16;
// Simd loops run whole blocks of kLanes elements (64 bytes of float32), as the eager
// kernels do (backend/cpu/unary.cpp's block): GCC's epilogue for a loop's remainder calls
// the scalar libm, which rounds some inputs differently from the vector variant, so an
// element's bits would depend on where it sits. The remainder runs through the same
// full-width code on padded copies ("lanes" blocks).
constexpr int64_t kLanes = 16;
// Elements per parallel chunk of a flat loop: a multiple of kLanes, so that no thread's
// share ends in a partial vector.
constexpr int64_t kChunk = 8192;
// Longest row whose transcendental values a row kernel keeps in a local array (16 KB of
// float32) across its phases.
constexpr int64_t kRowCacheMax = 4096;

int64_t numel(const Shape& s);
std::string ctype(DType t);
// A 0-d literal as a C++ expression of its dtype's C type.
std::string literal(const Array& a);
bool is_reduce(Prim p);
// Whether a kernel step reads, computes or writes a complex value.
bool step_has_complex(const ir::Jaxpr& j, const FusedStep& st);
// `code` without its `#pragma omp simd` lines (for kernels with complex values; codegen.cpp).
std::string without_omp_simd(const std::string& code);
// Elementwise primitives that call libm (tens of cycles per element): worth keeping in a
// row buffer rather than recomputing in a later phase.
bool is_costly(Prim p);

// Writes one kernel step as `void <symbol>(const void* const* jx_in, void* const* jx_out)`.
// One writer per kernel (a nested writer in Lanes mode writes a remainder block).
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
  std::string write(const std::string& symbol);

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
  bool invariant(int var);

  // ---- scopes and indices ----
  int scope_for(const Map& m) const;
  std::string idx(int d);
  std::string offset(const Shape& shape, const Map& m);
  std::string cols_offset(const Shape& shape, const Map& m);
  std::string lookup(const std::string& key) const;
  Scope& scope_at(int scope) { return scope == kPrologue ? prologue_ : scopes_[size_t(scope)]; }
  std::string define(int scope, DType t, const std::string& prefix, const std::string& key,
                     const std::string& expr);
  std::string prologue_code() const;

  // ---- values ----
  std::string load(int var, int slot, const std::string& off) const;
  std::string read(int var, const Shape& shape, const Map& m);
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
  std::string value(int var);

  // ---- loop nests ----
  std::string decompose(const std::vector<int>& dims, const std::set<int>& used, const char* f,
                        const std::string& indent) const;
  static std::string indent_block(const std::string& code, const std::string& indent);
  std::string store(int slot, int var);
  std::string flat();
  std::string nested();

  // ---- lanes: remainders through the full-width loop ----
  std::string remainder(const std::string& base, const std::string& count);
  std::string lanes_kernel();

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
  std::string lanes_block(const std::string& base, const std::string& count);

  // ---- kernels with reductions (codegen_reduce.cpp) ----
  int need(int var, std::unordered_map<int, int>& memo);
  bool use_cols();
  std::string cols();
  std::string rows();
};

}  // namespace jx::compiler::gen
