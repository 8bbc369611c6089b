// DenseGeneral, ConvTranspose and Embed, as flax/linen/linear.py computes them, in the same
// order of parameter creation (which decides each parameter's key).
#include "jx/nn/layers_linear.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "jx/numpy.h"
#include "nn/dtypes.h"
#include "support/str.h"

namespace jx::nn {

namespace jnp = jx::numpy;

namespace {

int64_t product(const int64_t* begin, const int64_t* end) {
  return std::accumulate(begin, end, int64_t(1), std::multiplies<>());
}

// Appends [begin, end) to s (Shape has no range insert).
template <class It>
void append(Shape& s, It begin, It end) {
  for (; begin != end; ++begin) s.push_back(*begin);
}

// Flax's _normalize_axes: non-negative and sorted (duplicates are an error here; Flax would
// fail later in dot_general).
std::vector<int64_t> normalize_axes(const char* field, const std::vector<int64_t>& axes, const Array& x) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    const int64_t c = a < 0 ? a + x.ndim() : a;
    if (c < 0 || c >= x.ndim())
      throw IndexError(str("[nn.DenseGeneral] ", module_path(), ": ", field, " ", list_str(axes),
                           " is out of range for inputs ", type_str(x.dtype(), x.shape())));
    out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw ValueError(str("[nn.DenseGeneral] ", module_path(), ": ", field, " ", list_str(axes),
                         " names an axis twice for inputs ", type_str(x.dtype(), x.shape())));
  return out;
}

// One entry per spatial dim from a field given as {}, {v} or {v0, v1, ...}.
std::vector<int64_t> per_dim(const char* field, const std::vector<int64_t>& v, size_t n) {
  if (v.empty()) return std::vector<int64_t>(n, 1);
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (v.size() != n)
    throw ValueError(str("[nn.ConvTranspose] ", module_path(), ": ", field, " ", list_str(v), " has ",
                         v.size(), " entries for a kernel of ", n, " spatial dims; give one, or one per dim"));
  return v;
}

Array add_bias_last(const Array& y, const Array& bias) {
  Shape bs(size_t(y.ndim()), 1);
  bs.back() = bias.shape().back();
  return y + bias.reshape(bs);
}

}  // namespace

// ---- DenseGeneral ----
Array DenseGeneral::call(const Array& inputs) const {
  if (features.empty())
    throw ValueError(str("[nn.DenseGeneral] ", module_path(), ": features is empty; give the output "
                         "size(s), e.g. .features = {4} or {8, 64}"));
  if (!batch_dims.empty()) {
    std::vector<int64_t> sorted = batch_dims;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != int64_t(i))
        throw ValueError(str("[nn.DenseGeneral] ", module_path(), ": batch_dims ", list_str(batch_dims),
                             " must be consecutive leading dimensions starting from 0"));
  }
  const std::vector<int64_t> ax = normalize_axes("axis", axis, inputs);
  const std::vector<int64_t> bd = normalize_axes("batch_dims", batch_dims, inputs);
  for (int64_t a : ax)
    if (std::count(bd.begin(), bd.end(), a))
      throw ValueError(str("[nn.DenseGeneral] ", module_path(), ": axis ", list_str(axis),
                           " and batch_dims ", list_str(batch_dims), " share an axis"));
  const size_t n_batch = bd.size(), n_axis = ax.size(), n_features = features.size();

  Shape batch_shape, kernel_shape, expanded_batch_shape;
  for (int64_t b : bd) batch_shape.push_back(inputs.shape()[size_t(b)]);
  for (int64_t i = 0; i < inputs.ndim(); ++i)
    if (!std::count(ax.begin(), ax.end(), i))
      expanded_batch_shape.push_back(std::count(bd.begin(), bd.end(), i) ? inputs.shape()[size_t(i)] : 1);
  kernel_shape = batch_shape;
  for (int64_t a : ax) kernel_shape.push_back(inputs.shape()[size_t(a)]);
  append(kernel_shape, features.begin(), features.end());

  // The initializer sees the kernel as the 2-D (batch * contracted, features) matrix, so
  // its fan-in counts every contracted axis (Flax's kernel_init_wrap).
  auto kernel_init_flat = [&](const Array& key, const Shape& shape, DType dt) {
    const Shape flat{product(shape.begin(), shape.begin() + n_batch + n_axis),
                     product(shape.end() - n_features, shape.end())};
    return kernel_init(key, flat, dt).reshape(shape);
  };
  Array kernel = param("kernel", kernel_init_flat, kernel_shape, param_dtype);

  Array bias;
  if (use_bias) {
    Shape bias_shape = batch_shape;
    append(bias_shape, features.begin(), features.end());
    auto bias_init_flat = [&](const Array& key, const Shape& shape, DType dt) {
      return bias_init(key, Shape{product(shape.begin(), shape.end())}, dt).reshape(shape);
    };
    bias = param("bias", bias_init_flat, bias_shape, param_dtype);
  }
  auto p = detail::promote_dtype({inputs, kernel, bias}, dtype);
  std::vector<int64_t> batch_ind, contract_ind;
  for (size_t i = 0; i < n_batch; ++i) batch_ind.push_back(int64_t(i));
  for (size_t i = n_batch; i < n_batch + n_axis; ++i) contract_ind.push_back(int64_t(i));
  Array out = lax::dot_general(p[0], p[1], {ax, contract_ind, bd, batch_ind});
  if (use_bias) {
    Shape bs = expanded_batch_shape;
    append(bs, features.begin(), features.end());
    out = out + p[2].reshape(bs);
  }
  return out;
}

// ---- ConvTranspose ----
Array ConvTranspose::call(const Array& inputs) const {
  const size_t ns = kernel_size.size();
  if (ns == 0)
    throw ValueError(str("[nn.ConvTranspose] ", module_path(), ": kernel_size is empty; give one size "
                         "per spatial dim, e.g. {3, 3}"));
  if (size_t(inputs.ndim()) < ns + 1)
    throw ShapeError(str("[nn.ConvTranspose] ", module_path(), ": inputs ", type_str(inputs.dtype(), inputs.shape()),
                         " have fewer than the ", ns + 1, " dims a ", ns, "-D kernel needs (spatial..., features)"));
  // (batch..., spatial..., features) -> one batch dim for the convolution.
  const size_t nb = size_t(inputs.ndim()) - ns - 1;
  const Shape batch_shape(inputs.shape().begin(), inputs.shape().begin() + nb);
  Array x = inputs;
  if (nb != 1) {
    Shape s{product(batch_shape.begin(), batch_shape.end())};
    append(s, inputs.shape().begin() + nb, inputs.shape().end());
    x = x.reshape(s);
  }
  const std::vector<int64_t> st = per_dim("strides", strides, ns);
  const std::vector<int64_t> k_dil = per_dim("kernel_dilation", kernel_dilation, ns);
  const int64_t in_features = x.shape().back();
  Shape kshape(kernel_size.begin(), kernel_size.end());
  kshape.push_back(transpose_kernel ? features : in_features);
  kshape.push_back(transpose_kernel ? in_features : features);
  Array kernel = param("kernel", kernel_init, kshape, param_dtype);

  const bool circular = padding.is_named() && padding.name() == "CIRCULAR";
  if (padding.is_named() && !circular && padding.name() != "SAME" && padding.name() != "VALID")
    throw ValueError(str("[nn.ConvTranspose] ", module_path(), ": padding \"", padding.name(),
                         "\" is not one of \"SAME\", \"VALID\", \"CIRCULAR\" or (lo, hi) pairs"));
  if (!padding.is_named() && padding.pairs().size() != ns)
    throw ValueError(str("[nn.ConvTranspose] ", module_path(), ": padding has ", padding.pairs().size(),
                         " (lo, hi) pairs for a kernel of ", ns, " spatial dims; give one per dim"));
  const lax::Padding pad = circular ? lax::Padding("VALID") : padding;

  Array bias = use_bias ? param("bias", bias_init, {features}, param_dtype) : Array();
  auto p = detail::promote_dtype({x, kernel, bias}, dtype);
  Array y = lax::conv_transpose(p[0], p[1], st, pad, k_dil, {}, transpose_kernel);

  if (circular) {
    // Flax's CIRCULAR: the output has period in * stride per spatial dim; pad the VALID
    // result to a whole number of periods (the odd cell on the left, or on the right
    // with transpose_kernel, as Conv's convention) and sum the periods.
    std::vector<std::pair<int64_t, int64_t>> pads{{0, 0}};
    std::vector<int64_t> period(ns);
    for (size_t i = 0; i < ns; ++i) {
      period[i] = x.shape()[i + 1] * st[i];
      const int64_t y_dim = y.shape()[i + 1];
      const int64_t diff = ((-(y_dim - period[i])) % (2 * period[i]) + 2 * period[i]) % (2 * period[i]);
      pads.push_back(transpose_kernel ? std::pair<int64_t, int64_t>{diff / 2, (diff + 1) / 2}
                                      : std::pair<int64_t, int64_t>{(diff + 1) / 2, diff / 2});
    }
    pads.emplace_back(0, 0);
    y = jnp::pad(y, pads);
    for (size_t i = 0; i < ns; ++i) {
      Shape s(y.shape().begin(), y.shape().begin() + i + 1);
      s.push_back(-1);
      s.push_back(period[i]);
      append(s, y.shape().begin() + i + 2, y.shape().end());
      y = jnp::sum(y.reshape(s), int64_t(i + 1));
    }
  }
  if (use_bias) y = add_bias_last(y, p[2]);
  if (nb != 1) {
    Shape s = batch_shape;
    append(s, y.shape().begin() + 1, y.shape().end());
    y = y.reshape(s);
  }
  return y;
}

// ---- Embed ----
namespace {
Array embedding_param(const Embed& e) {
  return param("embedding", e.embedding_init, {e.num_embeddings, e.features}, e.param_dtype);
}
}  // namespace

Array Embed::call(const Array& inputs) const {
  if (!is_integer(inputs.dtype()))
    throw ValueError(str("[nn.Embed] ", module_path(), ": inputs must be integer indices, got ",
                         type_str(inputs.dtype(), inputs.shape()), "; cast them, e.g. x.astype(jx::int32)"));
  // Flax creates the table in setup(), before anything else the module does.
  const Array embedding = detail::promote_dtype({embedding_param(*this)}, dtype, /*inexact=*/false)[0];
  if (num_embeddings == 1) {
    Shape s = inputs.shape();
    s.push_back(features);
    return jnp::broadcast_to(embedding, s);
  }
  return jnp::take(embedding, inputs, 0);
}

Array Embed::attend(const Array& query) const {
  const Array embedding = embedding_param(*this);
  if (query.ndim() < 1 || query.shape().back() != features)
    throw ShapeError(str("[nn.Embed] ", module_path(), ": attend needs a query whose last axis has the ",
                         features, " features of the embedding, got ", type_str(query.dtype(), query.shape())));
  auto p = detail::promote_dtype({query, embedding}, dtype);
  return jnp::dot(p[0], p[1].T());
}

}  // namespace jx::nn
