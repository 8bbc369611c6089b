// Kernels with reductions: the row form (an outer loop over the kept index, one simd pass
// per phase of independent reductions over each row) and the column form (the innermost
// dim kept: blocks of columns accumulated row by row). See codegen.h and
// docs/compiler.md.
#include "compiler/codegen_writer.h"
#include "support/check.h"

namespace jx::compiler::gen {
namespace {

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
// Accumulators per reduction of a long row: kAccLanes / kLanes vectors, adding in parallel
// (a vector add has a latency of several cycles but a throughput of one or two per cycle).
constexpr int64_t kAccLanes = 4 * kLanes;
// Column blocks below which a large column kernel splits each block's rows across threads
// instead of giving whole blocks to threads.
constexpr int64_t kMinParallelUnits = 8;
// A wide, short column kernel (at least kWide columns per reduced row: a sum over axis 0
// of [96, 64, 48], the mean of a [128, 1000] batch) is cut into narrower blocks that go to
// threads whole, down to kMinUnitCols columns (1 KiB of float32 read contiguously from each
// row). Splitting its few rows instead makes every thread publish and combine a partial per
// block behind two barriers, which on 2 threads took 1.8-2.2x as long (a standalone copy
// of the kernel at [96, 3072] and [64, 1000]); with many rows ([1000, 1000], BatchNorm's
// [12544, 64]) the split rows stream contiguous memory and win (0.5-0.7x).
constexpr int64_t kWide = 4;
constexpr int64_t kMinUnitCols = 256;
// Rows a column kernel's phase combines in registers before updating the per-column
// accumulators: one load and store of each accumulator per group instead of per row.
// Row by row, each row's add waited on the previous row's store of the same accumulator
// (sum over axis 0 of [12544, 64]: 0.070 ms eagerly, the same loop; 0.044 in groups).
constexpr int64_t kRowGroup = 4;
static_assert(kSumBlock % kRowGroup == 0, "a blocked sum's blocks end between groups of rows");

}  // namespace

// Phase of each reduction: 1 + the latest phase it depends on, so that independent
// reductions (sum and max of one input) share one pass over the row.
int KernelWriter::need(int var, std::unordered_map<int, int>& memo) {
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

// A row kernel whose innermost non-unit dim is kept reads each row (fixed kept index)
// with a stride; the column form instead walks the reduced index in the outer loop and
// the kept (contiguous) index in the inner simd loop, accumulating into per-column
// arrays (BatchNorm's statistics over N, H, W of NHWC; a bias gradient).
bool KernelWriter::use_cols() {
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
// per-thread partials combine in thread order after each phase, unless the kernel is
// wide and short enough to cut into narrower units instead (kWide).
std::string KernelWriter::cols() {
  mode_ = Mode::Cols;
  int64_t K = 1, n_out = 1, n_red = 1;
  for (int d : inner_) K *= st_.domain[size_t(d)];
  for (int d : outer_) n_out *= st_.domain[size_t(d)];
  for (int d : red_) n_red *= st_.domain[size_t(d)];
  if (K == 0 || n_out == 0) return "  // no columns: nothing to compute\n";
  col_tile_ = K <= 2 * kColTile ? K : kColTile;
  n_tiles_ = (K + col_tile_ - 1) / col_tile_;
  const bool parallel = numel(st_.domain) >= kParallelMin;
  bool wide = false;
  if (parallel && n_out * n_tiles_ < kMinParallelUnits && n_red > 1 && n_red * kWide <= K) {
    const int64_t per_out = (kMinParallelUnits + n_out - 1) / n_out;
    const int64_t tile = std::max(kMinUnitCols, ((K + per_out - 1) / per_out + kLanes - 1) / kLanes * kLanes);
    if (tile < K) {
      wide = true;
      col_tile_ = std::min(col_tile_, tile);
      n_tiles_ = (K + col_tile_ - 1) / col_tile_;
    }
  }
  const int64_t units = n_out * n_tiles_;
  coop_ = parallel && !wide && units < kMinParallelUnits && n_red > 1;
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
    std::string g_init, g_update, g_merge;  // the same updates for a group of rows
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
      const std::string g = str("jx_g", v), gn = str("jx_gn", v);
      g_init += str(o.U, " ", g, " = ", o.init(), ";\n");
      if (o.nan) g_init += str("unsigned ", gn, " = 0u;\n");
      g_update += o.update(g, gn, x) + "\n";
      if (o.fl && e.prim == Prim::ReduceSum) {
        blocked = true;
        decls += str(o.U, " jx_b", v, "[", col_tile_, "];\n");
        resets += str("jx_b", v, "[jx_c] = 0;\n");
        blk_resets += str("jx_b", v, "[jx_c] = 0;\n");
        updates += o.update(str("jx_b", v, "[jx_c]"), "", x) + "\n";
        flushes += o.merge(str(p, "[jx_c]"), "", str("jx_b", v, "[jx_c]"), "") + "\n";
        g_merge += o.merge(str("jx_b", v, "[jx_c]"), "", g, "") + "\n";
      } else {
        updates += o.update(str(p, "[jx_c]"), str(pn, "[jx_c]"), x) + "\n";
        g_merge += o.merge(str(p, "[jx_c]"), str(pn, "[jx_c]"), g, gn) + "\n";
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
    // Groups of kRowGroup rows first, each row in a block of its own (`r` and its
    // indices redeclared; the compiler hoists them out of the column loop), then the
    // remaining rows one at a time. Block boundaries of blocked sums fall between groups
    // (kSumBlock is a multiple of kRowGroup).
    std::string group = decompose(red_, elem.used_dims, "r", "") + elem.code + g_update;
    std::string grouped = g_init;
    for (int64_t q = 0; q < kRowGroup; ++q)
      grouped += str("{\n  const int64_t r = jx_rg + ", q, "LL;\n", indent_block(group, "  "), "}\n");
    grouped += g_merge;
    const std::string g_tail =
        blocked ? str("if ((jx_rg + ", kRowGroup - 1, "LL - ", r0, ") % ", kSumBlock, "LL == ", kSumBlock - 1,
                      "LL || jx_rg + ", kRowGroup, "LL == ", r1, ") {\n",
                      indent_block(col_loop({}, flushes + blk_resets), "  "), "}\n")
                : "";
    code += str("{\nint64_t jx_rg = ", r0, ";\nfor (; jx_rg + ", kRowGroup, "LL <= ", r1, "; jx_rg += ", kRowGroup,
                "LL) {\n", indent_block(col_loop(elem.used_dims, grouped) + g_tail, "  "), "}\n",
                row_loop(elem, elem.code + updates, "jx_rg", r1, tail), "}\n");
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

std::string KernelWriter::rows() {
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
      std::string updates, lane_decls, lane_updates, lane_folds, lane_merges;
      for (int v : vars) {
        const ir::Eqn& e = j_.eqns[size_t(producer_.at(v))];
        // The operand is X-shaped: read at the identity index when it is an input.
        Map ident(st_.domain.size(), -1);
        for (int d : nonunit_) ident[size_t(d)] = d;
        std::string x = atom(e.inputs[0], ident);
        ReductionCode c = reduction_code(e.prim, dtype_of(v), str("acc", v), x);
        updates += c.update + "\n";
        clauses += str(" reduction(", c.clause, ")");
        RedOps o(e.prim, dtype_of(v));
        const std::string l = str("jx_l", v), ln = str("jx_ln", v);
        auto at = [](const std::string& arr, const std::string& i) { return str(arr, "[", i, "]"); };
        lane_decls += str(o.U, " ", l, "[", kAccLanes, "];\n");
        if (o.nan) lane_decls += str("unsigned ", ln, "[", kAccLanes, "];\n");
        std::string init = str(at(l, "jx_k"), " = ", o.init(), ";", o.nan ? str(" ", at(ln, "jx_k"), " = 0u;") : "");
        lane_decls += str("for (int64_t jx_k = 0; jx_k < ", kAccLanes, "LL; ++jx_k) { ", init, " }\n");
        lane_updates += o.update(at(l, "r - jx_b"), at(ln, "r - jx_b"), x) + "\n";
        for (int64_t q = 1; q < kAccLanes / kLanes; ++q) {
          const std::string k2 = str("jx_k + ", q * kLanes, "LL");
          lane_folds += o.merge(at(l, "jx_k"), at(ln, "jx_k"), at(l, k2), at(ln, k2)) + "\n";
        }
        lane_merges += o.merge(str("acc", v), str("acc", v, "_nan"), at(l, "jx_k"), at(ln, "jx_k")) + "\n";
      }
      if (first_phase)
        for (int k : early) scopes_.back().code += store(k, st_.outputs[size_t(k)]);
      Scope inner = std::move(scopes_.back());
      scopes_.pop_back();
      const std::string index = decompose(red, inner.used_dims, "r", "  ");
      const std::string simd = str("#pragma omp simd", clauses, "\n");
      if (n_red < 2 * kAccLanes) {
        scopes_[0].code += str(simd, "for (int64_t r = ", r0, "; r < ", r1, "; ++r) {\n", index,
                               indent_block(inner.code + updates, "  "), "}\n");
      } else {
        // Whole blocks of kAccLanes elements accumulate lane-wise into local arrays (several
        // vector accumulators, so a long row is not bound by the latency of one vector
        // add); the rest of the range is one simd reduction; the lanes then fold into its
        // accumulators, in a fixed order.
        const std::string rb = coop ? str("jx_r0 + (jx_r1 - jx_r0) / ", kAccLanes, "LL * ", kAccLanes, "LL")
                                    : str(n_red / kAccLanes * kAccLanes, "LL");
        const std::string rbn = str("jx_rb", phase);
        std::string code = lane_decls + str("const int64_t ", rbn, " = ", rb, ";\n");
        code += str("for (int64_t jx_b = ", r0, "; jx_b < ", rbn, "; jx_b += ", kAccLanes, "LL) {\n");
        code += str("  #pragma omp simd\n  for (int64_t r = jx_b; r < jx_b + ", kAccLanes, "LL; ++r) {\n");
        code += indent_block(decompose(red, inner.used_dims, "r", "") + inner.code + lane_updates, "    ") + "  }\n}\n";
        if (coop || n_red % kAccLanes != 0)
          code += str(simd, "for (int64_t r = ", rbn, "; r < ", r1, "; ++r) {\n", index,
                      indent_block(inner.code + updates, "  "), "}\n");
        code += str("#pragma omp simd\nfor (int64_t jx_k = 0; jx_k < ", kLanes, "LL; ++jx_k) {\n",
                    indent_block(lane_folds, "  "), "}\n");
        code += str(simd, "for (int64_t jx_k = 0; jx_k < ", kLanes, "LL; ++jx_k) {\n",
                    indent_block(lane_merges, "  "), "}\n");
        scopes_[0].code += code;
      }
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

}  // namespace jx::compiler::gen
