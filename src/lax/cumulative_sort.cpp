#include "jx/lax.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::lax {

using ops::Prim;

namespace {

Array cumulative(Prim p, const Array& x, int64_t axis, bool reverse) {
  int64_t a = ops::canonical_axis(ops::name(p), axis, x.ndim());
  return bind1(p, {x}, {{"axis", a}, {"reverse", reverse}});
}

}  // namespace

Array cumsum(const Array& x, int64_t axis, bool reverse) {
  return cumulative(Prim::Cumsum, x, axis, reverse);
}
Array cumprod(const Array& x, int64_t axis, bool reverse) {
  return cumulative(Prim::Cumprod, x, axis, reverse);
}
Array cummax(const Array& x, int64_t axis, bool reverse) {
  return cumulative(Prim::Cummax, x, axis, reverse);
}
Array cummin(const Array& x, int64_t axis, bool reverse) {
  return cumulative(Prim::Cummin, x, axis, reverse);
}
Array cumlogsumexp(const Array& x, int64_t axis, bool reverse) {
  return cumulative(Prim::Cumlogsumexp, x, axis, reverse);
}

std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension, bool is_stable,
                        int64_t num_keys) {
  if (operands.empty()) throw ValueError("[sort] needs at least one operand");
  int64_t d = ops::canonical_axis("sort", dimension, operands[0].ndim());
  return bind(Prim::Sort, operands,
              {{"dimension", d}, {"is_stable", is_stable}, {"num_keys", num_keys}});
}

Array sort(const Array& x, int64_t dimension, bool is_stable) {
  return sort(std::vector<Array>{x}, dimension, is_stable, 1)[0];
}

}  // namespace jx::lax
