// jx::lax's collectives (include/jx/parallel.h): argument checks at trace time, then the
// primitives of ops/collective.h.
#include "jx/lax.h"
#include "jx/parallel.h"
#include "ops/collective.h"
#include "support/str.h"

namespace jx::lax {
namespace {

namespace cl = ops::collective;

const cl::NamedAxis& bound(const char* op, const std::string& name) {
  const cl::NamedAxis* a = cl::find_axis(name);
  if (!a)
    throw ValueError(str("[", op, "] unbound axis name '", name, "' (bound here: ", cl::bound_axes_text(),
                         "); call it inside jx::pmap(f, {.axis_name = \"", name, "\"}) or jx::vmap(f, {.axis_name = \"",
                         name, "\"})"));
  return *a;
}

// An axis of x (negative counts from the end of `rank` positions).
int64_t axis_in(const char* op, const char* what, int64_t axis, int64_t rank, const Array& x) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw IndexError(str("[", op, "] ", what, " ", axis, " is out of range for ", type_str(x.dtype(), x.shape()),
                         " (valid: ", -rank, "..", rank - 1, ")"));
  return a;
}

}  // namespace

Array psum(const Array& x, const std::string& axis_name) {
  bound("psum", axis_name);
  return cl::psum(x.dtype() == DType::Bool ? convert_element_type(x, DType::Int32) : x, axis_name);
}

Array pmean(const Array& x, const std::string& axis_name) {
  const int64_t n = bound("pmean", axis_name).size;
  // JAX: psum(x) / psum(1), a true division (integers give float32).
  Array v = is_floating(x.dtype()) ? x : convert_element_type(x, DType::Float32);
  Array s = cl::psum(v, axis_name);
  return div(s, broadcast_in_dim(convert_element_type(Array(double(n)), v.dtype()), s.shape(), {}));
}

Array pmax(const Array& x, const std::string& axis_name) {
  bound("pmax", axis_name);
  return cl::pmax(x, axis_name);
}

Array pmin(const Array& x, const std::string& axis_name) {
  bound("pmin", axis_name);
  return cl::pmin(x, axis_name);
}

Array all_gather(const Array& x, const std::string& axis_name, int64_t axis, bool tiled) {
  const int64_t n = bound("all_gather", axis_name).size;
  const int64_t a = axis_in("all_gather", "axis", axis, x.ndim() + (tiled ? 0 : 1), x);
  return cl::all_gather(x, axis_name, n, a, tiled);
}

Array psum_scatter(const Array& x, const std::string& axis_name, int64_t scatter_dimension, bool tiled) {
  const int64_t n = bound("psum_scatter", axis_name).size;
  const int64_t d = axis_in("psum_scatter", "scatter_dimension", scatter_dimension, x.ndim(), x);
  return cl::reduce_scatter(x, axis_name, n, d, tiled);
}

Array all_to_all(const Array& x, const std::string& axis_name, int64_t split_axis, int64_t concat_axis,
                 bool tiled) {
  const int64_t n = bound("all_to_all", axis_name).size;
  const int64_t s = axis_in("all_to_all", "split_axis", split_axis, x.ndim(), x);
  const int64_t c = axis_in("all_to_all", "concat_axis", concat_axis, x.ndim(), x);
  return cl::all_to_all(x, axis_name, n, s, c, tiled);
}

Array ppermute(const Array& x, const std::string& axis_name,
               const std::vector<std::pair<int64_t, int64_t>>& perm) {
  const int64_t n = bound("ppermute", axis_name).size;
  std::vector<int64_t> flat;
  for (auto [src, dst] : perm) {
    if (src < 0 || src >= n || dst < 0 || dst >= n)
      throw IndexError(str("[ppermute] pair (", src, ", ", dst, ") names a replica outside 0..", n - 1,
                           " of axis '", axis_name, "'"));
    flat.push_back(src);
    flat.push_back(dst);
  }
  return cl::ppermute(x, axis_name, flat);
}

Array axis_index(const std::string& axis_name) {
  bound("axis_index", axis_name);
  return cl::axis_index(axis_name);
}

int64_t axis_size(const std::string& axis_name) { return bound("axis_size", axis_name).size; }

}  // namespace jx::lax
