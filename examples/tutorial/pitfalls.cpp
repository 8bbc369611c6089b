// The pitfalls of "Migrating from PyTorch to JAX", and what a C++ user of jx sees for
// each: some cannot happen (the type system refuses them), some are typed errors that say
// what to do instead, and some are JAX's semantics, kept on purpose (printed here so that
// they are no surprise).
//
//   build/examples/tutorial_pitfalls
//
// Pitfall 1 is a compile error. To see it, build this file with the line below enabled:
//   g++ -std=c++20 -I include -DJX_TUTORIAL_SHOW_COMPILE_ERROR -fsyntax-only examples/tutorial/pitfalls.cpp
// (the test CompileFail.assign_to_index checks the message).
#include <cmath>
#include <iostream>
#include <vector>

#include "jx/jx.h"

namespace jnp = jx::numpy;
namespace jr = jx::random;
namespace optim = jx::optim;
using jx::Array;

int main() {
  std::cout << "== 1. In-place mutation ==\n";
  // PyTorch: x[0, 0] = 5 mutates x.  JAX: TypeError ("JAX arrays are immutable ... use
  // x.at[idx].set(y)"), raised at run time. jx: it does not compile:
  //   error: static assertion failed: jx::Array is immutable: assigning to an index result
  //   x(...) (or to any temporary Array) changes nothing. Write x = x.at(...).set(value) ...
  Array x = jnp::zeros({2, 2});
#ifdef JX_TUTORIAL_SHOW_COMPILE_ERROR
  x(0, 0) = 5.0;
#endif
  Array y = x.at(0, 0).set(5.0);
  std::cout << "x.at(0, 0).set(5): y[0, 0] = " << y(0, 0).item<float>() << ", x[0, 0] still "
            << x(0, 0).item<float>() << "\n";

  std::cout << "\n== 2. Reusing a PRNG key ==\n";
  // PyTorch's generator advances by itself; a JAX key does not: the same key twice gives
  // the same "random" numbers. Split instead.
  Array key = jr::PRNGKey(0);
  Array a = jr::normal(key, {3}), b = jr::normal(key, {3});
  std::cout << "normal(key) twice: " << (jnp::array_equal(a, b).item<bool>() ? "identical" : "different") << "\n";
  auto [k1, k2] = jr::split<2>(key);
  std::cout << "normal(k1), normal(k2) after split: "
            << (jnp::array_equal(jr::normal(k1, {3}), jr::normal(k2, {3})).item<bool>() ? "identical" : "different")
            << "\n";
  // JAX's key-reuse checker (jax.config.update('jax_debug_key_reuse', True)) is
  // jx::config::debug_key_reuse (or JX_DEBUG_KEY_REUSE=1): off by default, and when on a
  // key consumed twice (by samplers or split) throws jx::KeyReuseError.
  {
    jx::config::Scoped check(jx::config::debug_key_reuse, true);
    Array checked = jr::PRNGKey(1);
    jr::normal(checked, {3});
    try {
      jr::normal(checked, {3});
    } catch (const jx::KeyReuseError& e) {
      std::cout << "with debug_key_reuse: " << e.what() << "\n";
    }
  }

  std::cout << "\n== 3. C++ control flow on traced values ==\n";
  // JAX: `if x.sum() > 0:` under jit raises TracerBoolConversionError (a
  // ConcretizationTypeError). jx: the same at trace time, a jx::ConcretizationError.
  auto relu_sum = [](const Array& v) {
    if (jnp::sum(v) > 0.0) return jnp::sum(v);  // bool of a traced value
    return Array(0.0f);
  };
  Array v = jnp::array({1.0f, -3.0f});
  try {
    jx::jit(relu_sum)(v);
  } catch (const jx::ConcretizationError& e) {
    std::cout << "if on a traced value under jit: jx::ConcretizationError: " << e.what() << "\n";
  }
  // Under grad the values are concrete, so the C++ `if` works, as Python's does under jax.grad.
  std::cout << "the same function under grad: " << jx::grad(relu_sum)(jnp::array({2.0f, 1.0f})).repr() << "\n";
  // The fixes: jnp::where (both sides computed) or lax::cond (one branch runs).
  auto with_where = [](const Array& u) { return jnp::where(jnp::sum(u) > 0.0, jnp::sum(u), 0.0); };
  auto with_cond = [](const Array& u) {
    return jx::lax::cond(jnp::sum(u) > 0.0, [](const Array& w) { return jnp::sum(w); },
                         [](const Array& w) { return jnp::zeros({}, w.dtype()); }, u);
  };
  std::cout << "jit(with jnp::where)([1, -3]) = " << jx::jit(with_where)(v).repr() << "\n";
  std::cout << "jit(with lax::cond)([1, -3]) = " << jx::jit(with_cond)(v).repr() << "\n";
  // Reading a traced value (Python: float(x), x.item()) fails the same way.
  try {
    jx::jit([](const Array& u) { return u * u.sum().item<float>(); })(v);
  } catch (const jx::ConcretizationError& e) {
    std::cout << "item() under jit: " << e.what() << "\n";
  }
  // Shapes must not depend on values: jnp.nonzero(x) under jit needs size=.
  try {
    jx::jit([](const Array& u) { return jnp::nonzero(u)[0]; })(v);
  } catch (const jx::ConcretizationError& e) {
    std::cout << "nonzero under jit: " << e.what() << "\n";
  }
  // Flags that select code are static: pass a bool (jit traces once per value).
  auto maybe_negate = jx::jit([](const Array& u, bool negate) { return negate ? -u : u; });
  std::cout << "a bool argument is static: maybe_negate(v, true) = " << maybe_negate(v, true).repr() << "\n";

  std::cout << "\n== 4. Side effects under jit ==\n";
  // The C++ body runs once, while tracing; the compiled program runs every call.
  int body_runs = 0;
  auto counted = jx::jit([&body_runs](const Array& u) {
    ++body_runs;
    return u * 2.0;
  });
  for (int i = 0; i < 3; ++i) counted(v);
  std::cout << "3 calls of a jitted function: its C++ body ran " << body_runs << " time\n";
  // Values captured from outside are baked in when the function is traced.
  float scale = 2.0f;
  auto scaled = jx::jit([&scale](const Array& u) { return u * scale; });
  Array before = scaled(jnp::array({1.0f}));
  scale = 3.0f;
  Array after = scaled(jnp::array({1.0f}));
  std::cout << "captured scale 2, then set to 3: " << before.item<float>() << " then " << after.item<float>()
            << " (still the traced value; pass it as an argument instead)\n";
  // Saving a traced value outside the function leaks a tracer; using it later is an error.
  std::vector<Array> saved;
  jx::jit([&saved](const Array& u) {
    saved.push_back(u * 2.0);
    return u;
  })(v);
  try {
    Array leaked = saved[0] + 1.0;
    std::cout << leaked << "\n";
  } catch (const jx::ConcretizationError& e) {
    std::cout << "using a leaked tracer: " << e.what() << "\n";
  }
  // What runs every call: jx::debug::print (jax.debug.print).
  auto printed = jx::jit([](const Array& u) {
    jx::debug::print("debug::print at run time: u = {}", u);
    return u;
  });
  printed(jnp::array({7.0f}));
  printed(jnp::array({8.0f}));

  std::cout << "\n== 5. Default dtypes: 32-bit ==\n";
  // PyTorch: torch.tensor([1, 2]) is int64. JAX and jx: int32 (float32 for floats).
  std::cout << "jnp.array([1, 2]).dtype = " << jnp::array({1, 2}).dtype() << "\n";
  std::cout << "jnp.zeros(2).dtype = " << jnp::zeros({2}).dtype() << ", jnp.arange(3.0).dtype = "
            << jnp::arange(3.0).dtype() << "\n";
  // C++ differs in one place: a brace list of doubles is typed C++ data and stays float64,
  // where Python's jnp.array([1., 2.]) is float32. Write float literals (1.0f) for float32.
  std::cout << "jnp::array({1.0, 2.0}).dtype = " << jnp::array({1.0, 2.0}).dtype()
            << ", jnp::array({1.0f, 2.0f}).dtype = " << jnp::array({1.0f, 2.0f}).dtype() << "\n";
  // int32 wraps around (PyTorch's int64 would not overflow here).
  Array big = jnp::array<int32_t>({2147483647});
  std::cout << "int32 max + 1 = " << (big + 1).repr() << "\n";
  // uint8 images: 200 + 100 wraps in uint8 (as in PyTorch); convert before arithmetic.
  Array pixel = jnp::array<uint8_t>({200});
  std::cout << "uint8 200 + 100 = " << (pixel + 100).repr() << ", as float32 = "
            << (pixel.astype(jx::DType::Float32) + 100.0).repr() << "\n";
  // A C++ scalar does not promote an array (weak type); a float64 array does.
  Array f32 = jnp::ones({2});
  std::cout << "float32 * 2.0 -> " << (f32 * 2.0).dtype() << ", float32 * float64 array -> "
            << (f32 * jnp::ones({2}, jx::DType::Float64)).dtype() << "\n";

  std::cout << "\n== 6. Out-of-bounds indices do not raise ==\n";
  // PyTorch raises IndexError. JAX (on accelerators, errors cannot be raised from the
  // compiled program) clamps reads and drops writes; jx does the same.
  Array r = jnp::arange(5);
  std::cout << "jnp.arange(5)[10] = " << r(10).repr() << " (clamped to the last element)\n";
  std::cout << "jnp.arange(5).at[10].set(-1) = " << r.at(10).set(-1).repr() << " (dropped)\n";
  // An out-of-range class label gives a NaN loss, not an error (as optax).
  Array logits = jnp::zeros({1, 10});
  std::cout << "cross entropy with label 12 of 10 classes = "
            << optim::softmax_cross_entropy_with_integer_labels(logits, jnp::array<int32_t>({12})).repr() << "\n";
  // Finding where a NaN comes from: debug_nans reruns the jitted function op by op.
  {
    jx::config::Scoped nan_check(jx::config::debug_nans, true);
    try {
      jx::jit([](const Array& u) { return jnp::log(u) * 2.0; }, {.name = "log_twice"})(jnp::array({-1.0f}));
    } catch (const jx::FloatingPointError& e) {
      std::cout << "with debug_nans: " << e.what() << "\n";
    }
  }

  std::cout << "\n== 7. Donated buffers are gone ==\n";
  // jit(..., donate_argnums=0) lets the output reuse the input's memory; the input is then
  // deleted (JAX: "Array has been deleted"). jx throws when it is used.
  auto add_one = jx::jit([](const Array& u) { return u + 1.0; }, {.donate_argnums = {0}});
  Array buffer = jnp::ones({4});
  Array result = add_one(buffer);
  try {
    std::cout << (buffer * 2.0) << "\n";
  } catch (const jx::Error& e) {
    std::cout << "using a donated array: " << e.what() << "\n";
  }
  std::cout << "the result is fine: " << result.repr() << "\n";
  return 0;
}
