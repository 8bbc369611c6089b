// Cheap residuals recomputed where they are read instead of stacked. Differentiating a
// scan makes the forward scan stack, as ys, every value its transpose reads; for tanh
// that is both y and 1 - y. When a ys is a cheap elementwise function of other ys of the
// same scan (and literals), and only scans of the same length read it, as xs, each of
// those scans computes it from the ys it comes from, row by row:
//
//   h, ys_y, ys_u = scan[body: ... s = tanh r; u = sub 1.0 s  -> ys s, u]
//   _ = scan[body reading y_t, u_t ...] ys_y ys_u
//   -> h, ys_y = scan[body: ... s = tanh r -> ys s]
//      _ = scan[body reading y_t; u_t = sub 1.0 y_t ...] ys_y
//
// The forward loop writes one stacked array less and the backward loop reads one less
// (the RNN benchmark: 800 KB each way, of 4 MB stacked). Row t of the dropped ys is
// computed by the same operations on the same row of the ys it derives from, whichever
// direction the reader runs, so no value changes. XLA's rematerialization makes the same
// trade (recompute what is cheap rather than keep it in memory). JX_SCAN_REMAT=0
// disables the pass.
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "compiler/passes.h"
#include "ops/common.h"

namespace jx::compiler {
namespace {

using ops::Prim;

// Longest chain of equations recomputed per step in place of one stacked row.
constexpr size_t kMaxChain = 8;

bool disabled_by_env() {
  const char* v = std::getenv("JX_SCAN_REMAT");
  return v && std::strcmp(v, "0") == 0;
}

// Elementwise and cheaper than a read from memory (no transcendental, no division).
bool is_cheap(Prim p) {
  switch (p) {
    case Prim::Add: case Prim::Sub: case Prim::Mul: case Prim::Neg: case Prim::Max: case Prim::Min:
    case Prim::Abs: case Prim::ConvertElementType: case Prim::SelectN:
      return true;
    default:
      return false;
  }
}

struct ScanParts {
  size_t nc = 0, ncar = 0;
  int64_t length = 0;
  const ir::Jaxpr* body = nullptr;
  explicit ScanParts(const ir::Eqn& e)
      : nc(size_t(e.params.i("num_consts"))),
        ncar(size_t(e.params.i("num_carry"))),
        length(e.params.i("length")),
        body(&ir::jaxpr_of(e.params, "jaxpr")) {}
};

// The equations (in body order) that compute body value `v` from `leaves` (values the
// body returns as other ys) and literals; empty when v is not such a cheap chain.
std::vector<size_t> cheap_chain(const ir::Jaxpr& body, int v, const std::map<int, size_t>& leaves) {
  std::vector<int> producer(body.avals.size(), -1);
  for (size_t i = 0; i < body.eqns.size(); ++i)
    for (int o : body.eqns[i].outputs) producer[size_t(o)] = int(i);
  std::set<size_t> chain;
  std::vector<int> todo{v};
  while (!todo.empty()) {
    const int x = todo.back();
    todo.pop_back();
    if (x != v && leaves.count(x)) continue;
    const int p = producer[size_t(x)];
    if (p < 0) return {};  // an input of the body
    const ir::Eqn& e = body.eqns[size_t(p)];
    if (!passes::is_splat_eqn(e) && !is_cheap(e.prim)) return {};
    if (passes::has_effects(e) || e.outputs.size() != 1) return {};
    if (!chain.insert(size_t(p)).second) continue;
    if (chain.size() > kMaxChain) return {};
    for (const ir::Atom& a : e.inputs)
      if (a.is_var()) todo.push_back(a.var);
  }
  return {chain.begin(), chain.end()};
}

// Reads of each outer variable: (equation, input position); -1 for a jaxpr output.
std::vector<std::vector<std::pair<int, size_t>>> readers_of(const ir::Jaxpr& j) {
  std::vector<std::vector<std::pair<int, size_t>>> r(j.avals.size());
  for (size_t i = 0; i < j.eqns.size(); ++i)
    for (size_t k = 0; k < j.eqns[i].inputs.size(); ++k)
      if (j.eqns[i].inputs[k].is_var()) r[size_t(j.eqns[i].inputs[k].var)].emplace_back(int(i), k);
  for (const ir::Atom& a : j.outvars)
    if (a.is_var()) r[size_t(a.var)].emplace_back(-1, 0);
  return r;
}

// One ys of scan j.eqns[fi] recomputed in its readers; false when it does not qualify.
bool remat_one(ir::Jaxpr& j, size_t fi, size_t y) {
  const ir::Eqn& F = j.eqns[fi];
  const ScanParts f(F);
  const ir::Jaxpr& fb = *f.body;
  const ir::Atom& u = fb.outvars[f.ncar + y];
  if (!u.is_var()) return false;
  // Other ys the value may derive from: body value -> ys index (its first return).
  std::map<int, size_t> leaves;
  for (size_t k = fb.outvars.size(); k-- > f.ncar;)
    if (k != f.ncar + y && fb.outvars[k].is_var() && fb.outvars[k].var != u.var) leaves[fb.outvars[k].var] = k - f.ncar;
  const std::vector<size_t> chain = cheap_chain(fb, u.var, leaves);
  if (chain.empty()) return false;
  bool reads_leaf = false;  // a chain of literals alone is hoist_from_scans' business
  for (size_t i : chain)
    for (const ir::Atom& a : fb.eqns[i].inputs) reads_leaf = reads_leaf || (a.is_var() && leaves.count(a.var));
  if (!reads_leaf) return false;

  const int stacked = F.outputs[f.ncar + y];
  const auto readers = readers_of(j);
  if (readers[size_t(stacked)].empty()) return false;
  for (const auto& [ri, pos] : readers[size_t(stacked)]) {
    if (ri < 0 || size_t(ri) <= fi) return false;
    const ir::Eqn& B = j.eqns[size_t(ri)];
    if (B.prim != Prim::Scan) return false;
    const ScanParts b(B);
    if (b.length != f.length || pos < b.nc + b.ncar || !b.body->constvars.empty()) return false;
  }

  // Each reading scan: its xs rows of the dropped ys become the chain, computed from
  // xs rows of the leaves (passed to it as new xs where it does not read them yet).
  std::set<int> done;
  for (const auto& [ri, pos_unused] : readers[size_t(stacked)]) {
    if (!done.insert(ri).second) continue;
    ir::Eqn& B = j.eqns[size_t(ri)];
    const ScanParts b(B);
    ir::Jaxpr body = *b.body;
    // The body value of each leaf row (an existing xs of B, or a new one).
    std::map<int, int> row_of;  // F body leaf value -> B body variable
    auto leaf_row = [&](int leaf) {
      auto it = row_of.find(leaf);
      if (it != row_of.end()) return it->second;
      const int outer = F.outputs[f.ncar + leaves.at(leaf)];
      for (size_t k = b.nc + b.ncar; k < B.inputs.size(); ++k)
        if (B.inputs[k].is_var() && B.inputs[k].var == outer) return row_of[leaf] = body.invars[k];
      const int v = body.new_var(fb.avals[size_t(leaf)]);
      body.invars.push_back(v);
      B.inputs.push_back(ir::Atom::of_var(outer));
      return row_of[leaf] = v;
    };
    std::map<int, int> copy_of;  // F body value -> B body value
    std::vector<ir::Eqn> eqns;
    for (size_t i : chain) {
      ir::Eqn e = fb.eqns[i];
      for (ir::Atom& a : e.inputs) {
        if (!a.is_var()) continue;
        a.var = leaves.count(a.var) ? leaf_row(a.var) : copy_of.at(a.var);
      }
      const int out = e.outputs[0];
      e.outputs[0] = body.new_var(fb.avals[size_t(out)]);
      copy_of[out] = e.outputs[0];
      eqns.push_back(std::move(e));
    }
    const int value = copy_of.at(u.var);
    // Every xs slot of B reading the stacked ys now reads `value`, and is dropped.
    passes::Substitution sub(body.avals.size());
    for (size_t k = B.inputs.size(); k-- > b.nc + b.ncar;) {
      if (!B.inputs[k].is_var() || B.inputs[k].var != stacked) continue;
      sub.replace(body.invars[k], ir::Atom::of_var(value));
      body.invars.erase(body.invars.begin() + std::ptrdiff_t(k));
      B.inputs.erase(B.inputs.begin() + std::ptrdiff_t(k));
    }
    for (ir::Eqn& e : body.eqns) eqns.push_back(sub.apply(std::move(e)));
    body.eqns = std::move(eqns);
    for (ir::Atom& a : body.outvars) a = sub(a);
    B.params.set("jaxpr", ir::jaxpr_param(std::move(body)));
  }

  // The scan that stacked it returns it no more.
  ir::Jaxpr gb = fb;
  gb.outvars.erase(gb.outvars.begin() + std::ptrdiff_t(f.ncar + y));
  ir::Eqn& G = j.eqns[fi];
  G.outputs.erase(G.outputs.begin() + std::ptrdiff_t(f.ncar + y));
  G.params.set("jaxpr", ir::jaxpr_param(eliminate_dead_code(gb)));
  return true;
}

}  // namespace

ir::Jaxpr recompute_scan_residuals(const ir::Jaxpr& j) {
  if (disabled_by_env()) return j;
  ir::Jaxpr out = j;
  for (size_t fi = 0; fi < out.eqns.size(); ++fi) {
    if (out.eqns[fi].prim != Prim::Scan) continue;
    const ScanParts f(out.eqns[fi]);
    if (!f.body->constvars.empty()) continue;
    // Last ys first: dropping one renumbers only those after it. (Each rewrite replaces
    // the scan's body, so `f` is not read after this line.)
    const size_t num_ys = f.body->outvars.size() - f.ncar;
    for (size_t y = num_ys; y-- > 0;) remat_one(out, fi, y);
  }
  return out;
}

}  // namespace jx::compiler
