// Contraction orders for jnp.einsum (jax uses opt_einsum's): an optimal order by dynamic
// programming over subsets of operands, and a greedy one for many operands. A step's cost
// is the product of the sizes of every label it touches (its multiply-adds).
#include "numpy/einsum_path.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "jx/error.h"
#include "support/str.h"

namespace jx::numpy::einsum_detail {

namespace {

using Labels = std::vector<int>;
using Mask = uint32_t;

Labels unite(const Labels& a, const Labels& b) {
  Labels r = a;
  for (int l : b)
    if (std::find(r.begin(), r.end(), l) == r.end()) r.push_back(l);
  return r;
}
bool has(const Labels& l, int v) { return std::find(l.begin(), l.end(), v) != l.end(); }

struct Planner {
  std::vector<Labels> terms;  // each operand's distinct labels
  const std::map<int, int64_t>& sizes;
  Labels out;

  double size_of(const Labels& l) const {
    double s = 1;
    for (int v : l) s *= double(sizes.at(v));
    return s;
  }
  // The labels a group of operands keeps once contracted: those still needed by the
  // output or by operands outside the group.
  Labels kept(const Labels& all, const std::vector<Labels>& others) const {
    Labels r;
    for (int l : all) {
      bool need = has(out, l);
      for (const Labels& o : others) need = need || has(o, l);
      if (need) r.push_back(l);
    }
    return r;
  }
};

// Dynamic programming over subsets: the cheapest way to contract each subset to one operand.
Path optimal(const Planner& pl) {
  const size_t n = pl.terms.size();
  const Mask full = Mask((1u << n) - 1);
  std::vector<Labels> labels(size_t(full) + 1);
  std::vector<double> cost(size_t(full) + 1, std::numeric_limits<double>::infinity());
  std::vector<Mask> split(size_t(full) + 1, 0);
  for (Mask s = 1; s <= full; ++s) {
    Labels all;
    std::vector<Labels> others;
    for (size_t i = 0; i < n; ++i) {
      if (s & (1u << i)) all = unite(all, pl.terms[i]);
      else others.push_back(pl.terms[i]);
    }
    labels[s] = pl.kept(all, others);
    if ((s & (s - 1)) == 0) {
      cost[s] = 0;
      continue;
    }
    // Sub-masks holding s's lowest operand: each unordered split once.
    const Mask low = s & (~s + 1);
    for (Mask a = (s - 1) & s; a > 0; a = (a - 1) & s) {
      if (!(a & low)) continue;
      const Mask b = s ^ a;
      const double c = cost[a] + cost[b] + pl.size_of(unite(labels[a], labels[b]));
      if (c < cost[s]) {
        cost[s] = c;
        split[s] = a;
      }
    }
  }
  // The tree as opt_einsum's linear path: children first, then the pair's positions in the
  // list as it stands.
  Path path;
  std::vector<Mask> current;
  for (size_t i = 0; i < n; ++i) current.push_back(Mask(1u << i));
  auto emit = [&](auto&& self, Mask s) -> void {
    if ((s & (s - 1)) == 0) return;
    const Mask a = split[s], b = s ^ a;
    self(self, a);
    self(self, b);
    int64_t i = std::find(current.begin(), current.end(), a) - current.begin();
    int64_t j = std::find(current.begin(), current.end(), b) - current.begin();
    if (i > j) std::swap(i, j);
    current.erase(current.begin() + j);
    current.erase(current.begin() + i);
    current.push_back(s);
    path.emplace_back(i, j);
  };
  emit(emit, full);
  return path;
}

// Repeatedly the pair whose result is smallest (the first such pair on ties).
Path greedy(const Planner& pl) {
  std::vector<Labels> ops = pl.terms;
  Path path;
  while (ops.size() > 1) {
    int64_t bi = 0, bj = 1;
    double best = -1;
    for (size_t i = 0; i < ops.size(); ++i)
      for (size_t j = i + 1; j < ops.size(); ++j) {
        std::vector<Labels> others;
        for (size_t k = 0; k < ops.size(); ++k)
          if (k != i && k != j) others.push_back(ops[k]);
        const double sz = pl.size_of(pl.kept(unite(ops[i], ops[j]), others));
        if (best < 0 || sz < best) {
          best = sz;
          bi = int64_t(i);
          bj = int64_t(j);
        }
      }
    std::vector<Labels> others;
    for (size_t k = 0; k < ops.size(); ++k)
      if (int64_t(k) != bi && int64_t(k) != bj) others.push_back(ops[k]);
    Labels r = pl.kept(unite(ops[size_t(bi)], ops[size_t(bj)]), others);
    ops.erase(ops.begin() + bj);
    ops.erase(ops.begin() + bi);
    ops.push_back(r);
    path.emplace_back(bi, bj);
  }
  return path;
}

Planner planner(const std::vector<Term>& terms, const std::map<int, int64_t>& sizes,
                const std::vector<int>& out) {
  Planner pl{{}, sizes, out};
  for (const Term& t : terms) pl.terms.push_back(unite({}, t.labels));
  return pl;
}

}  // namespace

Path plan(const std::vector<Term>& terms, const std::map<int, int64_t>& sizes,
          const std::vector<int>& out, std::string_view optimize) {
  const Planner pl = planner(terms, sizes, out);
  const size_t n = terms.size();
  constexpr size_t kMaxOptimal = 12;  // 3^12 subset splits
  if (optimize == "optimal") {
    if (n > kMaxOptimal)
      throw ValueError(str("[einsum] optimize=\"optimal\" searches every order and takes up to ",
                           kMaxOptimal, " operands, got ", n, "; use \"greedy\" or \"auto\""));
    return optimal(pl);
  }
  if (optimize == "auto") return n <= 8 ? optimal(pl) : greedy(pl);
  if (optimize == "greedy") return greedy(pl);
  throw ValueError(str("[einsum] unknown optimize=\"", optimize,
                       "\"; use \"auto\", \"optimal\" or \"greedy\""));
}

std::string describe(std::string_view subscripts, const std::vector<Term>& terms,
                     const std::map<int, int64_t>& sizes, const std::vector<int>& out,
                     const Path& path, const std::function<std::string(const std::vector<int>&)>& name) {
  const Planner pl = planner(terms, sizes, out);
  Labels all;
  for (const Labels& t : pl.terms) all = unite(all, t);
  const double naive = pl.size_of(all) * double(std::max<size_t>(1, terms.size() - 1));
  std::vector<Labels> ops = pl.terms;
  std::vector<std::string> steps;
  double optimized = 0;
  for (auto [i, j] : path) {
    std::vector<Labels> others;
    for (size_t k = 0; k < ops.size(); ++k)
      if (int64_t(k) != i && int64_t(k) != j) others.push_back(ops[k]);
    const Labels& a = ops[size_t(i)];
    const Labels& b = ops[size_t(j)];
    Labels r = pl.kept(unite(a, b), others);
    optimized += pl.size_of(unite(a, b));
    steps.push_back(str("(", i, ", ", j, ")  ", name(a), ",", name(b), "->", name(r)));
    ops.erase(ops.begin() + j);
    ops.erase(ops.begin() + i);
    ops.push_back(r);
  }
  std::ostringstream os;
  os << "  Complete contraction:  " << subscripts << "\n"
     << "      Naive FLOP count:  " << naive << "\n"
     << "  Optimized FLOP count:  " << optimized << "\n"
     << "   Theoretical speedup:  " << (optimized > 0 ? naive / optimized : 1.0) << "\n"
     << "  (a FLOP is one multiply-add; each step: positions, then the contraction)\n";
  for (const std::string& s : steps) os << "  " << s << "\n";
  return os.str();
}

}  // namespace jx::numpy::einsum_detail
