// Optax's combinators (optax/transforms/_masking.py, _combining.py, _conditionality.py,
// _accumulation.py, _freezing.py, optax/schedules/_inject.py) and optax.tree helpers,
// with Optax's state fields. Masks and labels are walked as jx::Trees together with the
// params, so that a mask may be a prefix of the params' structure, as Optax allows.
#include "jx/optim/combine.h"

#include <set>

#include "jx/control_flow.h"
#include "jx/lax.h"
#include "jx/numpy.h"
#include "support/str.h"

namespace jx::optim {

namespace jnp = jx::numpy;
using detail::field;

// ---- tree helpers ----

Tree tree_zeros_like(const Tree& t, std::optional<DType> dtype) {
  return detail::map([&](const Array& x) { return jnp::zeros_like(x, dtype); }, t);
}

Tree tree_add(const Tree& a, const Tree& b) {
  return detail::map2([](const Array& x, const Array& y) { return x + y; }, a, b);
}

Tree tree_sub(const Tree& a, const Tree& b) {
  return detail::map2([](const Array& x, const Array& y) { return x - y; }, a, b);
}

Tree tree_scale(const Array& scalar, const Tree& t) {
  return detail::map([&](const Array& x) { return scalar * x; }, t);
}

Array tree_vdot(const Tree& a, const Tree& b) {
  std::vector<Array> la = jx::tree::leaves(a);
  std::vector<Array> lb = jx::tree::detail::flatten_matching("optim.tree_vdot", jx::tree::structure(a), b, 1);
  Array sum = jnp::zeros({});
  for (size_t i = 0; i < la.size(); ++i) {
    Array v = jnp::vdot(la[i], lb[i]);
    sum = i == 0 ? v : sum + v;
  }
  return sum;
}

Array tree_l2_norm(const Tree& t, bool squared) {
  Array sum = jnp::zeros({});
  bool first = true;
  for (const Array& x : jx::tree::leaves(t)) {
    Array s = jnp::sum(jnp::square(jnp::abs(x)));
    sum = first ? s : sum + s;
    first = false;
  }
  return squared ? sum : jnp::sqrt(sum);
}

Tree tree_cast(const Tree& t, std::optional<DType> dtype) {
  if (!dtype) return t;
  return detail::map([&](const Array& x) { return x.astype(*dtype); }, t);
}

namespace {

// ---- walking a mask (or label tree) together with the params ----

std::string at_path(const std::string& path) { return path.empty() ? "the root" : "'" + path + "'"; }

bool is_mask_leaf(const Tree& m) { return m.is_leaf() || m.is_static(); }

bool mask_value(const Tree& m, const std::string& path, const char* fn) {
  if (m.is_static() && m.static_value().kind() == tree::StaticValue::Kind::Bool) return m.static_value().as_bool();
  if (m.is_leaf() && m.array().dtype() == DType::Bool && m.array().ndim() == 0) {
    if (!m.array().is_concrete())
      throw ValueError(str("[optim.", fn, "] the mask at ", at_path(path),
                           " is a traced value; a mask decides which leaves are transformed, so it must be "
                           "concrete: build it outside jit, or from the params' structure in a mask function"));
    return m.array().item<bool>();
  }
  throw ValueError(str("[optim.", fn, "] the mask at ", at_path(path), " is ", m.str(),
                       "; each mask leaf must be a bool (true: transform this leaf or subtree)"));
}

[[noreturn]] void structure_mismatch(const char* fn, const std::string& path, const Tree& mask, const Tree& t,
                                     const char* what) {
  throw ValueError(str("[optim.", fn, "] the ", what, " does not match the params at ", at_path(path), ": ", what,
                       " ", mask.str(), " vs params ", t.str(), "; give a ", what,
                       " of the params' structure, or of a prefix of it"));
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

std::string child_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "/" + key; }

// Calls f(key, mask child, tree child) for each child of the container `mask`, checking
// that `t` has the same keys (or length).
template <class F>
void for_each_child(const Tree& mask, const Tree& t, const std::string& path, const char* fn, const char* what,
                    F&& f) {
  if (mask.is_dict()) {
    if (!t.is_dict() || t.size() != mask.size()) structure_mismatch(fn, path, mask, t, what);
    for (const std::string& k : t.keys()) {
      if (!mask.contains(k)) structure_mismatch(fn, path, mask, t, what);
      f(k, mask.at(k), t.at(k), child_path(path, k));
    }
  } else if (mask.is_list()) {
    if (!t.is_list() || t.size() != mask.size()) structure_mismatch(fn, path, mask, t, what);
    for (size_t i = 0; i < t.size(); ++i) f(std::to_string(i), mask[i], t[i], child_path(path, std::to_string(i)));
  }
}

// Replaces the child `key` of a copy of container `t` (keeping its kind and struct origin).
void set_child(Tree& t, const std::string& key, Tree value) {
  if (t.is_dict()) t.insert(key, std::move(value));
  else t[std::stoul(key)] = std::move(value);
}

// `t` with the subtrees where the mask is false replaced by None (Optax's MaskedNode).
Tree mask_tree(const Tree& t, const Tree& mask, const std::string& path, const char* fn) {
  if (is_mask_leaf(mask)) return mask_value(mask, path, fn) ? t : Tree();
  if (mask.is_none()) return t;
  Tree out = t;
  for_each_child(mask, t, path, fn, "mask", [&](const std::string& k, const Tree& m, const Tree& c, const std::string& p) {
    set_child(out, k, mask_tree(c, m, p, fn));
  });
  return out;
}

// The transformed subtree where the mask is true, the original where it is false.
Tree select_tree(const Tree& mask, const Tree& transformed, const Tree& original, const std::string& path,
                 const char* fn) {
  if (is_mask_leaf(mask)) return mask_value(mask, path, fn) ? transformed : original;
  if (mask.is_none()) return original;
  Tree out = original;
  for_each_child(mask, original, path, fn, "mask", [&](const std::string& k, const Tree& m, const Tree& o, const std::string& p) {
    const Tree& tr = transformed.is_dict() ? transformed.at(k) : transformed[std::stoul(k)];
    set_child(out, k, select_tree(m, tr, o, p, fn));
  });
  return out;
}

GradientTransformation masked_impl(GradientTransformation inner, MaskFn mask_of, const char* fn) {
  return {[inner, mask_of, fn](const Tree& params) {
            const Tree mask = mask_of(params);
            return Tree{{"inner_state", inner.init(mask_tree(params, mask, "", fn))}};
          },
          [inner, mask_of, fn](const Tree& updates, const Tree& state, const Tree& params) {
            // Optax computes a callable mask from the updates here.
            const Tree mask = mask_of(updates);
            const Tree masked_params = params.is_none() ? params : mask_tree(params, mask, "", fn);
            auto [new_updates, inner_state] =
                inner.update(mask_tree(updates, mask, "", fn), field(state, "inner_state", fn), masked_params);
            return std::make_pair(select_tree(mask, new_updates, updates, "", fn),
                                  Tree{{"inner_state", std::move(inner_state)}});
          }};
}

MaskFn constant_mask(Tree mask) {
  return [mask = std::move(mask)](const Tree&) { return mask; };
}

// ---- labels ----

void collect_labels(const Tree& labels, std::set<std::string>& out) {
  if (labels.is_static() && labels.static_value().kind() == tree::StaticValue::Kind::String) {
    out.insert(labels.static_value().as_string());
  } else if (labels.is_dict() || labels.is_list()) {
    for (const Tree& c : labels.children()) collect_labels(c, out);
  } else if (!labels.is_none()) {
    throw ValueError(str("[optim.partition] a label is ", labels.str(),
                         "; labels are strings: optim::label(\"adam\"), or a function returning std::string"));
  }
}

// The mask of the leaves labelled `group`: static bools in the labels' structure.
Tree label_mask(const Tree& labels, const std::string& group) {
  if (labels.is_static()) return Tree::static_value(tree::StaticValue::boolean(labels.static_value().as_string() == group));
  Tree out = labels;
  if (labels.is_dict())
    for (const std::string& k : labels.keys()) out.insert(k, label_mask(labels.at(k), group));
  else if (labels.is_list())
    for (size_t i = 0; i < labels.size(); ++i) out[i] = label_mask(labels[i], group);
  return out;
}

Tree labels_from_paths(const Tree& t, std::vector<tree::KeyEntry>& path, const PathLabelFn& fn) {
  if (t.is_leaf()) return label(fn(tree::KeyPath(path), t.array()));
  Tree out = t;
  if (t.is_dict()) {
    for (const std::string& k : t.keys()) {
      path.push_back(tree::KeyEntry{tree::KeyEntry::Kind::Dict, k, 0});
      out.insert(k, labels_from_paths(t.at(k), path, fn));
      path.pop_back();
    }
  } else if (t.is_list()) {
    for (size_t i = 0; i < t.size(); ++i) {
      path.push_back(tree::KeyEntry{tree::KeyEntry::Kind::Index, "", int64_t(i)});
      out[i] = labels_from_paths(t[i], path, fn);
      path.pop_back();
    }
  }
  return out;
}

GradientTransformation partition_impl(LabeledTransforms transforms, LabelFn labels_of) {
  auto ts = std::make_shared<const LabeledTransforms>(std::move(transforms));
  auto check = [ts](const Tree& labels) {
    std::set<std::string> used;
    collect_labels(labels, used);
    std::set<std::string> known;
    for (const auto& [name, t] : *ts) known.insert(name);
    std::vector<std::string> missing;
    for (const std::string& l : used)
      if (!known.count(l)) missing.push_back("'" + l + "'");
    if (!missing.empty()) {
      std::vector<std::string> names;
      for (const std::string& k : known) names.push_back("'" + k + "'");
      throw ValueError(str("[optim.partition] some parameters have no transformation: labels [", join(missing),
                           "]; the transformations are for [", join(names), "]: add one for each label"));
    }
  };
  return {[ts, labels_of, check](const Tree& params) {
            const Tree labels = labels_of(params);
            check(labels);
            Tree states = Tree::dict();
            for (const auto& [group, tx] : *ts)
              states.insert(group, masked_impl(tx, constant_mask(label_mask(labels, group)), "partition").init(params));
            return Tree{{"inner_states", std::move(states)}};
          },
          [ts, labels_of](const Tree& updates, const Tree& state, const Tree& params) {
            const Tree labels = labels_of(updates);
            const Tree& inner_states = field(state, "inner_states", "partition");
            Tree u = updates;
            Tree states = Tree::dict();
            for (const auto& [group, tx] : *ts) {
              auto [next, s] = masked_impl(tx, constant_mask(label_mask(labels, group)), "partition")
                                   .update(u, field(inner_states, group.c_str(), "partition"), params);
              u = std::move(next);
              states.insert(group, std::move(s));
            }
            return std::make_pair(u, Tree{{"inner_states", std::move(states)}});
          }};
}

Array all_finite(const Tree& updates) {
  Array ok(true);
  for (const Array& x : jx::tree::leaves(updates)) ok = jnp::logical_and(ok, jnp::all(jnp::isfinite(x)));
  return ok;
}

}  // namespace

// ---- masking ----

GradientTransformation masked(GradientTransformation inner, Tree mask) {
  return masked_impl(std::move(inner), constant_mask(std::move(mask)), "masked");
}

GradientTransformation masked(GradientTransformation inner, MaskFn mask) {
  return masked_impl(std::move(inner), std::move(mask), "masked");
}

GradientTransformation set_to_zero() {
  return {[](const Tree&) { return Tree::dict(); },
          [](const Tree& updates, const Tree& state, const Tree&) {
            return std::make_pair(tree_zeros_like(updates), state);
          }};
}

GradientTransformation freeze(Tree mask) { return masked_impl(set_to_zero(), constant_mask(std::move(mask)), "freeze"); }
GradientTransformation freeze(MaskFn mask) { return masked_impl(set_to_zero(), std::move(mask), "freeze"); }

// ---- partition ----

Tree label(std::string name) { return Tree::static_value(tree::StaticValue::string(std::move(name))); }

GradientTransformation partition(LabeledTransforms transforms, Tree param_labels) {
  return partition_impl(std::move(transforms), [labels = std::move(param_labels)](const Tree&) { return labels; });
}

GradientTransformation partition(LabeledTransforms transforms, LabelFn param_labels) {
  return partition_impl(std::move(transforms), std::move(param_labels));
}

GradientTransformation partition(LabeledTransforms transforms, PathLabelFn param_labels) {
  return partition_impl(std::move(transforms), [fn = std::move(param_labels)](const Tree& params) {
    std::vector<tree::KeyEntry> path;
    return labels_from_paths(params, path, fn);
  });
}

// ---- apply_if_finite ----

GradientTransformation apply_if_finite(GradientTransformation inner, int max_consecutive_errors) {
  return {[inner](const Tree& params) {
            return Tree{{"notfinite_count", detail::zero_count()},
                        {"last_finite", Array(true)},
                        {"total_notfinite", detail::zero_count()},
                        {"inner_state", inner.init(params)}};
          },
          [inner, max_consecutive_errors](const Tree& updates, const Tree& state, const Tree& params) {
            const Array& notfinite0 = field(state, "notfinite_count", "apply_if_finite").array();
            const Array& total0 = field(state, "total_notfinite", "apply_if_finite").array();
            const Tree& inner_state = field(state, "inner_state", "apply_if_finite");
            const Array isfinite = all_finite(updates);
            const Array notfinite_count = jnp::where(isfinite, detail::zero_count(), detail::safe_increment(notfinite0));
            // Only the taken branch runs: a rejected step costs no inner update.
            auto [new_updates, new_inner] = jx::lax::cond(
                jnp::logical_or(isfinite, notfinite_count > max_consecutive_errors),
                [&inner](const Tree& u, const Tree& s, const Tree& p) { return inner.update(u, s, p); },
                [](const Tree& u, const Tree& s, const Tree&) { return std::make_pair(tree_zeros_like(u), s); },
                updates, inner_state, params);
            return std::make_pair(new_updates,
                                  Tree{{"notfinite_count", notfinite_count},
                                       {"last_finite", isfinite},
                                       {"total_notfinite", jnp::where(isfinite, total0, detail::safe_increment(total0))},
                                       {"inner_state", new_inner}});
          }};
}

// ---- MultiSteps ----

std::pair<Array, Tree> skip_not_finite(const Tree& updates, const Array&, const Tree&) {
  Array num_not_finite = jnp::zeros({}, DType::Int32);
  for (const Array& x : jx::tree::leaves(updates))
    num_not_finite = num_not_finite + jnp::sum(jnp::logical_not(jnp::isfinite(x))).astype(DType::Int32);
  Array should_skip = num_not_finite > 0;
  return {should_skip, Tree{{"should_skip", should_skip}, {"num_not_finite", num_not_finite}}};
}

MultiSteps::EveryK::EveryK(int k) : schedule([k](const Array&) { return jnp::full({}, Array(k), DType::Int32); }) {}

MultiSteps::MultiSteps(GradientTransformation opt, EveryK every_k_schedule, MultiStepsOptions options)
    : opt_(std::move(opt)), every_k_(std::move(every_k_schedule.schedule)), options_(std::move(options)) {}

Tree MultiSteps::init(const Tree& params) const {
  const Array gradient_step = detail::zero_count();
  Tree skip_state = Tree::list();  // Optax's () when no should_skip_update_fn
  if (options_.should_skip_update_fn)
    skip_state = options_.should_skip_update_fn(tree_zeros_like(params), gradient_step, params).second;
  return Tree{{"mini_step", detail::zero_count()},
              {"gradient_step", gradient_step},
              {"inner_opt_state", opt_.init(params)},
              {"acc_grads", tree_zeros_like(params, options_.accumulator_dtype)},
              {"skip_state", skip_state}};
}

std::pair<Tree, Tree> MultiSteps::update(const Tree& updates, const Tree& state, const Tree& params) const {
  const Array& gradient_step = field(state, "gradient_step", "MultiSteps").array();
  const Array k = every_k_(gradient_step).astype(DType::Int32);
  Array skip(false);
  Tree skip_state = Tree::list();
  if (options_.should_skip_update_fn) {
    std::tie(skip, skip_state) = options_.should_skip_update_fn(updates, gradient_step, params);
    if (skip.dtype() != DType::Bool || skip.ndim() != 0)
      throw ValueError(str("[optim.MultiSteps] should_skip_update_fn must return a bool scalar, got ",
                           type_str(skip.dtype(), skip.shape()), "; compare, e.g. `norm > max_norm`"));
  }
  const GradientTransformation& opt = opt_;
  const MultiStepsOptions& o = options_;
  auto cast_like = [](const Tree& t, const Tree& like) {
    return detail::map2([](const Array& x, const Array& l) { return x.astype(l.dtype()); }, t, like);
  };
  auto do_update = [&opt, &o, cast_like](const Tree& u, const Tree& s, const Tree& p, const Array& k,
                                         const Tree& skip_s) {
    const Array& mini_step = field(s, "mini_step", "MultiSteps").array();
    const Array& gstep = s.at("gradient_step").array();
    const Tree& inner = field(s, "inner_opt_state", "MultiSteps");
    // Optax's running mean (Welford): acc + (g - acc) / (n + 1); or the sum.
    Tree acc = detail::map2(
        [&](const Array& g, const Array& a) {
          if (!o.use_grad_mean) return g + a;
          Array d = g - a;
          return a + d / (mini_step + 1).astype(d.dtype());
        },
        u, field(s, "acc_grads", "MultiSteps"));
    auto [final_updates, new_inner] = opt.update(cast_like(acc, u), inner, p);
    const Array emit = mini_step == (k - 1);
    Tree inner_out = detail::map2(
        [&](const Array& old, const Array& nw) { return jnp::where(emit, nw, old).astype(old.dtype()); }, inner,
        new_inner);
    Tree acc_out = detail::map(
        [&](const Array& a) {
          Array r = a * (1.0 - emit.astype(a.dtype()));
          return o.accumulator_dtype ? r.astype(*o.accumulator_dtype) : r;
        },
        acc);
    Tree out = detail::map([&](const Array& g) { return g * emit.astype(g.dtype()); }, final_updates);
    Tree new_state{{"mini_step", detail::safe_increment(mini_step) % k},
                   {"gradient_step", jnp::where(emit, detail::safe_increment(gstep), gstep)},
                   {"inner_opt_state", inner_out},
                   {"acc_grads", acc_out},
                   {"skip_state", skip_s}};
    return std::make_pair(out, new_state);
  };
  if (!options_.should_skip_update_fn) return do_update(updates, state, params, k, skip_state);
  auto skip_update = [&opt, cast_like](const Tree& u, const Tree& s, const Tree& p, const Array&, const Tree& skip_s) {
    // Zero updates of the inner update's structure and dtypes (Optax uses eval_shape).
    Tree zeros = tree_zeros_like(opt.update(cast_like(s.at("acc_grads"), u), s.at("inner_opt_state"), p).first);
    Tree kept = s;
    kept.insert("skip_state", skip_s);
    return std::make_pair(zeros, kept);
  };
  return jx::lax::cond(skip, skip_update, do_update, updates, state, params, k, skip_state);
}

Array MultiSteps::has_updated(const Tree& state) const {
  return jnp::logical_and(field(state, "mini_step", "MultiSteps").array() == 0,
                          field(state, "gradient_step", "MultiSteps").array() > 0);
}

GradientTransformation MultiSteps::gradient_transformation() const {
  auto self = std::make_shared<const MultiSteps>(*this);
  return {[self](const Tree& params) { return self->init(params); },
          [self](const Tree& updates, const Tree& state, const Tree& params) {
            return self->update(updates, state, params);
          }};
}

// ---- inject_hyperparams ----

const Array& Hyperparams::array(std::string_view name) const {
  if (!values_.contains(name)) {
    throw ValueError(str("[optim.inject_hyperparams] the factory asked for the hyper-parameter \"", name,
                         "\", which was not injected; injected: ", values_.str(),
                         "; add it to inject_hyperparams' list, or capture it in the factory as a constant"));
  }
  return values_.at(name).array();
}

ScalarOrSchedule Hyperparams::operator[](std::string_view name) const {
  Array v = array(name);
  return ScalarOrSchedule(Schedule([v](const Array&) { return v; }));
}

namespace {

// Optax's default hyper-parameter dtype: the first leaf's (here: the first floating one).
DType hyperparam_dtype_of(const Tree& t, std::optional<DType> given) {
  if (given) return *given;
  for (const Array& x : jx::tree::leaves(t))
    if (is_floating(x.dtype())) return x.dtype();
  return DType::Float32;
}

// Floating values in `dtype`, weakly typed: a C++ number assigned into the state later has
// the same type, so the jitted step keeps its signature (no retrace).
Array as_hyperparam(const Array& v, DType dtype) {
  if (!is_floating(v.dtype())) return v;
  return jx::lax::convert_element_type(v, dtype, /*weak_type=*/true);
}

}  // namespace

GradientTransformation inject_hyperparams(HyperparamsFactory factory,
                                          std::vector<std::pair<std::string, ScalarOrSchedule>> hyperparams,
                                          std::optional<DType> hyperparam_dtype) {
  auto specs = std::make_shared<const std::vector<std::pair<std::string, ScalarOrSchedule>>>(std::move(hyperparams));
  return {[factory, specs, hyperparam_dtype](const Tree& params) {
            const DType dtype = hyperparam_dtype_of(params, hyperparam_dtype);
            const Array count = detail::zero_count();
            Tree values = Tree::dict();
            for (const auto& [name, v] : *specs)
              values.insert(name, as_hyperparam(v.is_schedule() ? v.schedule()(count) : jnp::array(v.value(), dtype), dtype));
            Tree inner = factory(Hyperparams(values)).init(params);
            return Tree{{"count", count}, {"hyperparams", values}, {"inner_state", std::move(inner)}};
          },
          [factory, specs, hyperparam_dtype](const Tree& updates, const Tree& state, const Tree& params) {
            const DType dtype = hyperparam_dtype_of(updates, hyperparam_dtype);
            const Array& count = field(state, "count", "inject_hyperparams").array();
            const Tree& stored = field(state, "hyperparams", "inject_hyperparams");
            Tree values = Tree::dict();
            for (const auto& [name, v] : *specs) {
              if (v.is_schedule()) {
                values.insert(name, as_hyperparam(v.schedule()(count), dtype));
              } else {
                if (!stored.contains(name))
                  throw ValueError(str("[optim.inject_hyperparams] the state's hyperparams ", stored.str(),
                                       " lack \"", name, "\"; keep every injected name in state[\"hyperparams\"]"));
                values.insert(name, as_hyperparam(stored.at(name).array(), dtype));
              }
            }
            auto [u, inner] = factory(Hyperparams(values))
                                  .update(updates, field(state, "inner_state", "inject_hyperparams"), params);
            return std::make_pair(u, Tree{{"count", detail::safe_increment(count)},
                                          {"hyperparams", values},
                                          {"inner_state", std::move(inner)}});
          }};
}

}  // namespace jx::optim
