// Shape: a small vector of int64 dimensions, stored inline up to 6 dims so that eager
// dispatch does not allocate for shapes.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

namespace jx {

class Shape {
 public:
  static constexpr int kInline = 6;
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  template <class It>
  Shape(It first, It last) { assign(first, last); }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }
  explicit Shape(size_t n, int64_t fill = 0) {
    resize(n);
    std::fill(begin(), end(), fill);
  }
  Shape(const Shape& o) { copy_from(o); }
  Shape(Shape&& o) noexcept { steal(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~Shape() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t& back() { return data()[size_ - 1]; }
  int64_t back() const { return data()[size_ - 1]; }

  void resize(size_t n) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = 0;
    size_ = n;
  }
  void reserve(size_t n) {
    if (n <= capacity()) return;
    auto* p = static_cast<int64_t*>(std::malloc(n * sizeof(int64_t)));
    std::copy(begin(), end(), p);
    if (heap_) std::free(heap_);
    heap_ = p;
    cap_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == capacity()) reserve(capacity() * 2);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    push_back(0);
    for (size_t i = size_ - 1; i > pos; --i) data()[i] = data()[i - 1];
    data()[pos] = v;
  }
  void erase(size_t pos) {
    for (size_t i = pos; i + 1 < size_; ++i) data()[i] = data()[i + 1];
    --size_;
  }
  void clear() { size_ = 0; }

  // Product of the dimensions (1 for a scalar).
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : *this) n *= d;
    return n;
  }
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  size_t capacity() const { return heap_ ? cap_ : kInline; }
  template <class It>
  void assign(It first, It last) {
    size_t n = size_t(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data());
    size_ = n;
  }
  // Copies the whole inline buffer when the source is inline: a fixed-size copy that GCC's
  // bounds analysis can follow (a variable-length one trips -Warray-bounds).
  void copy_from(const Shape& o) {
    if (o.heap_) {
      assign(o.begin(), o.end());
    } else {
      if (heap_) {
        std::free(heap_);
        heap_ = nullptr;
      }
      std::copy(o.inline_, o.inline_ + kInline, inline_);
      size_ = o.size_;
    }
  }
  void release() {
    if (heap_) std::free(heap_);
    heap_ = nullptr;
    size_ = 0;
  }
  void steal(Shape& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
    } else {
      std::copy(o.inline_, o.inline_ + kInline, inline_);
    }
    o.size_ = 0;
  }
  int64_t* heap_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
  int64_t inline_[kInline] = {};
};

// "(2, 3)" as NumPy prints shapes; "(5,)" for rank 1.
std::string shape_str(const Shape& s);
std::ostream& operator<<(std::ostream& os, const Shape& s);

}  // namespace jx
