// Flax linen's module system in C++ (docs/nn.md).
//
// A module is a value: an aggregate of hyper-parameters that owns no arrays. Its body,
// `call`, declares parameters and submodules inline (Flax's @nn.compact __call__):
//
//   struct MLP : nn::Module<MLP> {
//     int64_t hidden = 256;
//     Array call(Array x) const {
//       x = nn::relu(nn::Dense{.features = hidden}(x));   // params/Dense_0/{kernel,bias}
//       return nn::Dense{.features = 10}(x);              // params/Dense_1/...
//     }
//   };
//   MLP model;
//   jx::Tree variables = model.init(key, x);                    // {"params": {...}}
//   Array y = model.apply(variables, x);
//   auto [y2, updates] = model.apply(variables, x, nn::Mutable{"batch_stats"});
//   Array z = model.apply(variables, x, nn::Rngs{{"dropout", k}});
//
// init/apply set up a Scope (the variables by collection, the RNG streams, what may be
// written) for the call; each submodule call pushes a child scope named as Flax names it:
// an explicit `name`, else `<Class>_<i>`, counted per class, per parent, per call. apply
// is a pure function of (variables, inputs, rngs), so it works under jit, grad and vmap.
// Options are typed trailing arguments, as Flax's keyword arguments: nn::Rngs, nn::Mutable.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "jx/nn/errors.h"
#include "jx/tree.h"

namespace jx::nn {

namespace detail {
struct RootState;  // one init/apply/bind: variables, RNG streams, mutability
}

// RNG streams by name (Flax's `rngs`). A bare key means {"params": key}.
struct Rngs {
  Rngs() = default;
  Rngs(const Array& params_key) : streams{{"params", params_key}} {}
  Rngs(std::initializer_list<std::pair<const std::string, Array>> s) : streams(s) {}
  std::map<std::string, Array> streams;
};

// Which collections a call may write (Flax's `mutable` filter): a list of names,
// Mutable::all(), or Mutable::all_except({...}) (Flax's DenyList).
class Mutable {
 public:
  Mutable(std::initializer_list<std::string> cols) : names_(cols) {}
  Mutable(std::vector<std::string> cols) : names_(std::move(cols)) {}
  static Mutable all() { return Mutable({}, true); }
  static Mutable none() { return Mutable({}, false); }
  static Mutable all_except(std::vector<std::string> cols) { return Mutable(std::move(cols), true); }
  bool contains(std::string_view col) const;
  bool is_none() const { return !deny_ && names_.empty(); }

 private:
  Mutable(std::vector<std::string> cols, bool deny) : names_(std::move(cols)), deny_(deny) {}
  std::vector<std::string> names_;
  bool deny_ = false;  // names_ lists the immutable collections
};

// ---- inside a module's call (Flax's self.param, self.variable, ...) ----

// A parameter: read from "params" (checked against `shape`), or, while initializing,
// created by init(make_rng("params"), shape, dtype). Init is any callable with that
// signature, e.g. nn::initializers::lecun_normal().
template <class Init>
Array param(std::string_view name, const Init& init, const Shape& shape,
            DType dtype = DType::Float32);
// A parameter made by init(key) (no shape check on read).
Array param(std::string_view name, const std::function<Array(const Array& key)>& init);

// A variable of any collection; value() reads it, set() writes it (the collection must be
// mutable). Refers to the running init/apply: keep it no longer than the call.
class Variable {
 public:
  // Made by nn::variable.
  Variable(std::shared_ptr<detail::RootState> root, std::vector<std::string> path, std::string col,
           std::string name)
      : root_(std::move(root)), path_(std::move(path)), col_(std::move(col)), name_(std::move(name)) {}
  Array value() const;
  void set(const Array& v) const;
  bool is_mutable() const;
  const std::string& collection() const { return col_; }
  const std::string& name() const { return name_; }

 private:
  std::shared_ptr<detail::RootState> root_;
  std::vector<std::string> path_;
  std::string col_, name_;
};
// Creates the variable with init() if it does not exist and its collection is mutable.
Variable variable(std::string_view collection, std::string_view name,
                  const std::function<Array()>& init = nullptr);
// A fresh key of `stream` (an unknown stream falls back to "params", as Flax): the root
// key folded with the SHA-1 of the module path and a per-module counter.
Array make_rng(std::string_view stream = "params");
bool has_rng(std::string_view stream);
bool is_initializing();
bool is_mutable_collection(std::string_view collection);
bool has_variable(std::string_view collection, std::string_view name);
// Appends `value` to the tuple `name` of `collection` (default "intermediates") when that
// collection is mutable; returns whether it did (Flax's sow).
bool sow(std::string_view collection, std::string_view name, const Array& value);
// x plus a zero variable `name` of `collection`: its gradient is the gradient with respect
// to the intermediate value x (Flax's perturb).
Array perturb(std::string_view name, const Array& x, std::string_view collection = "perturbations");
// "/Dense_0": the running module's path (Flax's scope.path_text).
std::string module_path();

// ---- the machinery (used by Module<T> and by the built-in layers) ----
namespace detail {

// The class name as Flax uses it: "CNN" for ns::CNN, a local class or a template.
std::string type_name(const std::type_info& t);

// Runs as a submodule of the module whose body is running: pushes the child scope named
// `name` (or the next "<type>_<i>") for its lifetime.
class ChildCall {
 public:
  ChildCall(std::string_view type, const std::string* name);
  ~ChildCall();
  ChildCall(const ChildCall&) = delete;
  ChildCall& operator=(const ChildCall&) = delete;
};

std::shared_ptr<RootState> make_root(Tree variables, const Rngs& rngs, Mutable mutable_,
                                     bool initializing, const char* caller);
// Runs as the root module of `root` for its lifetime.
class RootCall {
 public:
  explicit RootCall(std::shared_ptr<RootState> root);
  ~RootCall();
  RootCall(const RootCall&) = delete;
  RootCall& operator=(const RootCall&) = delete;
};
// All variables, and the mutable ones (what apply returns).
Tree variables_of(const RootState& root);
Tree mutable_variables_of(const RootState& root);

// param's two halves, split so that the initializer runs only when needed.
const Array* find_param(std::string_view name, const Shape& expected);
Array put_param(std::string_view name, Array value);
void require_params_mutable(std::string_view name);

template <class A>
inline constexpr bool is_option_v =
    std::is_same_v<std::decay_t<A>, Rngs> || std::is_same_v<std::decay_t<A>, Mutable>;

// The positional (non-option) arguments, as a tuple of references.
template <class A>
auto positional_one(A&& a) {
  if constexpr (is_option_v<A>)
    return std::tuple<>();
  else
    return std::tuple<A&&>(std::forward<A>(a));
}
template <class... A>
auto positional(A&&... a) {
  return std::tuple_cat(positional_one(std::forward<A>(a))...);
}
template <class Opt, class A>
void take_option(std::optional<Opt>& r, const A& a) {
  if constexpr (std::is_same_v<std::decay_t<A>, Opt>) r = a;
}
// The option of type Opt among the arguments, if any (the last one wins).
template <class Opt, class... A>
std::optional<Opt> option(const A&... a) {
  std::optional<Opt> r;
  (take_option(r, a), ...);
  return r;
}

// Calls m.call(args...), or (m.*method)(rest...) when the first argument is a pointer to
// one of T's member functions (Flax's `method=`).
template <class T, class First, class... Rest>
decltype(auto) invoke_first(const T& m, First&& first, Rest&&... rest) {
  if constexpr (std::is_member_function_pointer_v<std::decay_t<First>>)
    return (m.*first)(std::forward<Rest>(rest)...);
  else
    return m.call(std::forward<First>(first), std::forward<Rest>(rest)...);
}

template <class T, class Tuple>
decltype(auto) invoke_body(const T& m, Tuple&& args) {
  return std::apply(
      [&](auto&&... a) -> decltype(auto) {
        if constexpr (sizeof...(a) > 0) {
          return invoke_first(m, std::forward<decltype(a)>(a)...);
        } else {
          return m.call();
        }
      },
      std::forward<Tuple>(args));
}
template <class T>
const std::string* explicit_name(const T& m) {
  if constexpr (requires { m.name; }) {
    if constexpr (requires { m.name.has_value(); })
      return m.name ? &*m.name : nullptr;
    else
      return m.name.empty() ? nullptr : &m.name;
  } else {
    return nullptr;
  }
}

}  // namespace detail

// A module bound to variables for interactive use (Flax's model.bind): calls run as the
// root module, and writes to mutable collections persist between calls.
template <class T>
class Bound {
 public:
  Bound(T module, std::shared_ptr<detail::RootState> root) : module_(std::move(module)), root_(std::move(root)) {}
  template <class... A>
  decltype(auto) operator()(A&&... args) const {
    detail::RootCall call(root_);
    return detail::invoke_body(module_, std::forward_as_tuple(std::forward<A>(args)...));
  }
  Tree variables() const { return detail::variables_of(*root_); }
  const T& module() const { return module_; }

 private:
  T module_;
  std::shared_ptr<detail::RootState> root_;
};

namespace detail {

// nn::tabulate's record of the calls of one init: each module's path and class, its
// arguments' and its result's types, in call order.
bool recording();
size_t record_begin(const std::string& type, std::string inputs);
void record_end(size_t index, std::string outputs);
std::string describe_value(const Array& a);
inline std::string describe_value(bool b) { return b ? "true" : "false"; }
inline std::string describe_value(const std::optional<Array>& a) { return a ? describe_value(*a) : ""; }
template <class V>
std::string describe_value(const V&) {
  return "";
}
template <class... V>
std::string describe_values(const V&... v);
template <class... V>
std::string describe_value(const std::tuple<V...>& t) {
  return std::apply([](const auto&... v) { return describe_values(v...); }, t);
}
template <class... V>
std::string describe_values(const V&... v) {
  std::string s;
  [[maybe_unused]] auto add = [&](const std::string& d) {
    if (!d.empty()) s += (s.empty() ? "" : "\n") + d;
  };
  (add(describe_value(v)), ...);
  return s;
}

// What Module<T> and JX_NN_MODULE give a module type M whose body is M::call.
// A member-function pointer as the first argument runs that method in the submodule's
// scope instead of call (e.g. weight tying: embed(&nn::Embed::attend, h)).
template <class M, class... A>
auto call_as_child(const M& m, A&&... args)
    -> decltype(invoke_body(m, std::forward_as_tuple(std::forward<A>(args)...))) {
  static const std::string type = type_name(typeid(M));
  ChildCall scope(type, explicit_name(m));
  if (!recording()) return invoke_body(m, std::forward_as_tuple(std::forward<A>(args)...));
  const size_t index = record_begin(type, describe_values(args...));
  auto y = invoke_body(m, std::forward_as_tuple(std::forward<A>(args)...));
  record_end(index, describe_values(y));
  return y;
}
template <class M, class... A>
auto run_as_root(const M& m, const std::shared_ptr<RootState>& root, A&&... args) {
  RootCall call(root);
  return invoke_body(m, positional(std::forward<A>(args)...));
}
// init: every collection created, except "intermediates" unless a Mutable says otherwise.
template <class M, class... A>
auto init_with_output(const M& m, const Rngs& rngs, A&&... args) {
  auto root = make_root(Tree::dict(), rngs,
                        option<Mutable>(args...).value_or(Mutable::all_except({"intermediates"})), true,
                        "init");
  auto y = run_as_root(m, root, std::forward<A>(args)...);
  return std::make_pair(std::move(y), variables_of(*root));
}
// apply: y, or with a Mutable the pair (y, the mutable collections after the call).
template <class M, class... A>
auto apply(const M& m, const Tree& variables, A&&... args) {
  constexpr bool has_mutable = (std::is_same_v<std::decay_t<A>, Mutable> || ...);
  auto root = make_root(variables, option<Rngs>(args...).value_or(Rngs{}),
                        option<Mutable>(args...).value_or(Mutable::none()), false, "apply");
  if constexpr (has_mutable) {
    auto y = run_as_root(m, root, std::forward<A>(args)...);
    return std::make_pair(std::move(y), mutable_variables_of(*root));
  } else {
    return run_as_root(m, root, std::forward<A>(args)...);
  }
}

}  // namespace detail

// The members of a module type whose body is `call` (what Module<T> gives by inheritance),
// for a module written as a plain aggregate: `struct Block { ...; Array call(Array x) const;
// JX_NN_MODULE(Block) };`. An aggregate without a base class keeps designated
// initializers free of GCC's -Wextra missing-initializer warning.
#define JX_NN_MODULE(T)                                                                    \
  template <class... A>                                                                    \
  decltype(auto) operator()(A&&... args) const {                                           \
    return ::jx::nn::detail::call_as_child(*this, std::forward<A>(args)...);               \
  }                                                                                        \
  template <class... A>                                                                    \
  ::jx::Tree init(const ::jx::nn::Rngs& rngs, A&&... args) const {                         \
    return ::jx::nn::detail::init_with_output(*this, rngs, std::forward<A>(args)...).second; \
  }                                                                                        \
  template <class... A>                                                                    \
  auto init_with_output(const ::jx::nn::Rngs& rngs, A&&... args) const {                   \
    return ::jx::nn::detail::init_with_output(*this, rngs, std::forward<A>(args)...);      \
  }                                                                                        \
  template <class... A>                                                                    \
  auto apply(const ::jx::Tree& variables, A&&... args) const {                             \
    return ::jx::nn::detail::apply(*this, variables, std::forward<A>(args)...);            \
  }                                                                                        \
  ::jx::nn::Bound<T> bind(const ::jx::Tree& variables, const ::jx::nn::Rngs& rngs = {},   \
                          ::jx::nn::Mutable mutable_ = ::jx::nn::Mutable::none()) const {  \
    return ::jx::nn::Bound<T>(*this, ::jx::nn::detail::make_root(variables, rngs,          \
                                                                 std::move(mutable_), false, "bind")); \
  }

// The base of a user module: T defines `call(...)` (its body) and derives from Module<T>.
template <class T>
struct Module {
  // As a submodule, inside another module's call.
  template <class... A>
  decltype(auto) operator()(A&&... args) const {
    static_assert(requires { &T::call; },
                  "a jx::nn module defines its body as `call(...)` (Flax's __call__); "
                  "Module<T> provides operator(), which runs call in the module's scope");
    return detail::call_as_child(self(), std::forward<A>(args)...);
  }
  // variables = init(key or Rngs, args..., [nn::Mutable]).
  template <class... A>
  Tree init(const Rngs& rngs, A&&... args) const {
    return detail::init_with_output(self(), rngs, std::forward<A>(args)...).second;
  }
  template <class... A>
  auto init_with_output(const Rngs& rngs, A&&... args) const {
    return detail::init_with_output(self(), rngs, std::forward<A>(args)...);
  }
  // y = apply(variables, args..., [nn::Rngs], [nn::Mutable]); with a Mutable, the pair
  // (y, the mutable collections after the call).
  template <class... A>
  auto apply(const Tree& variables, A&&... args) const {
    return detail::apply(self(), variables, std::forward<A>(args)...);
  }
  Bound<T> bind(const Tree& variables, const Rngs& rngs = {}, Mutable mutable_ = Mutable::none()) const {
    return Bound<T>(self(), detail::make_root(variables, rngs, std::move(mutable_), false, "bind"));
  }

 private:
  const T& self() const { return static_cast<const T&>(*this); }
};

namespace detail {
void start_recording(RootState& root);
// The table of a recorded init: path, module, inputs, outputs, and each collection's
// variables with their counts and bytes, as flax.linen.tabulate prints it.
std::string format_table(const RootState& root);
}  // namespace detail

// The module tree of `model` initialized on `args`: one row per module call with its path,
// class, input and output types and its own variables (counts and bytes per collection),
// then the totals (flax.linen.tabulate).
template <class M, class... A>
std::string tabulate(const M& model, const Rngs& rngs, A&&... args) {
  auto root = detail::make_root(Tree::dict(), rngs, Mutable::all_except({"intermediates"}), true, "tabulate");
  detail::start_recording(*root);
  {
    detail::RootCall call(root);
    auto pos = detail::positional(std::forward<A>(args)...);
    const size_t index = detail::record_begin(detail::type_name(typeid(M)),
                                              std::apply([](const auto&... a) { return detail::describe_values(a...); }, pos));
    auto y = detail::invoke_body(model, std::move(pos));
    detail::record_end(index, detail::describe_values(y));
  }
  return detail::format_table(*root);
}

// ---- template definitions ----
template <class Init>
Array param(std::string_view name, const Init& init, const Shape& shape, DType dtype) {
  if (const Array* v = detail::find_param(name, shape)) return *v;
  detail::require_params_mutable(name);
  return detail::put_param(name, init(make_rng("params"), shape, dtype));
}

}  // namespace jx::nn
