// .npy files: jnp::save / jnp::load. Writing reproduces numpy.lib.format byte for byte (header
// dict in sorted key order, the 21-character growth padding after the shape, 64-byte alignment);
// reading accepts every version (1.0, 2.0, 3.0), byte order and memory order NumPy writes.
#include "numpy/io_npy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

#include "core/array_impl.h"
#include "jx/numpy/io.h"
#include "support/str.h"

namespace jx {
namespace detail {

static_assert(std::endian::native == std::endian::little,
              "jx's .npy I/O assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;
constexpr size_t kGrowthAxisMaxDigits = 21;  // NumPy's GROWTH_AXIS_MAX_DIGITS
constexpr size_t kMaxHeaderSize = 10000;     // NumPy's _MAX_HEADER_SIZE for untrusted files

const char* descr_of(DType t) {
  switch (t) {
    case DType::Bool:
      return "|b1";
    case DType::Int8:
      return "|i1";
    case DType::Int16:
      return "<i2";
    case DType::Int32:
      return "<i4";
    case DType::Int64:
      return "<i8";
    case DType::UInt8:
      return "|u1";
    case DType::UInt16:
      return "<u2";
    case DType::UInt32:
      return "<u4";
    case DType::UInt64:
      return "<u8";
    case DType::Float16:
      return "<f2";
    case DType::BFloat16:
      return "<V2";  // what np.save writes for ml_dtypes.bfloat16
    case DType::Float32:
      return "<f4";
    case DType::Float64:
      return "<f8";
    case DType::Complex64:
      return "<c8";
    case DType::Complex128:
      return "<c16";
  }
  return "";
}

struct Header {
  DType dtype = DType::Float32;
  Shape shape;
  bool fortran = false;
  bool swap = false;     // big-endian data
  size_t swap_unit = 1;  // bytes reversed as one number when swapping
  size_t data_offset = 0;
};

// A parser for the Python literal dict in the header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& s, const std::string& what, const char* op)
      : s_(s), what_(what), op_(op) {}

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    std::string descr;
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      std::string key = parse_string();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (peek() == '[' || peek() == '(')
          fail(str("unsupported dtype: structured descr ", rest(),
                   " (jx arrays have one numeric dtype)"));
        descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        h.shape = parse_shape();
        have_shape = true;
      } else {
        fail(str("header has an unexpected key '", key,
                 "'; expected 'descr', 'fortran_order' and 'shape'"));
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect('}');
      break;
    }
    if (!have_descr || !have_order || !have_shape)
      fail("header does not contain the keys 'descr', 'fortran_order' and 'shape'");
    set_dtype(h, descr);
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) { io_fail(op_, what_, msg); }
  std::string rest() const { return s_.substr(i_, 40); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(str("cannot parse header: expected '", c, "' at \"", rest(), "\""));
    ++i_;
  }
  std::string parse_string() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"')
      fail(str("cannot parse header: expected a string at \"", rest(), "\""));
    size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) fail("cannot parse header: unterminated string");
    std::string r = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return r;
  }
  bool parse_bool() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail(str("fortran_order is not a valid bool: \"", rest(), "\""));
  }
  Shape parse_shape() {
    Shape shape;
    expect('(');
    for (;;) {
      skip_ws();
      if (peek() == ')') {
        ++i_;
        break;
      }
      if (!(peek() >= '0' && peek() <= '9'))
        fail(str("shape is not a tuple of non-negative integers: \"", rest(), "\""));
      uint64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > uint64_t(std::numeric_limits<int64_t>::max() / 10))
          fail("shape has a dimension that is too large");
        v = v * 10 + uint64_t(peek() - '0');
        ++i_;
      }
      if (peek() == 'L') ++i_;  // written by Python 2
      shape.push_back(int64_t(v));
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect(')');
      break;
    }
    return shape;
  }
  void set_dtype(Header& h, const std::string& d) {
    std::string body = d;
    char order = '=';
    if (!body.empty() && std::strchr("<>|=", body[0])) {
      order = body[0];
      body = body.substr(1);
    }
    DType t;
    bool ok = true;
    if (body == "b1" || body == "?")
      t = DType::Bool;
    else if (body == "i1" || body == "b")
      t = DType::Int8;
    else if (body == "i2" || body == "h")
      t = DType::Int16;
    else if (body == "i4" || body == "i")
      t = DType::Int32;
    else if (body == "i8" || body == "q" || body == "l")
      t = DType::Int64;
    else if (body == "u1" || body == "B")
      t = DType::UInt8;
    else if (body == "u2" || body == "H")
      t = DType::UInt16;
    else if (body == "u4" || body == "I")
      t = DType::UInt32;
    else if (body == "u8" || body == "Q" || body == "L")
      t = DType::UInt64;
    else if (body == "f2" || body == "e")
      t = DType::Float16;
    else if (body == "f4" || body == "f")
      t = DType::Float32;
    else if (body == "f8" || body == "d")
      t = DType::Float64;
    else if (body == "c8" || body == "F")
      t = DType::Complex64;
    else if (body == "c16" || body == "D")
      t = DType::Complex128;
    else if (body == "V2")
      t = DType::BFloat16;  // jnp.load reads 2-byte voids as bfloat16
    else
      ok = false;
    if (!ok) {
      try {
        t = dtype_from_name(body);  // a dtype name such as 'float32'
      } catch (const DTypeError&) {
        fail(str("unsupported dtype '", d,
                 "' (jx reads bool, int8..64, uint8..64, float16, float32, "
                 "float64, complex64, complex128 and bfloat16 saved as '<V2')"));
      }
    }
    h.dtype = t;
    h.swap = order == '>' && itemsize(t) > 1;
    // A big-endian complex stores each part big-endian, real part first.
    h.swap_unit = is_complex(t) ? itemsize(t) / 2 : itemsize(t);
  }

  const std::string& s_;
  std::string what_;
  const char* op_;
  size_t i_ = 0;
};

// Parses magic, version and header from the start of a file; `read(offset, n, dst, what)`
// reads bytes. Returns the header with data_offset set.
template <class Read>
Header read_header(Read&& read, const std::string& what, const char* op) {
  char pre[12];
  read(0, 8, pre, "magic string");
  if (std::memcmp(pre, kMagic, kMagicLen) != 0) {
    if (has_zip_magic(pre, 8))
      io_fail(op, what, "is an .npz (zip) archive, not an .npy file; read it with jnp::load_npz");
    io_fail(op, what, "is not an .npy file: the magic string \\x93NUMPY is missing");
  }
  int major = uint8_t(pre[6]), minor = uint8_t(pre[7]);
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    io_fail(
        op, what,
        str("unsupported .npy format version ", major, ".", minor, " (jx reads 1.0, 2.0 and 3.0)"));
  size_t len_bytes = major == 1 ? 2 : 4;
  read(8, len_bytes, pre + 8, "array header length");
  uint64_t hlen = uint8_t(pre[8]) | (uint64_t(uint8_t(pre[9])) << 8);
  if (len_bytes == 4)
    hlen |= (uint64_t(uint8_t(pre[10])) << 16) | (uint64_t(uint8_t(pre[11])) << 24);
  if (hlen > kMaxHeaderSize)
    io_fail(op, what,
            str("header is ", hlen, " bytes, more than the ", kMaxHeaderSize,
                " NumPy reads from untrusted files"));
  std::string header(size_t(hlen), '\0');
  read(8 + len_bytes, size_t(hlen), header.data(), "array header");
  Header h = HeaderParser(header, what, op).parse();
  h.data_offset = 8 + len_bytes + size_t(hlen);
  return h;
}

// Number of data bytes, checking the shape for overflow. The product of the nonzero
// dimensions must fit too, as NumPy requires ("array is too big"): a zero-sized array's
// element count and strides are still computed from the others.
uint64_t data_bytes(const Header& h, const std::string& what, const char* op) {
  uint64_t n = itemsize(h.dtype);
  bool zero = false;
  for (int64_t d : h.shape) {
    if (d == 0) zero = true;
    else if (__builtin_mul_overflow(n, uint64_t(d), &n) ||
             n > uint64_t(std::numeric_limits<int64_t>::max()))
      io_fail(op, what, str("shape ", shape_str(h.shape), " is too large"));
  }
  return zero ? 0 : n;
}

void byteswap(char* p, size_t n, size_t item) {
  for (size_t i = 0; i + item <= n; i += item)
    for (size_t a = 0, b = item - 1; a < b; ++a, --b) std::swap(p[i + a], p[i + b]);
}

// Fortran-ordered data is the C-ordered data of the reversed shape: transpose it back.
Array from_fortran(const Array& f, const Shape& shape) {
  Array out = empty_array(shape, f.dtype(), false);
  size_t nd = shape.size(), item = itemsize(f.dtype());
  int64_t n = shape.numel();
  if (n == 0) return out;
  // stride of output axis k in the Fortran (column-major) source
  std::vector<int64_t> src_stride(nd, 1);
  for (size_t k = 1; k < nd; ++k) src_stride[k] = src_stride[k - 1] * shape[k - 1];
  std::vector<int64_t> idx(nd, 0);
  const char* src = static_cast<const char*>(raw_data(f));
  char* dst = static_cast<char*>(raw_data(out));
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + size_t(i) * item, src + size_t(off) * item, item);
    for (size_t k = nd; k-- > 0;) {
      if (++idx[k] < shape[k]) {
        off += src_stride[k];
        break;
      }
      off -= src_stride[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
  return out;
}

// Turns freshly read raw bytes into a jx array: native byte order, C order, bools 0/1.
Array finish(Array raw, const Header& h) {
  char* p = static_cast<char*>(raw_data(raw));
  size_t nbytes = raw.nbytes();
  if (h.swap) byteswap(p, nbytes, h.swap_unit);
  if (h.dtype == DType::Bool)
    for (size_t i = 0; i < nbytes; ++i) p[i] = p[i] != 0;  // any nonzero byte is True
  if (h.fortran && h.shape.size() > 1) return from_fortran(raw, h.shape);
  return raw;
}

Shape reversed(const Shape& s) {
  std::vector<int64_t> v(s.begin(), s.end());
  std::reverse(v.begin(), v.end());
  return Shape(v);
}

int current_umask() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Umask:", 0) == 0) return int(std::strtol(line.c_str() + 6, nullptr, 8));
  return 022;
}

}  // namespace

void io_fail(const char* op, const std::string& path, const std::string& msg) {
  throw IOError(str("[", op, "] '", path, "' ", msg));
}

bool has_npy_magic(const char* p, size_t n) {
  return n >= kMagicLen && std::memcmp(p, kMagic, kMagicLen) == 0;
}
bool has_zip_magic(const char* p, size_t n) {
  return n >= 4 && std::memcmp(p, "PK\x03\x04", 4) == 0;
}

void require_savable(const Array& a, const char* op) {
  if (!a.valid())
    throw ValueError(str("[", op, "] called with an empty jx::Array (default-constructed)"));
  if (!a.is_concrete())
    throw ConcretizationError(str("[", op, "] cannot save a traced array (",
                                  type_str(a.dtype(), a.shape()),
                                  "); save concrete values outside jit/grad/vmap"));
}

std::string with_extension(const std::string& path, const char* ext) {
  size_t n = std::strlen(ext);
  if (path.size() >= n && path.compare(path.size() - n, n, ext) == 0) return path;
  return path + ext;
}

std::string npy_header(const Array& a, const char* op) {
  std::string dict = str("{'descr': '", descr_of(a.dtype()),
                         "', 'fortran_order': False, 'shape': ", shape_str(a.shape()), ", }");
  if (!a.shape().empty())
    dict.append(kGrowthAxisMaxDigits - std::to_string(a.shape()[0]).size(), ' ');
  for (int version = 1; version <= 2; ++version) {
    size_t len_bytes = version == 1 ? 2 : 4;
    size_t hlen = dict.size() + 1;
    size_t pad = kAlign - ((kMagicLen + 2 + len_bytes + hlen) % kAlign);
    size_t total = hlen + pad;
    if (version == 1 && total > 0xFFFF) continue;
    std::string out(kMagic, kMagicLen);
    out.push_back(char(version));
    out.push_back('\0');
    for (size_t b = 0; b < len_bytes; ++b) out.push_back(char((total >> (8 * b)) & 0xFF));
    out += dict;
    out.append(pad, ' ');
    out.push_back('\n');
    return out;
  }
  throw ValueError(
      str("[", op, "] the .npy header for ", type_str(a.dtype(), a.shape()), " is too large"));
}

Array npy_decode(const char* data, size_t n, const std::string& what, const char* op) {
  auto read = [&](uint64_t off, size_t len, void* dst, const char* part) {
    if (off > n || len > n - off)
      io_fail(op, what, str("is truncated: ran out of data reading the ", part));
    std::memcpy(dst, data + off, len);
  };
  Header h = read_header(read, what, op);
  uint64_t nbytes = data_bytes(h, what, op);
  if (h.data_offset > n || nbytes > n - h.data_offset)
    io_fail(op, what,
            str("is truncated: shape ", shape_str(h.shape), " of ", dtype_name(h.dtype), " needs ",
                nbytes, " data bytes, the file has ", n - std::min<uint64_t>(n, h.data_offset)));
  Array raw = empty_array(h.fortran ? reversed(h.shape) : h.shape, h.dtype, false);
  if (nbytes) std::memcpy(raw_data(raw), data + h.data_offset, size_t(nbytes));
  return finish(raw, h);
}

// ---- files ----

MappedFile::MappedFile(const std::string& path, const char* op) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_fail(op, path, str("cannot be opened: ", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    io_fail(op, path, str("cannot be opened: ", std::strerror(e)));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    io_fail(op, path, "is a directory, not a file");
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) {
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      io_fail(op, path, str("cannot be mapped: ", std::strerror(e)));
    }
    data_ = static_cast<const char*>(m);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

AtomicFile::AtomicFile(const std::string& path, const char* op) : path_(path), op_(op) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmpl = dir + "." + base + ".tmp.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) io_fail(op, path, str("cannot be written: ", std::strerror(errno)));
  tmp_ = buf.data();
  fchmod(fd, mode_t(0666 & ~current_umask()));  // as open(path, "wb") would create it
  f_ = fdopen(fd, "w+b");
  if (!f_) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp_.c_str());
    io_fail(op, path, str("cannot be written: ", std::strerror(e)));
  }
}

AtomicFile::~AtomicFile() {
  if (f_) {
    std::fclose(f_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFile::write(const void* p, size_t n) {
  if (n && std::fwrite(p, 1, n, f_) != n)
    io_fail(op_.c_str(), path_, str("write failed: ", std::strerror(errno)));
  pos_ += n;
  end_ = std::max(end_, pos_);
}

void AtomicFile::seek(uint64_t pos) {
  if (fseeko(f_, off_t(pos), SEEK_SET) != 0)
    io_fail(op_.c_str(), path_, str("seek failed: ", std::strerror(errno)));
  pos_ = pos;
}

void AtomicFile::seek_end() { seek(end_); }

void AtomicFile::commit() {
  bool ok = std::fflush(f_) == 0 && ::fsync(fileno(f_)) == 0;
  int e = errno;
  ok = (std::fclose(f_) == 0) && ok;
  f_ = nullptr;
  if (!ok) {
    ::unlink(tmp_.c_str());
    io_fail(op_.c_str(), path_, str("write failed: ", std::strerror(e)));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    e = errno;
    ::unlink(tmp_.c_str());
    io_fail(op_.c_str(), path_, str("cannot be written: ", std::strerror(e)));
  }
}

InputFile::InputFile(const std::string& path, const char* op) : path_(path), op_(op) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    io_fail(op, path, str("cannot be opened: ", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) io_fail(op, path, "is a directory, not a file");
  f_ = std::fopen(path.c_str(), "rb");
  if (!f_) io_fail(op, path, str("cannot be opened: ", std::strerror(errno)));
  size_ = uint64_t(st.st_size);
}

InputFile::~InputFile() {
  if (f_) std::fclose(f_);
}

void InputFile::read_at(uint64_t offset, void* dst, size_t n, const char* what) {
  if (offset > size_ || n > size_ - offset)
    io_fail(op_, path_, str("is truncated: ran out of data reading the ", what));
  if (n == 0) return;
  if (fseeko(f_, off_t(offset), SEEK_SET) != 0 || std::fread(dst, 1, n, f_) != n)
    io_fail(op_, path_, str("read failed while reading the ", what, ": ", std::strerror(errno)));
}

}  // namespace detail

namespace numpy {

void save(const std::string& path, const Array& a) {
  detail::require_savable(a, "save");
  std::string p = detail::with_extension(path, ".npy");
  std::string header = detail::npy_header(a, "save");
  detail::AtomicFile f(p, "save");
  f.write(header.data(), header.size());
  f.write(detail::raw_data(a), a.nbytes());
  f.commit();
}

Array load(const std::string& path) {
  detail::InputFile f(path, "load");
  auto read = [&](uint64_t off, size_t n, void* dst, const char* what) {
    f.read_at(off, dst, n, what);
  };
  detail::Header h = detail::read_header(read, path, "load");
  uint64_t nbytes = detail::data_bytes(h, path, "load");
  uint64_t have = f.size() - std::min<uint64_t>(f.size(), h.data_offset);
  if (nbytes > have)
    detail::io_fail("load", path,
                    str("is truncated: shape ", shape_str(h.shape), " of ", dtype_name(h.dtype),
                        " needs ", nbytes, " data bytes, the file has ", have));
  Array raw = detail::empty_array(h.fortran ? detail::reversed(h.shape) : h.shape, h.dtype, false);
  f.read_at(h.data_offset, detail::raw_data(raw), size_t(nbytes), "array data");
  return detail::finish(raw, h);
}

}  // namespace numpy
}  // namespace jx
