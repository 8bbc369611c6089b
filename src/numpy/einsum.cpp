// jnp.einsum: parses the subscripts, takes diagonals and sums labels that only one operand
// has (select + reduce_sum, as jax/_src/numpy/einsum.py), then contracts the operands
// pairwise with dot_general along a contraction path (einsum_path.cpp: the cheapest order,
// or a greedy one for many operands), and finally transposes to the requested output order.
#include <algorithm>
#include <map>

#include "jx/numpy.h"
#include "numpy/einsum_path.h"
#include "numpy/promote.h"
#include "support/str.h"

namespace jx::numpy {

namespace {

// Labels: letters are their char code; ellipsis dims are kEllipsis + position, right-aligned
// across operands so that they broadcast.
constexpr int kEllipsis = 1000;

using Labels = std::vector<int>;

std::string label_str(int l) {
  if (l < kEllipsis) return std::string(1, char(l));
  return str("...[", l - kEllipsis, "]");
}

struct Term {
  Labels letters_before, letters_after;  // around the ellipsis (all letters if none)
  bool ellipsis = false;
};

Term parse_term(std::string_view t, std::string_view subscripts) {
  Term term;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '.') {
      if (term.ellipsis || t.substr(i, 3) != "...")
        throw ValueError(str("[einsum] invalid ellipsis in subscripts \"", subscripts,
                             "\"; use exactly three dots, at most once per operand"));
      term.ellipsis = true;
      i += 2;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      throw ValueError(str("[einsum] invalid character '", c, "' in subscripts \"", subscripts,
                           "\"; labels are letters a-z, A-Z"));
    (term.ellipsis ? term.letters_after : term.letters_before).push_back(int(c));
  }
  return term;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

struct Operand {
  Array x;
  Labels labels;
};

int64_t count(const Labels& l, int v) { return std::count(l.begin(), l.end(), v); }
bool has(const Labels& l, int v) { return std::find(l.begin(), l.end(), v) != l.end(); }

// Labels needed outside operand(s) `skip_a`/`skip_b`: the output's and the other operands'.
Labels needed_elsewhere(const std::vector<Operand>& ops, size_t skip_a, size_t skip_b,
                        const Labels& out) {
  Labels need = out;
  for (size_t i = 0; i < ops.size(); ++i)
    if (i != skip_a && i != skip_b) need.insert(need.end(), ops[i].labels.begin(), ops[i].labels.end());
  return need;
}

// Takes diagonals of repeated labels and sums labels not needed elsewhere.
void reduce_own_labels(Operand& op, const Labels& need) {
  // Repeated labels: keep elements where all the label's indices agree.
  for (size_t i = 0; i < op.labels.size(); ++i) {
    int l = op.labels[i];
    if (count(op.labels, l) < 2) continue;
    std::vector<int64_t> axes;
    for (size_t j = 0; j < op.labels.size(); ++j)
      if (op.labels[j] == l) axes.push_back(int64_t(j));
    const Shape& s = op.x.shape();
    Array first = lax::broadcasted_iota(DType::Int32, s, axes[0]);
    Array mask;
    for (size_t k = 1; k < axes.size(); ++k) {
      Array m = lax::eq(first, lax::broadcasted_iota(DType::Int32, s, axes[k]));
      mask = mask.valid() ? lax::bitwise_and(mask, m) : m;
    }
    op.x = lax::select_n(mask, {zeros(s, op.x.dtype()), op.x});
    std::vector<int64_t> drop(axes.begin() + 1, axes.end());
    if (!has(need, l)) drop = axes;
    op.x = lax::reduce_sum(op.x, drop);
    Labels kept;
    for (size_t j = 0; j < op.labels.size(); ++j)
      if (std::find(drop.begin(), drop.end(), int64_t(j)) == drop.end()) kept.push_back(op.labels[j]);
    op.labels = kept;
    i = size_t(-1);  // labels changed: rescan
  }
  std::vector<int64_t> drop;
  Labels kept;
  for (size_t j = 0; j < op.labels.size(); ++j) {
    if (has(need, op.labels[j])) kept.push_back(op.labels[j]);
    else drop.push_back(int64_t(j));
  }
  if (!drop.empty()) {
    op.x = lax::reduce_sum(op.x, drop);
    op.labels = kept;
  }
}

// Drops `label` (a size-1 dim) from op by reshaping: broadcasting against the other side.
void drop_unit_label(Operand& op, int label) {
  Shape s;
  Labels kept;
  for (size_t j = 0; j < op.labels.size(); ++j)
    if (op.labels[j] != label) {
      s.push_back(op.x.shape()[j]);
      kept.push_back(op.labels[j]);
    }
  op.x = lax::reshape(op.x, s);
  op.labels = kept;
}

int64_t label_size(const Operand& op, int l) {
  for (size_t j = 0; j < op.labels.size(); ++j)
    if (op.labels[j] == l) return op.x.shape()[j];
  return 1;
}

// The labels of contract(a, b) given the labels needed afterwards: batch, a free, b free.
Labels result_labels(const Labels& a, const Labels& b, const Labels& need) {
  Labels batch, af, bf;
  for (int l : a) {
    if (has(b, l)) {
      if (has(need, l)) batch.push_back(l);
    } else {
      af.push_back(l);
    }
  }
  for (int l : b)
    if (!has(a, l)) bf.push_back(l);
  batch.insert(batch.end(), af.begin(), af.end());
  batch.insert(batch.end(), bf.begin(), bf.end());
  return batch;
}

Operand contract_pair(Operand a, Operand b, const Labels& need) {
  // Size-1 dims broadcast against the other operand's dim: drop them.
  for (int l : Labels(a.labels)) {
    if (!has(b.labels, l)) continue;
    int64_t sa = label_size(a, l), sb = label_size(b, l);
    if (sa == 1 && sb != 1) drop_unit_label(a, l);
    else if (sb == 1 && sa != 1) drop_unit_label(b, l);
  }
  Labels need_a = need, need_b = need;
  need_a.insert(need_a.end(), b.labels.begin(), b.labels.end());
  need_b.insert(need_b.end(), a.labels.begin(), a.labels.end());
  reduce_own_labels(a, need_a);
  reduce_own_labels(b, need_b);
  lax::DotDimensionNumbers dn;
  for (size_t i = 0; i < a.labels.size(); ++i) {
    int l = a.labels[i];
    auto it = std::find(b.labels.begin(), b.labels.end(), l);
    if (it == b.labels.end()) continue;
    int64_t j = it - b.labels.begin();
    if (has(need, l)) {
      dn.lhs_batch.push_back(int64_t(i));
      dn.rhs_batch.push_back(j);
    } else {
      dn.lhs_contracting.push_back(int64_t(i));
      dn.rhs_contracting.push_back(j);
    }
  }
  Operand r;
  r.labels = result_labels(a.labels, b.labels, need);
  r.x = lax::dot_general(a.x, b.x, dn);
  return r;
}

}  // namespace

namespace {

// The operands with their labels, the label sizes and the output labels.
struct Problem {
  std::vector<Operand> ops;
  std::map<int, int64_t> sizes;
  Labels out;
};

Problem prepare(std::string_view subscripts_in, const std::vector<Array>& operands_in,
                std::optional<DType> pref) {
  std::string sub;
  for (char c : subscripts_in)
    if (c != ' ') sub.push_back(c);
  const size_t arrow = sub.find("->");
  const std::string_view lhs = std::string_view(sub).substr(0, arrow);
  std::vector<std::string_view> terms = split(lhs, ',');
  if (operands_in.empty())
    throw ValueError("[einsum] needs at least one operand");
  if (terms.size() != operands_in.size())
    throw ValueError(str("[einsum] subscripts \"", subscripts_in, "\" name ", terms.size(),
                         " operand(s) but ", operands_in.size(), " were given"));
  std::vector<Array> xs = detail::promote(operands_in);
  if (pref)
    for (auto& x : xs) x = lax::convert_element_type(x, *pref, false);

  // Labels per operand, with ellipsis dims right-aligned.
  std::vector<Term> parsed;
  size_t n_ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    Term t = parse_term(terms[i], subscripts_in);
    const size_t named = t.letters_before.size() + t.letters_after.size();
    const size_t nd = size_t(xs[i].ndim());
    if (t.ellipsis ? named > nd : named != nd)
      throw ValueError(str("[einsum] operand ", i, " has shape ", shape_str(xs[i].shape()),
                           " but its subscripts \"", terms[i], "\" name ", named, " dimension(s)"));
    if (t.ellipsis) n_ell = std::max(n_ell, nd - named);
    parsed.push_back(t);
  }
  std::vector<Operand> ops;
  for (size_t i = 0; i < parsed.size(); ++i) {
    Operand op{xs[i], parsed[i].letters_before};
    if (parsed[i].ellipsis) {
      size_t e = size_t(xs[i].ndim()) - parsed[i].letters_before.size() - parsed[i].letters_after.size();
      for (size_t k = 0; k < e; ++k) op.labels.push_back(kEllipsis + int(n_ell - e + k));
    }
    op.labels.insert(op.labels.end(), parsed[i].letters_after.begin(), parsed[i].letters_after.end());
    ops.push_back(op);
  }
  // Sizes must agree (or be 1, which broadcasts, as opt_einsum allows).
  std::map<int, int64_t> sizes;
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t j = 0; j < ops[i].labels.size(); ++j) {
      int l = ops[i].labels[j];
      int64_t d = ops[i].x.shape()[j];
      auto it = sizes.find(l);
      if (it == sizes.end() || it->second == 1) sizes[l] = d;
      else if (d != 1 && d != it->second)
        throw ShapeError(str("[einsum] label '", label_str(l), "' has size ", d, " in operand ", i,
                             " (shape ", shape_str(ops[i].x.shape()), ") but size ", it->second,
                             " in an earlier operand; sizes must match or be 1"));
    }

  // Output labels: explicit, or '...' dims then the letters that appear once, sorted.
  Labels out;
  if (arrow != std::string::npos) {
    Term t = parse_term(std::string_view(sub).substr(arrow + 2), subscripts_in);
    out = t.letters_before;
    if (t.ellipsis)
      for (size_t k = 0; k < n_ell; ++k) out.push_back(kEllipsis + int(k));
    out.insert(out.end(), t.letters_after.begin(), t.letters_after.end());
    for (size_t i = 0; i < out.size(); ++i) {
      if (count(out, out[i]) > 1)
        throw ValueError(str("[einsum] output label '", label_str(out[i]), "' appears more than "
                             "once in \"", subscripts_in, "\""));
      if (!sizes.count(out[i]))
        throw ValueError(str("[einsum] output label '", label_str(out[i]), "' in \"",
                             subscripts_in, "\" does not appear in any input"));
    }
  } else {
    for (size_t k = 0; k < n_ell; ++k) out.push_back(kEllipsis + int(k));
    std::map<int, int> counts;
    for (const auto& op : ops)
      for (int l : op.labels)
        if (l < kEllipsis) counts[l]++;
    for (auto [l, c] : counts)
      if (c == 1) out.push_back(l);
  }

  return {std::move(ops), std::move(sizes), std::move(out)};
}

std::vector<einsum_detail::Term> terms_of(const Problem& p) {
  std::vector<einsum_detail::Term> t;
  for (const Operand& op : p.ops) t.push_back({op.labels});
  return t;
}

std::string subscripts_of(const Labels& l) {
  std::string s;
  for (int v : l) s += v < kEllipsis ? std::string(1, char(v)) : std::string(1, char('A' + (v - kEllipsis) % 26));
  return s;
}

}  // namespace

Array einsum(std::string_view subscripts_in, const std::vector<Array>& operands_in,
             std::optional<DType> pref, std::string_view optimize) {
  Problem prob = prepare(subscripts_in, operands_in, pref);
  std::vector<Operand>& ops = prob.ops;
  const Labels& out = prob.out;
  const einsum_detail::Path path = einsum_detail::plan(terms_of(prob), prob.sizes, out, optimize);
  for (size_t i = 0; i < ops.size(); ++i) reduce_own_labels(ops[i], needed_elsewhere(ops, i, i, out));
  // Each step contracts two operands; they leave the list and their result joins its end.
  for (auto [i, j] : path) {
    Operand r = contract_pair(ops[size_t(i)], ops[size_t(j)], needed_elsewhere(ops, size_t(i), size_t(j), out));
    ops.erase(ops.begin() + j);
    ops.erase(ops.begin() + i);
    ops.push_back(std::move(r));
  }
  Operand& r = ops[0];
  reduce_own_labels(r, out);
  // Output labels missing here were size-1 dims dropped while broadcasting.
  for (int l : out)
    if (!has(r.labels, l)) {
      Shape s = r.x.shape();
      s.push_back(1);
      r.x = lax::reshape(r.x, s);
      r.labels.push_back(l);
    }
  std::vector<int64_t> perm;
  bool identity = true;
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t p = std::find(r.labels.begin(), r.labels.end(), out[i]) - r.labels.begin();
    perm.push_back(p);
    identity = identity && p == int64_t(i);
  }
  return identity ? r.x : lax::transpose(r.x, perm);
}


EinsumPath einsum_path(std::string_view subscripts, const std::vector<Array>& operands,
                       std::string_view optimize) {
  Problem p = prepare(subscripts, operands, std::nullopt);
  auto terms = terms_of(p);
  EinsumPath r;
  r.path = einsum_detail::plan(terms, p.sizes, p.out, optimize);
  r.description = einsum_detail::describe(subscripts, terms, p.sizes, p.out, r.path, subscripts_of);
  return r;
}

}  // namespace jx::numpy
