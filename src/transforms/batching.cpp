#include "transforms/batching.h"

#include "ops/batching.h"
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
  BatchTrace(Trace* parent, int64_t size) : Trace(parent), size_(size) {}
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
    if (!any) return bind_with(parent(), p, vals, params);
    const ops::PrimitiveInfo& pi = ops::info(p);
    if (!pi.batch)
      throw ValueError(str("[vmap] batching of '", ops::name(p), "' is not implemented in jx yet"));
    std::pair<Arrays, std::vector<int>> r;
    {
      CurrentTraceGuard g(parent());
      r = pi.batch(vals, dims, params);
    }
    Arrays outs;
    for (size_t i = 0; i < r.first.size(); ++i) outs.push_back(wrap(r.first[i], r.second[i]));
    return outs;
  }

 private:
  int64_t size_;
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
                                                   const std::vector<int>& in_dims, int64_t size) {
  JX_CHECK(args.size() == in_dims.size(), "vmap: ", args.size(), " args, ", in_dims.size(), " dims");
  auto trace = std::make_shared<BatchTrace>(current_trace(), size);
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
  auto [trace, outs] = run(f, args, in_dims, size);
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
                 const std::function<std::vector<int>(size_t)>& out_dims, int64_t axis_size) {
  int64_t size = infer_size(args, in_dims, axis_size);
  auto [trace, outs] = run(f, args, in_dims, size);
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
