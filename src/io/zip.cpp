// Zip archives as torch.save writes them (PyTorch's caffe2/serialize/inline_container.cc over
// miniz): stored members whose data is 64-byte aligned by a padding extra field ("FB"), data
// descriptors after each member, and zip64 end records. The reader trusts only the central
// directory (torch's local headers carry zero sizes) and checks every offset and size
// against the archive before using it.
#include "io/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "jx/error.h"
#include "support/str.h"

namespace jx::detail {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kEnd64LocatorSig = 0x07064b50;
constexpr uint64_t kMax32 = 0xFFFFFFFFu;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kPaddingExtraId = 0x4246;  // "FB", PyTorch's alignment padding
constexpr size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndSize = 22;

uint64_t get(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void put16(std::string& s, uint64_t v) {
  s.push_back(char(v & 0xFF));
  s.push_back(char((v >> 8) & 0xFF));
}
void put32(std::string& s, uint64_t v) {
  put16(s, v & 0xFFFF);
  put16(s, (v >> 16) & 0xFFFF);
}
void put64(std::string& s, uint64_t v) {
  put32(s, v & kMax32);
  put32(s, v >> 32);
}

uint32_t crc_of(const char* p, uint64_t n) {
  uLong crc = crc32(0, nullptr, 0);
  constexpr uint64_t kStep = uint64_t(1) << 30;  // zlib counts in 32-bit uInt
  for (uint64_t done = 0; done < n;) {
    uint64_t take = std::min(kStep, n - done);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(p + done), uInt(take));
    done += take;
  }
  return uint32_t(crc);
}

}  // namespace

void ZipReader::fail(const std::string& msg) const {
  throw IOError(str("[", op_, "] '", what_, "' ", msg));
}

ZipReader::ZipReader(const char* data, uint64_t size, std::string what, const char* op)
    : data_(data), size_(size), what_(std::move(what)), op_(op) {
  if (size_ < kEndSize)
    fail(str("is not a zip archive (", size_, " bytes, too short for an end record)"));
  // The end record is 22 bytes plus a comment of up to 65535; search backwards for one whose
  // comment ends exactly at the end of the file.
  uint64_t lowest = size_ > kEndSize + 0xFFFF ? size_ - kEndSize - 0xFFFF : 0;
  uint64_t end_at = UINT64_MAX;
  for (uint64_t i = size_ - kEndSize + 1; i-- > lowest;) {
    const char* e = data_ + i;
    if (get(e, 4) == kEndSig && i + kEndSize + get(e + 20, 2) == size_) {
      end_at = i;
      break;
    }
  }
  if (end_at == UINT64_MAX)
    fail("is not a zip archive: no end-of-central-directory record (truncated or not written "
         "by torch.save)");
  const char* e = data_ + end_at;
  if (get(e + 4, 2) != 0 || get(e + 6, 2) != 0) fail("is a multi-disk zip archive");
  uint64_t count = get(e + 10, 2), cd_size = get(e + 12, 4), cd_offset = get(e + 16, 4);
  if (end_at >= 20 && get(data_ + end_at - 20, 4) == kEnd64LocatorSig) {
    uint64_t at = get(data_ + end_at - 20 + 8, 8);
    if (at > size_ || size_ - at < 56 || get(data_ + at, 4) != kEnd64Sig)
      fail("is corrupt: the zip64 end-of-central-directory record is missing or outside the file");
    const char* e64 = data_ + at;
    count = get(e64 + 32, 8);
    cd_size = get(e64 + 40, 8);
    cd_offset = get(e64 + 48, 8);
  } else if (count == 0xFFFF || cd_size == kMax32 || cd_offset == kMax32) {
    fail("is corrupt: its end record asks for zip64 records that are missing");
  }
  if (cd_offset > size_ || cd_size > size_ - cd_offset)
    fail(str("is corrupt or truncated: the central directory (", cd_size, " bytes at ", cd_offset,
             ") lies outside the file of ", size_, " bytes"));
  // Every entry takes at least 46 bytes: a larger count is corrupt (and must not be reserved).
  if (count > cd_size / kCentralHeaderSize)
    fail(str("is corrupt: ", count, " entries cannot fit a central directory of ", cd_size,
             " bytes"));
  members_.reserve(size_t(count));
  const char* cd = data_ + cd_offset;
  uint64_t p = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (cd_size - p < kCentralHeaderSize || get(cd + p, 4) != kCentralSig)
      fail(str("is corrupt: bad central directory entry ", i));
    const char* c = cd + p;
    uint64_t flags = get(c + 8, 2), method = get(c + 10, 2);
    Member m;
    m.crc = uint32_t(get(c + 16, 4));
    uint64_t csize = get(c + 20, 4), usize = get(c + 24, 4);
    uint64_t nlen = get(c + 28, 2), xlen = get(c + 30, 2), clen = get(c + 32, 2);
    uint64_t offset = get(c + 42, 4);
    if (cd_size - p - kCentralHeaderSize < nlen + xlen + clen)
      fail(str("is corrupt: central directory entry ", i, " overruns the directory"));
    m.name.assign(c + kCentralHeaderSize, size_t(nlen));
    // zip64 extra: 8-byte values for exactly the fields saturated at 0xFFFFFFFF, in order.
    const char* x = c + kCentralHeaderSize + nlen;
    for (uint64_t q = 0; q + 4 <= xlen;) {
      uint64_t id = get(x + q, 2), len = get(x + q + 2, 2);
      if (q + 4 + len > xlen) fail(str("is corrupt: a bad extra field in '", m.name, "'"));
      if (id == kZip64ExtraId) {
        uint64_t r = q + 4;
        for (uint64_t* field : {&usize, &csize, &offset}) {
          if (*field != kMax32) continue;
          if (r + 8 > q + 4 + len) fail(str("is corrupt: short zip64 field in '", m.name, "'"));
          *field = get(x + r, 8);
          r += 8;
        }
      }
      q += 4 + len;
    }
    const std::string where = str("member '", m.name, "'");
    if (flags & 1) fail(str(where, " is encrypted"));
    if (method != 0)
      fail(str(where, " is compressed (method ", method,
               "); torch.save stores members uncompressed: re-save the file with torch.save "
               "instead of re-zipping it"));
    if (csize != usize) fail(str("is corrupt: ", where, " is stored with two different sizes"));
    if (offset > size_ || size_ - offset < kLocalHeaderSize || get(data_ + offset, 4) != kLocalSig)
      fail(str("is corrupt: the local header of ", where, " is missing or outside the file"));
    const char* lh = data_ + offset;
    uint64_t lnlen = get(lh + 26, 2), lxlen = get(lh + 28, 2);
    uint64_t data_at = offset + kLocalHeaderSize + lnlen + lxlen;
    if (data_at > size_ || usize > size_ - data_at)
      fail(str("is truncated: ", where, " needs ", usize, " bytes at offset ", data_at,
               ", the file has ", size_));
    if (lnlen != nlen || std::memcmp(lh + kLocalHeaderSize, m.name.data(), size_t(nlen)) != 0)
      fail(str("is corrupt: the local header of ", where, " names another member"));
    m.data_offset = data_at;
    m.size = usize;
    if (!index_.emplace(m.name, members_.size()).second)
      fail(str("is corrupt: it holds two members named '", m.name, "'"));
    members_.push_back(std::move(m));
    p += kCentralHeaderSize + nlen + xlen + clen;
  }
}

const ZipReader::Member* ZipReader::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &members_[it->second];
}

const char* ZipReader::data(const Member& m) {
  const char* p = data_ + m.data_offset;
  if (!m.crc_checked) {
    if (crc_of(p, m.size) != m.crc) fail(str("is corrupt: CRC-32 mismatch in member '", m.name, "'"));
    const_cast<Member&>(m).crc_checked = true;
  }
  return p;
}

ZipWriter::ZipWriter(Sink sink, uint64_t alignment, uint64_t zip64_limit)
    : sink_(std::move(sink)), alignment_(std::max<uint64_t>(alignment, 1)), limit_(zip64_limit) {}

void ZipWriter::emit(const std::string& s) {
  sink_(s.data(), s.size());
  pos_ += s.size();
}

void ZipWriter::add(const std::string& name, const void* data, size_t n) {
  Entry e{name, pos_, n, crc_of(static_cast<const char*>(data), n)};
  bool big = n >= limit_;
  std::string h;
  put32(h, kLocalSig);
  put16(h, big ? 45 : 20);
  put16(h, 0);  // flags: sizes and CRC are in the header, no data descriptor
  put16(h, 0);  // stored
  put16(h, 0);  // time
  put16(h, 0);  // date (PyTorch writes zeros too)
  put32(h, e.crc);
  put32(h, big ? kMax32 : n);
  put32(h, big ? kMax32 : n);
  put16(h, name.size());
  std::string extra;
  if (big) {
    put16(extra, kZip64ExtraId);
    put16(extra, 16);
    put64(extra, n);
    put64(extra, n);
  }
  uint64_t unpadded = pos_ + kLocalHeaderSize + name.size() + extra.size() + 4;
  uint64_t pad = (alignment_ - unpadded % alignment_) % alignment_;
  put16(extra, kPaddingExtraId);
  put16(extra, pad);
  extra.append(size_t(pad), 'Z');
  put16(h, extra.size());
  h += name;
  h += extra;
  emit(h);
  if (n) sink_(data, n);
  pos_ += n;
  entries_.push_back(std::move(e));
}

void ZipWriter::finish() {
  uint64_t cd_offset = pos_;
  std::string cd;
  for (const Entry& e : entries_) {
    bool big_size = e.size >= limit_, big_off = e.offset >= limit_;
    std::string extra;
    if (big_size || big_off) {
      std::string body;
      if (big_size) {
        put64(body, e.size);
        put64(body, e.size);
      }
      if (big_off) put64(body, e.offset);
      put16(extra, kZip64ExtraId);
      put16(extra, body.size());
      extra += body;
    }
    uint16_t version = extra.empty() ? 20 : 45;
    put32(cd, kCentralSig);
    put16(cd, 0x0300 | version);  // made by: Unix
    put16(cd, version);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put32(cd, e.crc);
    put32(cd, big_size ? kMax32 : e.size);
    put32(cd, big_size ? kMax32 : e.size);
    put16(cd, e.name.size());
    put16(cd, extra.size());
    put16(cd, 0);                     // comment
    put16(cd, 0);                     // disk
    put16(cd, 0);                     // internal attributes
    put32(cd, uint64_t(0644) << 16);  // rw-r--r--
    put32(cd, big_off ? kMax32 : e.offset);
    cd += e.name;
    cd += extra;
  }
  uint64_t count = entries_.size(), cd_size = cd.size();
  bool zip64 = count >= 0xFFFF || cd_size >= limit_ || cd_offset >= limit_;
  if (zip64) {
    uint64_t end64 = cd_offset + cd_size;
    put32(cd, kEnd64Sig);
    put64(cd, 44);
    put16(cd, 45);
    put16(cd, 45);
    put32(cd, 0);
    put32(cd, 0);
    put64(cd, count);
    put64(cd, count);
    put64(cd, cd_size);
    put64(cd, cd_offset);
    put32(cd, kEnd64LocatorSig);
    put32(cd, 0);
    put64(cd, end64);
    put32(cd, 1);
  }
  put32(cd, kEndSig);
  put16(cd, 0);
  put16(cd, 0);
  put16(cd, zip64 ? 0xFFFF : count);
  put16(cd, zip64 ? 0xFFFF : count);
  put32(cd, zip64 ? kMax32 : cd_size);
  put32(cd, zip64 ? kMax32 : cd_offset);
  put16(cd, 0);
  emit(cd);
}

}  // namespace jx::detail
