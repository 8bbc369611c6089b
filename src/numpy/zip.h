// Zip archives as the two container formats jx reads and writes use them: .npz (numpy.savez /
// numpy.load, written by Python's zipfile) and torch.save's .pt (PyTorch's miniz writer).
// Stored and deflated members, zip64 records, CRC-32 checked; no encryption, no multi-disk
// archives. Internal to jx.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace jx::detail {

// A member's compression method (APPNOTE.TXT 4.4.5): the two that NumPy and PyTorch write.
enum class ZipMethod : uint16_t { Stored = 0, Deflated = 8 };

// Reads an archive held in memory (a memory-mapped file), so that every read is a bounds check
// and stored members are used in place. Trusts only the central directory (torch.save's local
// headers carry zero sizes) and checks it whole before any member is read: every offset and size
// against the file, every member's local header, sizes that no deflate stream could produce,
// members that share bytes (an "overlapping zip bomb", refused as Python's zipfile does) and
// duplicate names. Errors are IOErrors "[op] 'what' ...".
class ZipReader {
 public:
  struct Member {
    std::string name;
    ZipMethod method = ZipMethod::Stored;
    uint64_t header_offset = 0;    // of its local header in the archive
    uint64_t data_offset = 0;      // of its first (compressed) data byte
    uint64_t compressed_size = 0;  // of the data in the archive
    uint64_t size = 0;             // uncompressed
    uint32_t crc = 0;
  };

  // Parses and checks the directory of the archive in [data, data + size), which must outlive
  // the reader. Throws IOError for anything but a well-formed archive of stored and deflated,
  // unencrypted members.
  ZipReader(const char* data, uint64_t size, std::string what, const char* op);

  // In the order of the central directory.
  const std::vector<Member>& members() const { return members_; }
  const Member* find(const std::string& name) const;  // nullptr when absent
  // The `m.size` bytes of a stored member, in place (no copy), CRC-checked on first access.
  // Throws IOError for a deflated member or a CRC mismatch.
  const char* data(const Member& m);
  // The uncompressed bytes of any member: in place for a stored one, inflated into `scratch`
  // for a deflated one (the view then points into `scratch`). Throws IOError for a deflate
  // stream that is corrupt or does not end at the recorded size, or a CRC mismatch.
  std::string_view read(const Member& m, std::vector<char>& scratch);
  // Throws IOError("[op] 'what' msg").
  [[noreturn]] void fail(const std::string& msg) const;

 private:
  struct EndRecord {
    uint64_t count = 0, size = 0, offset = 0;
  };
  EndRecord find_directory() const;
  Member parse_entry(const char* entry, uint64_t room, uint64_t i, uint64_t& entry_size) const;
  void check_disjoint(uint64_t directory_offset) const;
  size_t index_of(const Member& m) const;

  const char* data_;
  uint64_t size_;
  std::string what_;
  const char* op_;
  std::vector<Member> members_;
  std::map<std::string, size_t> index_;
  std::vector<char> verified_;  // per member: its CRC-32 has been checked
};

// How a ZipWriter lays out its archive.
struct ZipWriterOptions {
  // Each member's data starts at a multiple of this (at most 4096), padded by an extra field in
  // the local header as PyTorch's writer does ("FB"), so that a reader can use tensors in place.
  uint64_t alignment = 1;
  // Sizes and offsets >= this get zip64 records (the format needs them from 0xFFFFFFFF on;
  // tests lower the limit to exercise them on small archives).
  uint64_t zip64_limit = 0xFFFFFFFFu;
  bool timestamps = false;  // stamp members with the local time (as zipfile) or zeros (PyTorch)
  uint32_t unix_mode = 0644;
  // Overwrites bytes written earlier, at an absolute offset (a seekable file): a deflated
  // member's local header gets its CRC and compressed size this way once they are known.
  // Needed for deflated members only.
  std::function<void(uint64_t offset, const void*, size_t)> patch = {};
};

// Writes an archive through `sink`, member after member, then the central directory.
class ZipWriter {
 public:
  using Sink = std::function<void(const void*, size_t)>;
  using Options = ZipWriterOptions;

  explicit ZipWriter(Sink sink, Options options = {});
  // Writes one member whose bytes are the concatenation of `pieces` (e.g. an .npy header and the
  // array's bytes). Deflated members need options.patch (InternalError otherwise).
  void add(const std::string& name, std::initializer_list<std::string_view> pieces,
           ZipMethod method = ZipMethod::Stored);
  // Writes the central directory and the end records; the archive is complete after it.
  void finish();

 private:
  struct Entry {
    std::string name;
    ZipMethod method = ZipMethod::Stored;
    uint16_t flags = 0, time = 0, date = 0;
    uint32_t crc = 0;
    uint64_t offset = 0, compressed_size = 0, size = 0;
    bool zip64_local = false;  // the local header holds its sizes in a zip64 extra field
  };
  std::string local_header(const Entry& e) const;
  void emit(const void* p, size_t n);
  void deflate_pieces(Entry& e, std::initializer_list<std::string_view> pieces);

  Sink sink_;
  Options options_;
  uint64_t pos_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace jx::detail
