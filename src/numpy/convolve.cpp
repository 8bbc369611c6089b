// jnp.convolve and jnp.correlate: 1-D convolutions on lax::conv_general_dilated, as
// jax/_src/numpy's _conv (the shorter operand is the kernel).
#include "jx/lax.h"
#include "jx/numpy.h"
#include "numpy/promote.h"
#include "support/str.h"

namespace jx::numpy {
namespace {

Array conv1d(const char* op, Array x, Array y, const std::string& mode, bool flip_kernel) {
  if (x.ndim() != 1 || y.ndim() != 1)
    throw ShapeError(str("[", op, "] takes 1-D arrays, got ", type_str(x.dtype(), x.shape()),
                         " and ", type_str(y.dtype(), y.shape())));
  auto promoted = detail::promote_inexact({x, y});
  x = promoted[0];
  y = promoted[1];
  if (x.size() == 0 || y.size() == 0)
    throw ShapeError(str("[", op, "] inputs cannot be empty, got ", type_str(x.dtype(), x.shape()),
                         " and ", type_str(y.dtype(), y.shape())));
  bool reverse_out = false;
  if (x.size() < y.size()) {
    std::swap(x, y);
    reverse_out = !flip_kernel;  // correlate(a, v) with a shorter a is the reverse
  }
  if (flip_kernel) y = lax::rev(y, {0});
  const int64_t n = y.size();
  lax::Padding::Pairs pad;
  if (mode == "valid")
    pad = {{0, 0}};
  else if (mode == "same")
    pad = {{n / 2, n - n / 2 - 1}};
  else if (mode == "full")
    pad = {{n - 1, n - 1}};
  else
    throw ValueError(str("[", op, "] mode \"", mode, "\": use \"full\", \"same\" or \"valid\""));
  Array r = lax::conv_general_dilated(lax::reshape(x, {1, 1, x.size()}),
                                      lax::reshape(y, {1, 1, n}), {1}, pad);
  r = lax::reshape(r, {r.size()});
  return reverse_out ? lax::rev(r, {0}) : r;
}

}  // namespace

Array convolve(const Array& a, const Array& v, const std::string& mode) {
  return conv1d("convolve", a, v, mode, true);
}

Array correlate(const Array& a, const Array& v, const std::string& mode) {
  return conv1d("correlate", a, v, mode, false);
}

}  // namespace jx::numpy
