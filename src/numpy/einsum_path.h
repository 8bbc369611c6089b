// The contraction order of jnp.einsum and jnp.einsum_path, planned on labels alone.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jx::numpy::einsum_detail {

// One operand's labels (letters; ellipsis dims have labels of their own).
struct Term {
  std::vector<int> labels;
};
// opt_einsum's path format: each step names two positions (i < j) in the current operand
// list; both operands leave it and their result joins its end.
using Path = std::vector<std::pair<int64_t, int64_t>>;

// optimize: "optimal" (the order with the fewest multiply-adds, found by dynamic
// programming over subsets; up to 12 operands), "greedy" (repeatedly the pair with the
// smallest result) or "auto" (optimal up to 8 operands, else greedy), as jnp.einsum's.
Path plan(const std::vector<Term>& terms, const std::map<int, int64_t>& sizes,
          const std::vector<int>& out, std::string_view optimize);

// The path as text: the contraction, the naive and optimized costs, and one line per step.
std::string describe(std::string_view subscripts, const std::vector<Term>& terms,
                     const std::map<int, int64_t>& sizes, const std::vector<int>& out,
                     const Path& path, const std::function<std::string(const std::vector<int>&)>& name);

}  // namespace jx::numpy::einsum_detail
