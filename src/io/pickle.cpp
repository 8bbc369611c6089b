// A pickle reader that runs nothing. Python's unpickler imports and calls whatever globals a
// pickle names (os.system, builtins.eval, ...), which is why torch.load of an untrusted file
// can run code. This one is a stack machine over plain values (None, bool, int, float, str,
// bytes, tuple, list, dict) plus the handful of torch objects a state dict is made of; every
// other global is refused as soon as its opcode is read.
//
// Containers are shared (pickle's memo refers to them), and a list or dict may be filled
// after it was created. To keep depth bounded and cycles impossible, a container is sealed
// when it is put inside another one or memoized-and-nested, and a sealed container can no
// longer be filled: Python's pickler always fills a container before nesting it, except for
// self-referencing data, which a state dict never has.
#include "io/pickle.h"

#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>

#include "core/array_impl.h"
#include "jx/error.h"
#include "numpy/io_npy.h"
#include "support/str.h"

namespace jx::detail {

static_assert(std::endian::native == std::endian::little,
              "jx's torch state dict I/O assumes a little-endian host");

namespace {

enum class Callable : uint8_t {
  OrderedDict,
  RebuildTensorV2,
  RebuildParameter,
  RebuildParameterWithState,
  StorageType
};

struct StorageName {
  const char* name;
  DType dtype;
};
constexpr StorageName kStorages[] = {
    {"FloatStorage", DType::Float32}, {"DoubleStorage", DType::Float64},
    {"HalfStorage", DType::Float16},  {"BFloat16Storage", DType::BFloat16},
    {"LongStorage", DType::Int64},    {"IntStorage", DType::Int32},
    {"ShortStorage", DType::Int16},   {"CharStorage", DType::Int8},
    {"ByteStorage", DType::UInt8},    {"BoolStorage", DType::Bool},
    {"ComplexFloatStorage", DType::Complex64}, {"ComplexDoubleStorage", DType::Complex128},
};

struct Obj;
using Ref = std::shared_ptr<Obj>;

struct Obj {
  enum Kind : uint8_t { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Global, Storage, Tensor };
  explicit Obj(Kind k) : kind(k) {}
  Kind kind;
  bool sealed = false;
  int depth = 0;  // containers: 1 + the deepest child
  int64_t i = 0;  // Bool, Int; Storage: numel
  double f = 0;
  std::string s;           // Str, Bytes; Global: "module.name"; Storage: key
  std::vector<Ref> items;  // Tuple, List; Dict: key, value, key, value, ...
  std::unordered_map<std::string, size_t> keys;  // Dict: key -> index of the key in items
  Callable callable = Callable::OrderedDict;     // Global
  DType dtype = DType::Float32;                  // Global (a storage type), Storage
  // Tensor: a validated view of a storage, gathered once the whole pickle has run.
  Ref storage;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  uint64_t nbytes = 0;
  Array tensor;  // the gathered tensor (see Unpickler::materialize)
  bool is_container() const { return kind == Tuple || kind == List || kind == Dict; }
};

const char* kind_name(Obj::Kind k) {
  switch (k) {
    case Obj::None: return "None";
    case Obj::Bool: return "a bool";
    case Obj::Int: return "an int";
    case Obj::Float: return "a float";
    case Obj::Str: return "a str";
    case Obj::Bytes: return "bytes";
    case Obj::Tuple: return "a tuple";
    case Obj::List: return "a list";
    case Obj::Dict: return "a dict";
    case Obj::Global: return "a class or function";
    case Obj::Storage: return "a storage";
    case Obj::Tensor: return "a tensor";
  }
  return "";
}

bool valid_utf8(const char* p, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || n - i < len) return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(p[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

class Unpickler {
 public:
  Unpickler(const char* p, size_t n, const StorageResolver& storages, const std::string& what,
            const char* op, const PickleLimits& limits)
      : p_(p), n_(n), storages_(storages), what_(what), op_(op), lim_(limits) {}

  Ref run();
  // Copies every tensor out of its storage (the storages are looked up only now, after the
  // whole program was read and checked), within the limits on the bytes produced.
  void materialize(Obj& root);

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw IOError(str("[", op_, "] '", what_, "' has a malformed or unsupported data.pkl: ", msg,
                      " (opcode at byte ", at_, ")"));
  }
  void need(uint64_t k) const {
    if (k > n_ - i_)
      fail(str("it is truncated: the opcode needs ", k, " more bytes, ", n_ - i_, " are left"));
  }
  uint64_t uint(int k) {
    need(uint64_t(k));
    uint64_t v = 0;
    for (int b = k; b-- > 0;) v = (v << 8) | static_cast<unsigned char>(p_[i_ + size_t(b)]);
    i_ += size_t(k);
    return v;
  }
  std::string bytes(uint64_t k) {
    need(k);
    std::string s(p_ + i_, size_t(k));
    i_ += size_t(k);
    return s;
  }
  std::string line() {  // text argument of GLOBAL / PUT / GET, ends at '\n'
    const void* nl = std::memchr(p_ + i_, '\n', std::min<size_t>(n_ - i_, 1024));
    if (!nl) fail("a text argument has no end of line within 1024 bytes");
    size_t len = size_t(static_cast<const char*>(nl) - (p_ + i_));
    std::string s(p_ + i_, len);
    i_ += len + 1;
    return s;
  }

  void push(Ref r) {
    if (stack_.size() >= lim_.max_stack) fail(str("the stack exceeds ", lim_.max_stack, " entries"));
    stack_.push_back(std::move(r));
  }
  Ref pop() {
    if (stack_.size() <= floor()) fail("it pops from an empty stack");
    Ref r = std::move(stack_.back());
    stack_.pop_back();
    return r;
  }
  Ref& top() {
    if (stack_.size() <= floor()) fail("it reads an empty stack");
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<Ref> pop_mark() {
    if (marks_.empty()) fail("it closes a MARK that was never set");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Ref> items(std::make_move_iterator(stack_.begin() + ptrdiff_t(m)),
                           std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return items;
  }

  Ref make(Obj::Kind k) { return std::make_shared<Obj>(k); }
  Ref make_int(int64_t v) {
    Ref r = make(Obj::Int);
    r->i = v;
    return r;
  }
  Ref make_str(std::string s, bool check_utf8) {
    if (check_utf8 && !valid_utf8(s.data(), s.size())) fail("a str is not valid UTF-8");
    Ref r = make(Obj::Str);
    r->s = std::move(s);
    return r;
  }
  // Puts `child` inside `parent`, keeping depth bounded and data acyclic (see the top).
  void nest(Obj& parent, const Ref& child) {
    if (child->is_container()) child->sealed = true;  // first: a container put into itself
    if (parent.sealed)
      fail(str("it fills ", kind_name(parent.kind),
               " after putting it inside another container (a self-referencing structure)"));
    if (child->is_container()) {
      parent.depth = std::max(parent.depth, child->depth + 1);
      if (parent.depth > lim_.max_depth)
        fail(str("containers are nested more than ", lim_.max_depth, " deep"));
    }
  }
  Ref make_tuple(std::vector<Ref> items) {
    Ref t = make(Obj::Tuple);
    t->depth = 1;
    for (const Ref& c : items) nest(*t, c);
    t->items = std::move(items);
    return t;
  }
  void append(Obj& list, Ref v) {
    if (list.kind != Obj::List) fail(str("it appends to ", kind_name(list.kind), ", not a list"));
    nest(list, v);
    list.items.push_back(std::move(v));
  }
  void set_item(Obj& dict, Ref k, Ref v) {
    if (dict.kind != Obj::Dict) fail(str("it sets an item of ", kind_name(dict.kind), ", not a dict"));
    std::string hk;
    switch (k->kind) {
      case Obj::Str: hk = str("s", k->s); break;
      case Obj::Bytes: hk = str("b", k->s); break;
      case Obj::Int: case Obj::Bool: hk = str("i", k->i); break;
      case Obj::None: hk = "n"; break;
      default: fail(str("a dict key is ", kind_name(k->kind)));
    }
    nest(dict, v);
    auto [it, fresh] = dict.keys.emplace(std::move(hk), dict.items.size());
    if (fresh) {
      dict.items.push_back(std::move(k));
      dict.items.push_back(std::move(v));
    } else {
      dict.items[it->second + 1] = std::move(v);
    }
  }
  void memo_put(uint64_t idx) {
    Ref& t = top();
    if (memo_.size() >= lim_.max_memo && !memo_.count(idx))
      fail(str("the memo exceeds ", lim_.max_memo, " entries"));
    memo_[idx] = t;
  }
  Ref memo_get(uint64_t idx) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) fail(str("it reads memo entry ", idx, ", which was never stored"));
    return it->second;
  }

  Ref global(const std::string& module, const std::string& name);
  Ref call(const Ref& fn, const Ref& args);
  Ref persistent_load(const Ref& pid);
  Ref rebuild_tensor(const std::vector<Ref>& a);
  int64_t as_int(const Ref& r, const char* what) {
    if (r->kind != Obj::Int) fail(str(what, " is ", kind_name(r->kind), ", not an int"));
    return r->i;
  }
  std::vector<int64_t> int_tuple(const Ref& r, const char* what) {
    if (r->kind != Obj::Tuple) fail(str(what, " is ", kind_name(r->kind), ", not a tuple of ints"));
    std::vector<int64_t> v;
    for (const Ref& x : r->items) v.push_back(as_int(x, what));
    return v;
  }

  const char* p_;
  size_t n_, i_ = 0, at_ = 0;
  const StorageResolver& storages_;
  const std::string& what_;
  const char* op_;
  PickleLimits lim_;
  std::vector<Ref> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Ref> memo_;
};

Ref Unpickler::global(const std::string& module, const std::string& name) {
  Ref g = make(Obj::Global);
  g->s = str(module, ".", name);
  if (module == "collections" && name == "OrderedDict") {
    g->callable = Callable::OrderedDict;
    return g;
  }
  if (module == "torch._utils") {
    if (name == "_rebuild_tensor_v2") g->callable = Callable::RebuildTensorV2;
    else if (name == "_rebuild_parameter") g->callable = Callable::RebuildParameter;
    else if (name == "_rebuild_parameter_with_state")
      g->callable = Callable::RebuildParameterWithState;
    else g = nullptr;
    if (g) return g;
  }
  if (module == "torch")
    for (const StorageName& s : kStorages)
      if (name == s.name) {
        g->callable = Callable::StorageType;
        g->dtype = s.dtype;
        return g;
      }
  std::string why = "a state dict never contains it";
  if (module == "torch" && name.size() > 7 && name.compare(name.size() - 7, 7, "Storage") == 0)
    why = "jx has no dtype for this storage (complex32 and quantized tensors are not supported)";
  else if (module.rfind("__torch__", 0) == 0)
    why = "this is a TorchScript archive (torch.jit.save); save model.state_dict() with torch.save";
  else if (module.rfind("torch", 0) == 0)
    why = "only plain tensors, Parameters and OrderedDicts are read (save model.state_dict())";
  throw IOError(str("[", op_, "] '", what_, "' refused: its data.pkl asks for the global '", module,
                    ".", name, "' (byte ", at_, "); ", why,
                    ". Unpickling a global can run arbitrary code, so jx only accepts "
                    "collections.OrderedDict, torch._utils._rebuild_tensor_v2 / "
                    "_rebuild_parameter and torch.<X>Storage"));
}

Ref Unpickler::persistent_load(const Ref& pid) {
  const auto& t = pid->items;
  if (pid->kind != Obj::Tuple || t.size() != 5 || t[0]->kind != Obj::Str || t[0]->s != "storage")
    fail("a persistent id is not ('storage', type, key, location, numel)");
  if (t[1]->kind != Obj::Global || t[1]->callable != Callable::StorageType)
    fail(str("a persistent id names ", kind_name(t[1]->kind), " '", t[1]->s,
             "' instead of a torch storage type"));
  if (t[2]->kind != Obj::Str) fail("a storage key is not a str");
  if (t[3]->kind != Obj::Str) fail("a storage location is not a str");
  int64_t numel = as_int(t[4], "a storage size");
  uint64_t bytes;
  if (numel < 0 || __builtin_mul_overflow(uint64_t(numel), uint64_t(itemsize(t[1]->dtype)), &bytes))
    fail(str("a storage has an impossible size of ", numel, " elements"));
  Ref s = make(Obj::Storage);
  s->dtype = t[1]->dtype;
  s->s = t[2]->s;
  s->i = numel;
  return s;
}

Ref Unpickler::rebuild_tensor(const std::vector<Ref>& a) {
  if (a.size() != 6 && a.size() != 7)
    fail(str("_rebuild_tensor_v2 gets ", a.size(), " arguments instead of 6 or 7"));
  if (a[0]->kind != Obj::Storage) fail(str("_rebuild_tensor_v2 gets ", kind_name(a[0]->kind), " as its storage"));
  const Obj& st = *a[0];
  int64_t offset = as_int(a[1], "a storage offset");
  std::vector<int64_t> sizes = int_tuple(a[2], "a tensor size");
  std::vector<int64_t> strides = int_tuple(a[3], "a tensor stride");
  if (a[4]->kind != Obj::Bool && a[4]->kind != Obj::Int) fail("requires_grad is not a bool");
  if (a[5]->kind != Obj::Dict || !a[5]->items.empty())
    fail("a tensor has backward hooks (not an empty OrderedDict)");
  if (a.size() == 7 && a[6]->kind != Obj::None && a[6]->kind != Obj::Dict)
    fail("a tensor's metadata is not a dict");
  if (sizes.size() != strides.size())
    fail(str("a tensor has ", sizes.size(), " sizes but ", strides.size(), " strides"));
  if (sizes.size() > 64) fail(str("a tensor has ", sizes.size(), " dimensions"));
  uint64_t numel = uint64_t(st.i), count = 1, last = uint64_t(offset);
  if (offset < 0) fail(str("a tensor has a negative storage offset ", offset));
  bool overflow = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0)
      fail(str("a tensor has size ", list_str(sizes), " and stride ", list_str(strides),
               ": negative values"));
    uint64_t span;
    overflow |= __builtin_mul_overflow(uint64_t(sizes[d]), count, &count);
    if (sizes[d] > 0) {
      overflow |= __builtin_mul_overflow(uint64_t(sizes[d] - 1), uint64_t(strides[d]), &span);
      overflow |= __builtin_add_overflow(last, span, &last);
    }
  }
  size_t item = itemsize(st.dtype);
  uint64_t nbytes = 0;
  overflow |= __builtin_mul_overflow(count, uint64_t(item), &nbytes);
  if (overflow || (count > 0 && last >= numel) || (count == 0 && uint64_t(offset) > numel))
    fail(str("a tensor of size ", list_str(sizes), ", stride ", list_str(strides), " at offset ",
             offset, " reaches outside its storage '", st.s, "' of ", numel, " elements"));
  if (count > numel && nbytes > lim_.max_expanded_bytes)
    fail(str("a tensor of size ", list_str(sizes), " expands its storage of ", numel,
             " elements to ", nbytes, " bytes, over the limit of ", lim_.max_expanded_bytes));
  Ref t = make(Obj::Tensor);
  t->storage = a[0];
  t->offset = offset;
  t->sizes = std::move(sizes);
  t->strides = std::move(strides);
  t->nbytes = nbytes;
  return t;
}

void Unpickler::materialize(Obj& root) {
  at_ = n_;
  // Views of one storage may overlap (tied weights, slices): the bytes produced are bounded
  // by a multiple of the distinct storage bytes, so a small file cannot demand a huge
  // allocation by naming one storage many times.
  uint64_t total = 0, storage_bytes = 0;
  std::unordered_map<std::string, bool> seen;
  for (size_t j = 1; j < root.items.size(); j += 2) {
    const Obj& t = *root.items[j];
    if (t.kind != Obj::Tensor) continue;
    total += t.nbytes;
    const Obj& st = *t.storage;
    if (seen.emplace(str(st.s, "|", int(st.dtype)), true).second)
      storage_bytes += uint64_t(st.i) * itemsize(st.dtype);
  }
  if (total > storage_bytes * lim_.max_amplification + lim_.max_expanded_bytes)
    fail(str("its tensors would take ", total, " bytes, more than ", lim_.max_amplification,
             " times their storages' ", storage_bytes, " bytes"));
  for (size_t j = 1; j < root.items.size(); j += 2) {
    Obj& t = *root.items[j];
    if (t.kind != Obj::Tensor || t.tensor.valid()) continue;
    const Obj& st = *t.storage;
    const char* src = storages_(st.s, st.dtype, uint64_t(st.i));
    size_t item = itemsize(st.dtype);
    const std::vector<int64_t>& sizes = t.sizes;
    const std::vector<int64_t>& strides = t.strides;
    int64_t offset = t.offset;
    uint64_t count = t.nbytes / item;
    Array out = empty_array(Shape(sizes), st.dtype, false);
    char* dst = static_cast<char*>(raw_data(out));
    if (count > 0) {
      size_t nd = sizes.size();
      bool contiguous = true;
      int64_t expect = 1;
      for (size_t d = nd; d-- > 0;) {
        if (sizes[d] != 1 && strides[d] != expect) contiguous = false;
        expect *= sizes[d];
      }
      if (contiguous) {
        std::memcpy(dst, src + uint64_t(offset) * item, size_t(t.nbytes));
      } else {
        // Odometer over all but the last axis; the last axis is copied as a row.
        int64_t inner = sizes[nd - 1], istride = strides[nd - 1];
        std::vector<int64_t> idx(nd, 0);
        uint64_t rows = count / uint64_t(inner);
        for (uint64_t r = 0; r < rows; ++r) {
          int64_t base = offset;
          for (size_t d = 0; d + 1 < nd; ++d) base += idx[d] * strides[d];
          const char* s = src + uint64_t(base) * item;
          if (istride == 1) {
            std::memcpy(dst, s, size_t(inner) * item);
            dst += size_t(inner) * item;
          } else {
            for (int64_t k = 0; k < inner; ++k, dst += item)
              std::memcpy(dst, s + uint64_t(k * istride) * item, item);
          }
          for (size_t d = nd - 1; d-- > 0;) {
            if (++idx[d] < sizes[d]) break;
            idx[d] = 0;
          }
        }
      }
    }
    if (st.dtype == DType::Bool) {
      const unsigned char* b = static_cast<const unsigned char*>(raw_data(out));
      for (uint64_t k = 0; k < count; ++k)
        if (b[k] > 1) fail(str("a bool tensor in storage '", st.s, "' holds the byte ", int(b[k])));
    }
    t.tensor = std::move(out);
  }
}

Ref Unpickler::call(const Ref& fn, const Ref& args) {
  if (fn->kind != Obj::Global) fail(str("it calls ", kind_name(fn->kind)));
  if (args->kind != Obj::Tuple) fail(str("'", fn->s, "' is called with ", kind_name(args->kind)));
  const std::vector<Ref>& a = args->items;
  switch (fn->callable) {
    case Callable::OrderedDict: {
      Ref d = make(Obj::Dict);
      d->depth = 1;
      if (a.empty()) return d;
      if (a.size() != 1 || (a[0]->kind != Obj::List && a[0]->kind != Obj::Tuple))
        fail("OrderedDict is called with arguments other than () or a list of pairs");
      for (const Ref& kv : a[0]->items) {
        if ((kv->kind != Obj::Tuple && kv->kind != Obj::List) || kv->items.size() != 2)
          fail("OrderedDict is given an item that is not a (key, value) pair");
        set_item(*d, kv->items[0], kv->items[1]);
      }
      return d;
    }
    case Callable::RebuildTensorV2:
      return rebuild_tensor(a);
    case Callable::RebuildParameter:
    case Callable::RebuildParameterWithState: {
      size_t want = fn->callable == Callable::RebuildParameter ? 3 : 4;
      if (a.size() != want || a[0]->kind != Obj::Tensor)
        fail(str("'", fn->s, "' is not called with (tensor, requires_grad, hooks",
                 want == 4 ? ", state)" : ")"));
      return a[0];
    }
    case Callable::StorageType:
      fail(str("it calls the storage type '", fn->s, "'; storages come only from persistent ids"));
  }
  fail("unreachable");
}

Ref Unpickler::run() {
  while (true) {
    at_ = i_;
    need(1);
    unsigned char op = static_cast<unsigned char>(p_[i_++]);
    switch (op) {
      case 0x80: {  // PROTO
        uint64_t v = uint(1);
        if (v < 2 || v > 5) fail(str("pickle protocol ", v, " (torch.save writes 2; 2..5 are read)"));
        break;
      }
      case 0x95: uint(8); break;  // FRAME: a hint for buffered readers
      case '.': {                 // STOP
        if (stack_.empty()) fail("it stops with an empty stack");
        return stack_.back();
      }
      case '(':
        if (marks_.size() >= lim_.max_marks) fail(str("more than ", lim_.max_marks, " open MARKs"));
        marks_.push_back(stack_.size());
        break;
      case '0': pop(); break;
      case '1': pop_mark(); break;
      case '2': push(top()); break;
      case 'N': push(make(Obj::None)); break;
      case 0x88: case 0x89: {
        Ref b = make(Obj::Bool);
        b->i = op == 0x88;
        push(b);
        break;
      }
      case 'J': push(make_int(int32_t(uint32_t(uint(4))))); break;
      case 'K': push(make_int(int64_t(uint(1)))); break;
      case 'M': push(make_int(int64_t(uint(2)))); break;
      case 0x8a: case 0x8b: {  // LONG1, LONG4: little-endian two's complement
        uint64_t k = uint(op == 0x8a ? 1 : 4);
        if (k > 8) fail(str("an integer of ", k, " bytes does not fit 64 bits"));
        need(k);
        uint64_t v = 0;
        for (uint64_t b = k; b-- > 0;) v = (v << 8) | static_cast<unsigned char>(p_[i_ + b]);
        if (k > 0 && k < 8 && (static_cast<unsigned char>(p_[i_ + k - 1]) & 0x80))
          v |= ~uint64_t(0) << (8 * k);
        i_ += size_t(k);
        push(make_int(int64_t(v)));
        break;
      }
      case 'G': {  // BINFLOAT, big-endian
        need(8);
        uint64_t u = 0;
        for (int b = 0; b < 8; ++b) u = (u << 8) | static_cast<unsigned char>(p_[i_ + size_t(b)]);
        i_ += 8;
        Ref f = make(Obj::Float);
        std::memcpy(&f->f, &u, 8);
        push(f);
        break;
      }
      case 'X': push(make_str(bytes(uint(4)), true)); break;     // BINUNICODE
      case 0x8c: push(make_str(bytes(uint(1)), true)); break;    // SHORT_BINUNICODE
      case 0x8d: push(make_str(bytes(uint(8)), true)); break;    // BINUNICODE8
      case 'T': {                                                // BINSTRING (Python 2 str)
        int64_t k = int32_t(uint32_t(uint(4)));
        if (k < 0) fail("a string has a negative length");
        push(make_str(bytes(uint64_t(k)), false));
        break;
      }
      case 'U': push(make_str(bytes(uint(1)), false)); break;  // SHORT_BINSTRING
      case 'B': case 'C': case 0x8e: {                         // BINBYTES, SHORT_, 8
        Ref b = make(Obj::Bytes);
        b->s = bytes(uint(op == 'B' ? 4 : op == 'C' ? 1 : 8));
        push(b);
        break;
      }
      case ')': push(make_tuple({})); break;
      case 't': push(make_tuple(pop_mark())); break;
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        size_t k = size_t(op - 0x84);
        std::vector<Ref> items(k);
        for (size_t j = k; j-- > 0;) items[j] = pop();
        push(make_tuple(std::move(items)));
        break;
      }
      case ']': case 'l': {  // EMPTY_LIST, LIST
        Ref l = make(Obj::List);
        l->depth = 1;
        if (op == 'l')
          for (Ref& v : pop_mark()) append(*l, std::move(v));
        push(l);
        break;
      }
      case 'a': {
        Ref v = pop();
        append(*top(), std::move(v));
        break;
      }
      case 'e': {
        std::vector<Ref> items = pop_mark();
        Ref& l = top();
        for (Ref& v : items) append(*l, std::move(v));
        break;
      }
      case '}': case 'd': {  // EMPTY_DICT, DICT
        Ref d = make(Obj::Dict);
        d->depth = 1;
        if (op == 'd') {
          std::vector<Ref> items = pop_mark();
          if (items.size() % 2) fail("DICT gets an odd number of items");
          for (size_t j = 0; j < items.size(); j += 2) set_item(*d, items[j], items[j + 1]);
        }
        push(d);
        break;
      }
      case 's': {
        Ref v = pop();
        Ref k = pop();
        set_item(*top(), std::move(k), std::move(v));
        break;
      }
      case 'u': {
        std::vector<Ref> items = pop_mark();
        if (items.size() % 2) fail("SETITEMS gets an odd number of items");
        Ref& d = top();
        for (size_t j = 0; j < items.size(); j += 2) set_item(*d, items[j], items[j + 1]);
        break;
      }
      case 'c': {  // GLOBAL "module\nname\n"
        std::string module = line();
        std::string name = line();
        push(global(module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        Ref name = pop();
        Ref module = pop();
        if (module->kind != Obj::Str || name->kind != Obj::Str)
          fail("STACK_GLOBAL gets something other than two str");
        push(global(module->s, name->s));
        break;
      }
      case 'R': {  // REDUCE
        Ref args = pop();
        Ref fn = pop();
        push(call(fn, args));
        break;
      }
      case 0x81: {  // NEWOBJ: cls.__new__(cls, *args); only OrderedDict
        Ref args = pop();
        Ref cls = pop();
        if (cls->kind != Obj::Global || cls->callable != Callable::OrderedDict)
          fail(str("NEWOBJ of ", cls->kind == Obj::Global ? cls->s : kind_name(cls->kind)));
        push(call(cls, args));
        break;
      }
      case 'b': {  // BUILD: the state of an OrderedDict (its _metadata attribute) is not needed
        Ref state = pop();
        Ref& obj = top();
        if (obj->kind != Obj::Dict)
          fail(str("BUILD sets the state of ", kind_name(obj->kind), " (only an OrderedDict's)"));
        bool ok = state->kind == Obj::Dict || state->kind == Obj::None ||
                  (state->kind == Obj::Tuple && state->items.size() == 2);
        if (!ok) fail(str("BUILD gets ", kind_name(state->kind), " as the state"));
        break;
      }
      case 'Q': {  // BINPERSID
        Ref pid = pop();
        push(persistent_load(pid));
        break;
      }
      case 'p': {  // PUT, text index
        std::string s = line();
        if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
          fail("PUT has a bad index");
        memo_put(std::stoull(s));
        break;
      }
      case 'q': memo_put(uint(1)); break;
      case 'r': memo_put(uint(4)); break;
      case 0x94: memo_put(memo_.size()); break;  // MEMOIZE
      case 'g': {
        std::string s = line();
        if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
          fail("GET has a bad index");
        push(memo_get(std::stoull(s)));
        break;
      }
      case 'h': push(memo_get(uint(1))); break;
      case 'j': push(memo_get(uint(4))); break;
      default:
        fail(str("opcode 0x", "0123456789abcdef"[op >> 4], "0123456789abcdef"[op & 15],
                 " is not one a torch.save state dict uses (only protocol 2-5 binary opcodes for "
                 "plain values, OrderedDict and tensors are read)"));
    }
  }
}

void put_u32(std::string& s, uint32_t v) {
  for (int b = 0; b < 4; ++b) s.push_back(char((v >> (8 * b)) & 0xFF));
}
void put_str(std::string& s, const std::string& v) {
  s.push_back('X');
  put_u32(s, uint32_t(v.size()));
  s += v;
}
void put_int(std::string& s, int64_t v) {
  if (v >= 0 && v < 256) {
    s.push_back('K');
    s.push_back(char(v));
  } else if (v >= 0 && v < 65536) {
    s.push_back('M');
    s.push_back(char(v & 0xFF));
    s.push_back(char(v >> 8));
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    s.push_back('J');
    put_u32(s, uint32_t(int32_t(v)));
  } else {
    s.push_back(char(0x8a));  // LONG1 of 8 bytes
    s.push_back(char(8));
    for (int b = 0; b < 8; ++b) s.push_back(char((uint64_t(v) >> (8 * b)) & 0xFF));
  }
}
void put_int_tuple(std::string& s, const std::vector<int64_t>& v) {
  if (v.empty()) {
    s.push_back(')');
    return;
  }
  if (v.size() > 3) s.push_back('(');
  for (int64_t x : v) put_int(s, x);
  s.push_back(v.size() == 1 ? char(0x85) : v.size() == 2 ? char(0x86) : v.size() == 3 ? char(0x87) : 't');
}

}  // namespace

const char* torch_storage_name(DType t, const char* op) {
  for (const StorageName& s : kStorages)
    if (s.dtype == t) return s.name;
  throw ValueError(str("[", op, "] torch has no ", dtype_name(t),
                       " tensors (PyTorch 1.13 storages: float32/64, float16, bfloat16, int8/16/32/64, "
                       "uint8, bool, complex64/128); cast it first, e.g. x.astype(jx::int64)"));
}

std::vector<std::pair<std::string, Array>> read_torch_pickle(const char* p, size_t n,
                                                             const StorageResolver& storages,
                                                             const std::string& what,
                                                             const char* op,
                                                             const PickleLimits& limits) {
  Unpickler vm(p, n, storages, what, op, limits);
  Ref root = vm.run();
  auto fail = [&](const std::string& msg) {
    throw IOError(str("[", op, "] '", what, "' ", msg));
  };
  if (root->kind != Obj::Dict)
    fail(str("holds ", kind_name(root->kind),
             ", not a state dict: save model.state_dict() (an OrderedDict of tensors) with torch.save"));
  std::vector<std::pair<std::string, Array>> out;
  for (size_t j = 0; j < root->items.size(); j += 2) {
    const Obj& k = *root->items[j];
    const Obj& v = *root->items[j + 1];
    if (k.kind != Obj::Str) fail(str("has a state dict key that is ", kind_name(k.kind), ", not a str"));
    if (v.kind != Obj::Tensor)
      fail(str("has an entry '", k.s, "' that is ", kind_name(v.kind),
               ", not a tensor: a state dict holds only tensors (save model.state_dict())"));
  }
  vm.materialize(*root);
  for (size_t j = 0; j < root->items.size(); j += 2)
    out.emplace_back(root->items[j]->s, root->items[j + 1]->tensor);
  return out;
}

std::string write_torch_pickle(const std::vector<std::pair<std::string, Array>>& state_dict,
                               const char* op) {
  // PROTO 2; OrderedDict (memo 0, reused for every tensor's empty backward_hooks); call it.
  std::string s = std::string("\x80\x02", 2) + "ccollections\nOrderedDict\n" +
                  std::string("q\x00", 2) + ")R";
  const size_t kBatch = 1000;  // as pickle batches SETITEMS
  for (size_t j = 0; j < state_dict.size(); ++j) {
    const auto& [name, a] = state_dict[j];
    require_savable(a, op);
    const char* storage = torch_storage_name(a.dtype(), op);
    if (j % kBatch == 0) s.push_back('(');
    put_str(s, name);
    if (j == 0) s += str("ctorch._utils\n_rebuild_tensor_v2\n") + std::string("q\x02", 2);
    else s += std::string("h\x02", 2);
    s += "((";
    put_str(s, "storage");
    s += str("ctorch\n", storage, "\n");
    put_str(s, str(j));
    put_str(s, "cpu");
    put_int(s, a.size());
    s += "tQ";
    put_int(s, 0);  // storage offset
    std::vector<int64_t> sizes(a.shape().begin(), a.shape().end()), strides(sizes.size());
    int64_t stride = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      strides[d] = stride;
      stride *= std::max<int64_t>(sizes[d], 1);
    }
    put_int_tuple(s, sizes);
    put_int_tuple(s, strides);
    s.push_back(char(0x89));  // requires_grad = False
    s += std::string("h\x00", 2) + ")R";  // backward_hooks = OrderedDict()
    s += "tR";
    if (j % kBatch == kBatch - 1 || j + 1 == state_dict.size()) s.push_back('u');
  }
  s.push_back('.');
  return s;
}

}  // namespace jx::detail
