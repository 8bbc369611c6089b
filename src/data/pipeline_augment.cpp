// jx::data augmentation: random crop (after zero padding) and random left-right flip of HWC
// images (NHWC after batch), keyed per element so that results depend only on the key, the
// epoch and the element's position.
//
// Keys are derived with threefry2x32 over all elements of a batch at once: fold_in(k, d) is
// threefry_2x32(k, [0, d]) and jax.random.bits(k, (c,), uint32)[i] is the xor of the two
// threefry2x32(k, (0, i)) outputs (JAX's partitionable bits); tests/data/pipeline_test.cpp
// checks both against jx::random::fold_in and jx::random::bits.
#include <algorithm>
#include <cstring>

#include "core/array_impl.h"
#include "data/pipeline_internal.h"
#include "jx/error.h"
#include "jx/numpy.h"
#include "jx/random.h"
#include "support/str.h"

namespace jx::data::detail {

namespace {

using Key = std::array<uint32_t, 2>;

Array u32(const std::vector<uint32_t>& v, const Shape& shape) { return numpy::array(v, shape); }

// fold_in(keys[j], data[j]) for every j, in one threefry2x32 call.
std::vector<Key> fold_many(const std::vector<Key>& keys, const std::vector<uint32_t>& data) {
  size_t m = keys.size();
  std::vector<Key> out(m);
  if (m == 0) return out;
  std::vector<uint32_t> k0(m), k1(m);
  for (size_t j = 0; j < m; ++j) k0[j] = keys[j][0], k1[j] = keys[j][1];
  Shape s{int64_t(m)};
  auto [a, b] = random::threefry2x32(u32(k0, s), u32(k1, s), numpy::zeros(s, DType::UInt32), u32(data, s));
  std::vector<uint32_t> av = a.to_vector<uint32_t>(), bv = b.to_vector<uint32_t>();
  for (size_t j = 0; j < m; ++j) out[j] = {av[j], bv[j]};
  return out;
}

// bits(keys[j], (count,), uint32) for every j: row j of the result holds key j's draws.
std::vector<uint32_t> draws(const std::vector<Key>& keys, int64_t count) {
  size_t m = keys.size();
  if (m == 0) return {};
  std::vector<uint32_t> k0(m), k1(m), iota(static_cast<size_t>(count));
  for (size_t j = 0; j < m; ++j) k0[j] = keys[j][0], k1[j] = keys[j][1];
  for (int64_t i = 0; i < count; ++i) iota[size_t(i)] = uint32_t(i);
  Shape col{int64_t(m), 1}, row{1, count};
  auto [a, b] = random::threefry2x32(u32(k0, col), u32(k1, col), numpy::zeros(row, DType::UInt32),
                                     u32(iota, row));
  return (a ^ b).to_vector<uint32_t>();
}

// Zero-pads every image of `in` [m, H, W, C] by `pad`, then cuts size[0] x size[1] windows at
// the offsets drawn from keys[i].
Array crop(const Array& in, const std::vector<Key>& keys, std::array<int64_t, 2> size, int64_t pad) {
  const Shape& s = in.shape();
  int64_t m = s[0], H = s[1], W = s[2], C = s[3], h = size[0], w = size[1];
  std::vector<uint32_t> b = draws(keys, 2);
  Array out = jx::detail::empty_array({m, h, w, C}, in.dtype(), in.weak_type());
  size_t px = size_t(C) * in.itemsize();
  const auto* src = static_cast<const unsigned char*>(jx::detail::raw_data(in));
  auto* dst = static_cast<unsigned char*>(jx::detail::raw_data(out));
  for (int64_t i = 0; i < m; ++i) {
    int64_t top = int64_t(b[size_t(2 * i)] % uint32_t(H + 2 * pad - h + 1)) - pad;
    int64_t left = int64_t(b[size_t(2 * i + 1)] % uint32_t(W + 2 * pad - w + 1)) - pad;
    // Columns x of the window with 0 <= left + x < W come from the image, the rest are padding.
    int64_t x0 = std::clamp<int64_t>(-left, 0, w), x1 = std::clamp<int64_t>(W - left, x0, w);
    for (int64_t y = 0; y < h; ++y) {
      unsigned char* d = dst + size_t((i * h + y) * w) * px;
      int64_t sy = top + y;
      if (sy < 0 || sy >= H) {
        std::memset(d, 0, size_t(w) * px);
        continue;
      }
      const unsigned char* srow = src + size_t((i * H + sy) * W) * px;
      std::memset(d, 0, size_t(x0) * px);
      std::memcpy(d + size_t(x0) * px, srow + size_t(left + x0) * px, size_t(x1 - x0) * px);
      std::memset(d + size_t(x1) * px, 0, size_t(w - x1) * px);
    }
  }
  return out;
}

// Mirrors the width axis of the images of `in` [m, H, W, C] whose draw has its top bit set.
Array flip(const Array& in, const std::vector<Key>& keys) {
  const Shape& s = in.shape();
  int64_t m = s[0], H = s[1], W = s[2], C = s[3];
  std::vector<uint32_t> b = draws(keys, 1);
  Array out = jx::detail::empty_array(s, in.dtype(), in.weak_type());
  size_t px = size_t(C) * in.itemsize(), img = size_t(H * W) * px;
  const auto* src = static_cast<const unsigned char*>(jx::detail::raw_data(in));
  auto* dst = static_cast<unsigned char*>(jx::detail::raw_data(out));
  for (int64_t i = 0; i < m; ++i) {
    const unsigned char* si = src + size_t(i) * img;
    unsigned char* di = dst + size_t(i) * img;
    if (!(b[size_t(i)] >> 31)) {
      std::memcpy(di, si, img);
      continue;
    }
    for (int64_t y = 0; y < H; ++y) {
      const unsigned char* srow = si + size_t(y * W) * px;
      unsigned char* drow = di + size_t(y * W) * px;
      if (px == 1) {  // one uint8 channel (MNIST)
        std::reverse_copy(srow, srow + W, drow);
        continue;
      }
      for (int64_t x = 0; x < W; ++x)
        for (size_t k = 0; k < px; ++k) drow[size_t(x) * px + k] = srow[size_t(W - 1 - x) * px + k];
    }
  }
  return out;
}

std::vector<std::string> split_path(const std::string& field) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= field.size() && !field.empty()) {
    size_t slash = field.find('/', start);
    if (slash == std::string::npos) slash = field.size();
    parts.push_back(field.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

class AugmentNode : public Node {
 public:
  AugmentNode(std::shared_ptr<const Node> parent, AugmentParams p)
      : Node(parent, parent->length(), parent->batched()), p_(std::move(p)),
        path_(split_path(p_.field)) {}

  std::vector<Tree> get_many(std::span<const int64_t> g, const Exec& exec) const override {
    std::vector<Tree> elems = parent_->get_many(g, exec);
    std::vector<Key> keys = keys_of(g);
    for (size_t j = 0; j < elems.size(); ++j) {
      Array img = image_of(elems[j]);
      if (batched_) {
        check_rank(img, 4, g[j]);
        std::vector<uint32_t> rows(size_t(img.shape()[0]));
        for (size_t r = 0; r < rows.size(); ++r) rows[r] = uint32_t(r);
        set_image(elems[j], apply(img, fold_many(std::vector<Key>(rows.size(), keys[j]), rows)));
      } else {
        check_rank(img, 3, g[j]);
        Shape s = img.shape();
        Array out = apply(img.reshape({1, s[0], s[1], s[2]}), {keys[j]});
        set_image(elems[j], out.reshape({out.shape()[1], out.shape()[2], out.shape()[3]}));
      }
    }
    return elems;
  }

  // A batch of single images: augment the gathered [m, H, W, C] leaf in one pass, row j with
  // the key of element g[j] (the same result as augmenting the elements, then stacking).
  Tree get_batch(std::span<const int64_t> g, const Exec& exec) const override {
    if (batched_) return Node::get_batch(g, exec);
    Tree batch = parent_->get_batch(g, exec);
    Array img = image_of(batch);
    if (img.ndim() != 4) check_rank(img, 3, g.empty() ? 0 : g[0]);  // names the element shape
    set_image(batch, apply(img, keys_of(g)));
    return batch;
  }

  void collect_keys(std::vector<Array>& keys) const override {
    parent_->collect_keys(keys);
    keys.push_back(p_.key);
  }
  std::string str() const override {
    if (p_.kind == Augment::Crop)
      return jx::str(parent_->str(), ".random_crop((", p_.size[0], ", ", p_.size[1], "), ",
                     p_.padding, ")");
    return jx::str(parent_->str(), ".random_flip_left_right()");
  }

 private:
  const char* op() const {
    return p_.kind == Augment::Crop ? "random_crop" : "random_flip_left_right";
  }

  std::vector<Key> keys_of(std::span<const int64_t> g) const {
    std::vector<int64_t> e(g.size()), p(g.size());
    for (size_t j = 0; j < g.size(); ++j) std::tie(e[j], p[j]) = locate(g[j]);
    return element_keys(p_.key, e, p);
  }

  Array apply(const Array& nhwc, const std::vector<Key>& keys) const {
    if (p_.kind == Augment::FlipLeftRight) return flip(nhwc, keys);
    const Shape& s = nhwc.shape();
    if (p_.size[0] > s[1] + 2 * p_.padding || p_.size[1] > s[2] + 2 * p_.padding)
      throw ValueError(jx::str("[random_crop] a (", p_.size[0], ", ", p_.size[1],
                               ") crop does not fit in a ", s[1], "x", s[2], " image padded by ",
                               p_.padding, "; use a smaller size or more padding"));
    return crop(nhwc, keys, p_.size, p_.padding);
  }

  void check_rank(const Array& img, int rank, int64_t g) const {
    if (img.ndim() == rank) return;
    const char* want = rank == 3 ? "an HWC image [H, W, C] (a channel axis is needed: reshape "
                                   "[H, W] to [H, W, 1])"
                                 : "an NHWC batch of images [N, H, W, C]";
    throw ValueError(jx::str("[", op(), "] element ", g, ": '", field_name(), "' is ",
                             type_str(img.dtype(), img.shape()), "; expected ", want));
  }

  std::string field_name() const { return p_.field.empty() ? std::string("the element") : p_.field; }

  Array image_of(const Tree& t) const {
    if (t.is_leaf()) return t.array();
    const Tree* cur = &t;
    for (const std::string& part : path_) {
      if (!cur->is_dict() || !cur->contains(part)) {
        std::string keys;
        if (cur->is_dict())
          for (const std::string& k : cur->keys()) keys += jx::str(keys.empty() ? "" : ", ", "'", k, "'");
        throw ValueError(jx::str("[", op(), "] the element ", t.str(), " has no '", p_.field,
                                 "'", keys.empty() ? "" : jx::str(" (keys: ", keys, ")"),
                                 "; pass field = the key path of the image leaf"));
      }
      cur = &cur->at(part);
    }
    if (!cur->is_leaf())
      throw ValueError(jx::str("[", op(), "] '", p_.field, "' of the element is ", cur->str(),
                               ", not an array; pass field = the key path of the image leaf"));
    return cur->array();
  }

  void set_image(Tree& t, Array img) const {
    if (t.is_leaf()) {
      t = Tree(std::move(img));
      return;
    }
    Tree* cur = &t;  // image_of found the path already
    for (const std::string& part : path_) cur = &(*cur)[part].get();
    *cur = Tree(std::move(img));
  }

  AugmentParams p_;
  std::vector<std::string> path_;
};

}  // namespace

std::vector<std::array<uint32_t, 2>> element_keys(const Array& key, std::span<const int64_t> epochs,
                                                  std::span<const int64_t> positions) {
  std::vector<Key> epoch_keys(epochs.size());
  std::vector<uint32_t> data(positions.size());
  int64_t last_epoch = -1;
  Key ke{};
  for (size_t j = 0; j < epochs.size(); ++j) {
    if (epochs[j] != last_epoch) {
      std::vector<uint32_t> k = random::fold_in(key, epochs[j]).to_vector<uint32_t>();
      ke = {k[0], k[1]};
      last_epoch = epochs[j];
    }
    epoch_keys[j] = ke;
    data[j] = uint32_t(uint64_t(positions[j]));
  }
  return fold_many(epoch_keys, data);
}

std::shared_ptr<const Node> make_augment(std::shared_ptr<const Node> parent, AugmentParams params) {
  return std::make_shared<AugmentNode>(std::move(parent), std::move(params));
}

}  // namespace jx::data::detail
