// Fusion by greedy producer-consumer grouping in program order. Each equation joins the
// group(s) of its operands when its output can be placed on their domain (fusion.h) and
// joining creates no cycle between steps; otherwise it starts a group of its own, whose
// domain is its output shape (for a reduction: its operand's shape). A consumer of two
// groups with the same domain merges them (the elementwise chain tanh(x*1.5+0.5) *
// sigmoid(x) is one kernel although sigmoid(x) starts apart from the tanh chain). When
// joining all its operands' groups fails, an equation joins the largest subset that works.
//
// A splat (broadcast_in_dim of a literal: the zeros of a ReLU's gradient) belongs to no
// group: every kernel that reads it computes it as an immediate, so it is never written by
// one kernel and read back from memory by another. It is materialized, by a library step
// at the start, only when a library step reads it or the program returns it.
#include "compiler/fusion.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ops/common.h"
#include "support/str.h"

namespace jx::compiler {
namespace {

using ops::Prim;
using Map = std::vector<int>;
using ops::Aval;

using Role = FusionRole;

bool is_fusible_reduce(Prim p) {
  switch (p) {
    case Prim::ReduceSum: case Prim::ReduceProd: case Prim::ReduceMax: case Prim::ReduceMin:
    case Prim::ReduceAnd: case Prim::ReduceOr: case Prim::ReduceXor:
      return true;
    default:
      return false;
  }
}

Role role_of(const ir::Jaxpr& j, const ir::Eqn& e) {
  if (e.outputs.size() != 1) return Role::Library;  // an emit rule yields one element
  for (const ir::Atom& a : e.inputs)
    if (!codegen_dtype(j.aval_of(a).dtype)) return Role::Library;
  const Aval& out = j.avals[size_t(e.outputs[0])];
  if (!codegen_dtype(out.dtype)) return Role::Library;
  switch (e.prim) {
    case Prim::BroadcastInDim: case Prim::Squeeze: case Prim::Reshape:
      return Role::View;
    case Prim::Iota:
      return Role::Iota;
    default:
      break;
  }
  if (is_fusible_reduce(e.prim)) {
    const std::vector<int64_t>& axes = e.params.ints("axes");
    if (axes.empty()) return Role::Library;
    // Generated reductions accumulate real lanes; a complex sum or product is the kernel's.
    if (is_complex(out.dtype)) return Role::Library;
    // Generated code has two loop forms: reduced dims innermost (row kernels) and the
    // innermost dim kept (column kernels). A reduction over the innermost dim and an outer
    // one with a kept dim between them ([N, C, K] over (0, 2)) fits neither and would read
    // with strides: the eager kernel is faster, so it stays a library call.
    const Shape& in = j.aval_of(e.inputs[0]).shape;
    auto reduced = [&](size_t d) { return std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end(); };
    bool inner_reduced = false, kept_seen = false, first = true;
    for (size_t d = in.size(); d-- > 0;) {  // non-unit dims, innermost first
      if (in[d] == 1) continue;
      if (first) inner_reduced = reduced(d), first = false;
      if (!inner_reduced) break;  // the innermost dim kept: a column kernel
      if (!reduced(d)) kept_seen = true;
      else if (kept_seen) return Role::Library;  // reduced dims on both sides of a kept one
    }
    return Role::Reduce;
  }
  const ops::PrimitiveInfo& pi = ops::info(e.prim);
  if (pi.fusion != ops::FusionKind::Elementwise || !pi.emit) return Role::Library;
  // Operands of a lower rank than the output would need a broadcast rule we do not have
  // (rank 0 is a scalar and reads at offset 0).
  for (const ir::Atom& a : e.inputs) {
    size_t r = j.aval_of(a).shape.size();
    if (r != 0 && r != out.shape.size()) return Role::Library;
  }
  std::vector<std::string> args;
  std::vector<Aval> in;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    args.push_back(str("a", i));
    in.push_back(j.aval_of(e.inputs[i]));
  }
  try {
    return pi.emit(args, in, e.params).empty() ? Role::Library : Role::Elementwise;
  } catch (const std::exception&) {
    return Role::Library;  // a rule that rejects these params: run the eager kernel
  }
}

struct Group {
  bool kernel = false;
  bool alive = true;
  std::vector<int> eqns;
  Shape domain;
  std::vector<bool> reduced;
  std::set<int> preds;  // groups this one reads from (possibly merged away: resolve with find)
};

// Where a candidate equation would live: the domain and reduced dims of the (merged)
// group, and which vars are already computed inside it.
struct Target {
  Shape domain;
  std::vector<bool> reduced;
  std::function<bool(int)> inside;
};

// Beyond this many candidate groups, join_largest_subset tries only all and each alone.
constexpr size_t kMaxSubsetCandidates = 6;

class Fuser {
 public:
  Fuser(const ir::Jaxpr& j, const FusionOptions& opts) : j_(j), opts_(opts) {
    group_of_var_.assign(j.avals.size(), -1);
    placement_.assign(j.avals.size(), {});
    splat_eqn_.assign(j.avals.size(), -1);
  }

  FusionPlan run() {
    for (size_t i = 0; i < j_.eqns.size(); ++i) add_eqn(int(i));
    split_view_only_groups();
    return finish();
  }

 private:
  const ir::Jaxpr& j_;
  FusionOptions opts_;
  std::vector<Group> groups_;
  std::vector<int> group_of_var_;
  std::vector<Map> placement_;
  std::vector<int> merged_into_;
  std::vector<int> splat_eqn_;  // per var: the splat equation producing it, or -1

  bool is_splat(int var) const { return splat_eqn_[size_t(var)] >= 0; }

  int find(int g) const {
    while (merged_into_[size_t(g)] != g) g = merged_into_[size_t(g)];
    return g;
  }
  int group_of(int var) const {
    int g = group_of_var_[size_t(var)];
    return g < 0 ? -1 : find(g);
  }
  const Shape& shape_of(int var) const { return j_.avals[size_t(var)].shape; }

  // ---- placements ----
  static Map identity(size_t rank) {
    Map m(rank);
    for (size_t d = 0; d < rank; ++d) m[d] = int(d);
    return m;
  }
  static void normalize(Map& m, const Shape& value_shape, const Shape& domain) {
    for (size_t d = 0; d < m.size(); ++d)
      if (value_shape[d] == 1 || (m[d] >= 0 && domain[size_t(m[d])] == 1)) m[d] = -1;
  }
  // A placement must cover exactly the non-unit dims of the domain (X level) or exactly
  // its non-unit kept dims (O level), in increasing order: anything else would make a
  // kernel write a value more than once or read it at an index it never computed.
  static bool full(const Map& m, const Target& t) {
    std::vector<int> refs;
    for (int k : m)
      if (k >= 0) refs.push_back(k);
    for (size_t i = 1; i < refs.size(); ++i)
      if (refs[i] <= refs[i - 1]) return false;
    std::vector<int> all, kept;
    for (size_t d = 0; d < t.domain.size(); ++d) {
      if (t.domain[d] == 1) continue;
      all.push_back(int(d));
      if (t.reduced.empty() || !t.reduced[d]) kept.push_back(int(d));
    }
    // refs empty with every value dim of size 1: a one-element value, valid anywhere.
    return refs == all || refs == kept || refs.empty();
  }
  bool is_identity(int var, const Target& t) const {
    if (shape_of(var) != t.domain) return false;
    Map id = identity(t.domain.size());
    normalize(id, t.domain, t.domain);
    return placement_[size_t(var)] == id;
  }

  // The placement of eqn e's output in target t, or false when it cannot join.
  bool place(const ir::Eqn& e, Role role, const Target& t, Map& out, std::vector<bool>& reduced) {
    const Shape& S = shape_of(e.outputs[0]);
    reduced = t.reduced;
    auto inside = [&](const ir::Atom& a) { return a.is_var() && t.inside(a.var); };
    if (role == Role::Reduce) {
      const ir::Atom& x = e.inputs[0];
      if (!inside(x) || !is_identity(x.var, t)) return false;
      std::vector<bool> r(t.domain.size(), false);
      for (int64_t a : e.params.ints("axes")) r[size_t(a)] = true;
      bool any = std::find(t.reduced.begin(), t.reduced.end(), true) != t.reduced.end();
      if (any && r != t.reduced) return false;
      reduced = r;
      out.clear();
      for (size_t d = 0; d < r.size(); ++d)
        if (!r[d]) out.push_back(int(d));
      normalize(out, S, t.domain);
      Target t2{t.domain, reduced, t.inside};
      return full(out, t2);
    }
    if (role == Role::View) {
      const ir::Atom& x = e.inputs[0];
      if (!inside(x)) return false;
      const Map& px = placement_[size_t(x.var)];
      const Shape& sx = shape_of(x.var);
      if (e.prim == Prim::Squeeze) {
        std::vector<bool> drop(sx.size(), false);
        for (int64_t d : e.params.ints("dimensions")) drop[size_t(d)] = true;
        out.clear();
        for (size_t d = 0; d < sx.size(); ++d)
          if (!drop[d]) out.push_back(px[d]);
      } else if (e.prim == Prim::Reshape) {
        // Only reshapes that add or drop size-1 dims keep the element-to-index relation.
        std::vector<int> src;
        std::vector<int64_t> n1x, n1s;
        for (size_t d = 0; d < sx.size(); ++d)
          if (sx[d] != 1) {
            n1x.push_back(sx[d]);
            src.push_back(px[d]);
          }
        for (int64_t s : S)
          if (s != 1) n1s.push_back(s);
        if (n1x != n1s) return false;
        out.assign(S.size(), -1);
        size_t k = 0;
        for (size_t d = 0; d < S.size(); ++d)
          if (S[d] != 1) out[d] = src[k++];
      } else {  // broadcast_in_dim
        const auto& bd = e.params.ints("broadcast_dimensions");
        if (S == t.domain) {
          out = identity(S.size());
        } else {
          out.assign(S.size(), -1);
          for (size_t d = 0; d < S.size(); ++d) {
            if (S[d] == 1) continue;
            bool found = false;
            for (size_t i = 0; i < bd.size(); ++i)
              if (size_t(bd[i]) == d && sx[i] == S[d]) {
                out[d] = px[i];
                found = true;
              }
            if (!found) return false;
          }
        }
        normalize(out, S, t.domain);
        for (size_t i = 0; i < bd.size(); ++i)
          if (sx[i] != 1 && px[i] != out[size_t(bd[i])]) return false;
      }
      normalize(out, S, t.domain);
      return full(out, t);
    }
    // Elementwise: take the placement from the domain or from the operands inside.
    if (S == t.domain) {
      out = identity(S.size());
    } else {
      out.assign(S.size(), -1);
      for (size_t d = 0; d < S.size(); ++d) {
        if (S[d] == 1) continue;
        bool found = false;
        for (const ir::Atom& a : e.inputs)
          if (inside(a) && shape_of(a.var).size() == S.size() && shape_of(a.var)[d] == S[d]) {
            out[d] = placement_[size_t(a.var)][d];
            found = true;
            break;
          }
        if (!found) return false;
      }
    }
    normalize(out, S, t.domain);
    for (const ir::Atom& a : e.inputs) {
      if (!inside(a)) continue;
      const Shape& sa = shape_of(a.var);
      const Map& pa = placement_[size_t(a.var)];
      if (sa.size() != S.size()) {
        if (!sa.empty()) return false;
        continue;
      }
      for (size_t d = 0; d < sa.size(); ++d)
        if (sa[d] != 1 && pa[d] != out[d]) return false;
    }
    return full(out, t);
  }

  // True when group `from` reads (transitively) from any group in `targets`.
  bool depends_on(int from, const std::set<int>& targets) const {
    std::vector<int> stack{from};
    std::set<int> seen;
    while (!stack.empty()) {
      int g = find(stack.back());
      stack.pop_back();
      if (targets.count(g)) return true;
      if (!seen.insert(g).second) continue;
      for (int p : groups_[size_t(g)].preds) stack.push_back(p);
    }
    return false;
  }
  // Joining e into the merged set M makes a cycle iff some step outside M that M (or e)
  // reads from itself reads from M.
  bool creates_cycle(const ir::Eqn& e, const std::set<int>& M) const {
    auto outside_pred_depends = [&](int p) {
      p = find(p);
      return !M.count(p) && depends_on(p, M);
    };
    for (const ir::Atom& a : e.inputs) {
      if (!a.is_var()) continue;
      int g = group_of(a.var);
      if (g >= 0 && outside_pred_depends(g)) return true;
    }
    for (int g : M)
      for (int p : groups_[size_t(g)].preds)
        if (outside_pred_depends(p)) return true;
    return false;
  }

  int new_group(bool kernel, const Shape& domain, std::vector<bool> reduced) {
    Group g;
    g.kernel = kernel;
    g.domain = domain;
    g.reduced = std::move(reduced);
    groups_.push_back(std::move(g));
    merged_into_.push_back(int(groups_.size()) - 1);
    return int(groups_.size()) - 1;
  }

  void attach(int eqn, int g, Map placement) {
    Group& grp = groups_[size_t(g)];
    grp.eqns.push_back(eqn);
    const ir::Eqn& e = j_.eqns[size_t(eqn)];
    for (const ir::Atom& a : e.inputs) {
      if (!a.is_var()) continue;
      int p = group_of(a.var);
      if (p >= 0 && p != g) grp.preds.insert(p);
    }
    for (int v : e.outputs) group_of_var_[size_t(v)] = g;
    if (!placement.empty() || grp.kernel) placement_[size_t(e.outputs[0])] = std::move(placement);
  }

  void merge_into(int keep, const std::set<int>& others) {
    for (int o : others) {
      if (o == keep) continue;
      Group& g = groups_[size_t(o)];
      Group& k = groups_[size_t(keep)];
      k.eqns.insert(k.eqns.end(), g.eqns.begin(), g.eqns.end());
      k.preds.insert(g.preds.begin(), g.preds.end());
      if (std::find(g.reduced.begin(), g.reduced.end(), true) != g.reduced.end()) k.reduced = g.reduced;
      g.alive = false;
      g.eqns.clear();
      merged_into_[size_t(o)] = keep;
    }
    Group& k = groups_[size_t(keep)];
    std::set<int> preds;
    for (int p : k.preds)
      if (find(p) != keep) preds.insert(find(p));
    k.preds = std::move(preds);
    std::sort(k.eqns.begin(), k.eqns.end());
  }

  static bool compatible(const Group& a, const Group& b) {
    if (a.domain != b.domain) return false;
    bool ra = std::find(a.reduced.begin(), a.reduced.end(), true) != a.reduced.end();
    bool rb = std::find(b.reduced.begin(), b.reduced.end(), true) != b.reduced.end();
    return !ra || !rb || a.reduced == b.reduced;
  }

  // A group of one-element values (a broadcast literal, a scalar computed from scalars)
  // fits any domain: its values read at offset 0 wherever they are used.
  bool is_scalar_group(int g) const {
    const Group& grp = groups_[size_t(g)];
    int64_t n = 1;
    for (int64_t d : grp.domain) n *= d;
    return n == 1 && std::none_of(grp.eqns.begin(), grp.eqns.end(), [&](int i) {
      return is_fusible_reduce(j_.eqns[size_t(i)].prim);
    });
  }

  bool has_reduction(int g) const {
    const auto& r = groups_[size_t(g)].reduced;
    return std::find(r.begin(), r.end(), true) != r.end();
  }
  // Non-unit dims of `domain`, skipping reduced ones (when `reduced` is given).
  static std::vector<int> nonunit_dims(const Shape& domain, const std::vector<bool>& reduced) {
    std::vector<int> out;
    for (size_t d = 0; d < domain.size(); ++d)
      if (domain[d] != 1 && (reduced.empty() || !reduced[d])) out.push_back(int(d));
    return out;
  }
  static std::vector<int64_t> sizes(const Shape& domain, const std::vector<int>& dims) {
    std::vector<int64_t> out;
    for (int d : dims) out.push_back(domain[size_t(d)]);
    return out;
  }

  // The domain an equation would have in a group of its own.
  Shape own_domain(const ir::Eqn& e, Role role) const {
    return role == Role::Reduce ? j_.aval_of(e.inputs[0]).shape : shape_of(e.outputs[0]);
  }

  bool try_join(int eqn, Role role, const std::set<int>& M) {
    const ir::Eqn& e = j_.eqns[size_t(eqn)];
    std::vector<int> big;
    for (int g : M)
      if (!is_scalar_group(g)) big.push_back(g);
    // The group with reductions (if any) sets the domain; an elementwise group over its
    // kept dims joins as per-row values (a layer norm's epilogue on the row statistics).
    int first = big.empty() ? *M.begin() : big[0];
    for (int g : big)
      if (has_reduction(g)) first = g;
    std::vector<int> remap;
    for (int g : big) {
      if (g == first || compatible(groups_[size_t(first)], groups_[size_t(g)])) continue;
      if (has_reduction(g) || !has_reduction(first) ||
          sizes(groups_[size_t(g)].domain, nonunit_dims(groups_[size_t(g)].domain, {})) !=
              sizes(groups_[size_t(first)].domain,
                    nonunit_dims(groups_[size_t(first)].domain, groups_[size_t(first)].reduced)))
        return false;
      remap.push_back(g);
    }
    std::vector<std::pair<int, Map>> saved;
    for (int g : remap) {
      // Its dims, in order, become the kept dims of `first`.
      std::vector<int> from = nonunit_dims(groups_[size_t(g)].domain, {});
      std::vector<int> to = nonunit_dims(groups_[size_t(first)].domain, groups_[size_t(first)].reduced);
      for (int i : groups_[size_t(g)].eqns)
        for (int v : j_.eqns[size_t(i)].outputs) {
          saved.emplace_back(v, placement_[size_t(v)]);
          for (int& k : placement_[size_t(v)])
            if (k >= 0) k = to[size_t(std::find(from.begin(), from.end(), k) - from.begin())];
        }
    }
    auto restore = [&] {
      for (auto& [v, m] : saved) placement_[size_t(v)] = std::move(m);
      return false;
    };
    Target t;
    if (big.empty()) {
      t.domain = own_domain(e, role);
      t.reduced.assign(t.domain.size(), false);
    } else {
      t.domain = groups_[size_t(first)].domain;
      t.reduced = groups_[size_t(first)].reduced;
    }
    t.inside = [&](int v) { return M.count(group_of(v)) > 0; };
    Map p;
    std::vector<bool> reduced;
    if (!place(e, role, t, p, reduced)) return restore();
    if (creates_cycle(e, M)) return restore();
    merge_into(first, M);
    groups_[size_t(first)].domain = t.domain;
    groups_[size_t(first)].reduced = reduced;
    attach(eqn, first, std::move(p));
    return true;
  }

  // Joins the largest subset of the candidate groups that works: all, then every subset
  // one smaller (in lexicographic order of positions), and so on. Taking the first
  // single candidate would leave the others' groups behind as kernels of their own.
  bool join_largest_subset(int eqn, Role role, const std::vector<int>& cands) {
    const size_t n = cands.size();
    if (n > kMaxSubsetCandidates) {  // too many subsets: all, then each alone
      if (try_join(eqn, role, std::set<int>(cands.begin(), cands.end()))) return true;
      for (int g : cands)
        if (try_join(eqn, role, {g})) return true;
      return false;
    }
    for (size_t k = n; k >= 1; --k) {
      std::vector<size_t> pos(k);  // the subset's positions, increasing
      for (size_t i = 0; i < k; ++i) pos[i] = i;
      while (true) {
        std::set<int> M;
        for (size_t i : pos) M.insert(cands[i]);
        if (try_join(eqn, role, M)) return true;
        size_t i = k;  // advance to the next combination
        while (i > 0 && pos[i - 1] == n - k + i - 1) --i;
        if (i == 0) break;
        ++pos[i - 1];
        for (size_t q = i; q < k; ++q) pos[q] = pos[q - 1] + 1;
      }
    }
    return false;
  }

  void add_eqn(int eqn) {
    const ir::Eqn& e = j_.eqns[size_t(eqn)];
    Role role = opts_.kernels ? role_of(j_, e) : Role::Library;
    if (role == Role::View && e.prim == Prim::BroadcastInDim && !e.inputs[0].is_var()) {
      splat_eqn_[size_t(e.outputs[0])] = eqn;
      return;
    }
    if (role == Role::Library) {
      attach(eqn, new_group(false, {}, {}), {});
      return;
    }
    std::vector<int> cands;
    for (const ir::Atom& a : e.inputs) {
      if (!a.is_var()) continue;
      int g = group_of(a.var);
      if (g >= 0 && groups_[size_t(g)].kernel &&
          std::find(cands.begin(), cands.end(), g) == cands.end())
        cands.push_back(g);
    }
    if (join_largest_subset(eqn, role, cands)) return;
    // A group of its own, on its own domain.
    const Shape& S = shape_of(e.outputs[0]);
    if (role == Role::Reduce) {
      const Shape& X = j_.aval_of(e.inputs[0]).shape;
      std::vector<bool> r(X.size(), false);
      for (int64_t a : e.params.ints("axes")) r[size_t(a)] = true;
      Map p;
      for (size_t d = 0; d < X.size(); ++d)
        if (!r[d]) p.push_back(int(d));
      normalize(p, S, X);
      attach(eqn, new_group(true, X, r), std::move(p));
      return;
    }
    Map p = identity(S.size());
    normalize(p, S, S);
    attach(eqn, new_group(true, S, std::vector<bool>(S.size(), false)), std::move(p));
  }

  // A kernel of reshapes/squeezes only would copy what the eager impl merely aliases.
  void split_view_only_groups() {
    size_t n = groups_.size();
    for (size_t g = 0; g < n; ++g) {
      Group& grp = groups_[g];
      if (!grp.alive || !grp.kernel) continue;
      bool views = std::all_of(grp.eqns.begin(), grp.eqns.end(), [&](int i) {
        Prim p = j_.eqns[size_t(i)].prim;
        return p == Prim::Reshape || p == Prim::Squeeze;
      });
      if (!views) continue;
      grp.kernel = false;
      if (grp.eqns.size() == 1) continue;
      // One library step per view, in order; each reads the previous one's output.
      std::vector<int> eqns = grp.eqns;
      grp.eqns = {eqns[0]};
      int prev = int(g);
      for (size_t k = 1; k < eqns.size(); ++k) {
        int ng = new_group(false, {}, {});
        groups_[size_t(ng)].eqns = {eqns[k]};
        groups_[size_t(ng)].preds = groups_[g].preds;
        groups_[size_t(ng)].preds.insert(prev);
        for (int v : j_.eqns[size_t(eqns[k])].outputs) group_of_var_[size_t(v)] = ng;
        prev = ng;
      }
    }
    // Recompute every group's predecessors from scratch (the splits changed producers).
    for (Group& grp : groups_) grp.preds.clear();
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (!groups_[g].alive || find(int(g)) != int(g)) continue;
      for (int i : groups_[g].eqns)
        for (const ir::Atom& a : j_.eqns[size_t(i)].inputs)
          if (a.is_var() && group_of(a.var) >= 0 && group_of(a.var) != int(g))
            groups_[g].preds.insert(group_of(a.var));
    }
  }

  FusionPlan finish() {
    // Topological order of the live groups; ties go to the earliest equation.
    std::vector<int> live;
    for (size_t g = 0; g < groups_.size(); ++g)
      if (groups_[g].alive && find(int(g)) == int(g) && !groups_[g].eqns.empty()) live.push_back(int(g));
    std::vector<bool> done(groups_.size(), false);
    std::vector<int> order;
    while (order.size() < live.size()) {
      int best = -1;
      for (int g : live) {
        if (done[size_t(g)]) continue;
        bool ready = std::all_of(groups_[size_t(g)].preds.begin(), groups_[size_t(g)].preds.end(),
                                 [&](int p) { return done[size_t(find(p))]; });
        if (ready && (best < 0 || groups_[size_t(g)].eqns[0] < groups_[size_t(best)].eqns[0])) best = g;
      }
      JX_CHECK(best >= 0, "fusion produced a cycle between steps");
      done[size_t(best)] = true;
      order.push_back(best);
    }
    // Which vars are needed outside their producing step.
    std::vector<int> group_of_eqn(j_.eqns.size(), -1);
    for (int g : live)
      for (int i : groups_[size_t(g)].eqns) group_of_eqn[size_t(i)] = g;
    std::vector<bool> escapes(j_.avals.size(), false);
    for (const ir::Atom& a : j_.outvars)
      if (a.is_var()) escapes[size_t(a.var)] = true;
    for (size_t i = 0; i < j_.eqns.size(); ++i)
      for (const ir::Atom& a : j_.eqns[i].inputs)
        if (a.is_var() && group_of(a.var) >= 0 && group_of(a.var) != group_of_eqn[i])
          escapes[size_t(a.var)] = true;

    FusionPlan plan;
    plan.placement.assign(j_.avals.size(), {});
    // Splats that a library step reads or the program returns: materialized first.
    std::vector<bool> materialize(j_.avals.size(), false);
    for (const ir::Atom& a : j_.outvars)
      if (a.is_var() && is_splat(a.var)) materialize[size_t(a.var)] = true;
    for (int g : live)
      if (!groups_[size_t(g)].kernel)
        for (int i : groups_[size_t(g)].eqns)
          for (const ir::Atom& a : j_.eqns[size_t(i)].inputs)
            if (a.is_var() && is_splat(a.var)) materialize[size_t(a.var)] = true;
    for (size_t v = 0; v < materialize.size(); ++v)
      if (materialize[v]) {
        FusedStep st;
        st.eqns = {splat_eqn_[v]};
        plan.steps.push_back(std::move(st));
      }
    for (int g : order) {
      const Group& grp = groups_[size_t(g)];
      FusedStep st;
      st.is_kernel = grp.kernel;
      st.eqns = grp.eqns;
      if (grp.kernel) {
        st.domain = grp.domain;
        st.reduced = grp.reduced;
        st.reduced.resize(st.domain.size(), false);
        std::set<int> seen_in;
        std::vector<int> splats;  // computed in this kernel as immediates
        for (int i : st.eqns) {
          const ir::Eqn& e = j_.eqns[size_t(i)];
          for (const ir::Atom& a : e.inputs)
            if (a.is_var() && is_splat(a.var)) {
              if (seen_in.insert(a.var).second) splats.push_back(splat_eqn_[size_t(a.var)]);
            } else if (a.is_var() && group_of(a.var) != g && seen_in.insert(a.var).second) {
              st.inputs.push_back(a.var);
            }
          for (int v : e.outputs) {
            plan.placement[size_t(v)] = placement_[size_t(v)];
            if (escapes[size_t(v)]) st.outputs.push_back(v);
          }
        }
        // A splat has no operands, so it can come first.
        std::sort(splats.begin(), splats.end());
        st.eqns.insert(st.eqns.begin(), splats.begin(), splats.end());
      }
      plan.steps.push_back(std::move(st));
    }
    return plan;
  }
};

}  // namespace

bool FusedStep::has_reduction() const {
  return std::find(reduced.begin(), reduced.end(), true) != reduced.end();
}

// Half types run as library calls under jit: generated code has no arithmetic for them.
bool codegen_dtype(DType t) { return t != DType::Float16 && t != DType::BFloat16; }

FusionRole fusion_role(const ir::Jaxpr& j, const ir::Eqn& e) { return role_of(j, e); }

FusionPlan fuse(const ir::Jaxpr& j, const FusionOptions& opts) { return Fuser(j, opts).run(); }

std::string describe(const ir::Jaxpr& j, const FusionPlan& plan) {
  std::string s;
  int k = 0;
  for (const FusedStep& st : plan.steps) {
    if (st.is_kernel) {
      s += str("kernel k", k++, " ", type_str(j.avals[size_t(st.outputs.empty() ? j.eqns[size_t(st.eqns.back())].outputs[0] : st.outputs[0])].dtype, st.domain));
      if (st.has_reduction()) {
        std::vector<int64_t> axes;
        for (size_t d = 0; d < st.reduced.size(); ++d)
          if (st.reduced[d]) axes.push_back(int64_t(d));
        s += str(" reducing ", list_str(axes));
      }
      s += ":";
      for (int i : st.eqns) s += str(" ", ops::name(j.eqns[size_t(i)].prim));
    } else {
      const ir::Eqn& e = j.eqns[size_t(st.eqns[0])];
      s += str("library ", ops::name(e.prim), " ->");
      for (int v : e.outputs) s += str(" ", ops::aval_str(j.avals[size_t(v)]));
    }
    s += "\n";
  }
  return s;
}

}  // namespace jx::compiler
