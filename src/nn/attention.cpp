// Dot-product attention, its mask helpers and MultiHeadDotProductAttention, as
// flax/linen/attention.py computes them: same formulas and dtypes, same submodule names
// and order of creation (query, key, value, [query_ln, key_ln], out), same "dropout" key.
#include "jx/nn/attention.h"

#include <cmath>

#include "jx/nn/functions.h"
#include "jx/nn/layers_linear.h"
#include "jx/nn/normalization.h"
#include "jx/numpy.h"
#include "jx/random.h"
#include "nn/dtypes.h"
#include "support/str.h"

namespace jx::nn {

namespace jnp = jx::numpy;

namespace {

std::string ts(const Array& a) { return type_str(a.dtype(), a.shape()); }

Shape leading(const Array& a, int64_t drop) {
  return Shape(a.shape().begin(), a.shape().end() - drop);
}

// Flax's asserts on (batch..., length, heads, depth) operands, as errors that name them.
void check_qk(const char* op, const Array& q, const Array& k) {
  if (q.ndim() < 3 || q.ndim() != k.ndim())
    throw ShapeError(str("[nn.", op, "] query ", ts(q), " and key ", ts(k),
                         " must have the same rank, at least 3: (batch..., length, num_heads, head_dim)"));
  if (leading(q, 3) != leading(k, 3))
    throw ShapeError(str("[nn.", op, "] the batch dims of query ", ts(q), " and key ", ts(k), " differ"));
  if (q.shape()[size_t(q.ndim() - 2)] != k.shape()[size_t(k.ndim() - 2)])
    throw ShapeError(str("[nn.", op, "] query ", ts(q), " and key ", ts(k),
                         " have different numbers of heads (the second-to-last dim)"));
  if (q.shape().back() != k.shape().back())
    throw ShapeError(str("[nn.", op, "] query ", ts(q), " and key ", ts(k),
                         " have different head depths (the last dim)"));
}

// 1 / sqrt(depth) as Flax rounds it: jnp.sqrt(depth) in float32 (float64 when the dtype is
// float64, as under jax_enable_x64), then cast to the dtype.
Array inv_sqrt_depth_divisor(int64_t depth, DType dtype) {
  if (dtype == DType::Float64) return jnp::array(std::sqrt(double(depth)), DType::Float64);
  return jnp::array(double(std::sqrt(float(depth))), DType::Float32).astype(dtype);
}

}  // namespace

Array dot_product_attention_weights(const Array& query_in, const Array& key_in, const AttentionOptions& o) {
  auto p = detail::promote_dtype({query_in, key_in}, o.dtype);
  Array query = p[0];
  const Array& key = p[1];
  const DType dtype = query.dtype();
  check_qk("dot_product_attention_weights", query, key);

  query = query / inv_sqrt_depth_divisor(query.shape().back(), dtype);
  Array weights = jnp::einsum("...qhd,...khd->...hqk", query, key);
  if (o.bias) weights = weights + *o.bias;
  if (o.mask) weights = jnp::where(*o.mask, weights, jnp::array(finfo(dtype).min, dtype));
  if (o.force_fp32_for_softmax && dtype != DType::Float32)
    weights = nn::softmax(weights.astype(DType::Float32));
  else
    weights = nn::softmax(weights).astype(dtype);
  if (o.sow_weights) sow("intermediates", "attention_weights", weights);

  if (!o.deterministic && o.dropout_rate > 0.0) {
    if (!o.dropout_rng)
      throw ValueError(str("[nn.dot_product_attention] dropout (rate ", o.dropout_rate,
                           ", not deterministic) needs a key: pass .dropout_rng, or .deterministic = true"));
    const double keep_prob = 1.0 - o.dropout_rate;
    Shape dropout_shape = weights.shape();
    // Broadcast: one mask for every batch and head entry, over (q_length, kv_length).
    if (o.broadcast_dropout)
      for (int64_t i = 0; i < key.ndim() - 2; ++i) dropout_shape[size_t(i)] = 1;
    const Array keep = random::bernoulli(*o.dropout_rng, keep_prob, dropout_shape);
    weights = weights * (keep.astype(dtype) / jnp::array(keep_prob, dtype));
  }
  return weights;
}

Array dot_product_attention(const Array& query_in, const Array& key_in, const Array& value_in,
                            const AttentionOptions& o) {
  auto p = detail::promote_dtype({query_in, key_in, value_in}, o.dtype);
  const Array &query = p[0], &key = p[1], &value = p[2];
  check_qk("dot_product_attention", query, key);
  if (value.ndim() != key.ndim() || leading(value, 3) != leading(key, 3) ||
      value.shape()[size_t(value.ndim() - 2)] != key.shape()[size_t(key.ndim() - 2)] ||
      value.shape()[size_t(value.ndim() - 3)] != key.shape()[size_t(key.ndim() - 3)])
    throw ShapeError(str("[nn.dot_product_attention] value ", ts(value), " must match key ", ts(key),
                         " in rank, batch dims, length and number of heads"));
  AttentionOptions weights_options = o;
  weights_options.dtype = query.dtype();
  const Array weights = dot_product_attention_weights(query, key, weights_options);
  return jnp::einsum("...hqk,...khd->...qhd", weights, value);
}

// ---- masks ----

Array make_attention_mask(const Array& query_input, const Array& key_input,
                          const std::function<Array(const Array&, const Array&)>& pairwise_fn,
                          int64_t extra_batch_dims, DType dtype) {
  const Array q = jnp::expand_dims(query_input, -1), k = jnp::expand_dims(key_input, -2);
  Array mask = pairwise_fn ? pairwise_fn(q, k) : jnp::multiply(q, k);
  mask = jnp::expand_dims(mask, -3);
  std::vector<int64_t> extra;
  for (int64_t i = 0; i < extra_batch_dims; ++i) extra.push_back(i);
  if (!extra.empty()) mask = jnp::expand_dims(mask, extra);
  return mask.astype(dtype);
}

Array make_causal_mask(const Array& x, int64_t extra_batch_dims, DType dtype) {
  if (x.ndim() < 1)
    throw ShapeError(str("[nn.make_causal_mask] x needs a length axis (the last), got ", ts(x)));
  const Array idxs = jnp::broadcast_to(jnp::arange(x.shape().back(), DType::Int32), x.shape());
  return make_attention_mask(idxs, idxs, [](const Array& a, const Array& b) { return jnp::greater_equal(a, b); },
                             extra_batch_dims, dtype);
}

std::optional<Array> combine_masks(const std::vector<std::optional<Array>>& masks, DType dtype) {
  std::optional<Array> out;
  for (const std::optional<Array>& m : masks) {
    if (!m) continue;
    if (out && out->ndim() != m->ndim())
      throw ShapeError(str("[nn.combine_masks] masks must have the same rank, got ", ts(*out), " and ", ts(*m)));
    out = out ? jnp::logical_and(*out, *m) : *m;
  }
  if (out) out = out->astype(dtype);
  return out;
}

// ---- MultiHeadDotProductAttention ----
namespace {

// Flax's MultiHeadDotProductAttention.__call__ (its aliases share it): runs in the scope of
// the module whose call invokes it.
template <class M>
Array multi_head_attention(const M& m, const char* layer, const Array& inputs_q,
                           const std::optional<Array>& inputs_k_in, const std::optional<Array>& inputs_v_in,
                           const std::optional<Array>& mask, std::optional<bool> deterministic,
                           std::optional<Array> dropout_rng, bool sow_weights) {
  if (!inputs_k_in && inputs_v_in)
    throw ValueError(str("[nn.", layer, "] ", module_path(), ": inputs_k cannot be none when inputs_v is given; "
                         "to use one array for both, pass it as inputs_k and leave inputs_v none"));
  const Array inputs_k = inputs_k_in ? *inputs_k_in : inputs_q;
  const Array inputs_v = inputs_v_in ? *inputs_v_in : inputs_k;
  if (inputs_q.ndim() < 2)
    throw ShapeError(str("[nn.", layer, "] ", module_path(), ": inputs_q ", ts(inputs_q),
                         " need (batch..., length, features)"));
  if (m.num_heads <= 0)
    throw ValueError(str("[nn.", layer, "] ", module_path(), ": num_heads is ", m.num_heads, "; give a positive number"));
  const int64_t features = m.out_features.value_or(inputs_q.shape().back());
  const int64_t qkv_features = m.qkv_features.value_or(inputs_q.shape().back());
  if (qkv_features % m.num_heads != 0)
    throw ValueError(str("[nn.", layer, "] ", module_path(), ": the qkv features (", qkv_features,
                         ") must be divisible by the number of heads (", m.num_heads,
                         "); change qkv_features or num_heads"));
  const int64_t head_dim = qkv_features / m.num_heads;

  auto projection = [&](const char* name) {
    return DenseGeneral{.features = {m.num_heads, head_dim},
                        .axis = {-1},
                        .use_bias = m.use_bias,
                        .dtype = m.dtype,
                        .param_dtype = m.param_dtype,
                        .kernel_init = m.kernel_init,
                        .bias_init = m.bias_init,
                        .name = name};
  };
  // (batch..., length, num_heads, head_dim)
  Array query = projection("query")(inputs_q);
  Array key = projection("key")(inputs_k);
  const Array value = projection("value")(inputs_v);
  if (m.normalize_qk) {
    // QK normalization (ViT-22B) stabilizes training at higher learning rates.
    query = LayerNorm{.dtype = m.dtype, .param_dtype = m.param_dtype, .use_bias = false, .name = "query_ln"}(query);
    key = LayerNorm{.dtype = m.dtype, .param_dtype = m.param_dtype, .use_bias = false, .name = "key_ln"}(key);
  }

  bool det = true;
  if (m.dropout_rate > 0.0) {  // deterministic is required only with dropout
    if (!deterministic && !m.deterministic)
      throw ValueError(str("[nn.", layer, "] ", module_path(), ": with dropout_rate ", m.dropout_rate,
                           ", deterministic is given neither as a field nor in the call; pass it, "
                           "e.g. mha(x, std::nullopt, std::nullopt, std::nullopt, !train)"));
    if (deterministic && m.deterministic && *deterministic != *m.deterministic)
      throw ValueError(str("[nn.", layer, "] ", module_path(), ": deterministic is given both as a field (",
                           *m.deterministic, ") and in the call (", *deterministic, "); give it once"));
    det = deterministic ? *deterministic : *m.deterministic;
    if (!det && !dropout_rng) dropout_rng = make_rng("dropout");
  }
  AttentionOptions options;
  options.mask = mask;
  options.broadcast_dropout = m.broadcast_dropout;
  options.dropout_rng = dropout_rng;
  options.dropout_rate = m.dropout_rate;
  options.deterministic = det;
  options.dtype = m.dtype;
  options.force_fp32_for_softmax = m.force_fp32_for_softmax;
  options.sow_weights = sow_weights;
  const Array x = m.attention_fn(query, key, value, options);

  // Back to (batch..., length, out_features), contracting heads and head_dim.
  return DenseGeneral{.features = {features},
                      .axis = {-2, -1},
                      .use_bias = m.use_bias,
                      .dtype = m.dtype,
                      .param_dtype = m.param_dtype,
                      .kernel_init = m.out_kernel_init.valid() ? m.out_kernel_init : m.kernel_init,
                      .bias_init = m.out_bias_init.valid() ? m.out_bias_init : m.bias_init,
                      .name = "out"}(x);
}

}  // namespace

Array MultiHeadDotProductAttention::call(const Array& inputs_q, const std::optional<Array>& inputs_k,
                                         const std::optional<Array>& inputs_v, const std::optional<Array>& mask,
                                         std::optional<bool> deterministic_arg,
                                         const std::optional<Array>& dropout_rng, bool sow_weights) const {
  return multi_head_attention(*this, "MultiHeadDotProductAttention", inputs_q, inputs_k, inputs_v, mask,
                              deterministic_arg, dropout_rng, sow_weights);
}

Array MultiHeadAttention::call(const Array& inputs_q, const std::optional<Array>& inputs_k,
                               const std::optional<Array>& inputs_v, const std::optional<Array>& mask,
                               std::optional<bool> deterministic_arg, const std::optional<Array>& dropout_rng,
                               bool sow_weights) const {
  return multi_head_attention(*this, "MultiHeadAttention", inputs_q, inputs_k, inputs_v, mask, deterministic_arg,
                              dropout_rng, sow_weights);
}

Array SelfAttention::call(const Array& inputs_q, const std::optional<Array>& mask,
                          std::optional<bool> deterministic_arg, const std::optional<Array>& dropout_rng,
                          bool sow_weights) const {
  return multi_head_attention(*this, "SelfAttention", inputs_q, std::nullopt, std::nullopt, mask,
                              deterministic_arg, dropout_rng, sow_weights);
}

}  // namespace jx::nn
