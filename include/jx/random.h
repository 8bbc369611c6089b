// jx::random: JAX's default PRNG (threefry2x32), bit for bit with current JAX defaults
// (jax_threefry_partitionable=True, see jx/config.h for the legacy stream). Keys are raw
// uint32[2] arrays, as jax.random.PRNGKey returns; every sampler takes one key and is
// built from primitives, so transformations apply to it as to any other code.
//
// Defaults follow JAX without x64: float32 for real samplers, int32 for integer ones,
// uint32 for bits; every other dtype is produced when asked for (float64, uint64, ...).
//
// Every sampler, bits and split consume their key; fold_in and key_data do not. With
// jx::config::debug_key_reuse on (JAX's jax_debug_key_reuse), consuming a key twice throws
// jx::KeyReuseError (docs/random.md, "Key reuse").
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/config.h"

namespace jx::random {

// ---- keys ----

// A raw key from an integer seed: [hi32, lo32] of the seed as JAX forms it. A C++
// integer seed of any type is taken as a Python int is by JAX in its default (x32) mode:
// reduced to its low 32 bits, key = [0, uint32(seed)] (PRNGKey(-1) == [0, 4294967295]).
// For JAX's x64 seeding pass an int64/uint64 array (jnp::scalar(seed, jx::int64)): its
// two's-complement bits split as [hi, lo] (seed -1 gives [4294967295, 4294967295]).
Array PRNGKey(const Array& seed);
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
Array PRNGKey(T seed) {
  return PRNGKey(Array(int32_t(uint32_t(uint64_t(seed) & 0xFFFFFFFFu))));
}
// jax.random.key: jx has no typed key arrays, so this is PRNGKey (raw uint32[2]).
template <class S>
Array key(S seed) {
  return PRNGKey(seed);
}
// The uint32 data of a key (keys are raw already: the identity, after checking).
Array key_data(const Array& keys);

// `num` new keys: uint32[num, 2]; split(key, {a, b}) gives uint32[a, b, 2].
Array split(const Array& key, int64_t num = 2);
Array split(const Array& key, const Shape& shape);
// N keys as a std::array that also assigns to std::tie, so both spellings of JAX's
// `key, subkey = random.split(key)` work:
//   auto [k1, k2] = jr::split<2>(key);
//   std::tie(key, subkey) = jr::split<2>(key);
template <size_t N>
struct SplitKeys : std::array<Array, N> {
  template <size_t... I>
  static auto refs(std::array<Array, N>& a, std::index_sequence<I...>) {
    return std::tuple<decltype((void(I), std::declval<Array&>()))...>(a[I]...);
  }
  operator decltype(refs(std::declval<std::array<Array, N>&>(), std::make_index_sequence<N>{}))() {
    return refs(*this, std::make_index_sequence<N>{});
  }
};
template <size_t N>
SplitKeys<N> split(const Array& key);
// A new key from a key and 32-bit data (wraps to uint32); independent of the
// partitionable flag. data must be a scalar.
Array fold_in(const Array& key, const Array& data);
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
Array fold_in(const Array& key, T data) {
  return fold_in(key, Array(int32_t(uint32_t(uint64_t(data) & 0xFFFFFFFFu))));
}
// Uniform random bits; dtype must be unsigned (uint8/16/32/64).
Array bits(const Array& key, const Shape& shape = {}, DType dtype = DType::UInt32);

// The raw hash, elementwise over uint32 operands of equal rank (dims equal or 1).
std::pair<Array, Array> threefry2x32(const Array& k0, const Array& k1, const Array& x0,
                                     const Array& x1);
// JAX's threefry_2x32(keypair, count): hashes a uint32 count array of any shape.
Array threefry_2x32(const Array& key, const Array& count);

// ---- continuous samplers ----

// [minval, maxval); minval/maxval broadcast against shape.
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = DType::Float32,
              const Array& minval = 0.0, const Array& maxval = 1.0);
Array normal(const Array& key, const Shape& shape = {}, DType dtype = DType::Float32);
// Standard normal truncated to the open interval (lower, upper). Default shape: the
// broadcast of lower and upper.
Array truncated_normal(const Array& key, const Array& lower, const Array& upper,
                       OptionalShape shape = std::nullopt, DType dtype = DType::Float32);
// mode: "low" (default) or "high" (twice the bits, for tiny probabilities).
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = DType::Float32,
             const std::string& mode = "low");
Array exponential(const Array& key, const Shape& shape = {}, DType dtype = DType::Float32);
Array laplace(const Array& key, const Shape& shape = {}, DType dtype = DType::Float32);
Array logistic(const Array& key, const Shape& shape = {}, DType dtype = DType::Float32);
Array cauchy(const Array& key, const Shape& shape = {}, DType dtype = DType::Float32);
Array pareto(const Array& key, const Array& b, OptionalShape shape = std::nullopt,
             DType dtype = DType::Float32);
Array weibull_min(const Array& key, const Array& scale, const Array& concentration,
                  const Shape& shape = {}, DType dtype = DType::Float32);
Array maxwell(const Array& key, const Shape& shape = {}, DType dtype = DType::Float32);
// Gamma(a, 1) by Marsaglia-Tsang, as JAX (each element from its own split key).
Array gamma(const Array& key, const Array& a, OptionalShape shape = std::nullopt,
            DType dtype = DType::Float32);
Array loggamma(const Array& key, const Array& a, OptionalShape shape = std::nullopt,
               DType dtype = DType::Float32);
Array beta(const Array& key, const Array& a, const Array& b,
           OptionalShape shape = std::nullopt, DType dtype = DType::Float32);
// alpha: (..., k); result shape + (k,).
Array dirichlet(const Array& key, const Array& alpha, OptionalShape shape = std::nullopt,
                DType dtype = DType::Float32);
Array chisquare(const Array& key, const Array& df, OptionalShape shape = std::nullopt,
                DType dtype = DType::Float32);
Array t(const Array& key, const Array& df, const Shape& shape = {}, DType dtype = DType::Float32);
// mean (..., n), cov (..., n, n); method "cholesky" (default), "svd" or "eigh".
Array multivariate_normal(const Array& key, const Array& mean, const Array& cov,
                          OptionalShape shape = std::nullopt,
                          std::optional<DType> dtype = std::nullopt,
                          const std::string& method = "cholesky");
// Haar-distributed (semi-)orthogonal matrices: shape + (n, m), m defaults to n.
Array orthogonal(const Array& key, int64_t n, const Shape& shape = {},
                 DType dtype = DType::Float32, std::optional<int64_t> m = std::nullopt);

// ---- discrete samplers ----

// bool; p must be floating (a C++ double is weak: float32). Default shape: p's.
Array bernoulli(const Array& key, const Array& p = 0.5, OptionalShape shape = std::nullopt,
                const std::string& mode = "low");
// [minval, maxval), clipped into dtype's range as JAX does.
Array randint(const Array& key, const Shape& shape, const Array& minval, const Array& maxval,
              DType dtype = DType::Int32);
// +1 / -1 with equal probability.
Array rademacher(const Array& key, const Shape& shape = {}, DType dtype = DType::Int32);
Array poisson(const Array& key, const Array& lam, OptionalShape shape = std::nullopt,
              DType dtype = DType::Int32);
// Indices drawn from softmax(logits) along `axis` (Gumbel-max); without replacement by
// Gumbel top-k, where shape's leading dims count the draws.
Array categorical(const Array& key, const Array& logits, int64_t axis = -1,
                  OptionalShape shape = std::nullopt, bool replace = true,
                  const std::string& mode = "low");

// ---- permutations ----

// x an integer scalar n: a permutation of arange(n). x an array: its slices along `axis`
// permuted (each 1-d slice on its own when independent).
Array permutation(const Array& key, const Array& x, int64_t axis = 0, bool independent = false);
// jax.random.shuffle (deprecated in JAX): permutation(key, x, axis, independent=true).
Array shuffle(const Array& key, const Array& x, int64_t axis = 0);
// Samples from a (an array, or arange(a) for an integer scalar) along axis, with or
// without replacement, optionally with probabilities p (1-d, size a.shape[axis]).
Array choice(const Array& key, const Array& a, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt, int64_t axis = 0,
             const std::string& mode = "low");

// ---- inline definitions ----

namespace detail {
std::vector<Array> split_list(const Array& key, int64_t n);
}
template <size_t N>
SplitKeys<N> split(const Array& key) {
  std::vector<Array> ks = detail::split_list(key, int64_t(N));
  SplitKeys<N> out;
  for (size_t i = 0; i < N; ++i) out[i] = std::move(ks[i]);
  return out;
}

}  // namespace jx::random

template <size_t N>
struct std::tuple_size<jx::random::SplitKeys<N>> : std::integral_constant<size_t, N> {};
template <size_t I, size_t N>
struct std::tuple_element<I, jx::random::SplitKeys<N>> {
  using type = jx::Array;
};
