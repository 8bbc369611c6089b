// Argument checks shared by the loss files (src/optim/losses*.cpp). Every message names the
// loss as `[optim.<name>]`, the offending argument's type (f32[3,5]) and the fix.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "jx/array.h"

namespace jx::optim::detail {

// "f32[3,5]".
std::string describe(const Array& x);

// Optax's utils.check_subdtype(x, jnp.floating) / (x, jnp.integer).
void require_floating(const char* fn, const char* what, const Array& x);
void require_integer(const char* fn, const char* what, const Array& x);

// `b` must broadcast against `a` (jnp's rules), e.g. labels against logits.
void require_broadcastable(const char* fn, const char* a_name, const Array& a,
                           const char* b_name, const Array& b);
// Optax's utils.check_shapes_equal.
void require_same_shape(const char* fn, const char* a_name, const Array& a, const char* b_name,
                        const Array& b);

// A weak scalar (a C++ double such as alpha = 0.1) converted to `like`'s dtype at its full
// C++ precision, so that arithmetic among weak scalars (1 - alpha, alpha / n) happens in that
// dtype, as Python-float arithmetic does in Optax, rather than in float32. Arrays that are not
// weak are returned as they are and promote as usual.
Array weak_as(const Array& scalar, const Array& like);

// The axes of `axis` for an array of rank `rank`, non-negative, in the given order; jx::none
// means all axes. Throws IndexError / ValueError naming fn for out-of-range or repeated axes.
std::vector<int64_t> normalize_axes(const char* fn, const Array& x, const Axes& axis);

}  // namespace jx::optim::detail
