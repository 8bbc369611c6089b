// The scope underneath jx::nn's modules (flax/core/scope.py): one RootState per
// init/apply/bind holds the variables by collection, the RNG streams and what may be
// written; a thread-local stack of frames says which module's body is running, at which
// path, with its per-call auto-name counters and reserved names.
#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <set>

#include "jx/nn/module.h"
#include "nn/root_state.h"
#include "jx/numpy.h"
#include "jx/random.h"
#include "support/sha1.h"
#include "support/str.h"

namespace jx::nn {

bool Mutable::contains(std::string_view col) const {
  bool listed = false;
  for (const std::string& n : names_) listed = listed || n == col;
  return deny_ ? !listed : listed;
}

namespace detail {

namespace {

struct Frame {
  std::shared_ptr<RootState> root;
  std::vector<std::string> path;
  std::map<std::string, int> cursor;                     // next auto-name index per class
  std::map<std::string, std::set<std::string>> reserved;  // name -> collections ("" = submodule)
};

thread_local std::vector<Frame> g_frames;

Frame& current(std::string_view what) {
  if (g_frames.empty())
    throw CallCompactUnboundModuleError(
        str("[nn] ", what, " outside a module's call: modules run inside init, apply or bind "
                           "(model.init(key, x), model.apply(variables, x)) or inside another "
                           "module's call"));
  return g_frames.back();
}

std::string path_text(const std::vector<std::string>& path) {
  std::string s;
  for (const std::string& p : path) s += "/" + p;
  return s.empty() ? "/" : s;
}

// The dict of `col` at `path`, or null.
const Tree* find_node(const Tree& vars, std::string_view col, const std::vector<std::string>& path) {
  if (!vars.is_dict() || !vars.contains(col)) return nullptr;
  const Tree* t = &vars.at(col);
  for (const std::string& p : path) {
    if (!t->is_dict() || !t->contains(p)) return nullptr;
    t = &t->at(p);
  }
  return t->is_dict() ? t : nullptr;
}
const Tree* find_var(const Tree& vars, std::string_view col, const std::vector<std::string>& path,
                     std::string_view name) {
  const Tree* node = find_node(vars, col, path);
  return node && node->contains(name) ? &node->at(name) : nullptr;
}
void put_var(Tree& vars, std::string_view col, const std::vector<std::string>& path,
             std::string_view name, Tree value) {
  Tree* t = &vars;
  auto step = [&](std::string_view key) {
    if (!t->contains(key)) t->insert(std::string(key), Tree::dict());
    t = &(*t)[key].get();
  };
  step(col);
  for (const std::string& p : path) step(p);
  t->insert(std::string(name), std::move(value));
}
bool collection_empty(const RootState& r, std::string_view col) {
  return !r.variables.contains(col) || r.variables.at(col).size() == 0;
}

void reserve(Frame& f, std::string_view col, std::string_view name, bool reuse_submodule = false) {
  auto& cols = f.reserved[std::string(name)];
  const bool taken = cols.count("") || cols.count(std::string(col)) || (col.empty() && !cols.empty());
  if (taken && !(reuse_submodule && col.empty() && cols.size() == 1 && cols.count("")))
    throw NameInUseError(str("[nn] the name \"", name, "\" is used twice in ", path_text(f.path),
                             col.empty() ? std::string(" by a submodule")
                                         : str(" by variables of collection \"", col, "\""),
                             "; give each variable and submodule of a module its own name"));
  cols.insert(std::string(col));
}

// Flax's _fold_in_static: the key folded with the first 4 bytes (big-endian) of the SHA-1
// of the path names (UTF-8) and the counter (its minimal big-endian bytes), no separators.
Array fold_in_static(const Array& key, const std::vector<std::string>& path, uint64_t counter) {
  Sha1 h;
  for (const std::string& p : path) h.update(p);
  std::string bytes;
  for (uint64_t c = counter; c; c >>= 8) bytes.insert(bytes.begin(), char(c & 0xFF));
  h.update(bytes);
  const auto d = h.digest();
  const uint32_t v = uint32_t(d[0]) << 24 | uint32_t(d[1]) << 16 | uint32_t(d[2]) << 8 | d[3];
  return random::fold_in(key, v);
}

std::string shape_text(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += str(i ? ", " : "", s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string type_name(const std::type_info& t) {
  int status = 0;
  char* d = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : t.name();
  std::free(d);
  // Drop template arguments, then everything up to the last "::" outside parentheses
  // ("(anonymous namespace)::CNN", "main()::CNN", "jx::nn::Dense").
  if (auto lt = s.find('<'); lt != std::string::npos) s.erase(lt);
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (depth == 0 && s[i] == ':' && s[i + 1] == ':') start = i + 2;
  }
  return s.substr(start);
}

std::shared_ptr<RootState> make_root(Tree variables, const Rngs& rngs, Mutable mutable_,
                                     bool initializing, const char* caller) {
  if (variables.is_none()) variables = Tree::dict();
  if (!variables.is_dict())
    throw ValueError(str("[nn] ", caller, " takes the variables as a dict of collections "
                         "({\"params\": {...}}), got ", variables.str()));
  for (size_t i = 0; i < variables.size(); ++i)
    if (!variables.children()[i].is_dict())
      throw ValueError(str("[nn] ", caller, ": collection \"", variables.keys()[i],
                           "\" of the variables is not a dict"));
  if (variables.contains("params") && variables.at("params").is_dict() &&
      variables.at("params").contains("params"))
    throw ApplyScopeInvalidVariablesStructureError(
        str("[nn] ", caller, " expects the variables as init returns them, {\"params\": {...}}, "
                             "but got {\"params\": {\"params\": ...}}: an extra \"params\" layer; "
                             "pass the whole result of init, not {\"params\": variables}"));
  for (const auto& [name, key] : rngs.streams)
    if (!key.valid() || key.dtype() != DType::UInt32 || key.shape() != Shape{2})
      throw ValueError(str("[nn] ", caller, ": the key of RNG stream \"", name,
                           "\" must be a uint32[2] key (jx::random::PRNGKey), got ",
                           key.valid() ? type_str(key.dtype(), key.shape()) : std::string("an empty array")));
  auto root = std::make_shared<RootState>();
  root->variables = std::move(variables);
  root->rngs = rngs.streams;
  root->mutable_ = std::move(mutable_);
  root->initializing = initializing;
  return root;
}

RootCall::RootCall(std::shared_ptr<RootState> root) { g_frames.push_back(Frame{std::move(root), {}, {}, {}}); }
RootCall::~RootCall() { g_frames.pop_back(); }

ChildCall::ChildCall(std::string_view type, const std::string* name) {
  Frame& parent = current(str(type, "'s call"));
  std::string child;
  if (name) {
    child = *name;
    // The same explicitly named submodule called again in one call shares its variables.
    reserve(parent, "", child, /*reuse_submodule=*/true);
  } else {
    do {
      child = str(type, "_", parent.cursor[std::string(type)]++);
    } while (parent.reserved.count(child));
    reserve(parent, "", child);
  }
  Frame f{parent.root, parent.path, {}, {}};
  f.path.push_back(std::move(child));
  g_frames.push_back(std::move(f));
}
ChildCall::~ChildCall() { g_frames.pop_back(); }

Tree variables_of(const RootState& root) { return root.variables; }

Tree mutable_variables_of(const RootState& root) {
  Tree out = Tree::dict();
  for (size_t i = 0; i < root.variables.size(); ++i)
    if (root.mutable_.contains(root.variables.keys()[i]))
      out.insert(root.variables.keys()[i], root.variables.children()[i]);
  return out;
}

bool recording() { return !g_frames.empty() && g_frames.back().root->recording; }

size_t record_begin(const std::string& type, std::string inputs) {
  Frame& f = current("tabulate");
  f.root->records.push_back(CallRecord{f.path, type, std::move(inputs), ""});
  return f.root->records.size() - 1;
}

void record_end(size_t index, std::string outputs) {
  current("tabulate").root->records[index].outputs = std::move(outputs);
}

std::string describe_value(const Array& a) {
  if (!a.valid()) return "";
  std::string s = str(dtype_name(a.dtype()), "[");
  for (size_t i = 0; i < a.shape().size(); ++i) s += str(i ? "," : "", a.shape()[i]);
  return s + "]";
}

void start_recording(RootState& root) { root.recording = true; }

const Array* find_param(std::string_view name, const Shape& expected) {
  Frame& f = current("param");
  reserve(f, "params", name);
  const Tree* v = find_var(f.root->variables, "params", f.path, name);
  if (!v) return nullptr;
  const Array& a = v->array();
  if (a.shape() != expected)
    throw ScopeParamShapeError(
        str("[nn] initializer expected to generate shape ", shape_text(expected), " but got shape ",
            shape_text(a.shape()), " instead for parameter \"", name, "\" in \"", path_text(f.path),
            "\": the stored parameter does not fit the module's configuration or inputs now "
            "(e.g. another input width than at init); re-run init or fix the inputs"));
  return &a;
}

void require_params_mutable(std::string_view name) {
  Frame& f = current("param");
  if (f.root->mutable_.contains("params")) return;
  if (collection_empty(*f.root, "params"))
    throw ScopeCollectionNotFound(
        str("[nn] tried to access \"", name, "\" from collection \"params\" in \"", path_text(f.path),
            "\" but the collection is empty: pass the variables init returned to apply"));
  throw ScopeParamNotFoundError(str("[nn] could not find parameter named \"", name, "\" in scope \"",
                                    path_text(f.path), "\": the variables come from another model, "
                                    "or the module's names changed since init"));
}

Array put_param(std::string_view name, Array value) {
  Frame& f = current("param");
  put_var(f.root->variables, "params", f.path, name, value);
  return value;
}

}  // namespace detail

using detail::current;
using detail::Frame;

Array param(std::string_view name, const std::function<Array(const Array& key)>& init) {
  Frame& f = current("param");
  detail::reserve(f, "params", name);
  if (const Tree* v = detail::find_var(f.root->variables, "params", f.path, name)) return v->array();
  detail::require_params_mutable(name);
  return detail::put_param(name, init(make_rng("params")));
}

Variable variable(std::string_view collection, std::string_view name, const std::function<Array()>& init) {
  Frame& f = current("variable");
  detail::reserve(f, collection, name);
  if (!detail::find_var(f.root->variables, collection, f.path, name)) {
    if (!f.root->mutable_.contains(collection) || !init) {
      if (detail::collection_empty(*f.root, collection))
        throw ScopeCollectionNotFound(
            str("[nn] tried to access \"", name, "\" from collection \"", collection, "\" in \"",
                detail::path_text(f.path), "\" but the collection is empty: pass it to apply with "
                "the variables, or make it mutable (nn::Mutable{\"", collection, "\"})"));
      throw ScopeVariableNotFoundError(str("[nn] no variable named \"", name, "\" for collection \"",
                                           collection, "\" exists in \"", detail::path_text(f.path), "\""));
    }
    detail::put_var(f.root->variables, collection, f.path, name, init());
  }
  return Variable(f.root, f.path, std::string(collection), std::string(name));
}

Array Variable::value() const {
  const Tree* v = detail::find_var(root_->variables, col_, path_, name_);
  if (!v)
    throw ScopeVariableNotFoundError(str("[nn] no variable named \"", name_, "\" for collection \"",
                                         col_, "\" exists in \"", detail::path_text(path_), "\""));
  return v->array();
}

bool Variable::is_mutable() const { return root_->mutable_.contains(col_); }

void Variable::set(const Array& v) const {
  if (!is_mutable())
    throw ModifyScopeVariableError(
        str("[nn] cannot update variable \"", name_, "\" in \"", detail::path_text(path_),
            "\" because collection \"", col_, "\" is immutable: pass nn::Mutable{\"", col_,
            "\"} to apply (it then returns (y, updated collections))"));
  detail::put_var(root_->variables, col_, path_, name_, v);
}

Array make_rng(std::string_view stream) {
  Frame& f = current("make_rng");
  std::string s(stream);
  if (!f.root->rngs.count(s)) {
    if (!f.root->rngs.count("params"))
      throw InvalidRngError(str("[nn] ", detail::path_text(f.path), " needs PRNG for \"", stream,
                                "\": pass a key for it, e.g. model.apply(variables, x, nn::Rngs{{\"",
                                stream, "\", key}})"));
    s = "params";
  }
  const uint64_t c = ++f.root->rng_counters[{f.path, s}];
  return detail::fold_in_static(f.root->rngs.at(s), f.path, c);
}

bool has_rng(std::string_view stream) { return current("has_rng").root->rngs.count(std::string(stream)) > 0; }
bool is_initializing() { return current("is_initializing").root->initializing; }
bool is_mutable_collection(std::string_view collection) {
  return current("is_mutable_collection").root->mutable_.contains(collection);
}
bool has_variable(std::string_view collection, std::string_view name) {
  Frame& f = current("has_variable");
  return detail::find_var(f.root->variables, collection, f.path, name) != nullptr;
}
std::string module_path() { return detail::path_text(current("module_path").path); }

bool sow(std::string_view collection, std::string_view name, const Array& value) {
  Frame& f = current("sow");
  if (!f.root->mutable_.contains(collection)) return false;
  Tree xs = Tree::list();
  if (const Tree* old = detail::find_var(f.root->variables, collection, f.path, name)) {
    xs = *old;
  } else {
    detail::reserve(f, collection, name);
  }
  xs.push_back(value);
  detail::put_var(f.root->variables, collection, f.path, name, std::move(xs));
  return true;
}

Array perturb(std::string_view name, const Array& x, std::string_view collection) {
  if (!is_mutable_collection(collection) && !has_variable(collection, name)) return x;
  return x + variable(collection, name, [&] { return numpy::zeros_like(x); }).value();
}

}  // namespace jx::nn
