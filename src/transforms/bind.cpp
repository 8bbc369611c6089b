#include "transforms/bind.h"

#include "core/array_impl.h"

namespace jx {

namespace {

void check_inputs(ops::Prim p, std::span<const Array> in) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].valid())
      throw ValueError(str("[", ops::name(p), "] operand ", i,
                           " is an empty jx::Array (default-constructed); give it a value first"));
  }
}

}  // namespace

ops::Arrays eval_primitive(ops::Prim p, std::span<const Array> in, const ops::Params& params) {
  const ops::PrimitiveInfo& pi = ops::info(p);
  check_inputs(p, in);
  ops::Avals in_avals;
  in_avals.reserve(in.size());
  for (const Array& a : in) {
    if (!a.is_concrete())
      throw InternalError(str("jx internal error: eager ", pi.name, " got a traced operand"));
    in_avals.push_back(ops::aval_of(a));
  }
  ops::Avals out_avals = pi.abstract_eval(in_avals, params);
  ops::Arrays out;
  out.reserve(out_avals.size());
  for (const ops::Aval& av : out_avals) out.push_back(detail::empty_array(av.shape, av.dtype, av.weak));
  pi.impl(in, out, params);
  return out;
}

ops::Arrays bind(ops::Prim p, std::span<const Array> in, const ops::Params& params) {
  return eval_primitive(p, in, params);
}

Array bind1(ops::Prim p, std::span<const Array> in, const ops::Params& params) {
  ops::Arrays out = bind(p, in, params);
  JX_CHECK(out.size() == 1, ops::name(p), " has ", out.size(), " outputs");
  return std::move(out[0]);
}

}  // namespace jx
