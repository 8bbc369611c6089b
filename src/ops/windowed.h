// The windowed-reduction family (ops/windowed.cpp): what jx::lax (lax/windowed.cpp) needs
// to bind its primitives with checked, canonical params.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "jx/lax.h"
#include "ops/params.h"
#include "ops/primitive.h"

namespace jx::ops::windowed {

// The window of a reduce_window-like primitive; dilations are explicit (all 1 by default).
struct Window {
  std::vector<int64_t> dims, strides;
  lax::Padding::Pairs padding;
  std::vector<int64_t> base_dilation, window_dilation;
};

// Throws the user error a primitive's abstract eval would, for the parts that must be
// right before named padding can be resolved: one window size, stride and dilation per
// operand dim, all positive.
void check_window_lengths(const char* op, const Aval& operand, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& strides,
                          const std::vector<int64_t>& base_dilation,
                          const std::vector<int64_t>& window_dilation);

// Params in jax's names: window_dimensions, window_strides, padding, and (unless
// `dilations` is false, as for select_and_scatter_add) base_dilation, window_dilation.
Params window_params(const Window& w, bool dilations = true);
Window window_of(const Params& p);

// The generic reduce_window's `consts` param: prints as jax's `consts=()` (the values
// themselves are the constvars of its closed `jaxpr` param).
std::shared_ptr<const ParamObject> consts_param(std::vector<Aval> avals);

// "ge" / "le", as jax prints select_prim.
inline const char* select_name(lax::WindowSelect s) { return s == lax::WindowSelect::ge ? "ge" : "le"; }

}  // namespace jx::ops::windowed
