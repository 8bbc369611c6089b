// Run-time debugging inside transformed code (jax.debug).
//
//   auto f = jx::jit([](const Array& x) {
//     Array y = jnp::sin(x);
//     jx::debug::print("x = {}, y = {}", x, y);   // prints the values each time f runs
//     return y * 2;
//   });
//
// jx::debug::print works eagerly and under jit (it is staged as a `debug_callback`
// equation and prints when the compiled program runs), under vmap (once per batch element,
// as JAX does) and under grad/jvp (the primal values; tangents are never printed). Output
// goes to stdout, one whole line per call.
//
// The format follows Python's str.format: "{}" takes the next argument, "{1}" a given one,
// "{{" and "}}" are literal braces, and a scalar argument takes a spec such as "{:.3f}",
// "{:8.2e}", "{:d}". Arguments are Arrays (printed as NumPy prints them), pytrees of Arrays,
// or C++ scalars and strings.
//
// jx::debug::callback(fn, args...) calls fn with the concrete values of args (same types)
// whenever the surrounding program runs, with the same rules for jit/vmap/grad.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/tree.h"

namespace jx::debug {

namespace detail {

// One argument, flattened: its structure (static values included) and its leaf count.
struct FlatArgs {
  std::vector<tree::TreeDef> defs;
  std::vector<Array> leaves;
};

template <class T>
void add_arg(FlatArgs& a, const T& x) {
  if constexpr (std::is_convertible_v<const T&, std::string_view> && !std::is_same_v<T, std::string>) {
    add_arg(a, std::string(std::string_view(x)));
  } else {
    auto [lv, def] = tree::flatten(x);
    a.defs.push_back(std::move(def));
    a.leaves.insert(a.leaves.end(), lv.begin(), lv.end());
  }
}

void print_flat(std::string_view fmt, FlatArgs args);
// Binds the debug_callback primitive on `leaves`; `describe` is how jaxprs print it.
void callback_flat(std::function<void(std::span<const Array>)> fn, std::string describe,
                   std::vector<Array> leaves);

}  // namespace detail

template <class... Args>
void print(std::string_view fmt, const Args&... args) {
  detail::FlatArgs flat;
  (detail::add_arg(flat, args), ...);
  detail::print_flat(fmt, std::move(flat));
}

template <class F, class... Args>
void callback(F fn, const Args&... args) {
  using In = std::tuple<std::decay_t<Args>...>;
  auto [leaves, def] = tree::flatten(In(args...));
  detail::callback_flat(
      [fn = std::move(fn), def = def](std::span<const Array> xs) {
        std::apply(fn, tree::unflatten<In>(def, xs));
      },
      "callback", std::move(leaves));
}

}  // namespace jx::debug
