#include "transforms/batching.h"

#include <optional>

#include "ops/batching.h"
#include "ops/collective.h"
#include "ops/common.h"
#include "transforms/bind.h"

namespace jx::tr {
namespace {

using ops::batching::kNotMapped;

class BatchTracer : public TracerBase {
 public:
  BatchTracer(std::shared_ptr<Trace> t, Array v, int d)
      : TracerBase(std::move(t)), val(std::move(v)), bdim(d) {}
  Array val;
  int bdim;
};

Aval unbatched_aval(const Array& v, int bdim) {
  Aval a = ops::aval_of(v);
  a.shape.erase(size_t(bdim));
  return a;
}

class BatchTrace : public Trace, public std::enable_shared_from_this<BatchTrace> {
 public:
  BatchTrace(Trace* parent, int64_t size, std::string axis_name)
      : Trace(parent), size_(size), axis_name_(std::move(axis_name)) {}
  const char* kind() const override { return "vmap"; }
  int64_t size() const { return size_; }

  Array wrap(const Array& v, int bdim) {
    if (bdim == kNotMapped) return v;
    return make_tracer_array(unbatched_aval(v, bdim),
                             std::make_shared<BatchTracer>(shared_from_this(), v, bdim));
  }
  std::pair<Array, int> unwrap(const Array& x) {
    if (auto* t = tracer_of<BatchTracer>(x, this)) return {t->val, t->bdim};
    return {x, kNotMapped};
  }

  Arrays process_primitive(Prim p, std::span<const Array> in, const Params& params) override {
    Arrays vals;
    std::vector<int> dims;
    bool any = false;
    for (const Array& x : in) {
      auto [v, d] = unwrap(x);
      vals.push_back(std::move(v));
      dims.push_back(d);
      any = any || d != kNotMapped;
    }
    const ops::PrimitiveInfo& pi = ops::info(p);
    // A collective over this trace's axis name depends on the batch even with no batched
    // operand (axis_index has none), so its rule always runs.
    if (!any && !pi.collective) return bind_with(parent(), p, vals, params);
    if (!pi.batch)
      throw ValueError(str("[vmap] batching of '", ops::name(p), "' is not implemented in jx yet"));
    std::pair<Arrays, std::vector<int>> r;
    {
      CurrentTraceGuard g(parent());
      ops::collective::RuleAxisScope axis(axis_name_, size_);
      r = pi.batch(vals, dims, params);
    }
    Arrays outs;
    for (size_t i = 0; i < r.first.size(); ++i) outs.push_back(wrap(r.first[i], r.second[i]));
    return outs;
  }

 private:
  int64_t size_;
  std::string axis_name_;  // empty: no named axis
};

int64_t infer_size(const Arrays& args, const std::vector<int>& in_dims, int64_t axis_size) {
  int64_t size = axis_size;
  for (size_t i = 0; i < args.size(); ++i) {
    if (in_dims[i] == kNotMapped) continue;
    int64_t n = args[i].shape()[size_t(in_dims[i])];
    if (size >= 0 && n != size)
      throw ValueError(str("[vmap] got inconsistent sizes for the mapped axis: argument leaf ", i,
                           " of type ", type_str(args[i].dtype(), args[i].shape()),
                           " has size ", n, " along axis ", in_dims[i], ", but ",
                           axis_size >= 0 ? "axis_size is " : "an earlier argument has ", size,
                           "; every mapped argument must have the same size along its in_axes"));
    size = n;
  }
  if (size < 0)
    throw ValueError("[vmap] needs axis_size when no argument is mapped (all in_axes are none)");
  return size;
}

std::pair<std::shared_ptr<BatchTrace>, Arrays> run(const FlatFn& f, const Arrays& args,
                                                   const std::vector<int>& in_dims, int64_t size,
                                                   const std::string& axis_name) {
  JX_CHECK(args.size() == in_dims.size(), "vmap: ", args.size(), " args, ", in_dims.size(), " dims");
  auto trace = std::make_shared<BatchTrace>(current_trace(), size, axis_name);
  Arrays in;
  for (size_t i = 0; i < args.size(); ++i) {
    int d = in_dims[i];
    if (d != kNotMapped && (d < 0 || d >= args[i].ndim()))
      throw IndexError(str("[vmap] in_axes ", d, " is out of range for argument leaf ", i,
                           " of type ", type_str(args[i].dtype(), args[i].shape()),
                           "; give an axis below the argument's rank, or jx::none to not map it"));
    in.push_back(trace->wrap(args[i], d));
  }
  Arrays outs;
  {
    CurrentTraceGuard g(trace.get());
    // While f is traced its collectives may name the axis (and pmean asks its size).
    std::optional<ops::collective::AxisScope> named;
    if (!axis_name.empty()) named.emplace(ops::collective::NamedAxis{axis_name, size, -1, nullptr});
    outs = f(in);
  }
  trace->deactivate();
  return {trace, std::move(outs)};
}

}  // namespace

std::pair<Arrays, std::vector<int>> vmap_flat_dims(const FlatFn& f, const Arrays& args,
                                                   const std::vector<int>& in_dims,
                                                   int64_t axis_size) {
  int64_t size = infer_size(args, in_dims, axis_size);
  // Called by the batching rules of higher-order primitives: their bodies are batched over
  // the axis of the vmap whose rule is running, so collectives inside keep its name.
  const ops::collective::RuleAxis& rule = ops::collective::rule_axis();
  auto [trace, outs] = run(f, args, in_dims, size, rule.size == size ? rule.name : std::string());
  Arrays vals;
  std::vector<int> dims;
  for (const Array& o : outs) {
    auto [v, d] = trace->unwrap(o);
    vals.push_back(std::move(v));
    dims.push_back(d);
  }
  return {std::move(vals), std::move(dims)};
}

Arrays vmap_flat(const FlatFn& f, const Arrays& args, const std::vector<int>& in_dims,
                 const std::function<std::vector<int>(size_t)>& out_dims, int64_t axis_size,
                 const std::string& axis_name) {
  int64_t size = infer_size(args, in_dims, axis_size);
  auto [trace, outs] = run(f, args, in_dims, size, axis_name);
  std::vector<int> want = out_dims(outs.size());
  JX_CHECK(want.size() == outs.size(), "vmap: out_dims has ", want.size(), " entries for ",
           outs.size(), " outputs");
  Arrays result;
  for (size_t i = 0; i < outs.size(); ++i) {
    auto [v, d] = trace->unwrap(outs[i]);
    if (want[i] == kOutNone) {
      if (d != kNotMapped)
        throw ValueError(str("[vmap] output leaf ", i, " has out_axes none but depends on a mapped "
                             "input (it is batched along its axis ", d,
                             "); give it an integer out_axes, or make it independent of the "
                             "mapped inputs"));
      result.push_back(v);
      continue;
    }
    int64_t rank = v.ndim() + (d == kNotMapped ? 1 : 0);
    int to = want[i] < 0 ? int(want[i] + rank) : want[i];
    if (to < 0 || to >= rank)
      throw IndexError(str("[vmap] out_axes ", want[i], " is out of range for output leaf ", i,
                           " of rank ", rank - 1, " (batched rank ", rank, "); valid out_axes are ", -rank,
                           "..", rank - 1));
    result.push_back(ops::batching::materialize_at(v, d, size, to));
  }
  return result;
}

}  // namespace jx::tr
