// Flax linen's attention (flax/linen/attention.py): the dot-product attention functions,
// the mask helpers, and MultiHeadDotProductAttention (with its aliases MultiHeadAttention
// and SelfAttention), whose query/key/value/out projections are DenseGeneral submodules
// named "query", "key", "value" and "out" as in Flax.
//
//   nn::MultiHeadDotProductAttention mha{.num_heads = 8, .qkv_features = 64};
//   Tree v = mha.init(key, x);                        // x: (batch..., length, features)
//   Array y = mha.apply(v, x);                        // self-attention: k = v = q
//   Array mask = nn::make_causal_mask(tokens);        // (batch, 1, len, len)
//   Array y2 = mha.apply(v, q, kv, std::nullopt, mask);
//   Array o = nn::dot_product_attention(q, k, v, {.mask = mask});   // (batch..., len, heads, dim)
//
// Inputs of the functions are (batch..., length, num_heads, head_dim); attention weights
// (batch..., num_heads, q_length, kv_length). No autoregressive `decode` cache (Flax's
// "cache" collection) is implemented.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jx/nn/initializers.h"
#include "jx/nn/module.h"

namespace jx::nn {

// The keyword arguments of Flax's dot_product_attention(_weights), in Flax's order.
struct AttentionOptions {
  std::optional<Array> bias = {};  // added to the logits; broadcasts to (batch..., heads, q, kv)
  std::optional<Array> mask = {};  // false (0) entries get the dtype's lowest value before softmax
  bool broadcast_dropout = true;  // one dropout mask shared by the batch and head dims
  std::optional<Array> dropout_rng = {};
  double dropout_rate = 0.0;
  bool deterministic = false;
  std::optional<DType> dtype = {};  // of the computation; none: promoted from the inputs
  // Softmax in float32 when the dtype is narrower (the weights then stay float32).
  bool force_fp32_for_softmax = false;
  // Sow the weights into the running module's "intermediates" as "attention_weights"
  // (Flax's module=self); only inside a module's call.
  bool sow_weights = false;
};

// softmax(q k^T / sqrt(head_dim) + bias, masked) over kv, with dropout when not
// deterministic and dropout_rate > 0 (keep mask from bernoulli(dropout_rng, 1 - rate),
// kept weights scaled by 1 / (1 - rate)). Returns (batch..., heads, q_length, kv_length).
Array dot_product_attention_weights(const Array& query, const Array& key, const AttentionOptions& options = {});
// The weights applied to value: (batch..., q_length, heads, v_head_dim).
Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            const AttentionOptions& options = {});

// pairwise_fn(query_input[..., :, None], key_input[..., None, :]) with a head axis of size 1
// inserted before the last two and extra_batch_dims leading 1s: (extra..., batch..., 1,
// len_q, len_kv), as dtype.
Array make_attention_mask(const Array& query_input, const Array& key_input,
                          const std::function<Array(const Array&, const Array&)>& pairwise_fn = nullptr,
                          int64_t extra_batch_dims = 0, DType dtype = DType::Float32);
// The mask of positions that attend only to themselves and earlier ones, for x
// (batch..., len): (extra..., batch..., 1, len, len).
Array make_causal_mask(const Array& x, int64_t extra_batch_dims = 0, DType dtype = DType::Float32);
// The logical and of the masks given (nullopt ones skipped), as dtype; nullopt if none.
// All must have the same rank.
std::optional<Array> combine_masks(const std::vector<std::optional<Array>>& masks, DType dtype = DType::Float32);

using AttentionFn = std::function<Array(const Array& query, const Array& key, const Array& value,
                                        const AttentionOptions& options)>;

// The fields of Flax's MultiHeadDotProductAttention, shared by its aliases. `decode`
// (the autoregressive cache) is not implemented.
#define JX_NN_MHA_FIELDS                                                                      \
  int64_t num_heads = 0;                                                                      \
  std::optional<DType> dtype = {};                                                            \
  DType param_dtype = DType::Float32;                                                         \
  std::optional<int64_t> qkv_features = {}; /* none: inputs_q's last dim */                   \
  std::optional<int64_t> out_features = {}; /* none: inputs_q's last dim */                   \
  bool broadcast_dropout = true;                                                              \
  double dropout_rate = 0.0;                                                                  \
  std::optional<bool> deterministic = {};                                                     \
  initializers::Initializer kernel_init = initializers::lecun_normal();                       \
  initializers::Initializer out_kernel_init = {}; /* unset: kernel_init */                    \
  initializers::Initializer bias_init = initializers::zeros_init();                           \
  initializers::Initializer out_bias_init = {}; /* unset: bias_init */                        \
  bool use_bias = true;                                                                       \
  ::jx::nn::AttentionFn attention_fn = ::jx::nn::dot_product_attention;                       \
  bool normalize_qk = false; /* LayerNorms "query_ln", "key_ln" (no bias) on q and k */       \
  bool force_fp32_for_softmax = false;                                                        \
  std::optional<std::string> name = {};

// Multi-head dot-product attention: inputs_q (batch..., q_length, features) and inputs_k,
// inputs_v (batch..., kv_length, features) projected by DenseGeneral "query", "key",
// "value" to (..., num_heads, head_dim = qkv_features / num_heads) (kernels (features,
// num_heads, head_dim)), attention_fn, then DenseGeneral "out" over the last two axes
// (kernel (num_heads, head_dim, out_features)). inputs_k defaults to inputs_q and
// inputs_v to inputs_k. mask broadcasts to (batch..., num_heads, q_length, kv_length).
// With dropout_rate > 0, deterministic must be given (field or call, once); the dropout
// key is dropout_rng or make_rng("dropout").
struct MultiHeadDotProductAttention {
  JX_NN_MHA_FIELDS

  Array call(const Array& inputs_q, const std::optional<Array>& inputs_k = std::nullopt,
             const std::optional<Array>& inputs_v = std::nullopt, const std::optional<Array>& mask = std::nullopt,
             std::optional<bool> deterministic = std::nullopt,
             const std::optional<Array>& dropout_rng = std::nullopt, bool sow_weights = false) const;
  JX_NN_MODULE(MultiHeadDotProductAttention)
};

// The same layer under Flax's other name (auto-named MultiHeadAttention_0, ...).
struct MultiHeadAttention {
  JX_NN_MHA_FIELDS

  Array call(const Array& inputs_q, const std::optional<Array>& inputs_k = std::nullopt,
             const std::optional<Array>& inputs_v = std::nullopt, const std::optional<Array>& mask = std::nullopt,
             std::optional<bool> deterministic = std::nullopt,
             const std::optional<Array>& dropout_rng = std::nullopt, bool sow_weights = false) const;
  JX_NN_MODULE(MultiHeadAttention)
};

// Self-attention: MultiHeadDotProductAttention with k = v = q (Flax deprecates it in
// favour of MultiHeadDotProductAttention(inputs_q); kept for its call signature).
struct SelfAttention {
  JX_NN_MHA_FIELDS

  Array call(const Array& inputs_q, const std::optional<Array>& mask = std::nullopt,
             std::optional<bool> deterministic = std::nullopt,
             const std::optional<Array>& dropout_rng = std::nullopt, bool sow_weights = false) const;
  JX_NN_MODULE(SelfAttention)
};

#undef JX_NN_MHA_FIELDS

}  // namespace jx::nn
