// torch_to_flax / flax_to_torch: PyTorch state dict names and layouts <-> Flax variables.
// A "module" is a torch prefix (the name without its last component); its layer kind comes
// from its tensor names and ranks, or from the class in an explicit Flax name.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "jx/error.h"
#include "jx/io/torch.h"
#include "support/str.h"

namespace jx::io {
namespace {

enum class Layer { Linear, Conv, BatchNorm, Embedding, Norm };

const char* flax_class(Layer k) {
  switch (k) {
    case Layer::Linear: return "Dense";
    case Layer::Conv: return "Conv";
    case Layer::BatchNorm: return "BatchNorm";
    case Layer::Embedding: return "Embed";
    case Layer::Norm: return "LayerNorm";
  }
  return "";
}

struct Module {
  std::string prefix;             // torch
  std::vector<std::string> path;  // Flax, from the collection's root
  Layer kind = Layer::Linear;
  std::vector<int64_t> chw;  // a Linear after a flatten of [C, H, W]
};

std::vector<std::string> split_path(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t slash = s.find('/', start);
    out.push_back(s.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

std::string join_path(const std::vector<std::string>& p) {
  std::string s;
  for (const auto& c : p) s += s.empty() ? c : str("/", c);
  return s;
}

std::pair<std::string, std::string> split_name(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

std::string torch_name(const std::string& prefix, const char* leaf) {
  return prefix.empty() ? std::string(leaf) : str(prefix, ".", leaf);
}

// The layer class an explicit Flax name spells ("Dense_1" -> Linear), if any.
std::optional<Layer> class_of(const std::string& flax_name) {
  std::string base = flax_name;
  size_t us = base.rfind('_');
  if (us != std::string::npos && us + 1 < base.size() &&
      base.find_first_not_of("0123456789", us + 1) == std::string::npos)
    base.resize(us);
  if (base == "Dense") return Layer::Linear;
  if (base == "Conv") return Layer::Conv;
  if (base == "BatchNorm") return Layer::BatchNorm;
  if (base == "Embed") return Layer::Embedding;
  if (base == "LayerNorm" || base == "GroupNorm" || base == "RMSNorm") return Layer::Norm;
  return std::nullopt;
}

// The layer kind of one torch module, or nullopt when no layer fits its tensors.
std::optional<Layer> infer(const std::string& prefix, const std::map<std::string, Shape>& t,
                           std::optional<Layer> wanted) {
  auto rank = [&](const char* leaf) { return t.count(leaf) ? int(t.at(leaf).size()) : -1; };
  auto only = [&](std::initializer_list<const char*> allowed) {
    for (const auto& [leaf, shape] : t)
      if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return leaf == a; }) ==
          allowed.end())
        return false;
    return true;
  };
  int w = rank("weight"), b = rank("bias");
  if (b != -1 && b != 1) return std::nullopt;
  if (t.count("running_mean") || t.count("running_var")) {
    bool ok = only({"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}) &&
              rank("running_mean") == 1 && rank("running_var") == 1 && (w == -1 || w == 1);
    if (!ok || (wanted && *wanted != Layer::BatchNorm)) return std::nullopt;
    return Layer::BatchNorm;
  }
  if (!only({"weight", "bias"}) || w == -1) return std::nullopt;
  if (wanted) {
    bool fits = (*wanted == Layer::Linear && w == 2) ||
                (*wanted == Layer::Embedding && w == 2 && b == -1) ||
                (*wanted == Layer::Conv && w >= 3 && w <= 5) || (*wanted == Layer::Norm && w == 1);
    return fits ? wanted : std::nullopt;
  }
  if (w == 1) return Layer::Norm;
  if (w >= 3 && w <= 5) return Layer::Conv;
  if (w != 2) return std::nullopt;
  std::string last = split_name(prefix).second;
  std::transform(last.begin(), last.end(), last.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (b == -1 && last.find("emb") != std::string::npos) return Layer::Embedding;
  return Layer::Linear;
}

struct Plan {
  std::vector<Module> modules;
  std::vector<int> module_of;  // per state dict entry; -1: no layer fits it
};

Plan make_plan(const StateDict& sd, const TorchMapping& m, const char* op) {
  Plan plan;
  // Group by prefix, in order of first appearance.
  std::vector<std::string> prefixes;
  std::map<std::string, std::map<std::string, Shape>> tensors;
  std::vector<std::string> entry_prefix;
  for (const auto& [name, a] : sd) {
    auto [prefix, leaf] = split_name(name);
    if (!tensors.count(prefix)) prefixes.push_back(prefix);
    if (!tensors[prefix].emplace(leaf, a.shape()).second)
      throw ValueError(str("[", op, "] the state dict holds '", name, "' twice"));
    entry_prefix.push_back(prefix);
  }
  std::vector<bool> name_used(m.names.size(), false);
  std::map<std::string, int> counters;  // "parent path|class" -> next index
  std::map<std::string, std::string> owner;  // Flax path -> torch prefix
  std::map<std::string, int> index_of;
  for (const std::string& prefix : prefixes) {
    // An exact entry names the module; else the longest entry naming an ancestor places it.
    int exact = -1, parent = -1;
    size_t parent_len = 0;
    for (size_t k = 0; k < m.names.size(); ++k) {
      const std::string& p = m.names[k].first;
      if (p == prefix) exact = int(k);
      else if (!p.empty() && prefix.size() > p.size() && prefix.compare(0, p.size(), p) == 0 &&
               prefix[p.size()] == '.' && (parent == -1 || p.size() > parent_len)) {
        parent = int(k);
        parent_len = p.size();
      }
    }
    std::optional<Layer> wanted;
    Module mod;
    mod.prefix = prefix;
    if (exact >= 0) {
      name_used[size_t(exact)] = true;
      mod.path = split_path(m.names[size_t(exact)].second);
      if (!mod.path.empty()) wanted = class_of(mod.path.back());
    }
    std::optional<Layer> kind = infer(prefix, tensors[prefix], wanted);
    if (!kind && wanted) {
      std::string list;
      for (const auto& [leaf, shape] : tensors[prefix])
        list += str(list.empty() ? "" : ", ", torch_name(prefix, leaf.c_str()), " ", list_str(shape.vec()));
      throw ValueError(str("[", op, "] TorchMapping::names maps '", prefix, "' to '",
                           m.names[size_t(exact)].second, "', but its tensors (", list, ") are no ",
                           flax_class(*wanted), " layer's"));
    }
    if (!kind) continue;
    mod.kind = *kind;
    if (exact < 0) {
      std::vector<std::string> base;
      if (parent >= 0) {
        name_used[size_t(parent)] = true;
        base = split_path(m.names[size_t(parent)].second);
      }
      std::string key = str(join_path(base), "|", flax_class(mod.kind));
      mod.path = base;
      mod.path.push_back(str(flax_class(mod.kind), "_", counters[key]++));
    }
    std::string flax = join_path(mod.path);
    auto [it, fresh] = owner.emplace(flax, prefix);
    if (!fresh)
      throw ValueError(str("[", op, "] the torch modules '", it->second, "' and '", prefix,
                           "' both map to the Flax path '", flax,
                           "'; give one of them another name in TorchMapping::names"));
    index_of[prefix] = int(plan.modules.size());
    plan.modules.push_back(std::move(mod));
  }
  for (size_t k = 0; k < m.names.size(); ++k)
    if (!name_used[k]) {
      throw ValueError(str("[", op, "] TorchMapping::names entry {'", m.names[k].first, "', '",
                           m.names[k].second,
                           "'} matches nothing: no module of the state dict has this prefix"));
    }
  for (const auto& [prefix, chw] : m.linear_after_flatten) {
    auto it = index_of.find(prefix);
    if (it == index_of.end() || plan.modules[size_t(it->second)].kind != Layer::Linear)
      throw ValueError(str("[", op, "] TorchMapping::linear_after_flatten names '", prefix,
                           "', which is not a Linear layer of the state dict"));
    if (chw.size() != 3 || chw[0] <= 0 || chw[1] <= 0 || chw[2] <= 0)
      throw ValueError(str("[", op, "] TorchMapping::linear_after_flatten for '", prefix,
                           "' must be {C, H, W} of positive sizes, got ", list_str(chw)));
    int64_t in = tensors[prefix].at("weight")[1];
    if (chw[0] * chw[1] * chw[2] != in)
      throw ValueError(str("[", op, "] TorchMapping::linear_after_flatten for '", prefix, "': C*H*W = ",
                           chw[0] * chw[1] * chw[2], " for ", list_str(chw), ", but the Linear has ",
                           in, " inputs"));
    plan.modules[size_t(it->second)].chw = chw;
  }
  for (const std::string& prefix : entry_prefix) {
    auto it = index_of.find(prefix);
    plan.module_of.push_back(it == index_of.end() ? -1 : it->second);
  }
  return plan;
}

std::string unmapped_error(const StateDict& sd, const Plan& plan, const char* op) {
  std::string list;
  for (size_t i = 0; i < sd.size(); ++i)
    if (plan.module_of[i] < 0)
      list += str(list.empty() ? "" : ", ", "'", sd[i].first, "' ",
                  type_str(sd[i].second.dtype(), sd[i].second.shape()));
  return str("[", op, "] no layer fits these tensors: ", list,
             ". Known layers: Linear, Conv1d/2d/3d, BatchNorm1d/2d/3d, Embedding, LayerNorm "
             "(1-D); name a layer's class with TorchMapping::names (e.g. {\"tok\", \"Embed_0\"}) "
             "or set TorchMapping::ignore_unmapped to drop them");
}

// Where one torch tensor lives in the Flax variables: collection and leaf name (empty
// collection: dropped, i.e. num_batches_tracked).
std::pair<const char*, const char*> flax_leaf(Layer kind, const std::string& leaf) {
  if (kind == Layer::BatchNorm) {
    if (leaf == "running_mean") return {"batch_stats", "mean"};
    if (leaf == "running_var") return {"batch_stats", "var"};
    if (leaf == "num_batches_tracked") return {"", ""};
    return {"params", leaf == "weight" ? "scale" : "bias"};
  }
  if (kind == Layer::Norm) return {"params", leaf == "weight" ? "scale" : "bias"};
  if (kind == Layer::Embedding) return {"params", "embedding"};
  return {"params", leaf == "weight" ? "kernel" : "bias"};
}

// torch weight -> Flax kernel.
Array to_flax(const Module& mod, const Array& w) {
  if (mod.kind == Layer::Linear) {
    Array x = w;
    if (!mod.chw.empty()) {
      int64_t out = w.shape(0), c = mod.chw[0], h = mod.chw[1], wd = mod.chw[2];
      x = w.reshape({out, c, h, wd}).transpose({0, 2, 3, 1}).reshape({out, c * h * wd});
    }
    return x.T();
  }
  if (mod.kind == Layer::Conv) {  // [O, I, *k] -> [*k, I, O]
    std::vector<int64_t> perm;
    for (int d = 2; d < w.ndim(); ++d) perm.push_back(d);
    perm.push_back(1);
    perm.push_back(0);
    return w.transpose(perm);
  }
  return w;
}

// Flax kernel -> torch weight.
Array to_torch(const Module& mod, const Array& k) {
  if (mod.kind == Layer::Linear) {
    Array w = k.T();
    if (!mod.chw.empty()) {
      int64_t out = w.shape(0), c = mod.chw[0], h = mod.chw[1], wd = mod.chw[2];
      w = w.reshape({out, h, wd, c}).transpose({0, 3, 1, 2}).reshape({out, c * h * wd});
    }
    return w;
  }
  if (mod.kind == Layer::Conv) {  // [*k, I, O] -> [O, I, *k]
    int r = k.ndim();
    std::vector<int64_t> perm = {r - 1, r - 2};
    for (int d = 0; d < r - 2; ++d) perm.push_back(d);
    return k.transpose(perm);
  }
  return k;
}

void put(Tree& node, const std::vector<std::string>& path, size_t i, const Array& a,
         const char* op) {
  const std::string& key = path[i];
  if (i + 1 == path.size()) {
    if (node.contains(key))
      throw ValueError(str("[", op, "] two tensors map to the Flax variable '", join_path(path), "'"));
    node.insert(key, a);
    return;
  }
  if (!node.contains(key)) node.insert(key, Tree::dict());
  Tree& child = node[key].get();
  if (!child.is_dict())
    throw ValueError(str("[", op, "] the Flax path '", join_path(path),
                         "' runs through a variable; two modules have clashing names"));
  put(child, path, i + 1, a, op);
}

const Array& lookup(const Tree& variables, const char* collection, const std::vector<std::string>& path,
                    const char* leaf, const char* op) {
  const Tree* t = &variables;
  std::vector<std::string> full = {collection};
  full.insert(full.end(), path.begin(), path.end());
  full.push_back(leaf);
  for (const std::string& k : full) {
    if (!t->is_dict() || !t->contains(k))
      throw ValueError(str("[", op, "] the variables have no '", join_path(full), "' (missing '", k,
                           "'); the variables must be what init/torch_to_flax produce"));
    t = &t->at(k);
  }
  if (!t->is_leaf())
    throw ValueError(str("[", op, "] the variable '", join_path(full), "' is not an array"));
  return t->array();
}

const Tree* find_subtree(const Tree& variables, const char* collection, const std::vector<std::string>& path) {
  if (!variables.is_dict() || !variables.contains(collection)) return nullptr;
  const Tree* t = &variables.at(collection);
  for (const std::string& k : path) {
    if (!t->is_dict() || !t->contains(k)) return nullptr;
    t = &t->at(k);
  }
  return t->is_dict() ? t : nullptr;
}

}  // namespace

Tree torch_to_flax(const StateDict& state_dict, const TorchMapping& mapping) {
  const char* op = "torch_to_flax";
  Plan plan = make_plan(state_dict, mapping, op);
  if (!mapping.ignore_unmapped &&
      std::any_of(plan.module_of.begin(), plan.module_of.end(), [](int k) { return k < 0; }))
    throw ValueError(unmapped_error(state_dict, plan, op));
  Tree variables = Tree::dict();
  for (size_t i = 0; i < state_dict.size(); ++i) {
    if (plan.module_of[i] < 0) continue;
    const Module& mod = plan.modules[size_t(plan.module_of[i])];
    std::string leaf = split_name(state_dict[i].first).second;
    auto [collection, flax] = flax_leaf(mod.kind, leaf);
    if (!*collection) continue;
    const Array& a = state_dict[i].second;
    std::vector<std::string> path = {collection};
    path.insert(path.end(), mod.path.begin(), mod.path.end());
    path.push_back(flax);
    put(variables, path, 0, std::string(flax) == "kernel" ? to_flax(mod, a) : a, op);
  }
  return variables;
}

StateDict flax_to_torch(const Tree& variables, const StateDict& template_state_dict,
                        const TorchMapping& mapping) {
  const char* op = "flax_to_torch";
  Plan plan = make_plan(template_state_dict, mapping, op);
  if (!mapping.ignore_unmapped &&
      std::any_of(plan.module_of.begin(), plan.module_of.end(), [](int k) { return k < 0; }))
    throw ValueError(unmapped_error(template_state_dict, plan, op));
  StateDict out;
  for (size_t i = 0; i < template_state_dict.size(); ++i) {
    const auto& [name, tmpl] = template_state_dict[i];
    if (plan.module_of[i] < 0) {  // ignore_unmapped: passed through unchanged
      out.emplace_back(name, tmpl);
      continue;
    }
    const Module& mod = plan.modules[size_t(plan.module_of[i])];
    std::string leaf = split_name(name).second;
    auto [collection, flax] = flax_leaf(mod.kind, leaf);
    if (!*collection) {
      out.emplace_back(name, tmpl);  // num_batches_tracked: jx keeps no count
      continue;
    }
    const Array& v = lookup(variables, collection, mod.path, flax, op);
    Array t = std::string(flax) == "kernel" ? to_torch(mod, v) : v;
    if (t.shape() != tmpl.shape())
      throw ShapeError(str("[", op, "] '", name, "': the variable '", collection, "/",
                           join_path(mod.path), "/", flax, "' ", type_str(v.dtype(), v.shape()),
                           " gives ", type_str(t.dtype(), t.shape()), ", the template has ",
                           type_str(tmpl.dtype(), tmpl.shape())));
    out.emplace_back(name, t);
  }
  return out;
}

StateDict flax_to_torch(const Tree& variables,
                        const std::vector<std::pair<std::string, std::string>>& modules,
                        const TorchMapping& mapping) {
  const char* op = "flax_to_torch";
  StateDict out;
  std::set<std::string> chw_used;
  for (const auto& [flax_path, prefix] : modules) {
    Module mod;
    mod.prefix = prefix;
    mod.path = split_path(flax_path);
    const Tree* params = find_subtree(variables, "params", mod.path);
    if (!params)
      throw ValueError(str("[", op, "] the variables have no module 'params/", flax_path, "'"));
    const Tree* stats = find_subtree(variables, "batch_stats", mod.path);
    if (params->contains("kernel")) {
      int r = params->at("kernel").array().ndim();
      if (r < 2 || r > 5)
        throw ValueError(str("[", op, "] 'params/", flax_path, "/kernel' has rank ", r,
                             "; a Dense kernel has rank 2, a Conv kernel 3 to 5"));
      mod.kind = r == 2 ? Layer::Linear : Layer::Conv;
    } else if (params->contains("embedding")) {
      mod.kind = Layer::Embedding;
    } else if (stats && stats->contains("mean") && stats->contains("var")) {
      mod.kind = Layer::BatchNorm;
    } else if (params->contains("scale") || params->contains("bias")) {
      mod.kind = Layer::Norm;
    } else {
      throw ValueError(str("[", op, "] 'params/", flax_path,
                           "' is no Dense, Conv, Embed, BatchNorm or LayerNorm module"));
    }
    for (const auto& [p, chw] : mapping.linear_after_flatten)
      if (p == prefix) {
        if (mod.kind != Layer::Linear || chw.size() != 3)
          throw ValueError(str("[", op, "] TorchMapping::linear_after_flatten for '", p,
                               "' needs a Dense module and {C, H, W}"));
        mod.chw = chw;
        chw_used.insert(p);
      }
    auto emit = [&](const char* leaf, const char* collection, const char* flax) {
      const Array& v = lookup(variables, collection, mod.path, flax, op);
      if (!mod.chw.empty() && std::string(flax) == "kernel" &&
          mod.chw[0] * mod.chw[1] * mod.chw[2] != v.shape(0))
        throw ValueError(str("[", op, "] TorchMapping::linear_after_flatten for '", prefix, "': C*H*W of ",
                             list_str(mod.chw), " is not the kernel's ", v.shape(0), " inputs"));
      out.emplace_back(torch_name(prefix, leaf), std::string(flax) == "kernel" ? to_torch(mod, v) : v);
    };
    switch (mod.kind) {
      case Layer::Linear:
      case Layer::Conv:
        emit("weight", "params", "kernel");
        if (params->contains("bias")) emit("bias", "params", "bias");
        break;
      case Layer::Embedding:
        emit("weight", "params", "embedding");
        break;
      case Layer::BatchNorm:
        if (params->contains("scale")) emit("weight", "params", "scale");
        if (params->contains("bias")) emit("bias", "params", "bias");
        emit("running_mean", "batch_stats", "mean");
        emit("running_var", "batch_stats", "var");
        out.emplace_back(torch_name(prefix, "num_batches_tracked"), Array(int64_t(0)).astype(DType::Int64));
        break;
      case Layer::Norm:
        if (params->contains("scale")) emit("weight", "params", "scale");
        if (params->contains("bias")) emit("bias", "params", "bias");
        break;
    }
  }
  for (const auto& [p, chw] : mapping.linear_after_flatten)
    if (!chw_used.count(p))
      throw ValueError(str("[", op, "] TorchMapping::linear_after_flatten names '", p,
                           "', which is not a torch prefix in the module list"));
  return out;
}

}  // namespace jx::io
