// bind: the one entry point through which every primitive is applied. With no active
// transformation it evaluates eagerly: abstract eval, allocate outputs, run the kernel.
// The transformation issues add the trace stack here (DESIGN section 2).
#pragma once
#include <span>

#include "ops/primitive.h"

namespace jx {

ops::Arrays bind(ops::Prim p, std::span<const Array> in, const ops::Params& params = {});
Array bind1(ops::Prim p, std::span<const Array> in, const ops::Params& params = {});
inline Array bind1(ops::Prim p, std::initializer_list<Array> in, const ops::Params& params = {}) {
  return bind1(p, std::span<const Array>(in.begin(), in.size()), params);
}

// Eager evaluation, used by bind and by the eval interpreter.
ops::Arrays eval_primitive(ops::Prim p, std::span<const Array> in, const ops::Params& params);

}  // namespace jx
