// lax wrappers for slicing, gather and scatter (ops/indexing.cpp holds the rules).
#include <memory>

#include "core/array_impl.h"
#include "jx/lax.h"
#include "ops/indexing.h"
#include "support/dtype_switch.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

namespace {

// A strong 0-d constant of `dtype`.
template <class T>
void set_scalar(const Array& a, int64_t v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bhalf>) *jx::detail::data<T>(a) = T(float(v));
  else *jx::detail::data<T>(a) = T(v);
}
Array constant(DType dtype, int64_t v) {
  Array a = jx::detail::empty_array({}, dtype, false);
  JX_DTYPE_SWITCH(dtype, T, set_scalar<T>(a, v));
  return a;
}

// jax's _dynamic_slice_indices: a negative start counts from the end (i + dim when i < 0).
std::vector<Array> wrap_negative(const Array& x, const std::vector<Array>& starts) {
  std::vector<Array> out;
  out.reserve(starts.size());
  for (size_t d = 0; d < starts.size(); ++d) {
    const Array& i = starts[d];
    if (d >= size_t(x.ndim()) || !is_signed_integer(i.dtype()) || i.ndim() != 0) {
      out.push_back(i);  // abstract_eval reports the misuse
      continue;
    }
    Array neg = convert_element_type(lt(i, constant(i.dtype(), 0)), i.dtype(), i.weak_type());
    out.push_back(add(i, mul(neg, constant(i.dtype(), x.shape()[d]))));
  }
  return out;
}

std::shared_ptr<const ops::ParamObject> none() { return nullptr; }

}  // namespace

Array slice(const Array& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& strides) {
  ops::Params p{{"start_indices", start}, {"limit_indices", limit}};
  if (strides.empty()) p.set("strides", none());
  else p.set("strides", strides);
  return bind1(Prim::Slice, {x}, p);
}

Array slice_in_dim(const Array& x, int64_t start, int64_t limit, int64_t stride, int64_t axis) {
  const int64_t r = x.ndim();
  if (axis < -r || axis >= r)
    throw IndexError(str("[slice_in_dim] axis ", axis, " is out of bounds for ",
                         type_str(x.dtype(), x.shape())));
  if (axis < 0) axis += r;
  std::vector<int64_t> s(size_t(r), 0), l = x.shape().vec(), st(size_t(r), 1);
  const int64_t n = x.shape()[size_t(axis)];
  // Python-style negative bounds, as jax's slice_in_dim.
  if (start < 0) start += n;
  if (limit < 0) limit += n;
  s[size_t(axis)] = start;
  l[size_t(axis)] = limit;
  st[size_t(axis)] = stride;
  return slice(x, s, l, stride == 1 ? std::vector<int64_t>{} : st);
}

Array dynamic_slice(const Array& x, const std::vector<Array>& start_indices,
                    const std::vector<int64_t>& slice_sizes, bool allow_negative_indices) {
  std::vector<Array> in{x};
  auto starts = allow_negative_indices ? wrap_negative(x, start_indices) : start_indices;
  in.insert(in.end(), starts.begin(), starts.end());
  return bind1(Prim::DynamicSlice, std::span<const Array>(in), {{"slice_sizes", slice_sizes}});
}

Array dynamic_update_slice(const Array& x, const Array& update,
                           const std::vector<Array>& start_indices, bool allow_negative_indices) {
  std::vector<Array> in{x, update};
  auto starts = allow_negative_indices ? wrap_negative(x, start_indices) : start_indices;
  in.insert(in.end(), starts.begin(), starts.end());
  return bind1(Prim::DynamicUpdateSlice, std::span<const Array>(in));
}

Array dynamic_slice_in_dim(const Array& x, const Array& start, int64_t size, int64_t axis) {
  const int64_t r = x.ndim();
  if (axis < -r || axis >= r)
    throw IndexError(str("[dynamic_slice_in_dim] axis ", axis, " is out of bounds for ",
                         type_str(x.dtype(), x.shape())));
  if (axis < 0) axis += r;
  std::vector<Array> starts;
  for (int64_t d = 0; d < r; ++d) starts.push_back(d == axis ? start : constant(start.dtype(), 0));
  std::vector<int64_t> sizes = x.shape().vec();
  sizes[size_t(axis)] = size;
  return dynamic_slice(x, starts, sizes);
}

Array dynamic_index_in_dim(const Array& x, const Array& index, int64_t axis, bool keepdims) {
  Array y = dynamic_slice_in_dim(x, index, 1, axis);
  if (keepdims) return y;
  if (axis < 0) axis += x.ndim();
  Shape s = y.shape();
  s.erase(size_t(axis));
  return reshape(y, s);
}

Array gather(const Array& operand, const Array& start_indices, const GatherDimensionNumbers& dnums,
             const std::vector<int64_t>& slice_sizes, GatherScatterMode mode,
             std::optional<double> fill_value, bool indices_are_sorted, bool unique_indices) {
  ops::Params p{{"dimension_numbers", std::make_shared<const ops::GatherDnumsParam>(dnums)},
                {"slice_sizes", slice_sizes},
                {"indices_are_sorted", indices_are_sorted},
                {"unique_indices", unique_indices},
                {"mode", ops::mode_param(mode)}};
  // As jax: the fill value is resolved here (None unless fill_or_drop).
  if (mode == GatherScatterMode::fill_or_drop && fill_value) p.set("fill_value", *fill_value);
  else p.set("fill_value", none());
  return bind1(Prim::Gather, {operand, start_indices}, p);
}

namespace {
Array scatter_prim(Prim prim, const Array& operand, const Array& indices, const Array& updates,
                   const ScatterDimensionNumbers& dnums, GatherScatterMode mode,
                   bool indices_are_sorted, bool unique_indices) {
  return bind1(prim, {operand, indices, updates},
               {{"dimension_numbers", std::make_shared<const ops::ScatterDnumsParam>(dnums)},
                {"indices_are_sorted", indices_are_sorted},
                {"unique_indices", unique_indices},
                {"mode", ops::mode_param(mode)}});
}
}  // namespace

Array scatter(const Array& operand, const Array& indices, const Array& updates,
              const ScatterDimensionNumbers& dnums, GatherScatterMode mode,
              bool indices_are_sorted, bool unique_indices) {
  return scatter_prim(Prim::Scatter, operand, indices, updates, dnums, mode, indices_are_sorted,
                      unique_indices);
}
Array scatter_add(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dnums, GatherScatterMode mode,
                  bool indices_are_sorted, bool unique_indices) {
  return scatter_prim(Prim::ScatterAdd, operand, indices, updates, dnums, mode,
                      indices_are_sorted, unique_indices);
}
Array scatter_mul(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dnums, GatherScatterMode mode,
                  bool indices_are_sorted, bool unique_indices) {
  return scatter_prim(Prim::ScatterMul, operand, indices, updates, dnums, mode,
                      indices_are_sorted, unique_indices);
}
Array scatter_min(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dnums, GatherScatterMode mode,
                  bool indices_are_sorted, bool unique_indices) {
  return scatter_prim(Prim::ScatterMin, operand, indices, updates, dnums, mode,
                      indices_are_sorted, unique_indices);
}
Array scatter_max(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dnums, GatherScatterMode mode,
                  bool indices_are_sorted, bool unique_indices) {
  return scatter_prim(Prim::ScatterMax, operand, indices, updates, dnums, mode,
                      indices_are_sorted, unique_indices);
}

}  // namespace jx::lax
