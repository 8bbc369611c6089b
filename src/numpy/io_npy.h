// The .npy format (numpy/lib/format.py) and the file plumbing shared by .npy and .npz.
// Internal to jx.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::detail {

// Everything before the data in the .npy file NumPy writes for `a` (magic, version, header
// length, header dict padded to 64 bytes). Version 1.0 unless the header needs 2.0.
std::string npy_header(const Array& a, const char* op);

// Decodes a whole .npy image held in memory (an .npz member). `what` names it in errors.
Array npy_decode(const char* data, size_t n, const std::string& what, const char* op);

// "\x93NUMPY": the .npy magic prefix; "PK\x03\x04": a zip archive.
bool has_npy_magic(const char* p, size_t n);
bool has_zip_magic(const char* p, size_t n);

// Raises IOError("[op] 'path': msg").
[[noreturn]] void io_fail(const char* op, const std::string& path, const std::string& msg);

// Throws a typed error unless `a` is a valid, concrete array.
void require_savable(const Array& a, const char* op);

// A file written under a temporary name in the target's directory and renamed over the target
// on commit(), so that readers see either the old file or the whole new one. Destroying it
// without commit() removes the temporary file.
class AtomicFile {
 public:
  AtomicFile(const std::string& path, const char* op);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const void* p, size_t n);
  uint64_t tell() const { return pos_; }
  void seek(uint64_t pos);  // for patching headers written earlier
  void seek_end();
  void commit();

 private:
  std::string path_, tmp_, op_;
  std::FILE* f_ = nullptr;
  uint64_t pos_ = 0, end_ = 0;
};

// A read-only mapping of a whole file, unmapped on destruction.
class MappedFile {
 public:
  MappedFile(const std::string& path, const char* op);  // throws IOError
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// A file opened for reading, with bounds-checked positioned reads that throw IOError.
class InputFile {
 public:
  InputFile(const std::string& path, const char* op);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  uint64_t size() const { return size_; }
  // Reads exactly n bytes at `offset`; `what` says what was being read when it is cut short.
  void read_at(uint64_t offset, void* dst, size_t n, const char* what);
  const std::string& path() const { return path_; }
  const char* op() const { return op_; }

 private:
  std::string path_;
  const char* op_;
  std::FILE* f_ = nullptr;
  uint64_t size_ = 0;
};

// savez / savez_compressed. Sizes and offsets >= zip64_limit get zip64 records; the zip format
// needs them from 0xFFFFFFFF on, and tests lower the limit to exercise them on small files.
void write_npz(const std::string& path, const std::vector<std::pair<std::string, Array>>& arrays,
               bool compress, uint64_t zip64_limit = 0xFFFFFFFFu);

// Adds `ext` to a path that does not end in it, as np.save / np.savez do.
std::string with_extension(const std::string& path, const char* ext);

}  // namespace jx::detail
