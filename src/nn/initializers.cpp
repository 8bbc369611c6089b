// jax.nn.initializers (jax/_src/nn/initializers.py), call for call: the same jax.random
// sampler with the same key, the scale formed as a dtype scalar the way JAX forms it
// (jnp.array(python_float, dtype)), and the same order of dtype arithmetic, so that the
// results equal JAX's bit for bit wherever jx::random does.
#include "jx/nn/initializers.h"

#include <vector>

#include "jx/numpy.h"
#include "jx/random.h"
#include "support/str.h"

namespace jx::nn::initializers {

namespace jnp = jx::numpy;
namespace jr = jx::random;

namespace {

// The stddev of a standard normal truncated to (-2, 2): variance_scaling divides by it so
// that the truncated samples have the requested variance.
constexpr double kTruncatedNormalStddev = 0.87962566103423978;

std::string shape_tuple(const Shape& shape) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  return list_str(dims);
}

void require_floating(const char* init, DType dtype) {
  if (!is_floating(dtype))
    throw DTypeError(str("[initializers::", init, "] dtype ", dtype_name(dtype),
                         " is not a floating-point dtype; random initializers draw floats, "
                         "pass e.g. jx::float32 or jx::float64"));
}

// Python's shape[i] (negative i from the end), naming the initializer and the argument.
int64_t dim_at(const char* fn, const char* arg, const Shape& shape, int64_t axis) {
  const int64_t rank = int64_t(shape.size());
  if (axis < -rank || axis >= rank)
    throw IndexError(str("[initializers::", fn, "] ", arg, " ", axis,
                         " is out of bounds for the weights shape ", shape_tuple(shape),
                         " of rank ", rank, "; valid axes are ", -rank, "..", rank - 1));
  return shape[size_t(axis < 0 ? axis + rank : axis)];
}

// math.prod of the dims named by `axes` (an int or a list; none or {} names no dims).
int64_t axes_size(const char* fn, const char* arg, const Shape& shape, const Axes& axes) {
  int64_t n = 1;
  if (axes.axes)
    for (int64_t a : *axes.axes) n *= dim_at(fn, arg, shape, a);
  return n;
}

std::pair<double, double> fans(const char* fn, const Shape& shape, const Axes& in_axis,
                               const Axes& out_axis, const Axes& batch_axis) {
  if (shape.size() <= 1)
    throw ValueError(str("[initializers::", fn, "] can't compute input and output sizes of a ",
                         shape.size(), "-dimensional weights shape ", shape_tuple(shape),
                         "; it must be at least 2-D (a 1-D bias wants zeros or normal)"));
  const int64_t in_size = axes_size(fn, "in_axis", shape, in_axis);
  const int64_t out_size = axes_size(fn, "out_axis", shape, out_axis);
  const int64_t batch_size = axes_size(fn, "batch_axis", shape, batch_axis);
  if (in_size == 0 || out_size == 0 || batch_size == 0)
    throw ValueError(str("[initializers::", fn, "] the weights shape ", shape_tuple(shape),
                         " has a zero-size in, out or batch axis, so its fans divide by zero "
                         "(JAX raises ZeroDivisionError); give every dim a positive size"));
  // Python floats, in JAX's order: shape.total / in_size / out_size / batch_size.
  const double receptive_field_size =
      double(shape.numel()) / double(in_size) / double(out_size) / double(batch_size);
  return {double(in_size) * receptive_field_size, double(out_size) * receptive_field_size};
}

}  // namespace

Array Initializer::operator()(const Array& key, const Shape& shape,
                              std::optional<DType> dtype) const {
  if (!fn_)
    throw ValueError("[Initializer] called an empty initializer; build one with a factory such "
                     "as initializers::lecun_normal() or assign initializers::zeros");
  return fn_(key, shape, dtype.value_or(default_dtype_));
}

// ---- constants ----

Array zeros(const Array& key, const Shape& shape, DType dtype) { return jnp::zeros(shape, dtype); }

Array ones(const Array& key, const Shape& shape, DType dtype) { return jnp::ones(shape, dtype); }

Initializer zeros_init() { return Initializer(zeros); }

Initializer ones_init() { return Initializer(ones); }

Initializer constant(const Array& value, DType dtype) {
  return Initializer([value](const Array& key, const Shape& shape,
                             DType dt) { return jnp::full(shape, value, dt); },
                     dtype);
}

// ---- simple random ----

Initializer uniform(double scale, DType dtype) {
  return Initializer(
      [scale](const Array& key, const Shape& shape, DType dt) {
        require_floating("uniform", dt);
        return jr::uniform(key, shape, dt) * jnp::scalar(scale, dt);
      },
      dtype);
}

Initializer normal(double stddev, DType dtype) {
  return Initializer(
      [stddev](const Array& key, const Shape& shape, DType dt) {
        require_floating("normal", dt);
        return jr::normal(key, shape, dt) * jnp::scalar(stddev, dt);
      },
      dtype);
}

Initializer truncated_normal(double stddev, DType dtype, double lower, double upper) {
  return Initializer(
      [stddev, lower, upper](const Array& key, const Shape& shape, DType dt) {
        require_floating("truncated_normal", dt);
        return jr::truncated_normal(key, lower, upper, shape, dt) * jnp::scalar(stddev, dt);
      },
      dtype);
}

// ---- variance scaling ----

std::pair<double, double> compute_fans(const Shape& shape, Axes in_axis, Axes out_axis,
                                       Axes batch_axis) {
  return fans("compute_fans", shape, in_axis, out_axis, batch_axis);
}

Initializer variance_scaling(double scale, const std::string& mode,
                             const std::string& distribution, Axes in_axis, Axes out_axis,
                             Axes batch_axis, DType dtype) {
  if (mode != "fan_in" && mode != "fan_out" && mode != "fan_avg")
    throw ValueError(str("[initializers::variance_scaling] invalid mode \"", mode,
                         "\"; use \"fan_in\", \"fan_out\" or \"fan_avg\""));
  if (distribution != "truncated_normal" && distribution != "normal" && distribution != "uniform")
    throw ValueError(str("[initializers::variance_scaling] invalid distribution \"", distribution,
                         "\"; use \"truncated_normal\", \"normal\" or \"uniform\""));
  return Initializer(
      [=](const Array& key, const Shape& shape, DType dt) {
        require_floating("variance_scaling", dt);
        auto [fan_in, fan_out] = fans("variance_scaling", shape, in_axis, out_axis, batch_axis);
        const double denominator =
            mode == "fan_in" ? fan_in : mode == "fan_out" ? fan_out : (fan_in + fan_out) / 2;
        // The quotient in double, rounded once to dt (jnp.array(scale / denominator, dtype));
        // everything after it is dt arithmetic, as in JAX.
        const Array variance = jnp::scalar(scale / denominator, dt);
        if (distribution == "truncated_normal") {
          const Array stddev = jnp::sqrt(variance) / jnp::scalar(kTruncatedNormalStddev, dt);
          return jr::truncated_normal(key, -2.0, 2.0, shape, dt) * stddev;
        }
        if (distribution == "normal") return jr::normal(key, shape, dt) * jnp::sqrt(variance);
        return jr::uniform(key, shape, dt, -1.0, 1.0) * jnp::sqrt(3 * variance);
      },
      dtype);
}

Initializer glorot_uniform(Axes in_axis, Axes out_axis, Axes batch_axis, DType dtype) {
  return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype);
}
Initializer glorot_normal(Axes in_axis, Axes out_axis, Axes batch_axis, DType dtype) {
  return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype);
}
Initializer lecun_uniform(Axes in_axis, Axes out_axis, Axes batch_axis, DType dtype) {
  return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype);
}
Initializer lecun_normal(Axes in_axis, Axes out_axis, Axes batch_axis, DType dtype) {
  return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype);
}
Initializer he_uniform(Axes in_axis, Axes out_axis, Axes batch_axis, DType dtype) {
  return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype);
}
Initializer he_normal(Axes in_axis, Axes out_axis, Axes batch_axis, DType dtype) {
  return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype);
}

// ---- orthogonal ----

Initializer orthogonal(double scale, int64_t column_axis, DType dtype) {
  return Initializer(
      [scale, column_axis](const Array& key, const Shape& shape, DType dt) {
        require_floating("orthogonal", dt);
        if (shape.size() < 2)
          throw ValueError(str("[initializers::orthogonal] requires at least a 2-D shape, got ",
                               shape_tuple(shape)));
        const int64_t rank = int64_t(shape.size());
        const int64_t n_cols = dim_at("orthogonal", "column_axis", shape, column_axis);
        if (shape.numel() == 0)
          throw ValueError(str("[initializers::orthogonal] the shape ", shape_tuple(shape),
                               " has a zero-size dim; an orthogonal matrix needs positive sizes"));
        const int64_t n_rows = shape.numel() / n_cols;
        // A tall matrix: its Q has orthonormal columns; a wide one is drawn transposed.
        const bool wide = n_rows < n_cols;
        const Array a = jr::normal(key, wide ? Shape{n_cols, n_rows} : Shape{n_rows, n_cols}, dt);
        auto [q, r] = jnp::linalg::qr(a);
        // Householder QR leaves the signs of R's diagonal arbitrary; making them positive
        // makes Q uniformly (Haar) distributed.
        q = q * jnp::sign(jnp::diag(r));
        if (wide) q = q.T();
        const int64_t col = column_axis < 0 ? column_axis + rank : column_axis;
        Shape rows_then_col;
        for (int64_t i = 0; i < rank; ++i)
          if (i != col) rows_then_col.push_back(shape[size_t(i)]);
        rows_then_col.push_back(n_cols);
        q = jnp::moveaxis(jnp::reshape(q, rows_then_col), -1, col);
        return (jnp::scalar(scale, dt) * q).astype(dt);
      },
      dtype);
}

Initializer delta_orthogonal(double scale, int64_t column_axis, DType dtype) {
  return Initializer(
      [scale, column_axis](const Array& key, const Shape& shape, DType dt) {
        require_floating("delta_orthogonal", dt);
        const size_t rank = shape.size();
        if (rank < 3 || rank > 5)
          throw ValueError(str("[initializers::delta_orthogonal] requires a 3-D, 4-D or 5-D "
                               "shape (a convolution kernel, spatial dims first), got ",
                               shape_tuple(shape)));
        const int64_t fan_in = shape[rank - 2], fan_out = shape[rank - 1];
        if (fan_out < fan_in)
          throw ValueError(str("[initializers::delta_orthogonal] fan_in (shape[-2] = ", fan_in,
                               ") must be less than or equal to fan_out (shape[-1] = ", fan_out,
                               ") for shape ", shape_tuple(shape)));
        const Array ortho = orthogonal(scale, column_axis, dt)(key, Shape{fan_in, fan_out});
        // The orthogonal matrix goes at the kernel's spatial center ((k - 1) // 2 per dim).
        std::vector<IndexArg> center;
        for (size_t i = 0; i + 2 < rank; ++i) {
          const int64_t k = shape[i];
          center.emplace_back(k >= 1 ? (k - 1) / 2 : int64_t(-1));
        }
        center.emplace_back(jx::ellipsis);
        return AtRef(jnp::zeros(shape, dt), std::move(center)).set(ortho);
      },
      dtype);
}

}  // namespace jx::nn::initializers
