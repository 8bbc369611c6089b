// jx::checkify: the checking interpreter (JAX's checkify_jaxpr).
//
// checkify traces f to a jaxpr, then evaluates the jaxpr equation by equation under the
// current trace (eagerly, into an enclosing jit, under vmap), adding after each equation
// the checks its primitive calls for. The error state is two values: `code` (int32, 0 = no
// error, else 1 + the index of the failed check's message in the table) and `payload`
// (float64[8], the values the message shows); a check only writes them if no earlier
// check failed, so the first failure in program order wins.
//
// Sub-jaxprs are rewritten to return their own error (codes numbered in a table of their
// own), which the caller merges into its state by offsetting the codes: pjit (memoized by
// the source jaxpr, so checkify(jit(f)) compiles once), cond branches, and checkpoint
// bodies. Loop bodies (while, scan) take the error as an extra carry. custom_jvp /
// custom_vjp calls keep their rules: the call is bound unchanged and its function is
// evaluated a second time, for the checks only.
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "core/array_impl.h"
#include "jx/lax.h"
#include "ops/common.h"
#include "ops/indexing.h"
#include "support/str.h"
#include "transforms/bind.h"
#include "jit/checkify_internal.h"
#include "transforms/jaxpr_transforms.h"

namespace jx::checkify::detail {
namespace {

using ops::Arrays;
using ops::Aval;
using ops::Prim;

// ---- constants (concrete arrays: no equation is bound to make them) ----

Array constant(DType t, const Shape& s, const std::vector<double>& vals) {
  Array a = jx::detail::empty_array(s, t);
  const size_t n = size_t(a.size());
  auto fill = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for (size_t i = 0; i < n; ++i) p[i] = T(vals.size() == 1 ? vals[0] : vals[i]);
  };
  switch (t) {
    case DType::Bool:
      fill(jx::detail::data<bool>(a));
      break;
    case DType::Int8:
      fill(jx::detail::data<int8_t>(a));
      break;
    case DType::Int16:
      fill(jx::detail::data<int16_t>(a));
      break;
    case DType::Int32:
      fill(jx::detail::data<int32_t>(a));
      break;
    case DType::Int64:
      fill(jx::detail::data<int64_t>(a));
      break;
    case DType::UInt8:
      fill(jx::detail::data<uint8_t>(a));
      break;
    case DType::UInt16:
      fill(jx::detail::data<uint16_t>(a));
      break;
    case DType::UInt32:
      fill(jx::detail::data<uint32_t>(a));
      break;
    case DType::UInt64:
      fill(jx::detail::data<uint64_t>(a));
      break;
    case DType::Float32:
      fill(jx::detail::data<float>(a));
      break;
    case DType::Float64:
      fill(jx::detail::data<double>(a));
      break;
    default:
      JX_CHECK(false, "checkify: no constants of dtype ", dtype_name(t));
  }
  return a;
}

std::vector<Aval> avals_of(std::span<const Array> xs) {
  std::vector<Aval> r;
  for (const Array& x : xs) r.push_back(ops::aval_of(x));
  return r;
}

Array zero_code() { return constant(DType::Int32, Shape{}, {0}); }
Array zero_payload() { return constant(DType::Float64, Shape{kPayload}, {0}); }
Aval code_aval() { return Aval{Shape{}, DType::Int32, false}; }
Aval payload_aval() { return Aval{Shape{kPayload}, DType::Float64, false}; }

// A constant of x's rank with size-1 dims (lax's elementwise ops take equal ranks).
Array scalar_like(const Array& x, double v) {
  return constant(x.dtype(), Shape(size_t(x.ndim()), 1), {v});
}

Array any_true(const Array& mask) {
  if (mask.ndim() == 0) return mask;
  std::vector<int64_t> axes;
  for (int i = 0; i < mask.ndim(); ++i) axes.push_back(i);
  return lax::reduce_or(mask, axes);
}

Array as_f64_1(const Array& scalar) {
  return lax::reshape(lax::convert_element_type(scalar, DType::Float64), Shape{1});
}

// [parts..., zeros...] as float64[kPayload]; parts are float64[1].
Array pack(std::vector<Array> parts) {
  const int64_t rest = kPayload - int64_t(parts.size());
  if (rest > 0) parts.push_back(constant(DType::Float64, Shape{rest}, {0}));
  return lax::concatenate(parts, 0);
}

std::string types_str(std::span<const Array> xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i)
    s += str(i ? ", " : "", type_str(xs[i].dtype(), xs[i].shape()));
  return s;
}

bool nan_checked(Prim p) {
  switch (p) {  // JAX's checkify.nan_primitives, with jx's names
    case Prim::Exp:
    case Prim::Exp2:
    case Prim::Log:
    case Prim::Log1p:
    case Prim::Expm1:
    case Prim::Tanh:
    case Prim::Logistic:
    case Prim::Sin:
    case Prim::Cos:
    case Prim::Tan:
    case Prim::Asin:
    case Prim::Acos:
    case Prim::Atan:
    case Prim::Sinh:
    case Prim::Cosh:
    case Prim::Asinh:
    case Prim::Acosh:
    case Prim::Atanh:
    case Prim::Sqrt:
    case Prim::Rsqrt:
    case Prim::Cbrt:
    case Prim::Square:
    case Prim::IntegerPow:
    case Prim::Lgamma:
    case Prim::Digamma:
    case Prim::Erf:
    case Prim::Erfc:
    case Prim::ErfInv:
    case Prim::Igamma:
    case Prim::Igammac:
    case Prim::IgammaGradA:
    case Prim::RegularizedIncompleteBeta:
    case Prim::BesselI0e:
    case Prim::BesselI1e:
    case Prim::Add:
    case Prim::Sub:
    case Prim::Mul:
    case Prim::Div:
    case Prim::Rem:
    case Prim::Pow:
    case Prim::Max:
    case Prim::Min:
    case Prim::Atan2:
    case Prim::Nextafter:
    case Prim::ReduceSum:
    case Prim::ReduceProd:
    case Prim::ReduceMax:
    case Prim::ReduceMin:
    case Prim::Cumsum:
    case Prim::Cumprod:
    case Prim::Cummax:
    case Prim::Cummin:
    case Prim::Cumlogsumexp:
    case Prim::DotGeneral:
    case Prim::ConvGeneralDilated:
    case Prim::Scatter:
    case Prim::ScatterAdd:
    case Prim::ScatterMul:
    case Prim::ScatterMin:
    case Prim::ScatterMax:
      return true;
    default:
      return false;
  }
}

// ---- memoized checked pjit programs ----

struct CheckedProgram {
  std::weak_ptr<const ir::Jaxpr> source;
  std::shared_ptr<const ir::Jaxpr> jaxpr;  // [consts..., args...] -> [code, payload, outs...]
  Arrays consts;
  Table table;  // empty: nothing to check, call the source unchanged
};

class ProgramCache {
 public:
  static ProgramCache& get() {
    static ProgramCache* c = new ProgramCache();  // never destroyed: used during exit
    return *c;
  }
  std::shared_ptr<const CheckedProgram> find(const std::shared_ptr<const ir::Jaxpr>& src,
                                             uint32_t bits) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(Key{src.get(), bits});
    if (it == map_.end()) return nullptr;
    auto locked = it->second->source.lock();
    if (locked != src) {  // a dead program's address reused
      map_.erase(it);
      return nullptr;
    }
    return it->second;
  }
  void put(const std::shared_ptr<const ir::Jaxpr>& src, uint32_t bits,
           std::shared_ptr<const CheckedProgram> p) {
    std::lock_guard<std::mutex> g(mu_);
    if (map_.size() >= next_sweep_) {
      for (auto it = map_.begin(); it != map_.end();)
        it = it->second->source.expired() ? map_.erase(it) : std::next(it);
      next_sweep_ = std::max<size_t>(256, 2 * map_.size());
    }
    map_[Key{src.get(), bits}] = std::move(p);
  }

 private:
  struct Key {
    const ir::Jaxpr* j;
    uint32_t bits;
    bool operator==(const Key& o) const { return j == o.j && bits == o.bits; }
  };
  struct Hash {
    size_t operator()(const Key& k) const { return std::hash<const void*>()(k.j) * 31 + k.bits; }
  };
  std::mutex mu_;
  std::unordered_map<Key, std::shared_ptr<const CheckedProgram>, Hash> map_;
  size_t next_sweep_ = 256;
};

// ---- the interpreter ----

class Checker {
 public:
  Checker(ErrorSet errors, Table& table, Array code, Array payload)
      : code(std::move(code)), payload(std::move(payload)), errors_(errors), table_(table) {}

  Arrays run(const ir::Jaxpr& j, std::span<const Array> args) {
    JX_CHECK(args.size() == j.invars.size(), "checkify: ", args.size(), " args for ",
             j.invars.size(), " invars");
    std::vector<Array> env(j.avals.size());
    for (size_t i = 0; i < j.constvars.size(); ++i) env[size_t(j.constvars[i])] = j.consts[i];
    for (size_t i = 0; i < j.invars.size(); ++i) env[size_t(j.invars[i])] = args[i];
    auto read = [&](const ir::Atom& a) { return a.is_var() ? env[size_t(a.var)] : a.literal; };
    Arrays in;
    for (const ir::Eqn& e : j.eqns) {
      in.clear();
      for (const ir::Atom& a : e.inputs) in.push_back(read(a));
      Arrays out = apply(e, in);
      for (size_t k = 0; k < out.size() && k < e.outputs.size(); ++k)
        env[size_t(e.outputs[k])] = std::move(out[k]);
    }
    Arrays outs;
    for (const ir::Atom& a : j.outvars) outs.push_back(read(a));
    return outs;
  }

  Array code, payload;

 private:
  // Records a check that fails where `failed` (a bool scalar) is true.
  void add(const Array& failed, Entry entry, const Array& pl = Array()) {
    table_.push_back(std::move(entry));
    const int k = int(table_.size());
    set_if(failed, constant(DType::Int32, Shape{}, {double(k)}), pl);
  }

  // Merges the error a sub-program returned (codes numbered in `sub`).
  void merge(const Array& sub_code, const Array& sub_payload, const Table& sub) {
    if (sub.empty()) return;
    const int base = int(table_.size());
    table_.insert(table_.end(), sub.begin(), sub.end());
    Array zero = constant(DType::Int32, Shape{}, {0});
    set_if(lax::ne(sub_code, zero),
           lax::add(sub_code, constant(DType::Int32, Shape{}, {double(base)})), sub_payload);
  }

  // Eagerly, once a check has failed the later ones cannot change the error: skip them.
  bool decided() const { return code.is_concrete() && code.item<int32_t>() != 0; }

  // code, payload = new_code, pl where `failed` and no earlier check failed. Concrete
  // values (eagerly) are decided here, so an eager check costs its predicate only.
  void set_if(const Array& failed, const Array& new_code, const Array& pl) {
    const bool code_known = code.is_concrete();
    if (code_known && code.item<int32_t>() != 0) return;  // an earlier check failed
    if (code_known && failed.is_concrete()) {
      if (!failed.item<bool>()) return;
      code = new_code;
      if (pl.valid()) payload = pl;
      return;
    }
    Array fresh =
        code_known ? failed
                   : lax::bitwise_and(failed, lax::eq(code, constant(DType::Int32, Shape{}, {0})));
    code = lax::select(fresh, new_code, code);
    if (pl.valid()) payload = lax::select(lax::reshape(fresh, Shape{1}), pl, payload);
  }

  Arrays apply(const ir::Eqn& e, const Arrays& in) {
    switch (e.prim) {
      case Prim::Pjit:
        return pjit_rule(e, in);
      case Prim::Cond:
        return cond_rule(e, in);
      case Prim::While:
        return while_rule(e, in);
      case Prim::Scan:
        return scan_rule(e, in);
      case Prim::Remat:
        return remat_rule(e, in);
      case Prim::CustomJvpCall:
      case Prim::CustomVjpCall: {
        // The call keeps its rules; its function runs a second time for the checks. User
        // checks are taken out of the call (that run reports them).
        const ir::Jaxpr& fn = ir::jaxpr_of(e.params, "call_jaxpr");
        ir::Jaxpr stripped = fn;
        std::erase_if(stripped.eqns, [](const ir::Eqn& q) {
          return q.prim == Prim::DebugCallback && find_check(q.params) != nullptr;
        });
        ops::Params params = e.params;
        if (stripped.eqns.size() != fn.eqns.size())
          params.set("call_jaxpr", ir::jaxpr_param(std::move(stripped)));
        Arrays outs = bind(e.prim, in, params);
        if (!decided()) run(fn, in);
        return outs;
      }
      case Prim::DebugCallback:
        if (std::shared_ptr<const CheckInfo> c = find_check(e.params)) {
          if (errors_.has(user_checks) && !decided()) user_check(*c, in);
          return {};
        }
        break;
      default:
        reject_unknown_subprograms(e);
        break;
    }
    Arrays outs = bind(e.prim, in, e.params);
    if (decided()) return outs;
    if (errors_.has(index_checks)) {
      switch (e.prim) {
        case Prim::DynamicSlice:
          dynamic_slice_check(in, e.params);
          break;
        case Prim::DynamicUpdateSlice:
          dynamic_update_slice_check(in);
          break;
        case Prim::Gather:
          gather_check(in, e.params);
          break;
        case Prim::Scatter:
        case Prim::ScatterAdd:
        case Prim::ScatterMul:
        case Prim::ScatterMin:
        case Prim::ScatterMax:
          scatter_check(e.prim, in, e.params);
          break;
        default:
          break;
      }
    }
    if (errors_.has(div_checks) && (e.prim == Prim::Div || e.prim == Prim::Rem) &&
        !is_floating(in[1].dtype()))
      div_check(e.prim, in);
    if (errors_.has(nan_checks) && nan_checked(e.prim)) nan_check(e.prim, in, outs);
    return outs;
  }

  // A primitive holding sub-jaxprs that no rule above rewrites: its checks would be skipped
  // silently, so checkify refuses it.
  static void reject_unknown_subprograms(const ir::Eqn& e) {
    for (const auto& kv : e.params.items()) {
      const auto* obj = std::get_if<std::shared_ptr<const ops::ParamObject>>(&kv.second);
      if (obj && *obj && dynamic_cast<const ir::JaxprsParam*>(obj->get()))
        throw ValueError(
            str("[checkify] the primitive '", ops::name(e.prim), "' holds a sub-program (param '",
                kv.first,
                "') that checkify cannot check yet (it checks jit, cond, while_loop, "
                "scan, checkpoint, custom_jvp and custom_vjp); call it outside the checkified "
                "function"));
    }
  }

  // ---- the checks ----

  void nan_check(Prim p, const Arrays& in, const Arrays& outs) {
    Array failed;
    for (const Array& o : outs) {
      if (!is_floating(o.dtype())) continue;
      Array f = any_true(lax::ne(o, o));
      failed = failed.valid() ? lax::bitwise_or(failed, f) : f;
    }
    if (!failed.valid()) return;
    add(failed, Entry{escape_braces(str("nan generated by primitive: ", ops::name(p), " (",
                                        types_str(in), " -> ", types_str(outs), ")")),
                      {}});
  }

  void div_check(Prim p, const Arrays& in) {
    const Array& y = in[1];
    add(any_true(lax::eq(y, scalar_like(y, 0))),
        Entry{escape_braces(str("division by zero in integer ", ops::name(p), " of ",
                                type_str(in[0].dtype(), in[0].shape()), " by ",
                                type_str(y.dtype(), y.shape()))),
              {}});
  }

  // idx: integer indices whose last dim (size K) indexes operand axes dims_map[k]; upper:
  // the largest valid start per k. Fails where any index is below 0 or above its bound;
  // the payload shows the first such index, its axis and that axis's size (JAX's
  // oob_payload).
  void oob_check(const char* prim, Array idx, const std::vector<int64_t>& dims_map,
                 const std::vector<int64_t>& upper, const Shape& operand_shape) {
    const size_t K = dims_map.size();
    // Narrow or unsigned indices compare as int64, so that every bound is representable.
    if (idx.dtype() != DType::Int32 && idx.dtype() != DType::Int64)
      idx = lax::convert_element_type(idx, DType::Int64);
    if (K == 0 || idx.size() == 0) return;
    JX_CHECK(idx.ndim() > 0 && idx.shape()[size_t(idx.ndim() - 1)] == int64_t(K),
             "checkify: ", prim, " indices ", type_str(idx.dtype(), idx.shape()), " for ", K,
             " indexed axes");
    Shape bshape(size_t(idx.ndim()), 1);
    bshape[bshape.size() - 1] = int64_t(K);
    std::vector<double> up(upper.begin(), upper.end());
    Array too_big = lax::gt(idx, constant(idx.dtype(), bshape, up));
    Array mask = lax::bitwise_or(lax::lt(idx, scalar_like(idx, 0)), too_big);
    const int64_t n = idx.size();
    Array i = lax::argmax(lax::reshape(lax::convert_element_type(mask, DType::Int32), Shape{n}), 0,
                          DType::Int32);
    Array value = lax::dynamic_slice(lax::reshape(idx, Shape{n}), {i}, {1}, false);
    std::vector<double> axes, sizes;
    for (int64_t d : dims_map) {
      axes.push_back(double(d));
      sizes.push_back(double(operand_shape[size_t(d)]));
    }
    Array axis = constant(DType::Float64, Shape{int64_t(K)}, axes);
    Array size = constant(DType::Float64, Shape{int64_t(K)}, sizes);
    if (K > 1) {  // the axis of the failing index: its position in the index vector
      Array k = lax::rem(i, constant(DType::Int32, Shape{}, {double(K)}));
      axis = lax::dynamic_slice(axis, {k}, {1}, false);
      size = lax::dynamic_slice(size, {k}, {1}, false);
    }
    Array pl = pack({lax::convert_element_type(value, DType::Float64), axis, size});
    std::string fmt =
        str(escape_braces(str("out-of-bounds indexing in ", prim, " for array of shape ",
                              list_str(operand_shape.vec()), ": index ")),
            "{0} is out of bounds for axis {1} with size {2}.");
    add(any_true(mask), Entry{std::move(fmt), {DType::Int64, DType::Int64, DType::Int64}}, pl);
  }

  // Scalar start indices as one int64 vector (JAX: jnp.array(start_indices)).
  static Array stack_starts(std::span<const Array> starts) {
    std::vector<Array> parts;
    for (const Array& s : starts)
      parts.push_back(lax::reshape(lax::convert_element_type(s, DType::Int64), Shape{1}));
    return lax::concatenate(parts, 0);
  }

  void dynamic_slice_check(const Arrays& in, const ops::Params& p) {
    const Array& x = in[0];
    if (x.ndim() == 0) return;
    const std::vector<int64_t>& sizes = p.ints("slice_sizes");
    std::vector<int64_t> dims, upper;
    for (int d = 0; d < x.ndim(); ++d) {
      dims.push_back(d);
      upper.push_back(x.shape()[size_t(d)] - sizes[size_t(d)]);
    }
    oob_check("dynamic_slice", stack_starts(std::span<const Array>(in).subspan(1)), dims, upper,
              x.shape());
  }

  void dynamic_update_slice_check(const Arrays& in) {
    const Array& x = in[0];
    const Array& u = in[1];
    if (x.ndim() == 0) return;
    std::vector<int64_t> dims, upper;
    for (int d = 0; d < x.ndim(); ++d) {
      dims.push_back(d);
      upper.push_back(x.shape()[size_t(d)] - u.shape()[size_t(d)]);
    }
    oob_check("dynamic_update_slice", stack_starts(std::span<const Array>(in).subspan(2)), dims,
              upper, x.shape());
  }

  void gather_check(const Arrays& in, const ops::Params& p) {
    const Array& x = in[0];
    const lax::GatherDimensionNumbers& dn = p.obj<ops::GatherDnumsParam>("dimension_numbers").d;
    const std::vector<int64_t>& sizes = p.ints("slice_sizes");
    std::vector<int64_t> upper;
    for (int64_t d : dn.start_index_map) upper.push_back(x.shape()[size_t(d)] - sizes[size_t(d)]);
    oob_check("gather", in[1], dn.start_index_map, upper, x.shape());
  }

  void scatter_check(Prim prim, const Arrays& in, const ops::Params& p) {
    const Array& x = in[0];
    const Array& updates = in[2];
    const lax::ScatterDimensionNumbers& dn = p.obj<ops::ScatterDnumsParam>("dimension_numbers").d;
    auto contains = [](const std::vector<int64_t>& v, int64_t d) {
      return std::find(v.begin(), v.end(), d) != v.end();
    };
    std::vector<int64_t> slice(size_t(x.ndim()), 1);
    size_t pos = 0;
    for (int64_t i = 0; i < x.ndim(); ++i) {
      if (contains(dn.inserted_window_dims, i) || contains(dn.operand_batching_dims, i)) continue;
      if (pos < dn.update_window_dims.size())
        slice[size_t(i)] = updates.shape()[size_t(dn.update_window_dims[pos++])];
    }
    std::vector<int64_t> upper;
    for (int64_t d : dn.scatter_dims_to_operand_dims)
      upper.push_back(x.shape()[size_t(d)] - slice[size_t(d)]);
    oob_check(ops::name(prim), in[1], dn.scatter_dims_to_operand_dims, upper, x.shape());
  }

  void user_check(const CheckInfo& c, const Arrays& in) {
    Array failed = lax::bitwise_not(in[0]);
    Array pl;
    if (in.size() > 1) {
      std::vector<Array> parts;
      for (size_t i = 1; i < in.size(); ++i) parts.push_back(as_f64_1(in[i]));
      pl = pack(std::move(parts));
    }
    add(failed, c.entry, pl);
  }

  // ---- sub-programs ----

  // j checked, as a jaxpr [consts..., j's ins...] -> [code, payload, j's outs...], its
  // codes numbered in `sub`.
  tr::TracedJaxpr trace_checked(const ir::Jaxpr& j, Table& sub) {
    return tr::trace_to_jaxpr(
        [&](const Arrays& xs) {
          Checker c(errors_, sub, zero_code(), zero_payload());
          Arrays outs = c.run(j, xs);
          outs.insert(outs.begin(), {c.code, c.payload});
          return outs;
        },
        j.in_avals());
  }

  Arrays pjit_rule(const ir::Eqn& e, const Arrays& in) {
    const std::shared_ptr<const ir::Jaxpr>& src =
        e.params.obj<ir::JaxprsParam>("jaxpr").jaxprs.at(0);
    ProgramCache& cache = ProgramCache::get();
    std::shared_ptr<const CheckedProgram> prog = cache.find(src, errors_.bits);
    if (!prog) {
      auto p = std::make_shared<CheckedProgram>();
      p->source = src;
      {
        tr::CurrentTraceGuard g(nullptr);  // nothing of the caller's traces leaks into the memo
        tr::TracedJaxpr t = trace_checked(*src, p->table);
        p->jaxpr = std::make_shared<const ir::Jaxpr>(std::move(t.jaxpr));
        p->consts = std::move(t.consts);
      }
      cache.put(src, errors_.bits, p);
      prog = std::move(p);
    }
    if (prog->table.empty()) return bind(Prim::Pjit, in, e.params);
    Arrays operands = prog->consts;
    operands.insert(operands.end(), in.begin(), in.end());
    ops::Params params = e.params;
    params.set("jaxpr", std::shared_ptr<const ops::ParamObject>(std::make_shared<ir::JaxprsParam>(
                            std::vector<std::shared_ptr<const ir::Jaxpr>>{prog->jaxpr})));
    Arrays outs = bind(Prim::Pjit, operands, params);
    merge(outs[0], outs[1], prog->table);
    return Arrays(outs.begin() + 2, outs.end());
  }

  Arrays remat_rule(const ir::Eqn& e, const Arrays& in) {
    Table sub;
    tr::TracedJaxpr t = trace_checked(ir::jaxpr_of(e.params, "jaxpr"), sub);
    if (sub.empty()) return bind(e.prim, in, e.params);
    ops::Params params = e.params;
    params.set("jaxpr", ir::jaxpr_param(std::move(t.jaxpr)));
    Arrays operands = t.consts;
    operands.insert(operands.end(), in.begin(), in.end());
    // The checkpoint takes the consts as leading operands, as its traced jaxpr does.
    Arrays outs = bind(e.prim, operands, params);
    merge(outs[0], outs[1], sub);
    return Arrays(outs.begin() + 2, outs.end());
  }

  Arrays cond_rule(const ir::Eqn& e, const Arrays& in) {
    const size_t nb = ir::num_jaxprs(e.params, "branches");
    Table sub;
    std::vector<tr::TracedJaxpr> traced;
    for (size_t b = 0; b < nb; ++b)
      traced.push_back(trace_checked(ir::jaxpr_of(e.params, "branches", b), sub));
    if (sub.empty()) return bind(e.prim, in, e.params);
    // Every branch takes every branch's constants (unused invars for the others').
    std::vector<ir::Jaxpr> branches;
    Arrays operands{in[0]};
    for (const tr::TracedJaxpr& t : traced)
      operands.insert(operands.end(), t.consts.begin(), t.consts.end());
    for (size_t b = 0; b < nb; ++b) {
      ir::Jaxpr j = traced[b].jaxpr;
      const size_t own = traced[b].consts.size();
      std::vector<int> rest(j.invars.begin() + long(own), j.invars.end()), invars;
      for (size_t o = 0; o < nb; ++o) {
        if (o == b) {
          invars.insert(invars.end(), j.invars.begin(), j.invars.begin() + long(own));
          continue;
        }
        for (const Array& c : traced[o].consts) invars.push_back(j.new_var(ops::aval_of(c)));
      }
      invars.insert(invars.end(), rest.begin(), rest.end());
      j.invars = std::move(invars);
      branches.push_back(std::move(j));
    }
    operands.insert(operands.end(), in.begin() + 1, in.end());
    ops::Params params;
    params.set("branches", ir::jaxprs_param(std::move(branches)));
    Arrays outs = bind(Prim::Cond, operands, params);
    merge(outs[0], outs[1], sub);
    return Arrays(outs.begin() + 2, outs.end());
  }

  Arrays while_rule(const ir::Eqn& e, const Arrays& in) {
    const ir::Jaxpr& cj = ir::jaxpr_of(e.params, "cond_jaxpr");
    const ir::Jaxpr& bj = ir::jaxpr_of(e.params, "body_jaxpr");
    const size_t cn = size_t(e.params.i("cond_nconsts")), bn = size_t(e.params.i("body_nconsts"));
    const Arrays cc(in.begin(), in.begin() + long(cn)),
        bc(in.begin() + long(cn), in.begin() + long(cn + bn)),
        carry(in.begin() + long(cn + bn), in.end());
    // The first application of the predicate, checked here (as JAX); the body checks the
    // following ones.
    {
      Arrays a = cc;
      a.insert(a.end(), carry.begin(), carry.end());
      run(cj, a);
    }
    // body: [cond consts..., body consts..., code, payload, carry...] -> [code, payload, carry...]
    Table sub;
    std::vector<Aval> body_in = avals_of(cc);
    for (const Aval& a : avals_of(bc)) body_in.push_back(a);
    body_in.push_back(code_aval());
    body_in.push_back(payload_aval());
    for (const Aval& a : avals_of(carry)) body_in.push_back(a);
    const size_t nk = carry.size();
    tr::TracedJaxpr body = tr::trace_to_jaxpr(
        [&](const Arrays& xs) {
          Arrays ccx(xs.begin(), xs.begin() + long(cn)),
              bcx(xs.begin() + long(cn), xs.begin() + long(cn + bn));
          Checker c(errors_, sub, xs[cn + bn], xs[cn + bn + 1]);
          Arrays args = bcx;
          args.insert(args.end(), xs.begin() + long(cn + bn + 2), xs.end());
          Arrays outs = c.run(bj, args);
          Arrays pred_in = ccx;
          pred_in.insert(pred_in.end(), outs.begin(), outs.end());
          c.run(cj, pred_in);
          outs.insert(outs.begin(), {c.code, c.payload});
          return outs;
        },
        body_in);
    if (sub.empty()) return bind(e.prim, in, e.params);
    // cond: [cond consts..., code, payload, carry...] -> bool[]
    std::vector<Aval> cond_in = avals_of(cc);
    cond_in.push_back(code_aval());
    cond_in.push_back(payload_aval());
    for (const Aval& a : avals_of(carry)) cond_in.push_back(a);
    tr::TracedJaxpr cond = tr::trace_to_jaxpr(
        [&](const Arrays& xs) {
          Arrays a(xs.begin(), xs.begin() + long(cn));
          a.insert(a.end(), xs.begin() + long(cn + 2), xs.begin() + long(cn + 2 + nk));
          return ir::eval_jaxpr(cj, a);
        },
        cond_in);
    ops::Params params;
    params.set("body_jaxpr", ir::jaxpr_param(std::move(body.jaxpr)));
    params.set("body_nconsts", int64_t(body.consts.size() + cn + bn));
    params.set("cond_jaxpr", ir::jaxpr_param(std::move(cond.jaxpr)));
    params.set("cond_nconsts", int64_t(cond.consts.size() + cn));
    Arrays operands = cond.consts;
    operands.insert(operands.end(), cc.begin(), cc.end());
    operands.insert(operands.end(), body.consts.begin(), body.consts.end());
    operands.insert(operands.end(), cc.begin(), cc.end());
    operands.insert(operands.end(), bc.begin(), bc.end());
    operands.push_back(zero_code());
    operands.push_back(zero_payload());
    operands.insert(operands.end(), carry.begin(), carry.end());
    Arrays outs = bind(Prim::While, operands, params);
    merge(outs[0], outs[1], sub);
    return Arrays(outs.begin() + 2, outs.end());
  }

  Arrays scan_rule(const ir::Eqn& e, const Arrays& in) {
    const ir::Jaxpr& bj = ir::jaxpr_of(e.params, "jaxpr");
    const size_t nc = size_t(e.params.i("num_consts")), ncar = size_t(e.params.i("num_carry"));
    // body: [consts..., code, payload, carry..., x...] -> [code, payload, carry..., y...]
    std::vector<Aval> body_in = bj.in_avals();
    body_in.insert(body_in.begin() + long(nc), {code_aval(), payload_aval()});
    Table sub;
    tr::TracedJaxpr body = tr::trace_to_jaxpr(
        [&](const Arrays& xs) {
          Checker c(errors_, sub, xs[nc], xs[nc + 1]);
          Arrays args(xs.begin(), xs.begin() + long(nc));
          args.insert(args.end(), xs.begin() + long(nc + 2), xs.end());
          Arrays outs = c.run(bj, args);
          outs.insert(outs.begin(), {c.code, c.payload});
          return outs;
        },
        body_in);
    if (sub.empty()) return bind(e.prim, in, e.params);
    ops::Params params = e.params;
    params.set("jaxpr", ir::jaxpr_param(std::move(body.jaxpr)));
    params.set("num_carry", int64_t(ncar + 2));
    params.set("num_consts", int64_t(body.consts.size() + nc));
    Arrays operands = body.consts;
    operands.insert(operands.end(), in.begin(), in.begin() + long(nc));
    operands.push_back(zero_code());
    operands.push_back(zero_payload());
    operands.insert(operands.end(), in.begin() + long(nc), in.end());
    Arrays outs = bind(Prim::Scan, operands, params);
    merge(outs[0], outs[1], sub);
    return Arrays(outs.begin() + 2, outs.end());
  }

  ErrorSet errors_;
  Table& table_;
};

}  // namespace

FlatResult checkify_flat(const FlatFn& f, const std::vector<Array>& args, ErrorSet errors) {
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].valid())
      throw ValueError(str("[checkify] argument leaf ", i,
                           " is an empty jx::Array (default-constructed); give it a value first"));
  tr::TracedJaxpr t;
  {
    TracingGuard g;
    t = tr::trace_to_jaxpr(f, avals_of(args));
  }
  Table table;
  Checker c(errors, table, zero_code(), zero_payload());
  Arrays all = t.consts;
  all.insert(all.end(), args.begin(), args.end());
  Arrays outs = c.run(t.jaxpr, all);
  return FlatResult{Error(c.code, c.payload, serialize(table)), std::move(outs)};
}

}  // namespace jx::checkify::detail
