// Family: jit's call primitive `pjit` (JAX's jit_p) and its rules. Operands are
// [consts..., args...] of the held jaxpr (param `jaxpr`, closed over nothing); param `name`
// names the jitted function. Every rule transforms the held jaxpr as a whole (jvp_jaxpr,
// linearize split, transpose_jaxpr, batch_jaxpr) and binds pjit again on the result, so
// the transformed program is itself compiled. Transformed jaxprs and executables are
// memoized in the jit cache by the source jaxpr's identity, so grad(jit(f)) in a loop
// traces and compiles once.
#include <algorithm>
#include <cstdio>

#include "compiler/passes.h"
#include "jit/cache.h"
#include "jit/internal.h"
#include "jx/config.h"
#include "jx/lax.h"
#include "ops/batching.h"
#include "ops/collective.h"
#include "ops/common.h"
#include "transforms/ad.h"
#include "transforms/bind.h"
#include "transforms/jaxpr_transforms.h"
#include "transforms/staging.h"

namespace jx::jit_detail {

using JaxprPtr = std::shared_ptr<const ir::Jaxpr>;

namespace {

const JaxprPtr& held_jaxpr(const ops::Params& p) { return p.obj<ir::JaxprsParam>("jaxpr").jaxprs.at(0); }
const std::string& held_name(const ops::Params& p) { return p.s("name"); }

// ---- memoized transformations ----

struct CompiledEntry : Entry {
  std::shared_ptr<const compiler::Executable> exe;
  int64_t size = 0;
  int64_t bytes() const { return size; }
};

// A transformed jaxpr (closed over nothing) and the values of its leading const invars.
struct TracedEntry : Entry {
  JaxprPtr jaxpr;
  Arrays consts;
  std::vector<bool> out_batched;  // Batch only
  JaxprPtr tangents_only;         // Jvp only: the same invars, the tangent outputs only
  void set(tr::TracedJaxpr t) {
    jaxpr = std::make_shared<const ir::Jaxpr>(std::move(t.jaxpr));
    consts = std::move(t.consts);
  }
  int64_t bytes() const {
    return program_bytes(*jaxpr) + arrays_bytes(consts) + (tangents_only ? program_bytes(*tangents_only) : 0);
  }
};

// Linearize split of a jaxpr at its nonzero-tangent inputs (JAX's direct linearize):
//   known:   [known consts..., primals...] -> [primal outs..., residuals...]
//   unknown: [residuals..., nonzero tangents...] -> [tangents of outs out_index...]
struct LinearizeEntry : Entry {
  JaxprPtr known, unknown;
  Arrays known_consts;
  std::vector<int> out_index;
  size_t num_res = 0;
  int64_t bytes() const {
    return program_bytes(*known) + program_bytes(*unknown) + arrays_bytes(known_consts);
  }
};

CacheKey memo_key(EntryKind kind, const JaxprPtr& j, std::vector<bool> mask = {}, int64_t extra = 0) {
  CacheKey k;
  k.kind = kind;
  k.jaxpr = j;
  k.mask = std::move(mask);
  k.extra = extra;
  k.finish();
  return k;
}

// The entry for `key`, filled once by fill(entry) with no trace current (so nothing of the
// caller's transformations leaks into the memoized program).
template <class E, class Fill>
std::shared_ptr<E> memo(const CacheKey& key, Fill fill) {
  JitCache& cache = JitCache::get();
  std::shared_ptr<E> e = cache.get_or_create<E>(key, false);
  try {
    std::call_once(e->filled, [&] {
      tr::CurrentTraceGuard g(nullptr);
      fill(*e);
      cache.set_bytes(key, e.get(), e->bytes());
    });
  } catch (...) {
    cache.erase(key, e.get());
    throw;
  }
  return e;
}

// ---- NaN search for debug_nans ----

bool has_nan(const Array& x) {
  if (!is_floating(x.dtype()) || x.size() == 0) return false;
  std::vector<int64_t> axes;
  for (int i = 0; i < x.ndim(); ++i) axes.push_back(i);
  return lax::reduce_or(lax::ne(x, x), axes).item<bool>();
}

// Evaluates j op by op (eagerly, nested pjit calls included) and sets *found to the name
// of the first primitive whose output holds a NaN; returns j's outputs.
Arrays eval_finding_nan(const ir::Jaxpr& j, std::span<const Array> args, std::string* found) {
  std::vector<Array> env(j.avals.size());
  for (size_t i = 0; i < j.constvars.size(); ++i) env[size_t(j.constvars[i])] = j.consts[i];
  for (size_t i = 0; i < j.invars.size(); ++i) env[size_t(j.invars[i])] = args[i];
  auto read = [&](const ir::Atom& a) { return a.is_var() ? env[size_t(a.var)] : a.literal; };
  Arrays in;
  for (const ir::Eqn& e : j.eqns) {
    in.clear();
    for (const ir::Atom& a : e.inputs) in.push_back(read(a));
    Arrays out = e.prim == ops::Prim::Pjit ? eval_finding_nan(*held_jaxpr(e.params), in, found)
                                           : eval_primitive(e.prim, in, e.params);
    if (!found->empty()) return {};
    for (const Array& o : out)
      if (has_nan(o)) {
        *found = ops::name(e.prim);
        return {};
      }
    for (size_t k = 0; k < out.size(); ++k) env[size_t(e.outputs[k])] = std::move(out[k]);
  }
  Arrays outs;
  for (const ir::Atom& a : j.outvars) outs.push_back(read(a));
  return outs;
}

// ---- the rules ----

ops::Avals pjit_abstract_eval(std::span<const ops::Aval> in, const ops::Params& p) {
  const ir::Jaxpr& j = *held_jaxpr(p);
  JX_CHECK(in.size() == j.invars.size(), "pjit: ", in.size(), " operands for ", j.invars.size(),
           " invars");
  for (size_t i = 0; i < in.size(); ++i) {
    const ops::Aval& want = j.avals[size_t(j.invars[i])];
    JX_CHECK(in[i].shape == want.shape && in[i].dtype == want.dtype, "pjit: operand ", i, " is ",
             ops::aval_str(in[i]), " but the jaxpr takes ", ops::aval_str(want));
  }
  return j.out_avals();
}

void pjit_impl(std::span<const Array> in, std::span<Array> out, const ops::Params& p) {
  tr::CurrentTraceGuard g(nullptr);
  const JaxprPtr& j = held_jaxpr(p);
  auto exe = compiled(j, held_name(p));
  Arrays r = run_checked(*exe, in, *j, in, held_name(p));
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::move(r[i]);
}

std::pair<Arrays, Arrays> pjit_jvp_only(std::span<const Array> primals, std::span<const Array> tangents,
                                        const ops::Params& p) {
  const JaxprPtr& j = held_jaxpr(p);
  std::vector<bool> nz;
  for (const Array& t : tangents) nz.push_back(t.valid());
  size_t m = j->outvars.size();
  auto e = memo<TracedEntry>(memo_key(EntryKind::Jvp, j, nz), [&](TracedEntry& t) {
    t.set(tr::jvp_jaxpr(*j, nz));
    ir::Jaxpr tan = *t.jaxpr;
    tan.outvars.erase(tan.outvars.begin(), tan.outvars.begin() + long(m));
    t.tangents_only = std::make_shared<const ir::Jaxpr>(compiler::eliminate_dead_code(tan));
  });
  Arrays ops_in = e->consts;
  ops_in.insert(ops_in.end(), primals.begin(), primals.end());
  for (const Array& t : tangents)
    if (t.valid()) ops_in.push_back(t);
  if (dynamic_cast<tr::StagingTrace*>(tr::current_trace())) {
    // Staged (into a jit, or a loop body that scan/cond/while will partially evaluate for
    // reverse mode): a primal pjit on the primals alone and a tangent pjit, so that partial
    // evaluation sees primal outputs that do not depend on tangents (JAX's pjit partial
    // eval rule splits the call the same way). The compiler inlines both calls and CSE
    // shares the primal work they repeat.
    Arrays po = bind_pjit(j, held_name(p), primals);
    Arrays to = bind_pjit(e->tangents_only, held_name(p), ops_in);
    return {std::move(po), std::move(to)};
  }
  Arrays outs = bind_pjit(e->jaxpr, held_name(p), ops_in);
  Arrays po(outs.begin(), outs.begin() + long(m)), to(outs.begin() + long(m), outs.end());
  return {std::move(po), std::move(to)};
}

void fill_linearize(LinearizeEntry& e, const ir::Jaxpr& j, const std::vector<bool>& nz) {
  ir::Jaxpr linear;
  tr::TracedJaxpr known = tr::trace_to_jaxpr(
      [&](const Arrays& xs) {
        Arrays nz_primals;
        for (size_t i = 0; i < xs.size(); ++i)
          if (nz[i]) nz_primals.push_back(xs[i]);
        tr::FlatFn g = [&](const Arrays& ys) {
          Arrays all = xs;
          size_t k = 0;
          for (size_t i = 0; i < xs.size(); ++i)
            if (nz[i]) all[i] = ys[k++];
          return ir::eval_jaxpr(j, all);
        };
        tr::Linearized lin = tr::linearize_flat(g, nz_primals);
        e.out_index = lin.out_index;
        e.num_res = lin.linear.consts.size();
        Arrays outs = lin.primals_out;
        outs.insert(outs.end(), lin.linear.consts.begin(), lin.linear.consts.end());
        linear = std::move(lin.linear);
        return outs;
      },
      j.in_avals());
  // The residuals (the linear jaxpr's constants) become its leading invars.
  linear.invars.insert(linear.invars.begin(), linear.constvars.begin(), linear.constvars.end());
  linear.constvars.clear();
  linear.consts.clear();
  e.known = std::make_shared<const ir::Jaxpr>(std::move(known.jaxpr));
  e.known_consts = std::move(known.consts);
  e.unknown = std::make_shared<const ir::Jaxpr>(std::move(linear));
}

std::pair<Arrays, Arrays> pjit_full_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                                        const ops::Params& p, bool linearize) {
  if (!linearize) return pjit_jvp_only(primals, tangents, p);
  // Reverse mode: the primal half runs now as one pjit (on the parent trace: none of its
  // operands belong to the current tangent trace); the tangent half is a second pjit that
  // the tangent trace stages into the linear jaxpr.
  const JaxprPtr& j = held_jaxpr(p);
  std::vector<bool> nz;
  for (const Array& t : tangents) nz.push_back(t.valid());
  auto e = memo<LinearizeEntry>(memo_key(EntryKind::Linearize, j, nz),
                                [&](LinearizeEntry& le) { fill_linearize(le, *j, nz); });
  Arrays known_in = e->known_consts;
  known_in.insert(known_in.end(), primals.begin(), primals.end());
  Arrays known_out = bind_pjit(e->known, held_name(p), known_in);
  size_t m = j->outvars.size();
  Arrays primal_out(known_out.begin(), known_out.begin() + long(m));
  Arrays unknown_in(known_out.begin() + long(m), known_out.end());
  for (const Array& t : tangents)
    if (t.valid()) unknown_in.push_back(t);
  Arrays lin_out = bind_pjit(e->unknown, held_name(p), unknown_in);
  Arrays tangent_out(m);
  for (size_t k = 0; k < e->out_index.size(); ++k) tangent_out[size_t(e->out_index[k])] = lin_out[k];
  return {std::move(primal_out), std::move(tangent_out)};
}

Arrays pjit_transpose(std::span<const Array> cts, std::span<const Array> inputs,
                      std::span<const ops::Aval> in_avals, std::span<const bool> linear,
                      const ops::Params& p) {
  const JaxprPtr& j = held_jaxpr(p);
  std::vector<bool> mask(linear.begin(), linear.end());
  auto e = memo<TracedEntry>(memo_key(EntryKind::Transpose, j, mask),
                             [&](TracedEntry& t) { t.set(tr::transpose_jaxpr(*j, mask)); });
  Arrays ops_in = e->consts;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!mask[i]) ops_in.push_back(inputs[i]);
  std::vector<ops::Aval> out_avals = j->out_avals();
  for (size_t k = 0; k < out_avals.size(); ++k) ops_in.push_back(tr::instantiate(cts[k], out_avals[k]));
  Arrays r = bind_pjit(e->jaxpr, held_name(p), ops_in);
  Arrays result(inputs.size());
  size_t k = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (mask[i]) result[i] = r[k++];
  return result;
}

ops::batching::BatchResult pjit_batch(std::span<const Array> in, std::span<const int> dims,
                                      const ops::Params& p) {
  using ops::batching::kNotMapped;
  const JaxprPtr& j = held_jaxpr(p);
  int64_t size = ops::batching::axis_size(in, dims);
  std::vector<bool> batched;
  Arrays args;
  for (size_t i = 0; i < in.size(); ++i) {
    batched.push_back(dims[i] != kNotMapped);
    args.push_back(dims[i] == kNotMapped ? in[i] : ops::batching::move_bdim(in[i], dims[i], 0));
  }
  // A vmap with an axis name batches collectives over that name differently: key on it.
  int64_t key_extra = size;
  if (const std::string& axis = ops::collective::rule_axis().name; !axis.empty())
    key_extra ^= int64_t(std::hash<std::string>()(axis) | 1) << 24;
  auto e = memo<TracedEntry>(memo_key(EntryKind::Batch, j, batched, key_extra), [&](TracedEntry& t) {
    auto [traced, out_batched] = tr::batch_jaxpr(*j, size, batched, {});
    t.set(std::move(traced));
    t.out_batched = std::move(out_batched);
  });
  Arrays ops_in = e->consts;
  ops_in.insert(ops_in.end(), args.begin(), args.end());
  Arrays outs = bind_pjit(e->jaxpr, held_name(p), ops_in);
  std::vector<int> out_dims;
  for (bool b : e->out_batched) out_dims.push_back(b ? 0 : kNotMapped);
  return {std::move(outs), std::move(out_dims)};
}

}  // namespace

// ---- shared helpers (jit/internal.h) ----

int64_t program_bytes(const ir::Jaxpr& j) {
  // Equations and variables, and the constants the program holds; a compiled executable
  // is assumed to cost about as much again.
  return 2 * (int64_t(j.eqns.size()) * 256 + int64_t(j.avals.size()) * 64) + arrays_bytes(j.consts);
}

int64_t arrays_bytes(std::span<const Array> xs) {
  int64_t n = 0;
  for (const Array& x : xs)
    if (x.valid()) n += int64_t(x.nbytes());
  return n;
}

std::string avals_list(std::span<const ops::Aval> avals) {
  std::string s = "(";
  for (size_t i = 0; i < avals.size(); ++i) {
    s += i ? ", " : "";
    s += ops::aval_str(avals[i]);
  }
  return s + ")";
}

std::shared_ptr<const compiler::Executable> compile_counted(const ir::Jaxpr& j,
                                                            const compiler::CompileOptions& opts,
                                                            const std::string& why) {
  JitCache::get().count_compile();
  if (config::log_compiles) {
    std::string line = str("[jit] compiling '", opts.name, "' for ", avals_list(j.in_avals()), ": ", why, "\n");
    std::fputs(line.c_str(), stderr);
  }
  return compiler::compile(j, opts);
}

std::shared_ptr<const compiler::Executable> compiled(const JaxprPtr& j, const std::string& name) {
  auto e = memo<CompiledEntry>(memo_key(EntryKind::Compiled, j), [&](CompiledEntry& c) {
    compiler::CompileOptions opts;
    opts.name = name;
    c.exe = compile_counted(*j, opts, "a pjit call (nested in a jaxpr or made by grad/vmap/jvp)");
    c.size = program_bytes(*j);
  });
  return e->exe;
}

Arrays run_checked(const compiler::Executable& exe, std::span<const Array> args, const ir::Jaxpr& j,
                   std::span<const Array> rerun_args, const std::string& name) {
  tr::CurrentTraceGuard g(nullptr);
  Arrays outs = exe.run(args);
  if (!config::debug_nans) return outs;
  if (std::none_of(outs.begin(), outs.end(), has_nan)) return outs;
  std::string prim;
  eval_finding_nan(j, rerun_args, &prim);
  if (prim.empty())
    throw FloatingPointError(str(
        "[jit] debug_nans: invalid value (nan) in the outputs of '", name,
        "', but rerunning it op by op produced none; the compiled program's optimizations may "
        "differ numerically (or an input already held a NaN that was passed through); check "
        "with jx::config::disable_jit"));
  throw FloatingPointError(str("[jit] debug_nans: invalid value (nan) produced by '", prim, "' in ",
                               name));
}

Arrays bind_pjit(const JaxprPtr& j, const std::string& name, std::span<const Array> operands) {
  ops::Params p;
  p.set("jaxpr", std::shared_ptr<const ops::ParamObject>(
                     std::make_shared<ir::JaxprsParam>(std::vector<JaxprPtr>{j})));
  p.set("name", name);
  return bind(ops::Prim::Pjit, operands, p);
}

}  // namespace jx::jit_detail

namespace jx::ops {

void register_debug_callback();  // jit/debug.cpp

void register_jit() {
  PrimitiveInfo& p = mutable_info(Prim::Pjit);
  p.abstract_eval = jit_detail::pjit_abstract_eval;
  p.impl = jit_detail::pjit_impl;
  p.full_jvp = jit_detail::pjit_full_jvp;
  p.transpose = jit_detail::pjit_transpose;
  p.batch = jit_detail::pjit_batch;
  register_debug_callback();
}

}  // namespace jx::ops
