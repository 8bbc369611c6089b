// The flat functions behind include/jx/vmap.h: matching in_axes/out_axes prefixes
// against the arguments' and results' TreeDefs.
#include <climits>

#include "jx/vmap.h"
#include "ops/common.h"
#include "transforms/batching.h"

namespace jx {

AxisSpec AxisSpec::list(std::vector<AxisSpec> items) {
  AxisSpec s;
  s.kind_ = Kind::List;
  s.items_ = std::move(items);
  return s;
}

AxisSpec AxisSpec::dict(std::vector<std::pair<std::string, AxisSpec>> items) {
  AxisSpec s;
  s.kind_ = Kind::Dict;
  for (auto& [k, v] : items) {
    s.keys_.push_back(k);
    s.items_.push_back(std::move(v));
  }
  return s;
}

std::string AxisSpec::str() const {
  switch (kind_) {
    case Kind::Axis: return std::to_string(axis_);
    case Kind::None: return "none";
    case Kind::List: {
      std::string s = "(";
      for (size_t i = 0; i < items_.size(); ++i) s += (i ? ", " : "") + items_[i].str();
      return s + ")";
    }
    case Kind::Dict: {
      std::string s = "{";
      for (size_t i = 0; i < items_.size(); ++i) s += (i ? ", '" : "'") + keys_[i] + "': " + items_[i].str();
      return s + "}";
    }
  }
  return "";
}

namespace ad {
namespace {

// Walks spec against def, appending one axis (INT_MIN for none) per leaf of def.
void match(const char* what, const AxisSpec& spec, const tree::TreeDef& def, const std::string& path,
           std::vector<int>& out) {
  using K = AxisSpec::Kind;
  if (spec.kind() == K::Axis || spec.kind() == K::None) {
    int v = spec.kind() == K::Axis ? spec.axis() : INT_MIN;
    out.insert(out.end(), def.num_leaves(), v);
    return;
  }
  auto fail = [&](const std::string& why) {
    throw ValueError(str("[vmap] ", what, " ", spec.str(), " does not match the structure ", def.str(),
                         path.empty() ? "" : " at " + path, ": ", why,
                         "; give an int or jx::none, or a prefix of the tree"));
  };
  tree::NodeKind nk = def.kind();
  std::vector<tree::TreeDef> kids = def.children();
  if (spec.kind() == K::List) {
    if (nk != tree::NodeKind::Tuple && nk != tree::NodeKind::List) fail("a list needs a tuple or list");
    if (kids.size() != spec.items().size())
      fail(str("the list has ", spec.items().size(), " entries for ", kids.size(), " children"));
    for (size_t i = 0; i < kids.size(); ++i)
      match(what, spec.items()[i], kids[i], path + "/" + std::to_string(i), out);
    return;
  }
  if (nk != tree::NodeKind::Dict && nk != tree::NodeKind::Struct) fail("a dict needs a dict or struct");
  std::vector<std::string> keys = def.keys();
  if (keys.size() != spec.keys().size()) fail("the keys differ");
  for (size_t i = 0; i < keys.size(); ++i) {
    size_t k = 0;
    while (k < spec.keys().size() && spec.keys()[k] != keys[i]) ++k;
    if (k == spec.keys().size()) fail("key '" + keys[i] + "' is missing");
    match(what, spec.items()[k], kids[i], path + "/" + keys[i], out);
  }
}

}  // namespace

std::vector<int> axes_for_leaves(const char* what, const AxisSpec& spec, const tree::TreeDef& def,
                                 const std::vector<Array>& leaves, int extra_rank) {
  std::vector<int> raw;
  match(what, spec, def, "", raw);
  std::vector<int> dims;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == INT_MIN) {
      dims.push_back(-1);
      continue;
    }
    int64_t rank = leaves[i].ndim() + extra_rank;
    int64_t d = raw[i] < 0 ? raw[i] + rank : raw[i];
    if (d < 0 || d >= rank)
      throw IndexError(str("[vmap] ", what, " ", raw[i], " is out of range for argument leaf ",
                           def.leaf_paths()[i].str().empty() ? std::to_string(i) : def.leaf_paths()[i].str(),
                           " of type ", type_str(leaves[i].dtype(), leaves[i].shape()),
                           " (rank ", leaves[i].ndim(), "); give an axis in ", -rank, "..", rank - 1,
                           ", or jx::none to not map that argument"));
    dims.push_back(int(d));
  }
  return dims;
}

void check_in_axes_count(const AxisSpec& spec, size_t num_args) {
  if (spec.kind() == AxisSpec::Kind::List && num_args != spec.items().size())
    throw ValueError(str("[vmap] in_axes has ", spec.items().size(), " entries but f is called with ",
                         num_args, " arguments; give one entry per argument"));
}

std::vector<int> out_axes_for_leaves(const AxisSpec& spec, const tree::TreeDef& def) {
  std::vector<int> raw;
  match("out_axes", spec, def, "", raw);
  for (int& d : raw)
    if (d == INT_MIN) d = tr::kOutNone;
  return raw;
}

std::vector<Array> vmap_flat(const FlatFn& f, const std::vector<Array>& args,
                             const std::vector<int>& in_dims,
                             const std::function<std::vector<int>(size_t)>& out_dims,
                             int64_t axis_size, const std::string& axis_name) {
  return tr::vmap_flat(f, args, in_dims, out_dims, axis_size, axis_name);
}

}  // namespace ad
}  // namespace jx
