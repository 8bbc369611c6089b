// A minimal zip archive reader and writer for PyTorch's checkpoint container (torch.save's
// zip format): stored (uncompressed) members only, zip64 records, CRC-32 checked. Works on
// bytes already in memory (a memory-mapped file), so that every read is a bounds check and
// never a seek. Internal to jx.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace jx::detail {

class ZipReader {
 public:
  struct Member {
    std::string name;
    uint64_t data_offset = 0;  // of the first byte of the member's data in the archive
    uint64_t size = 0;
    uint32_t crc = 0;
    bool crc_checked = false;
  };

  // Parses the central directory of the archive held in [data, data + size). `what` names
  // the archive in errors ("[op] 'what' ..."). Throws IOError for anything that is not a
  // well-formed archive of stored members: a bad or missing end record, entries outside the
  // file, compressed or encrypted members, duplicate names.
  ZipReader(const char* data, uint64_t size, std::string what, const char* op);

  const std::vector<Member>& members() const { return members_; }
  const Member* find(const std::string& name) const;
  // The bytes of a member, CRC-checked on first access (IOError on a mismatch).
  const char* data(const Member& m);
  [[noreturn]] void fail(const std::string& msg) const;

 private:
  const char* data_;
  uint64_t size_;
  std::string what_;
  const char* op_;
  std::vector<Member> members_;
  std::map<std::string, size_t> index_;
};

// Writes a zip archive of stored members through `sink`, each member's data starting at a
// multiple of `alignment` bytes (padding goes into a local extra field, as PyTorch's writer
// does, so that a reader can map tensors in place). Sizes and offsets >= zip64_limit get
// zip64 records (the format needs them from 0xFFFFFFFF on; tests lower the limit).
class ZipWriter {
 public:
  using Sink = std::function<void(const void*, size_t)>;
  explicit ZipWriter(Sink sink, uint64_t alignment = 64, uint64_t zip64_limit = 0xFFFFFFFFu);
  void add(const std::string& name, const void* data, size_t n);
  // Writes the central directory and the end records; the archive is complete after it.
  void finish();

 private:
  struct Entry {
    std::string name;
    uint64_t offset = 0, size = 0;
    uint32_t crc = 0;
  };
  void emit(const std::string& s);
  Sink sink_;
  uint64_t alignment_, limit_, pos_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace jx::detail
