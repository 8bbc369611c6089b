// The argument forms convolutions and windowed reductions share: padding given by name or
// as pairs, and convolution dimension numbers given as strings or numbers. As
// jax.lax.padtype_to_pads and conv_general_permutations.
#include <algorithm>
#include <set>

#include "jx/lax.h"
#include "support/str.h"

namespace jx::lax {

Padding::Pairs padtype_to_pads(const std::vector<int64_t>& in_shape,
                               const std::vector<int64_t>& window_shape,
                               const std::vector<int64_t>& window_strides,
                               const std::string& padding) {
  std::string up = padding;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  const size_t n = in_shape.size();
  if (window_shape.size() != n || window_strides.size() != n)
    throw ShapeError(str("[padtype_to_pads] ", n, " dims, ", window_shape.size(), " window sizes and ",
                         window_strides.size(), " strides; give one of each per dim"));
  Padding::Pairs pads(n);
  if (up == "VALID") return pads;
  if (up != "SAME" && up != "SAME_LOWER")
    throw ValueError(str("[padtype_to_pads] unknown padding \"", padding,
                         "\"; use \"SAME\", \"SAME_LOWER\", \"VALID\" or (lo, hi) pairs"));
  for (size_t i = 0; i < n; ++i) {
    if (window_strides[i] < 1)
      throw ValueError(str("[padtype_to_pads] strides ", list_str(window_strides),
                           " must be positive"));
    const int64_t out = (in_shape[i] + window_strides[i] - 1) / window_strides[i];
    const int64_t total = std::max<int64_t>(0, (out - 1) * window_strides[i] + window_shape[i] - in_shape[i]);
    pads[i] = up == "SAME" ? std::pair{total / 2, total - total / 2} : std::pair{total - total / 2, total / 2};
  }
  return pads;
}

Padding::Pairs Padding::resolve(const char* op, const std::vector<int64_t>& in,
                                const std::vector<int64_t>& window,
                                const std::vector<int64_t>& strides) const {
  if (!is_named()) {
    if (pairs_.size() != in.size())
      throw ShapeError(str("[", op, "] padding has ", pairs_.size(), " (lo, hi) pairs for ",
                           in.size(), " spatial dims; give one pair per dim"));
    return pairs_;
  }
  try {
    return padtype_to_pads(in, window, strides, name_);
  } catch (const ValueError&) {
    throw ValueError(str("[", op, "] unknown padding \"", name_,
                         "\"; use \"SAME\", \"SAME_LOWER\", \"VALID\" or (lo, hi) pairs"));
  }
}

namespace {

// conv_general_permutations for one spec: (batch/out-feature, feature/in-feature,
// spatial...) with spatial dims in the order the rhs string names them.
std::vector<int64_t> permutation(const std::string& spec, char a, char b, const std::string& rhs) {
  std::vector<int64_t> perm{int64_t(spec.find(a)), int64_t(spec.find(b))};
  std::vector<int64_t> spatial;
  for (size_t i = 0; i < spec.size(); ++i)
    if (spec[i] != a && spec[i] != b) spatial.push_back(int64_t(i));
  std::stable_sort(spatial.begin(), spatial.end(), [&](int64_t x, int64_t y) {
    return rhs.find(spec[size_t(x)]) < rhs.find(spec[size_t(y)]);
  });
  perm.insert(perm.end(), spatial.begin(), spatial.end());
  return perm;
}

std::set<char> spatial_chars(const std::string& s, char a, char b) {
  std::set<char> r(s.begin(), s.end());
  r.erase(a);
  r.erase(b);
  return r;
}

void check_spec(const char* op, const std::vector<int64_t>& spec, int64_t ndim, const char* which) {
  std::vector<int64_t> sorted = spec;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < int64_t(sorted.size()); ++i)
    if (sorted[size_t(i)] != i || int64_t(spec.size()) != ndim)
      throw ValueError(str("[", op, "] dimension numbers ", which, " ", list_str(spec),
                           " must be a permutation of the ", ndim, " operand dims"));
}

}  // namespace

ConvDimensionNumbers ConvDimensions::resolve(const char* op, int64_t lhs_ndim, int64_t rhs_ndim) const {
  if (lhs_ndim != rhs_ndim)
    throw ShapeError(str("[", op, "] lhs and rhs must have the same rank, got ", lhs_ndim,
                         " and ", rhs_ndim, "; both need (batch/out, feature/in, spatial...) dims, ",
                         "as NCHW and OIHW for 2-D"));
  if (lhs_ndim < 2)
    throw ShapeError(str("[", op, "] operands need a batch and a feature dim, got rank ", lhs_ndim));
  if (!given_) {
    std::vector<int64_t> dims(static_cast<size_t>(lhs_ndim));
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = int64_t(i);
    return {dims, dims, dims};
  }
  if (strings_.empty()) {
    check_spec(op, numbers_.lhs_spec, lhs_ndim, "lhs_spec");
    check_spec(op, numbers_.rhs_spec, lhs_ndim, "rhs_spec");
    check_spec(op, numbers_.out_spec, lhs_ndim, "out_spec");
    return numbers_;
  }
  const std::string all = str("(\"", strings_[0], "\", \"", strings_[1], "\", \"", strings_[2], "\")");
  const char pairs[3][2] = {{'N', 'C'}, {'O', 'I'}, {'N', 'C'}};
  for (size_t i = 0; i < 3; ++i) {
    const std::string& s = strings_[i];
    if (int64_t(s.size()) != lhs_ndim)
      throw ValueError(str("[", op, "] dimension_numbers[", i, "] \"", s, "\" has ", s.size(),
                           " letters for operands of rank ", lhs_ndim, ": ", all));
    const char a = pairs[i][0], b = pairs[i][1];
    if (std::count(s.begin(), s.end(), a) != 1 || std::count(s.begin(), s.end(), b) != 1)
      throw ValueError(str("[", op, "] dimension_numbers[", i, "] \"", s,
                           "\" must contain '", a, "' and '", b, "' exactly once: ", all));
    if (std::set<char>(s.begin(), s.end()).size() != s.size())
      throw ValueError(str("[", op, "] dimension_numbers[", i, "] \"", s,
                           "\" repeats a letter: ", all));
  }
  if (spatial_chars(strings_[0], 'N', 'C') != spatial_chars(strings_[1], 'O', 'I') ||
      spatial_chars(strings_[2], 'N', 'C') != spatial_chars(strings_[1], 'O', 'I'))
    throw ValueError(str("[", op, "] dimension_numbers must name the same spatial letters in "
                         "lhs, rhs and out: ", all));
  const std::string& rhs = strings_[1];
  return {permutation(strings_[0], 'N', 'C', rhs), permutation(rhs, 'O', 'I', rhs),
          permutation(strings_[2], 'N', 'C', rhs)};
}

ConvDimensionNumbers conv_dimension_numbers(const Shape& lhs_shape, const Shape& rhs_shape,
                                            const ConvDimensions& dimension_numbers) {
  return dimension_numbers.resolve("conv_dimension_numbers", int64_t(lhs_shape.size()),
                                   int64_t(rhs_shape.size()));
}

}  // namespace jx::lax
