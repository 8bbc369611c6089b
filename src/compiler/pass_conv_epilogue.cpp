// Convolution epilogues: a bias add and a relu that follow a convolution are folded into
// its call, which oneDNN applies as it writes the output (a bias and an eltwise post-op),
// instead of writing the convolution's result and reading it back for each op:
//   c = conv_general_dilated[...] x w;  d = add c b                -> d = conv_general_dilated[...] x w b
//   c = conv_general_dilated[...] x w (b);  e = max c 0.0          -> e = conv_general_dilated[... activation=relu] x w (b)
// The bias is one value per output feature: a vector broadcast along the output's
// feature dim (broadcast_in_dim), or an array of the output's rank whose other dims are 1
// (the size-1 broadcasting of jx's elementwise primitives). A step folds only a result
// nothing else reads (relu's derivative reads the pre-activation value, so a training
// step keeps the bias and leaves the relu to a fused kernel). The replaced convolution is
// left for DCE. The fused form exists only here: make_jaxpr never shows it, and autodiff
// and vmap never see it (ops/conv.cpp rejects it there).
#include <cmath>

#include "compiler/passes.h"
#include "ops/conv.h"

namespace jx::compiler {
namespace {

using ops::Prim;

class EpilogueFuser {
 public:
  explicit EpilogueFuser(const ir::Jaxpr& j) : out_(j), producers_(j), uses_(j.avals.size(), 0), producer_(j.avals.size(), -1) {
    for (size_t i = 0; i < j.eqns.size(); ++i) {
      for (const ir::Atom& a : j.eqns[i].inputs)
        if (a.is_var()) ++uses_[size_t(a.var)];
      for (int v : j.eqns[i].outputs) producer_[size_t(v)] = int(i);
    }
    for (const ir::Atom& a : j.outvars)
      if (a.is_var()) uses_[size_t(a.var)] += 2;  // a returned value is always kept
  }

  ir::Jaxpr run() {
    for (size_t i = 0; i < out_.eqns.size(); ++i) {
      const ir::Eqn& e = out_.eqns[i];
      if (e.outputs.size() != 1 || e.inputs.size() != 2) continue;
      if (e.prim == Prim::Add) fold_bias(i);
      else if (e.prim == Prim::Max) fold_relu(i);
    }
    return std::move(out_);
  }

 private:
  ir::Jaxpr out_;
  passes::Producers producers_;
  std::vector<int> uses_, producer_;

  // The convolution equation that produced `a` and whose result only the equation being
  // rewritten reads, or nullptr.
  const ir::Eqn* sole_conv(const ir::Atom& a) const {
    if (!a.is_var() || uses_[size_t(a.var)] != 1 || producer_[size_t(a.var)] < 0) return nullptr;
    const ir::Eqn& c = out_.eqns[size_t(producer_[size_t(a.var)])];
    return c.prim == Prim::ConvGeneralDilated && c.outputs.size() == 1 ? &c : nullptr;
  }

  // The bias operand for a convolution output of type `out` with its feature dim at `f`.
  std::optional<ir::Atom> bias_of(const ir::Atom& b, const ir::Aval& out, int64_t f) const {
    if (!b.is_var()) return std::nullopt;
    const ir::Aval& ba = out_.avals[size_t(b.var)];
    if (ba.dtype != out.dtype || ba.shape.size() != out.shape.size()) return std::nullopt;
    bool vector_like = ba.shape[size_t(f)] == out.shape[size_t(f)];
    for (size_t i = 0; i < ba.shape.size(); ++i) vector_like = vector_like && (int64_t(i) == f || ba.shape[i] == 1);
    if (vector_like) return b;
    const ir::Eqn* e = producer_[size_t(b.var)] >= 0 ? &out_.eqns[size_t(producer_[size_t(b.var)])] : nullptr;
    if (!e || e->prim != Prim::BroadcastInDim || e->inputs.size() != 1 || !e->inputs[0].is_var() ||
        e->params.ints("broadcast_dimensions") != std::vector<int64_t>{f})
      return std::nullopt;
    const ir::Aval& va = out_.avals[size_t(e->inputs[0].var)];
    if (va.dtype != out.dtype || va.shape.size() != 1 || va.shape[0] != out.shape[size_t(f)])
      return std::nullopt;
    return e->inputs[0];
  }

  void fold_bias(size_t i) {
    const ir::Eqn& e = out_.eqns[i];
    const ir::Aval& result = out_.avals[size_t(e.outputs[0])];
    for (int side : {0, 1}) {
      const ir::Eqn* c = sole_conv(e.inputs[size_t(side)]);
      if (!c || c->inputs.size() != 2 || c->params.has("activation")) continue;
      if (!(out_.aval_of(e.inputs[size_t(side)]) == result)) continue;
      const int64_t f = ops::conv_args(c->params).dimension_numbers.out_spec[1];
      std::optional<ir::Atom> bias = bias_of(e.inputs[size_t(1 - side)], result, f);
      if (!bias) continue;
      ir::Eqn fused = *c;
      fused.inputs.push_back(*bias);
      fused.outputs = e.outputs;
      out_.eqns[i] = std::move(fused);
      return;
    }
  }

  // max(x, -0.0) keeps -0.0 where relu writes 0: only +0 qualifies.
  bool is_positive_zero(const ir::Atom& a) const {
    std::optional<Array> v = producers_.splat_value(a);
    if (!v || v->dtype() == DType::Bool) return false;
    const double d = v->to_vector<double>()[0];
    return d == 0.0 && !std::signbit(d);
  }

  void fold_relu(size_t i) {
    const ir::Eqn& e = out_.eqns[i];
    const ir::Aval& result = out_.avals[size_t(e.outputs[0])];
    for (int side : {0, 1}) {
      const ir::Eqn* c = sole_conv(e.inputs[size_t(side)]);
      if (!c || c->params.has("activation") || !(out_.aval_of(e.inputs[size_t(side)]) == result))
        continue;
      if (!is_positive_zero(e.inputs[size_t(1 - side)])) continue;
      ir::Eqn fused = *c;
      fused.params.set("activation", std::string("relu"));
      fused.outputs = e.outputs;
      out_.eqns[i] = std::move(fused);
      return;
    }
  }
};

}  // namespace

ir::Jaxpr fuse_conv_epilogues(const ir::Jaxpr& j) { return EpilogueFuser(j).run(); }

}  // namespace jx::compiler
