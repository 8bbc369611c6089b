// Shared helpers of tests/io/torch_*_test.cpp: test data paths, file bytes, a scratch
// directory, and a small pickle assembler for hand-made data.pkl programs.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/array_impl.h"
#include "io/torch_archive.h"
#include "jx/io/torch.h"
#include "support/str.h"

namespace torch_test {

namespace fs = std::filesystem;
using jx::Array;

inline std::string data_path(const std::string& name) {
  if (const char* d = std::getenv("JX_TEST_DATA")) return std::string(d) + "/io/torch/" + name;
  return std::string(JX_TEST_DATA_DIR) + "/io/torch/" + name;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

inline jx::io::StateDict load_bytes(const std::string& bytes,
                                    const jx::detail::PickleLimits& limits = {}) {
  return jx::detail::torch_state_dict_from_bytes(bytes.data(), bytes.size(), "<memory>", limits);
}

// A fresh directory under the test's temp dir, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = ::testing::TempDir() + "jx_torch_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char* made = mkdtemp(buf.data());
    EXPECT_NE(made, nullptr);
    path_ = made ? made : "/tmp";
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Bytes of a pickle program, written opcode by opcode.
struct Pickle {
  std::string b = std::string("\x80\x02", 2);
  Pickle& op(char c) {
    b.push_back(c);
    return *this;
  }
  Pickle& raw(const std::string& s) {
    b += s;
    return *this;
  }
  Pickle& u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char((v >> (8 * i)) & 0xFF));
    return *this;
  }
  Pickle& u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(char((v >> (8 * i)) & 0xFF));
    return *this;
  }
  Pickle& str(const std::string& s) {
    op('X').u32(uint32_t(s.size()));
    return raw(s);
  }
  Pickle& integer(int64_t v) {
    op(char(0x8a)).op(char(8));
    return u64(uint64_t(v));
  }
  Pickle& global(const std::string& module, const std::string& name) {
    return op('c').raw(jx::str(module, "\n", name, "\n"));
  }
  // A tensor over storage `key` of `storage_type` holding `numel` elements.
  Pickle& tensor(const std::string& storage_type, const std::string& key, int64_t numel,
                 int64_t offset, const std::vector<int64_t>& sizes,
                 const std::vector<int64_t>& strides) {
    global("torch._utils", "_rebuild_tensor_v2").op('(').op('(').str("storage");
    global("torch", storage_type).str(key).str("cpu").integer(numel).op('t').op('Q');
    integer(offset).op('(');
    for (int64_t s : sizes) integer(s);
    op('t').op('(');
    for (int64_t s : strides) integer(s);
    op('t').op(char(0x89));
    global("collections", "OrderedDict").op(')').op('R');
    return op('t').op('R');
  }
  Pickle& ordered_dict() { return global("collections", "OrderedDict").op(')').op('R'); }
  std::string done() { return b + "."; }
};

// An archive in torch.save's layout around a hand-made pickle.
inline std::string archive(const std::string& pickle,
                           const std::vector<std::pair<std::string, std::string>>& storages = {}) {
  return jx::detail::torch_archive_of(pickle, storages);
}

inline std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// The error a load throws ("" when it loads).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const jx::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace torch_test
