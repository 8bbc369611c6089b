// checkify: functional error checks (JAX's jax.experimental.checkify).
//
//   namespace ck = jx::checkify;
//   auto f = [](const Array& x, const Array& i) {
//     ck::check(jnp::all(x > 0), "x must be positive, got min {}", jnp::min(x));
//     return jnp::log(x)(i);                                  // an index that may be out of range
//   };
//   auto g = ck::checkify(f, ck::user_checks | ck::index_checks);
//   auto [err, y] = jx::jit(g)(x, i);   // or eagerly, or under vmap
//   if (auto msg = err.get()) std::cerr << *msg << "\n";
//   err.throw_if_error();               // JAX's err.throw(): throws jx::JaxRuntimeError
//
// checkify(f, errors) returns a function with f's signature that returns
// std::pair<Error, R> (R = f's result). The checks are computed by the program itself, as
// values: eagerly they run op by op, under jit they are compiled into the program, under
// vmap each batch element has its own error. The first failing check (in program order)
// wins. What is checked depends on `errors`:
//   user_checks  - checkify::check(pred, ...) calls in f
//   nan_checks   - a floating primitive whose output holds a NaN (sin, log, add, dot_general,
//                  reduce_sum, ...: JAX's list)
//   div_checks   - integer div / rem by zero
//   index_checks - gather, scatter*, dynamic_slice, dynamic_update_slice with an index out
//                  of bounds (x(i), x.at(i).set(v), lax::dynamic_slice, ... whatever the mode)
//   float_checks = nan_checks | div_checks; all_checks = every set. Default: user_checks.
// Nested jit, cond/switch, while_loop/fori_loop and scan bodies are checked too, and so are
// custom_jvp/custom_vjp functions and checkpoint (remat) bodies. See docs/checkify.md.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/error.h"
#include "jx/tree.h"

namespace jx {

// A failed checkify check, raised by Error::throw_if_error() and by check() called outside
// checkify (JAX's jax.errors.JaxRuntimeError, a ValueError).
class JaxRuntimeError : public ValueError {
 public:
  using ValueError::ValueError;
};

namespace checkify {

// A set of check kinds (JAX's ErrorCategory sets), combined with |.
struct ErrorSet {
  uint32_t bits = 0;
  constexpr bool has(ErrorSet o) const { return (bits & o.bits) == o.bits && o.bits != 0; }
  friend constexpr ErrorSet operator|(ErrorSet a, ErrorSet b) { return {a.bits | b.bits}; }
  friend constexpr ErrorSet operator-(ErrorSet a, ErrorSet b) { return {a.bits & ~b.bits}; }
  friend constexpr bool operator==(ErrorSet a, ErrorSet b) { return a.bits == b.bits; }
};
inline constexpr ErrorSet user_checks{1};
inline constexpr ErrorSet nan_checks{2};
inline constexpr ErrorSet div_checks{4};
inline constexpr ErrorSet index_checks{8};
inline constexpr ErrorSet float_checks = nan_checks | div_checks;
inline constexpr ErrorSet automatic_checks = float_checks | index_checks;
inline constexpr ErrorSet all_checks = automatic_checks | user_checks;

class Error;
}  // namespace checkify

namespace tree {
template <>
struct PytreeTraits<checkify::Error> {
  static constexpr bool defined = true;
  static void flatten(const checkify::Error& e, detail::Builder& b);
  static checkify::Error unflatten(detail::Reader& r);
};
}  // namespace tree

namespace checkify {

// The error value a checkified function returns: a pytree whose leaves are the error code
// (int32, 0 = no error; batched under vmap) and the payload (float64[..., 8]: the values a
// message shows), and whose static part is the table of messages. It can be returned from
// jit and vmap like any pytree.
class Error {
 public:
  Error() = default;  // no error

  // The message of the first failed check, or nullopt. With a batched error (from vmap),
  // one line per failing element: "at mapped index 2: division by zero ...". Throws
  // ConcretizationError on a traced Error (inside jit: return it and call get() outside).
  std::optional<std::string> get() const;
  // JAX's err.throw(): throws jx::JaxRuntimeError with get()'s message if a check failed.
  void throw_if_error() const;

  // The leaves (for inspection and tests): code int32[batch...], payload f64[batch..., 8].
  const Array& code() const { return code_; }
  const Array& payload() const { return payload_; }

  // Internal: made by checkify.
  Error(Array code, Array payload, std::string table)
      : code_(std::move(code)), payload_(std::move(payload)), table_(std::move(table)) {}

 private:
  friend struct tree::PytreeTraits<Error>;
  Array code_, payload_;  // invalid in a default Error
  std::string table_;     // the messages, serialized (static: part of the tree structure)
};

// The format string of check(), with where it was written (as JAX adds "check failed at").
struct Message {
  std::string_view text;
  std::source_location where;
  template <class S, std::enable_if_t<std::is_convertible_v<const S&, std::string_view>, int> = 0>
  Message(const S& s, std::source_location w = std::source_location::current())  // NOLINT: implicit
      : text(s), where(w) {}
};

namespace detail {
using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;
struct FlatResult {
  Error error;
  std::vector<Array> outs;
};
FlatResult checkify_flat(const FlatFn& f, const std::vector<Array>& args, ErrorSet errors);
void check_flat(const Array& pred, const Message& msg, std::vector<Array> fmt_args);
}  // namespace detail

// JAX's checkify.check: adds a check that `pred` (a bool scalar) holds. Under checkify
// (with user_checks) a false pred becomes the function's Error, with `msg` formatted with
// fmt_args as Python's str.format ("{}", "{0}", "{:.3f}", "{{"); fmt_args are 0-d arrays or
// C++ numbers, at most 8. Called eagerly outside checkify it throws JaxRuntimeError at once
// when pred is false; staged (inside jit, a cond branch, ...) outside checkify it throws
// ValueError, as JAX, since nothing could report the error. Throws TypeError for a pred
// that is not a bool scalar, ValueError/IndexError for a bad format or argument.
template <class... Args>
void check(const Array& pred, Message msg, const Args&... fmt_args) {
  detail::check_flat(pred, msg, std::vector<Array>{Array(fmt_args)...});
}

// JAX's checkify.checkify: g(args...) returns std::pair<Error, R>, R being f's result.
template <class F>
auto checkify(F f, ErrorSet errors = user_checks) {
  return [f, errors](const auto&... args) {
    using In = std::tuple<std::decay_t<decltype(args)>...>;
    using R = std::decay_t<decltype(f(args...))>;
    static_assert(!std::is_void_v<R>, "jx::checkify: f must return a value (a pytree of Arrays)");
    In in(args...);
    auto [leaves, def] = tree::flatten(in);
    tree::TreeDef out_def;
    detail::FlatFn flat = [&](const std::vector<Array>& xs) {
      auto [ol, od] = tree::flatten(R(std::apply(f, tree::unflatten<In>(def, xs))));
      out_def = od;
      return ol;
    };
    detail::FlatResult r = detail::checkify_flat(flat, leaves, errors);
    return std::pair<Error, R>(std::move(r.error), tree::unflatten<R>(out_def, r.outs));
  };
}

}  // namespace checkify
}  // namespace jx
