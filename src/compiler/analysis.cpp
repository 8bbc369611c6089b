// Cost analysis of a compiled program (jx/aot.h, JAX's Compiled.cost_analysis()), counted
// per equation as XLA's HloCostAnalysis counts HLO ops, then summed per step of the plan:
//   - elementwise arithmetic, comparisons, selects: one flop per output element;
//     exp, log, tanh, logistic, sin, cos, tan, sqrt, rsqrt, cbrt, pow, atan2, erf and kin:
//     one transcendental per element instead; casts, copies and iota: nothing;
//   - dot_general: 2 flops per output element and contracted index (a multiply and an add);
//   - conv_general_dilated: 2 flops per output element and kernel tap that falls on the
//     input (taps on padding or between dilated input elements do not count, as in XLA);
//   - reductions and cumulative ops: one flop per input element; windowed reductions: one
//     per output element and window element; scatter-add and kin: one per update;
//   - threefry2x32: its 20 rounds of add, rotate and xor and 5 key injections, about 115
//     integer ops per output pair (XLA sees them as separate ops);
//   - layout and data movement (reshape, broadcast, transpose, slice, pad, gather, sort,
//     ...): nothing;
//   - scan: its body's count times its length; while: cond and body once (the trip count
//     is not known ahead of time, as in XLA); cond: its most expensive branch.
// Bytes accessed are what a step reads and writes in memory: its distinct input and output
// values (for a loop, its operands and results, not its body's traffic).
#include <algorithm>

#include "compiler/executable.h"
#include "ops/common.h"
#include "ops/conv.h"
#include "ops/primitive.h"
#include "support/str.h"

namespace jx::compiler {
namespace {

using ops::Aval;
using ops::Prim;

struct Count {
  double flops = 0, transcendentals = 0;
  Count& operator+=(const Count& o) {
    flops += o.flops;
    transcendentals += o.transcendentals;
    return *this;
  }
};

constexpr double kThreefryOpsPerPair = 20 * 5 + 5 * 3;

bool transcendental(Prim p) {
  switch (p) {
    case Prim::Exp: case Prim::Exp2: case Prim::Log: case Prim::Log1p: case Prim::Expm1:
    case Prim::Tanh: case Prim::Logistic: case Prim::Sin: case Prim::Cos: case Prim::Tan:
    case Prim::Asin: case Prim::Acos: case Prim::Atan: case Prim::Sinh: case Prim::Cosh:
    case Prim::Asinh: case Prim::Acosh: case Prim::Atanh: case Prim::Sqrt: case Prim::Rsqrt:
    case Prim::Cbrt: case Prim::Pow: case Prim::Atan2: case Prim::Lgamma: case Prim::Digamma:
    case Prim::Erf: case Prim::Erfc: case Prim::ErfInv: case Prim::Igamma: case Prim::Igammac:
    case Prim::IgammaGradA: case Prim::RegularizedIncompleteBeta: case Prim::Zeta:
    case Prim::Polygamma: case Prim::BesselI0e: case Prim::BesselI1e:
      return true;
    default:
      return false;
  }
}

bool moves_data_only(Prim p) {
  switch (p) {
    case Prim::ConvertElementType: case Prim::BitcastConvertType: case Prim::Copy: case Prim::Iota:
    case Prim::StopGradient:
      return true;
    default:
      return false;
  }
}

double numel(const Aval& a) { return double(a.shape.numel()); }

// Kernel taps of one spatial dim that land on an input element, summed over the outputs.
double valid_taps(int64_t in, int64_t out, int64_t window, int64_t stride, int64_t lhs_dil,
                  int64_t rhs_dil, int64_t pad_lo) {
  const int64_t last = (in - 1) * lhs_dil;  // the dilated input spans [0, last]
  double n = 0;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < window; ++k) {
      const int64_t pos = o * stride + k * rhs_dil - pad_lo;
      if (pos >= 0 && pos <= last && pos % lhs_dil == 0) n += 1;
    }
  return n;
}

double conv_flops(const Aval& lhs, const Aval& rhs, const Aval& out, const ops::Params& params) {
  const ops::ConvArgs a = ops::conv_args(params);
  const auto& dn = a.dimension_numbers;
  double taps = 1, out_spatial = 1;
  for (size_t d = 2; d < dn.lhs_spec.size(); ++d) {
    const size_t i = d - 2;
    const int64_t o = out.shape[size_t(dn.out_spec[d])];
    out_spatial *= double(o);
    taps *= valid_taps(lhs.shape[size_t(dn.lhs_spec[d])], o, rhs.shape[size_t(dn.rhs_spec[d])],
                       a.window_strides[i], a.lhs_dilation[i], a.rhs_dilation[i], a.padding[i].first);
  }
  // Each (batch, feature) output row reads the kernel's input features at every valid tap.
  const double rows = numel(out) / std::max(out_spatial, 1.0);
  const double in_features = double(rhs.shape[size_t(dn.rhs_spec[1])]);
  return 2 * rows * in_features * taps;
}

Count jaxpr_count(const ir::Jaxpr& j);

Count sub_jaxprs_count(const ops::Params& params, bool most_expensive_only) {
  Count total;
  for (const auto& [key, value] : params.items()) {
    const auto* obj = std::get_if<std::shared_ptr<const ops::ParamObject>>(&value);
    if (!obj || !*obj) continue;
    const auto* js = dynamic_cast<const ir::JaxprsParam*>(obj->get());
    if (!js) continue;
    for (const auto& sub : js->jaxprs) {
      Count c = jaxpr_count(*sub);
      if (!most_expensive_only) {
        total += c;
      } else if (c.flops + c.transcendentals > total.flops + total.transcendentals) {
        total = c;
      }
    }
  }
  return total;
}

Count eqn_count(const ir::Jaxpr& j, const ir::Eqn& e) {
  if (e.outputs.empty()) return {};  // debug_callback
  std::vector<Aval> in;
  for (const ir::Atom& a : e.inputs) in.push_back(a.is_var() ? j.avals[size_t(a.var)] : ops::aval_of(a.literal));
  const Aval& out = j.avals[size_t(e.outputs.at(0))];
  Count c;
  switch (e.prim) {
    case Prim::DotGeneral: {
      double contracted = 1;
      for (int64_t d : e.params.ints("lhs_contracting")) contracted *= double(in[0].shape[size_t(d)]);
      c.flops = 2 * numel(out) * contracted;
      return c;
    }
    case Prim::ConvGeneralDilated:
      c.flops = conv_flops(in[0], in[1], out, e.params);
      return c;
    case Prim::ReduceSum: case Prim::ReduceProd: case Prim::ReduceMax: case Prim::ReduceMin:
    case Prim::ReduceAnd: case Prim::ReduceOr: case Prim::ReduceXor: case Prim::Argmax:
    case Prim::Argmin: case Prim::Cumsum: case Prim::Cumprod: case Prim::Cummax: case Prim::Cummin:
      c.flops = numel(in[0]);
      return c;
    case Prim::Cumlogsumexp:
      c.flops = numel(in[0]);
      c.transcendentals = 2 * numel(in[0]);  // an exp and a log per element
      return c;
    case Prim::ReduceWindowSum: case Prim::ReduceWindowMax: case Prim::ReduceWindowMin:
    case Prim::ReduceWindow: case Prim::SelectAndScatterAdd: case Prim::SelectAndGatherAdd: {
      double window = 1;
      for (int64_t w : e.params.ints("window_dimensions")) window *= double(w);
      // select_and_scatter_add's output is the operand; its work is per source element.
      const Aval& per = e.prim == Prim::SelectAndScatterAdd ? in[0] : out;
      c.flops = numel(per) * window;
      return c;
    }
    case Prim::ScatterAdd: case Prim::ScatterMul: case Prim::ScatterMin: case Prim::ScatterMax:
      c.flops = numel(in.back());  // the updates
      return c;
    case Prim::Threefry2x32:
      c.flops = numel(out) * kThreefryOpsPerPair;
      return c;
    case Prim::Scan: {
      Count body = sub_jaxprs_count(e.params, false);
      const double length = double(e.params.i("length"));
      c.flops = body.flops * length;
      c.transcendentals = body.transcendentals * length;
      return c;
    }
    case Prim::Cond:
      return sub_jaxprs_count(e.params, true);
    default:
      break;
  }
  const ops::FusionKind kind = ops::info(e.prim).fusion;
  if (kind == ops::FusionKind::Control) return sub_jaxprs_count(e.params, false);
  if (kind != ops::FusionKind::Elementwise || moves_data_only(e.prim)) return c;
  (transcendental(e.prim) ? c.transcendentals : c.flops) = numel(out);
  return c;
}

Count jaxpr_count(const ir::Jaxpr& j) {
  Count c;
  for (const ir::Eqn& e : j.eqns) c += eqn_count(j, e);
  return c;
}

double value_bytes(const ir::Jaxpr& j, int var) {
  const Aval& a = j.avals[size_t(var)];
  return numel(a) * double(itemsize(a.dtype));
}

// Distinct vars a library step reads (literal operands are immediates, not memory).
std::vector<int> library_inputs(const ir::Eqn& e) {
  std::vector<int> vars;
  for (const ir::Atom& a : e.inputs)
    if (a.is_var() && std::find(vars.begin(), vars.end(), a.var) == vars.end()) vars.push_back(a.var);
  return vars;
}

}  // namespace

CostAnalysis cost_analysis(const Program& p) {
  const ir::Jaxpr& j = p.jaxpr;
  // describe() has one line per step, in step order.
  const std::string lines = describe(j, p.plan);
  size_t start = 0;
  CostAnalysis r;
  for (const FusedStep& fs : p.plan.steps) {
    StepCost s;
    const size_t nl = lines.find('\n', start);
    s.step = lines.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? lines.size() : nl + 1;
    Count c;
    for (int ei : fs.eqns) c += eqn_count(j, j.eqns[size_t(ei)]);
    s.flops = c.flops;
    s.transcendentals = c.transcendentals;
    const ir::Eqn& first = j.eqns[size_t(fs.eqns.at(0))];
    const std::vector<int> ins = fs.is_kernel ? fs.inputs : library_inputs(first);
    const std::vector<int>& outs = fs.is_kernel ? fs.outputs : first.outputs;
    for (int v : ins) s.bytes_accessed += value_bytes(j, v);
    for (int v : outs) s.bytes_accessed += value_bytes(j, v);
    r.flops += s.flops;
    r.transcendentals += s.transcendentals;
    r.bytes_accessed += s.bytes_accessed;
    r.steps.push_back(std::move(s));
  }
  return r;
}

}  // namespace jx::compiler
