// SHA-1 (FIPS 180-4), for Flax's RNG stream derivation (nn/scope.cpp): Flax folds the
// first four bytes of the SHA-1 of a module path into a key. Not for security.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace jx {

class Sha1 {
 public:
  Sha1();
  void update(std::string_view bytes);
  std::array<uint8_t, 20> digest();  // finishes; the object is spent afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[5];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

}  // namespace jx
