#include "numpy/promote.h"

#include <algorithm>
#include <span>

#include "support/str.h"

namespace jx::numpy::detail {

std::vector<Array> promote(std::vector<Array> xs) {
  if (xs.empty()) return xs;
  TypedKind r{xs[0].dtype(), xs[0].weak_type()};
  for (size_t i = 1; i < xs.size(); ++i) r = jx::promote(r, {xs[i].dtype(), xs[i].weak_type()});
  for (auto& x : xs) x = lax::convert_element_type(x, r.dtype, r.weak);
  return xs;
}

std::vector<Array> promote_inexact(std::vector<Array> xs) {
  xs = promote(std::move(xs));
  if (!xs.empty() && !is_inexact(xs[0].dtype())) {
    for (auto& x : xs) x = lax::convert_element_type(x, DType::Float32, x.weak_type());
  }
  return xs;
}

namespace {
// The first pair of sizes that do not broadcast, and their axis (counted from the end).
struct Mismatch {
  int64_t have = 0, got = 0, axis = 0;
};

// NumPy's broadcast of `shapes` into `out`; false, with `m` set, at the first mismatch.
bool broadcast_into(std::span<const Shape* const> shapes, Shape& out, Mismatch& m) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  out = Shape(rank, 1);
  for (const Shape* sp : shapes) {
    const Shape& s = *sp;
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i], &o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      m = {o, d, int64_t(off + i) - int64_t(rank)};
      return false;
    }
  }
  return true;
}
}  // namespace

Shape broadcast_shapes(const char* op, const std::vector<Shape>& shapes) {
  Shape out;
  Mismatch m;
  std::vector<const Shape*> ptrs;
  for (const Shape& s : shapes) ptrs.push_back(&s);
  if (!broadcast_into(ptrs, out, m)) {
    std::string all;
    for (size_t k = 0; k < shapes.size(); ++k) all += (k ? " and " : "") + shape_str(shapes[k]);
    throw ShapeError(str("[", op, "] shapes ", all, " are incompatible for broadcasting: ", m.have,
                         " vs ", m.got, " at axis ", m.axis));
  }
  return out;
}

Array expand_to_rank(const Array& x, size_t rank) {
  if (size_t(x.ndim()) >= rank) return x;
  Shape s(rank - size_t(x.ndim()), 1);
  for (auto d : x.shape()) s.push_back(d);
  return lax::reshape(x, s);
}

std::vector<Array> equalize_ranks(std::vector<Array> xs) {
  size_t rank = 0;
  for (auto& x : xs) rank = std::max(rank, size_t(x.ndim()));
  for (auto& x : xs) x = expand_to_rank(x, rank);
  return xs;
}

Array broadcast_to(const char* op, const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  Shape target = broadcast_shapes(op, {x.shape(), shape});
  if (target != shape)
    throw ShapeError(str("[", op, "] cannot broadcast an array of shape ", shape_str(x.shape()),
                         " to shape ", shape_str(shape)));
  std::vector<int64_t> dims;
  size_t off = shape.size() - size_t(x.ndim());
  for (int i = 0; i < x.ndim(); ++i) dims.push_back(int64_t(off) + i);
  return lax::broadcast_in_dim(x, shape, dims);
}

namespace {
// promote / promote_inexact + equalize_ranks for two operands, without the vectors (the
// binary operators are the eager hot path).
Array apply_promoted(LaxBinary f, const Array& a, const Array& b, bool inexact) {
  TypedKind r = jx::promote(TypedKind{a.dtype(), a.weak_type()}, TypedKind{b.dtype(), b.weak_type()});
  Array x = lax::convert_element_type(a, r.dtype, r.weak);
  Array y = lax::convert_element_type(b, r.dtype, r.weak);
  if (inexact && !is_inexact(r.dtype)) {
    x = lax::convert_element_type(x, DType::Float32, x.weak_type());
    y = lax::convert_element_type(y, DType::Float32, y.weak_type());
  }
  size_t rank = std::max(size_t(x.ndim()), size_t(y.ndim()));
  return f(expand_to_rank(x, rank), expand_to_rank(y, rank));
}
}  // namespace

void check_broadcast(const char* op, const Array& a, const Array& b) {
  Shape out;
  Mismatch m;
  const Shape* shapes[2] = {&a.shape(), &b.shape()};
  if (!broadcast_into(shapes, out, m))
    throw ShapeError(str("[", op, "] shapes ", type_str(a.dtype(), a.shape()), " and ",
                         type_str(b.dtype(), b.shape()), " do not broadcast: ", m.have, " vs ", m.got,
                         " at axis ", m.axis));
}

namespace {
// Operands of one type and one shape need no promotion and no broadcasting: the common eager
// case (x * y of two float32 arrays) goes straight to lax, with the same result.
bool same_type_and_shape(const Array& a, const Array& b) {
  return a.dtype() == b.dtype() && a.weak_type() == b.weak_type() && a.shape() == b.shape();
}
}  // namespace

Array binary(const char* op, LaxBinary f, const Array& a, const Array& b) {
  if (same_type_and_shape(a, b)) return f(a, b);
  check_broadcast(op, a, b);
  return apply_promoted(f, a, b, false);
}

Array binary_inexact(const char* op, LaxBinary f, const Array& a, const Array& b) {
  if (same_type_and_shape(a, b) && is_inexact(a.dtype())) return f(a, b);
  check_broadcast(op, a, b);
  return apply_promoted(f, a, b, true);
}

}  // namespace jx::numpy::detail
