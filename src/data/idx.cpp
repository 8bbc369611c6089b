// IDX files (the MNIST family's format) through zlib's gz* interface, which reads gzip-compressed
// and plain files alike (it looks at the content, not the name) and reports a cut-short or
// corrupt stream through gzerror: that is how truncated .gz files are told apart from short
// plain ones.
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "core/array_impl.h"
#include "jx/data.h"
#include "jx/error.h"
#include "numpy/io_npy.h"
#include "support/str.h"

namespace jx::data {

static_assert(std::endian::native == std::endian::little, "IDX reading assumes a little-endian host");

namespace {

constexpr const char* kLoad = "load_idx";
constexpr const char* kSave = "save_idx";
// zlib counts bytes in unsigned int; read and write in pieces well below that.
constexpr size_t kChunk = size_t(1) << 30;

// The IDX type codes and the dtypes they hold.
struct IdxType {
  uint8_t code;
  DType dtype;
};
constexpr IdxType kTypes[] = {{0x08, DType::UInt8},   {0x09, DType::Int8},
                              {0x0B, DType::Int16},   {0x0C, DType::Int32},
                              {0x0D, DType::Float32}, {0x0E, DType::Float64}};

// IDX stores multi-byte values big-endian.
void swap_bytes(void* data, size_t count, size_t width) {
  auto* p = static_cast<unsigned char*>(data);
  if (width == 1) return;
  for (size_t i = 0; i < count; ++i, p += width) std::reverse(p, p + width);
}

class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    errno = 0;
    f_ = gzopen(path.c_str(), "rb");
    if (!f_)
      jx::detail::io_fail(kLoad, path, str("cannot be opened: ", errno ? std::strerror(errno) : "out of memory"));
    gzbuffer(f_, 1 << 17);  // zlib's default 8 KiB buffer makes large reads slow
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) file_size_ = uint64_t(st.st_size);
  }
  ~GzReader() { gzclose_r(f_); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads up to n bytes; fewer only at the end of the data. A corrupt or cut-short compressed
  // stream, or a system read error, throws.
  size_t read(void* dst, size_t n) {
    size_t got = 0;
    auto* out = static_cast<char*>(dst);
    while (got < n) {
      unsigned want = unsigned(std::min(n - got, kChunk));
      int r = gzread(f_, out + got, want);
      check_stream();
      if (r <= 0) break;
      got += size_t(r);
      if (unsigned(r) < want) break;
    }
    return got;
  }

  // Reads exactly n bytes of `what`; a short read is a truncated file.
  void read_exact(void* dst, size_t n, const std::string& what, const Shape* shape = nullptr) {
    size_t got = read(dst, n);
    if (got == n) return;
    std::string need = shape ? str("needs ", n, " bytes for shape ", shape_str(*shape)) : str("needs ", n, " bytes");
    jx::detail::io_fail(kLoad, path_, str("is truncated: ", what, " ", need, ", only ", got, " remain"));
  }

  // Rejects a declared data size the file cannot hold, before it is allocated: a plain file
  // must have that many bytes after the header (`consumed` bytes); a gzip stream inflates at
  // most ~1032:1 (deflate's limit), so more than that is corrupt whatever the stream says.
  void check_data_size(uint64_t nbytes, uint64_t consumed, const Shape& shape) {
    if (gzdirect(f_)) {
      uint64_t left = file_size_ - std::min(file_size_, consumed);
      if (nbytes > left)
        jx::detail::io_fail(kLoad, path_,
                            str("is truncated: its data needs ", nbytes, " bytes for shape ",
                                shape_str(shape), ", only ", left, " remain"));
    } else if (nbytes / 1040 > file_size_) {
      jx::detail::io_fail(kLoad, path_,
                          str("is corrupt or truncated: its header declares shape ",
                              shape_str(shape), " (", nbytes, " bytes), more than its ",
                              file_size_, " gzip-compressed bytes can hold"));
    }
  }

 private:
  void check_stream() {
    int err = Z_OK;
    const char* msg = gzerror(f_, &err);
    if (err == Z_OK) return;
    if (err == Z_BUF_ERROR)
      jx::detail::io_fail(kLoad, path_,
                      "is truncated: its gzip stream ends before the end of the compressed data");
    if (err == Z_ERRNO) jx::detail::io_fail(kLoad, path_, str("cannot be read: ", std::strerror(errno)));
    std::string why = msg;  // zlib prefixes its message with the path, which io_fail names already
    if (why.rfind(path_ + ": ", 0) == 0) why.erase(0, path_.size() + 2);
    jx::detail::io_fail(kLoad, path_, str("has corrupt gzip data (zlib: ", why, ")"));
  }

  std::string path_;
  gzFile f_ = nullptr;
  uint64_t file_size_ = 0;
};

}  // namespace

Array load_idx(const std::string& path) {
  GzReader in(path);
  unsigned char magic[4];
  size_t got = in.read(magic, 4);
  if (got < 4)
    jx::detail::io_fail(kLoad, path, str("is too short to be an IDX file (", got, " bytes; the header alone is 4)"));
  if (magic[0] != 0 || magic[1] != 0)
    jx::detail::io_fail(kLoad, path,
                    str("is not an IDX file: its magic number 0x", std::hex, (magic[0] << 24 | magic[1] << 16 | magic[2] << 8 | magic[3]),
                        " does not start with two zero bytes (MNIST images are 0x00000803, labels 0x00000801)"));
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes)
    if (t.code == magic[2]) type = &t;
  if (!type)
    jx::detail::io_fail(kLoad, path,
                    str("has unknown IDX type code 0x", std::hex, int(magic[2]),
                        " (known: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64)"));
  int ndim = magic[3];
  std::vector<unsigned char> dims_raw(size_t(ndim) * 4);
  in.read_exact(dims_raw.data(), dims_raw.size(), str("the sizes of its ", ndim, " dimensions"));

  // The product of the nonzero sizes must fit too: a zero-sized array's element count and
  // strides are still computed from the others (NumPy: "array is too big").
  Shape shape;
  size_t nonzero_count = 1;
  bool zero = false;
  const size_t width = itemsize(type->dtype);
  const size_t max_count = size_t(std::numeric_limits<int64_t>::max()) / width;
  for (int d = 0; d < ndim; ++d) {
    const unsigned char* b = &dims_raw[size_t(d) * 4];
    uint32_t n = uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | uint32_t(b[3]);
    shape.push_back(int64_t(n));
    if (n == 0) {
      zero = true;
      continue;
    }
    if (nonzero_count > max_count / n)
      jx::detail::io_fail(kLoad, path, str("declares shape ", shape_str(shape), "..., too large to hold"));
    nonzero_count *= n;
  }
  size_t count = zero ? 0 : nonzero_count;
  in.check_data_size(uint64_t(count) * width, 4 + dims_raw.size(), shape);

  Array out = jx::detail::empty_array(shape, type->dtype, false);
  in.read_exact(jx::detail::raw_data(out), count * width, "its data", &shape);
  unsigned char extra;
  if (in.read(&extra, 1) != 0)
    jx::detail::io_fail(kLoad, path,
                    str("has bytes after the data of shape ", shape_str(shape),
                        ": its header's sizes do not match its contents"));
  swap_bytes(jx::detail::raw_data(out), count, width);
  return out;
}

void save_idx(const std::string& path, const Array& a, bool compress) {
  jx::detail::require_savable(a, kSave);
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes)
    if (t.dtype == a.dtype()) type = &t;
  if (!type)
    throw DTypeError(str("[save_idx] IDX files hold uint8, int8, int16, int32, float32 or float64, not ",
                         dtype_name(a.dtype()), "; convert with .astype(...) first"));
  if (a.ndim() < 1 || a.ndim() > 255)
    throw ValueError(str("[save_idx] IDX files hold arrays of 1 to 255 dimensions; the array is ",
                         type_str(a.dtype(), a.shape()), a.ndim() < 1 ? " (reshape a scalar to (1,))" : ""));
  std::vector<unsigned char> header = {0, 0, type->code, uint8_t(a.ndim())};
  for (int64_t n : a.shape()) {
    if (uint64_t(n) > std::numeric_limits<uint32_t>::max())
      throw ValueError(str("[save_idx] IDX sizes are 32-bit; shape ", shape_str(a.shape()), " has a larger one"));
    for (int s = 24; s >= 0; s -= 8) header.push_back(uint8_t(uint64_t(n) >> s));
  }
  std::vector<unsigned char> data(a.nbytes());
  if (!data.empty()) std::memcpy(data.data(), jx::detail::raw_data(a), data.size());
  swap_bytes(data.data(), size_t(a.size()), itemsize(a.dtype()));

  errno = 0;
  gzFile f = gzopen(path.c_str(), compress ? "wb" : "wbT");  // "T": plain, uncompressed output
  if (!f) jx::detail::io_fail(kSave, path, str("cannot be created: ", errno ? std::strerror(errno) : "out of memory"));
  bool ok = gzwrite(f, header.data(), unsigned(header.size())) == int(header.size());
  for (size_t off = 0; ok && off < data.size(); off += kChunk) {
    unsigned n = unsigned(std::min(kChunk, data.size() - off));
    ok = gzwrite(f, data.data() + off, n) == int(n);
  }
  int err = Z_OK;
  std::string msg = ok ? "" : gzerror(f, &err);
  if (gzclose_w(f) != Z_OK && ok) msg = "closing the file failed";
  if (!msg.empty()) jx::detail::io_fail(kSave, path, str("could not be written: ", msg));
}

}  // namespace jx::data
