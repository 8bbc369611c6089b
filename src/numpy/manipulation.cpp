// jnp shape manipulation, joining, splitting, tiling, flipping, rolling, and the Array
// methods that are spelled the same (reshape, T, transpose, flatten, squeeze, swapaxes,
// astype). Each follows jax/_src/numpy/lax_numpy.py and binds only lax primitives.
#include <algorithm>

#include "jx/lax.h"
#include "jx/numpy.h"
#include "numpy/manipulation_detail.h"
#include "numpy/promote.h"
#include "ops/common.h"
#include "support/str.h"

namespace jx::numpy {

using ops::canonical_axes;
using ops::canonical_axis;

namespace detail {

Array slice_axis(const Array& x, int64_t axis, int64_t start, int64_t stop) {
  if (start == 0 && stop == x.shape()[size_t(axis)]) return x;
  return lax::slice_in_dim(x, start, stop, 1, axis);
}

std::vector<int64_t> axes_or_all(const char* op, const Axes& axes, int64_t ndim) {
  if (axes.axes) return canonical_axes(op, *axes.axes, ndim);
  std::vector<int64_t> all;
  for (int64_t i = 0; i < ndim; ++i) all.push_back(i);
  return all;
}

}  // namespace detail

namespace {

std::string type_of(const Array& a) { return type_str(a.dtype(), a.shape()); }

std::string shapes_of(const std::vector<Array>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += str(i ? ", " : "", type_of(xs[i]));
  return s;
}

// Python's slice-bound normalization: negative counts from the end, then clamp.
int64_t clamp_bound(int64_t i, int64_t n) {
  if (i < 0) i += n;
  return std::clamp<int64_t>(i, 0, n);
}

}  // namespace

// ---- shapes and axes ----

Array reshape(const Array& a, const Shape& shape) {
  Shape s = shape;
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (unknown >= 0)
        throw ValueError(str("[reshape] can only specify one unknown dimension (-1), got shape ",
                             shape_str(shape)));
      unknown = int(i);
    } else if (s[i] < 0) {
      throw ValueError(str("[reshape] negative dimension ", s[i], " in shape ", shape_str(shape),
                           "; only -1 (inferred) is allowed"));
    } else {
      known *= s[i];
    }
  }
  const int64_t n = a.size();
  if (unknown >= 0) {
    if (known == 0 || n % known != 0)
      throw ShapeError(str("[reshape] cannot reshape ", type_of(a), " (size ", n,
                           ") into shape ", shape_str(shape), ": ", n,
                           " is not a multiple of the known dimensions' product ", known));
    s[size_t(unknown)] = n / known;
  } else if (known != n) {
    throw ShapeError(str("[reshape] cannot reshape ", type_of(a), " (size ", n, ") into shape ",
                         shape_str(shape), " (size ", known, "); the sizes must match"));
  }
  return lax::reshape(a, s);
}

Array ravel(const Array& a) { return reshape(a, Shape{a.size()}); }

Array transpose(const Array& a, const std::vector<int64_t>& axes) {
  const int64_t n = a.ndim();
  if (axes.empty()) {
    std::vector<int64_t> rev;
    for (int64_t i = n - 1; i >= 0; --i) rev.push_back(i);
    return lax::transpose(a, rev);
  }
  if (int64_t(axes.size()) != n)
    throw ValueError(str("[transpose] axes ", list_str(axes), " don't match ", type_of(a),
                         ": give one entry per dimension (", n, ")"));
  return lax::transpose(a, canonical_axes("transpose", axes, n));
}

Array permute_dims(const Array& a, const std::vector<int64_t>& axes) {
  if (int64_t(axes.size()) != a.ndim())
    throw ValueError(str("[permute_dims] axes ", list_str(axes), " don't match ", type_of(a),
                         ": give one entry per dimension (", a.ndim(), ")"));
  return lax::transpose(a, canonical_axes("permute_dims", axes, a.ndim()));
}

Array matrix_transpose(const Array& a) {
  const int64_t n = a.ndim();
  if (n < 2)
    throw ValueError(str("[matrix_transpose] needs an array with at least 2 dimensions, got ",
                         type_of(a)));
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < n; ++i) perm.push_back(i);
  std::swap(perm[size_t(n - 1)], perm[size_t(n - 2)]);
  return lax::transpose(a, perm);
}

Array swapaxes(const Array& a, int64_t axis1, int64_t axis2) {
  const int64_t n = a.ndim();
  const int64_t i = canonical_axis("swapaxes", axis1, n), j = canonical_axis("swapaxes", axis2, n);
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < n; ++k) perm.push_back(k);
  std::swap(perm[size_t(i)], perm[size_t(j)]);
  return lax::transpose(a, perm);
}

Array moveaxis(const Array& a, int64_t source, int64_t destination) {
  return moveaxis(a, std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}

Array moveaxis(const Array& a, const std::vector<int64_t>& source,
               const std::vector<int64_t>& destination) {
  const int64_t n = a.ndim();
  if (source.size() != destination.size())
    throw ValueError(str("[moveaxis] source ", list_str(source), " and destination ",
                         list_str(destination), " must have the same number of elements"));
  auto src = canonical_axes("moveaxis", source, n);
  auto dst = canonical_axes("moveaxis", destination, n);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < n; ++i)
    if (std::find(src.begin(), src.end(), i) == src.end()) perm.push_back(i);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t k = 0; k < src.size(); ++k) pairs.emplace_back(dst[k], src[k]);
  std::sort(pairs.begin(), pairs.end());
  for (auto [d, s] : pairs) perm.insert(perm.begin() + d, s);
  return lax::transpose(a, perm);
}

Array expand_dims(const Array& a, int64_t axis) {
  return lax::expand_dims(a, std::vector<int64_t>{axis});
}
Array expand_dims(const Array& a, const std::vector<int64_t>& axes) {
  return lax::expand_dims(a, axes);
}

Array squeeze(const Array& a, Axes axes) {
  std::vector<int64_t> dims;
  if (axes.axes) {
    dims = canonical_axes("squeeze", *axes.axes, a.ndim());
  } else {
    for (int64_t i = 0; i < a.ndim(); ++i)
      if (a.shape()[size_t(i)] == 1) dims.push_back(i);
  }
  return lax::squeeze(a, dims);
}

Array broadcast_to(const Array& a, const Shape& shape) {
  return detail::broadcast_to("broadcast_to", a, shape);
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  if (shapes.empty()) return {};
  return detail::broadcast_shapes("broadcast_shapes", shapes);
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays) {
  std::vector<Shape> shapes;
  for (const Array& a : arrays) shapes.push_back(a.shape());
  Shape s = detail::broadcast_shapes("broadcast_arrays", shapes);
  std::vector<Array> out;
  for (const Array& a : arrays) out.push_back(detail::broadcast_to("broadcast_arrays", a, s));
  return out;
}

Array atleast_1d(const Array& a) { return a.ndim() >= 1 ? a : lax::reshape(a, Shape{1}); }

Array atleast_2d(const Array& a) {
  if (a.ndim() >= 2) return a;
  return a.ndim() == 1 ? lax::expand_dims(a, {0}) : lax::expand_dims(a, {0, 1});
}

Array atleast_3d(const Array& a) {
  switch (a.ndim()) {
    case 0: return lax::expand_dims(a, {0, 1, 2});
    case 1: return lax::expand_dims(a, {0, 2});
    case 2: return lax::expand_dims(a, {2});
    default: return a;
  }
}

std::vector<Array> atleast_1d(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  for (const Array& a : arrays) out.push_back(atleast_1d(a));
  return out;
}
std::vector<Array> atleast_2d(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  for (const Array& a : arrays) out.push_back(atleast_2d(a));
  return out;
}
std::vector<Array> atleast_3d(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  for (const Array& a : arrays) out.push_back(atleast_3d(a));
  return out;
}

// ---- joining ----

Array concatenate(const std::vector<Array>& arrays, std::optional<int64_t> axis,
                  std::optional<DType> dtype) {
  if (arrays.empty()) throw ValueError("[concatenate] needs at least one array to concatenate");
  if (!axis) {
    std::vector<Array> flat;
    for (const Array& a : arrays) flat.push_back(ravel(a));
    return concatenate(flat, 0, dtype);
  }
  if (arrays[0].ndim() == 0)
    throw ValueError(str("[concatenate] zero-dimensional arrays cannot be concatenated, got ",
                         shapes_of(arrays), "; use jnp::stack, or atleast_1d first"));
  const int64_t ax = canonical_axis("concatenate", *axis, arrays[0].ndim());
  std::vector<Array> xs;
  if (dtype) {
    for (const Array& a : arrays) xs.push_back(lax::convert_element_type(a, *dtype, false));
  } else {
    xs = detail::promote(arrays);
  }
  // As jnp: a tree of concatenations of at most 16 operands each.
  constexpr size_t k = 16;
  while (xs.size() > 1) {
    std::vector<Array> next;
    for (size_t i = 0; i < xs.size(); i += k) {
      std::vector<Array> chunk(xs.begin() + long(i), xs.begin() + long(std::min(xs.size(), i + k)));
      next.push_back(lax::concatenate(chunk, ax));
    }
    xs = std::move(next);
  }
  return xs[0];
}

Array concat(const std::vector<Array>& arrays, std::optional<int64_t> axis) {
  return concatenate(arrays, axis);
}

Array stack(const std::vector<Array>& arrays, int64_t axis, std::optional<DType> dtype) {
  if (arrays.empty()) throw ValueError("[stack] needs at least one array to stack");
  const Shape& s0 = arrays[0].shape();
  const int64_t ax = canonical_axis("stack", axis, int64_t(s0.size()) + 1);
  std::vector<Array> xs;
  for (const Array& a : arrays) {
    if (a.shape() != s0)
      throw ShapeError(str("[stack] all input arrays must have the same shape, got ",
                           shapes_of(arrays)));
    xs.push_back(lax::expand_dims(a, {ax}));
  }
  return concatenate(xs, ax, dtype);
}

Array hstack(const std::vector<Array>& arrays, std::optional<DType> dtype) {
  auto xs = atleast_1d(arrays);
  if (xs.empty()) throw ValueError("[hstack] needs at least one array");
  return concatenate(xs, xs[0].ndim() == 1 ? 0 : 1, dtype);
}

Array vstack(const std::vector<Array>& arrays, std::optional<DType> dtype) {
  return concatenate(atleast_2d(arrays), 0, dtype);
}

Array dstack(const std::vector<Array>& arrays, std::optional<DType> dtype) {
  return concatenate(atleast_3d(arrays), 2, dtype);
}

Array column_stack(const std::vector<Array>& arrays) {
  std::vector<Array> xs;
  for (const Array& a : arrays) xs.push_back(a.ndim() < 2 ? transpose(atleast_2d(a)) : a);
  return concatenate(xs, 1);
}

// ---- splitting ----

namespace {

std::vector<Array> split_at(const char* op, const Array& a, std::vector<int64_t> bounds,
                            int64_t axis) {
  if (a.ndim() == 0)
    throw ValueError(str("[", op, "] cannot split a zero-dimensional array"));
  const int64_t ax = canonical_axis(op, axis, a.ndim());
  const int64_t n = a.shape()[size_t(ax)];
  std::vector<Array> out;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const int64_t start = clamp_bound(bounds[i], n);
    const int64_t stop = std::max(start, clamp_bound(bounds[i + 1], n));
    out.push_back(detail::slice_axis(a, ax, start, stop));
  }
  return out;
}

std::vector<Array> split_sections(const char* op, const Array& a, int64_t sections, int64_t axis,
                                  bool allow_uneven) {
  if (a.ndim() == 0)
    throw ValueError(str("[", op, "] cannot split a zero-dimensional array"));
  if (sections <= 0)
    throw ValueError(str("[", op, "] the number of sections must be larger than 0, got ",
                         sections));
  const int64_t ax = canonical_axis(op, axis, a.ndim());
  const int64_t n = a.shape()[size_t(ax)];
  const int64_t part = n / sections, r = n % sections;
  if (r != 0 && !allow_uneven)
    throw ValueError(str("[", op, "] array split does not result in an equal division: axis ", ax,
                         " of ", type_of(a), " has size ", n, ", not divisible into ", sections,
                         " sections; use jnp::array_split for unequal parts"));
  std::vector<int64_t> bounds{0};
  for (int64_t i = 0; i < sections; ++i) bounds.push_back(bounds.back() + part + (i < r ? 1 : 0));
  return split_at(op, a, bounds, ax);
}

std::vector<int64_t> with_ends(const std::vector<int64_t>& indices, int64_t end) {
  std::vector<int64_t> b{0};
  b.insert(b.end(), indices.begin(), indices.end());
  b.push_back(end);
  return b;
}

int64_t axis_size_or_zero(const Array& a, int64_t axis) {
  return axis < a.ndim() ? a.shape()[size_t(axis)] : 0;
}

void require_ndim(const char* op, const Array& a, int64_t n) {
  if (a.ndim() < n)
    throw ValueError(str("[", op, "] only works on arrays of ", n, " or more dimensions, got ",
                         type_of(a)));
}

}  // namespace

std::vector<Array> split(const Array& a, int64_t sections, int64_t axis) {
  return split_sections("split", a, sections, axis, false);
}
std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int64_t axis) {
  if (a.ndim() == 0) throw ValueError("[split] cannot split a zero-dimensional array");
  const int64_t ax = canonical_axis("split", axis, a.ndim());
  return split_at("split", a, with_ends(indices, a.shape()[size_t(ax)]), ax);
}
std::vector<Array> array_split(const Array& a, int64_t sections, int64_t axis) {
  return split_sections("array_split", a, sections, axis, true);
}
std::vector<Array> array_split(const Array& a, const std::vector<int64_t>& indices,
                               int64_t axis) {
  if (a.ndim() == 0) throw ValueError("[array_split] cannot split a zero-dimensional array");
  const int64_t ax = canonical_axis("array_split", axis, a.ndim());
  return split_at("array_split", a, with_ends(indices, a.shape()[size_t(ax)]), ax);
}
std::vector<Array> hsplit(const Array& a, int64_t sections) {
  require_ndim("hsplit", a, 1);
  return split_sections("hsplit", a, sections, a.ndim() == 1 ? 0 : 1, false);
}
std::vector<Array> hsplit(const Array& a, const std::vector<int64_t>& indices) {
  require_ndim("hsplit", a, 1);
  const int64_t ax = a.ndim() == 1 ? 0 : 1;
  return split_at("hsplit", a, with_ends(indices, axis_size_or_zero(a, ax)), ax);
}
std::vector<Array> vsplit(const Array& a, int64_t sections) {
  require_ndim("vsplit", a, 2);
  return split_sections("vsplit", a, sections, 0, false);
}
std::vector<Array> vsplit(const Array& a, const std::vector<int64_t>& indices) {
  require_ndim("vsplit", a, 2);
  return split_at("vsplit", a, with_ends(indices, a.shape()[0]), 0);
}
std::vector<Array> dsplit(const Array& a, int64_t sections) {
  require_ndim("dsplit", a, 3);
  return split_sections("dsplit", a, sections, 2, false);
}
std::vector<Array> dsplit(const Array& a, const std::vector<int64_t>& indices) {
  require_ndim("dsplit", a, 3);
  return split_at("dsplit", a, with_ends(indices, a.shape()[2]), 2);
}

// ---- tiling and repeating ----

Array tile(const Array& a, int64_t reps) { return tile(a, std::vector<int64_t>{reps}); }

Array tile(const Array& a, const std::vector<int64_t>& reps) {
  for (int64_t r : reps)
    if (r < 0)
      throw ValueError(str("[tile] reps ", list_str(reps), " may not contain negative values"));
  // As jnp: reshape to (1, d0, 1, d1, ...), broadcast to (r0, d0, r1, d1, ...), flatten pairs.
  const size_t nd = std::max(reps.size(), size_t(a.ndim()));
  Shape as(nd - size_t(a.ndim()), 1);
  for (int64_t d : a.shape()) as.push_back(d);
  std::vector<int64_t> rs(nd - reps.size(), 1);
  rs.insert(rs.end(), reps.begin(), reps.end());
  Shape interleaved, target, out;
  for (size_t i = 0; i < nd; ++i) {
    interleaved.push_back(1);
    interleaved.push_back(as[i]);
    target.push_back(rs[i]);
    target.push_back(as[i]);
    out.push_back(rs[i] * as[i]);
  }
  Array r = broadcast_to(lax::reshape(a, interleaved), target);
  return lax::reshape(r, out);
}

namespace {

// `a` with each index along `axis` repeated `count` times (a contiguous run of equal counts).
Array repeat_block(const Array& a, int64_t axis, int64_t count) {
  if (count == 1) return a;
  Shape target = a.shape(), out = a.shape();
  target.insert(size_t(axis) + 1, count);
  out[size_t(axis)] *= count;
  Array e = lax::expand_dims(a, {axis + 1});
  return lax::reshape(broadcast_to(e, target), out);
}

}  // namespace

Array repeat(const Array& a, int64_t repeats, std::optional<int64_t> axis) {
  return repeat(a, std::vector<int64_t>{repeats}, axis);
}

Array repeat(const Array& a, const std::vector<int64_t>& repeats, std::optional<int64_t> axis) {
  Array x = axis ? a : ravel(a);
  const int64_t ax = canonical_axis("repeat", axis.value_or(0), x.ndim());
  const int64_t n = x.shape()[size_t(ax)];
  for (int64_t r : repeats)
    if (r < 0)
      throw ValueError(str("[repeat] repeats may not contain negative values, got ",
                           list_str(repeats)));
  if (repeats.size() != 1 && int64_t(repeats.size()) != n)
    throw ShapeError(str("[repeat] repeats has ", repeats.size(), " entries but axis ", ax, " of ",
                         type_of(x), " has size ", n, "; give one count, or one per element"));
  if (n == 0) return x;
  if (repeats.size() == 1) return repeat_block(x, ax, repeats[0]);
  // Static per-element counts: one broadcast per run of equal counts, then one concatenate.
  std::vector<Array> parts;
  for (int64_t b = 0; b < n;) {
    int64_t e = b + 1;
    while (e < n && repeats[size_t(e)] == repeats[size_t(b)]) ++e;
    if (repeats[size_t(b)] > 0)
      parts.push_back(repeat_block(detail::slice_axis(x, ax, b, e), ax, repeats[size_t(b)]));
    b = e;
  }
  if (parts.empty()) return detail::slice_axis(x, ax, 0, 0);
  return lax::concatenate(parts, ax);
}

// ---- flipping and rolling ----

Array flip(const Array& a, Axes axes) {
  return lax::rev(a, detail::axes_or_all("flip", axes, a.ndim()));
}

Array fliplr(const Array& a) {
  require_ndim("fliplr", a, 2);
  return lax::rev(a, {1});
}

Array flipud(const Array& a) {
  require_ndim("flipud", a, 1);
  return lax::rev(a, {0});
}

Array roll(const Array& a, int64_t shift, Axes axes) {
  return roll(a, std::vector<int64_t>{shift}, std::move(axes));
}

Array roll(const Array& a, const std::vector<int64_t>& shifts, Axes axes) {
  if (!axes.axes) return reshape(roll(ravel(a), shifts, 0), a.shape());
  const std::vector<int64_t>& ax_in = *axes.axes;
  std::vector<int64_t> ax;
  for (int64_t x : ax_in) ax.push_back(canonical_axis("roll", x, a.ndim()));
  std::vector<int64_t> sh = shifts;
  if (sh.size() == 1 && ax.size() > 1) sh.assign(ax.size(), sh[0]);
  if (ax.size() == 1 && sh.size() > 1) ax.assign(sh.size(), ax[0]);
  if (sh.size() != ax.size())
    throw ValueError(str("[roll] shift ", list_str(shifts), " and axis ", list_str(ax_in),
                         " must have the same length, or one of them length 1"));
  Array x = a;
  for (size_t k = 0; k < ax.size(); ++k) {
    const int64_t n = x.shape()[size_t(ax[k])];
    if (n == 0) continue;
    const int64_t i = ((-sh[k]) % n + n) % n;
    if (i == 0) continue;
    x = lax::concatenate({detail::slice_axis(x, ax[k], i, n), detail::slice_axis(x, ax[k], 0, i)},
                         ax[k]);
  }
  return x;
}

Array rot90(const Array& a, int64_t k, std::pair<int64_t, int64_t> axes) {
  if (a.ndim() < 2)
    throw ValueError(str("[rot90] needs an array with at least 2 dimensions, got ", type_of(a)));
  const int64_t ax1 = canonical_axis("rot90", axes.first, a.ndim());
  const int64_t ax2 = canonical_axis("rot90", axes.second, a.ndim());
  if (ax1 == ax2)
    throw ValueError(str("[rot90] axes must be different, got (", axes.first, ", ", axes.second,
                         ")"));
  k = ((k % 4) + 4) % 4;
  if (k == 0) return a;
  if (k == 2) return lax::rev(lax::rev(a, {ax1}), {ax2});
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < a.ndim(); ++i) perm.push_back(i);
  std::swap(perm[size_t(ax1)], perm[size_t(ax2)]);
  if (k == 1) return lax::transpose(lax::rev(a, {ax2}), perm);
  return lax::rev(lax::transpose(a, perm), {ax2});
}

}  // namespace jx::numpy

// ---- Array methods spelled as jnp functions ----
namespace jx {

Array Array::astype(DType t) const { return numpy::astype(*this, t); }
Array Array::reshape(const Shape& new_shape) const { return numpy::reshape(*this, new_shape); }
Array Array::T() const { return numpy::transpose(*this); }
Array Array::transpose(const std::vector<int64_t>& axes) const {
  return numpy::transpose(*this, axes);
}
Array Array::flatten() const { return numpy::ravel(*this); }
Array Array::squeeze(Axes axes) const { return numpy::squeeze(*this, std::move(axes)); }
Array Array::swapaxes(int64_t a, int64_t b) const { return numpy::swapaxes(*this, a, b); }

}  // namespace jx
