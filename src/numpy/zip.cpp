// The zip format (PKWARE's APPNOTE.TXT) as far as .npz and torch.save archives use it. Python's
// zipfile writes a local header, the data, then seeks back to fill in the CRC and sizes, and
// stamps members with the local time; PyTorch's miniz writer pads each local header with an
// "FB" extra field so that tensor data is 64-byte aligned, and leaves local sizes zero (data
// descriptors follow). The reader therefore takes sizes from the central directory only.
#include "numpy/zip.h"

#include <zlib.h>

#include <algorithm>
#include <ctime>

#include "jx/error.h"
#include "numpy/io_npy.h"
#include "support/str.h"

namespace jx::detail {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kEnd64LocatorSig = 0x07064b50;
constexpr uint64_t kMax16 = 0xFFFF, kMax32 = 0xFFFFFFFFu;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kPaddingExtraId = 0x4246;  // "FB", PyTorch's alignment padding
constexpr uint16_t kFlagEncrypted = 0x1, kFlagUtf8 = 0x800;
constexpr size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndSize = 22;
constexpr size_t kEnd64Size = 56, kEnd64LocatorSize = 20;
constexpr uint64_t kZlibStep = uint64_t(1) << 30;  // zlib counts in 32-bit uInt
constexpr size_t kDeflateChunk = size_t(1) << 20;

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

uint32_t crc_update(uint32_t crc, const char* p, uint64_t n) {
  uLong c = crc;
  for (uint64_t done = 0; done < n;) {
    uint64_t take = std::min(kZlibStep, n - done);
    c = crc32(c, reinterpret_cast<const Bytef*>(p + done), uInt(take));
    done += take;
  }
  return uint32_t(c);
}

// MS-DOS date and time of now, as Python's zipfile stamps members (local time).
void dos_now(uint16_t& time, uint16_t& date) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  int year = std::max(tm.tm_year + 1900, 1980);
  date = uint16_t(((year - 1980) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday);
  time = uint16_t((tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2));
}

}  // namespace

// ---- reading ----

void ZipReader::fail(const std::string& msg) const { io_fail(op_, what_, msg); }

ZipReader::ZipReader(const char* data, uint64_t size, std::string what, const char* op)
    : data_(data), size_(size), what_(std::move(what)), op_(op) {
  EndRecord d = find_directory();
  // Every entry takes at least 46 bytes: a larger count is corrupt (and must not be reserved).
  if (d.count > d.size / kCentralHeaderSize)
    fail(str("is corrupt: ", d.count, " entries cannot fit a central directory of ", d.size,
             " bytes"));
  members_.reserve(size_t(d.count));
  for (uint64_t i = 0, p = 0; i < d.count; ++i) {
    uint64_t entry_size = 0;
    members_.push_back(parse_entry(data_ + d.offset + p, d.size - p, i, entry_size));
    p += entry_size;
  }
  check_disjoint(d.offset);
  for (size_t i = 0; i < members_.size(); ++i)
    if (!index_.emplace(members_[i].name, i).second)
      fail(str("is corrupt: it holds two members named '", members_[i].name, "'"));
  verified_.assign(members_.size(), 0);
}

ZipReader::EndRecord ZipReader::find_directory() const {
  if (size_ < kEndSize)
    fail(str("is not a zip archive (", size_,
             " bytes, too short for an end-of-central-directory record)"));
  // The end record is 22 bytes plus a comment of up to 65535; search backwards for one whose
  // comment ends exactly at the end of the file.
  uint64_t lowest = size_ > kEndSize + kMax16 ? size_ - kEndSize - kMax16 : 0;
  uint64_t end_at = UINT64_MAX;
  for (uint64_t i = size_ - kEndSize + 1; i-- > lowest;) {
    const char* e = data_ + i;
    if (get(e, 4) == kEndSig && i + kEndSize + get(e + 20, 2) == size_) {
      end_at = i;
      break;
    }
  }
  if (end_at == UINT64_MAX)
    fail("is not a zip archive, or is truncated: no end-of-central-directory record");
  const char* e = data_ + end_at;
  if (get(e + 4, 2) != 0 || get(e + 6, 2) != 0)
    fail("is a multi-disk zip archive, which is not supported");
  EndRecord d{get(e + 10, 2), get(e + 12, 4), get(e + 16, 4)};
  if (end_at >= kEnd64LocatorSize && get(e - kEnd64LocatorSize, 4) == kEnd64LocatorSig) {
    uint64_t at = get(e - kEnd64LocatorSize + 8, 8);
    if (at > size_ || size_ - at < kEnd64Size)
      fail(str("is truncated: its zip64 end-of-central-directory record (at offset ", at,
               ") lies outside the file of ", size_, " bytes"));
    const char* e64 = data_ + at;
    if (get(e64, 4) != kEnd64Sig)
      fail("is corrupt: bad zip64 end-of-central-directory signature");
    d = {get(e64 + 32, 8), get(e64 + 40, 8), get(e64 + 48, 8)};
  } else if (d.size == kMax32 || d.offset == kMax32) {
    // (A count of 0xFFFF is no such sign: Python's zipfile writes 65535 entries without zip64.)
    fail("is corrupt: its end record asks for zip64 records that are missing");
  }
  if (d.offset > size_ || d.size > size_ - d.offset)
    fail(str("is corrupt or truncated: the central directory lies outside the file (", d.size,
             " bytes at offset ", d.offset, "; the file has ", size_, " bytes)"));
  return d;
}

ZipReader::Member ZipReader::parse_entry(const char* c, uint64_t room, uint64_t i,
                                         uint64_t& entry_size) const {
  if (room < kCentralHeaderSize || get(c, 4) != kCentralSig)
    fail(str("is corrupt: bad central directory entry ", i));
  uint64_t flags = get(c + 8, 2), method = get(c + 10, 2);
  uint64_t csize = get(c + 20, 4), usize = get(c + 24, 4);
  uint64_t nlen = get(c + 28, 2), xlen = get(c + 30, 2), clen = get(c + 32, 2);
  uint64_t offset = get(c + 42, 4);
  if (room - kCentralHeaderSize < nlen + xlen + clen)
    fail(str("is corrupt: central directory entry ", i, " overruns the directory"));
  entry_size = kCentralHeaderSize + nlen + xlen + clen;
  Member m;
  m.name.assign(c + kCentralHeaderSize, size_t(nlen));
  m.crc = uint32_t(get(c + 16, 4));
  // zip64 extra: 8-byte values for exactly the fields saturated at 0xFFFFFFFF, in this order.
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
  if (flags & kFlagEncrypted) fail(str(where, " is encrypted, which is not supported"));
  if (method != uint64_t(ZipMethod::Stored) && method != uint64_t(ZipMethod::Deflated))
    fail(str(where, " uses compression method ", method,
             "; only stored (0) and deflate (8) are supported"));
  if (offset > size_ || size_ - offset < kLocalHeaderSize)
    fail(str("is truncated: ran out of data reading the local file header of ", where));
  const char* lh = data_ + offset;
  if (get(lh, 4) != kLocalSig) fail(str("is corrupt: bad local header signature for ", where));
  uint64_t lnlen = get(lh + 26, 2), lxlen = get(lh + 28, 2);
  uint64_t data_at = offset + kLocalHeaderSize + lnlen + lxlen;
  if (data_at > size_ || csize > size_ - data_at)
    fail(str("is truncated: ", where, " needs ", csize, " bytes of data at offset ", data_at,
             "; the file has ", size_, " bytes"));
  std::string_view local_name(lh + kLocalHeaderSize, size_t(lnlen));
  if (local_name != m.name)
    fail(str("is corrupt: the local header of ", where, " names '", local_name, "'"));
  // Sizes no member could have are refused before anything is allocated for them. Deflate
  // expands at most ~1032:1 (csize is bounded by the file here, so the product cannot overflow).
  if (method == uint64_t(ZipMethod::Stored) && usize != csize)
    fail(str("is corrupt: bad sizes for ", where, ": it is stored, yet records ", usize,
             " bytes and ", csize, " bytes in the archive"));
  if (method == uint64_t(ZipMethod::Deflated) && usize > csize * 1040 + 1024)
    fail(str("is corrupt: bad sizes for ", where, ": ", csize, " deflated bytes cannot inflate to ",
             usize));
  m.method = ZipMethod(method);
  m.header_offset = offset;
  m.data_offset = data_at;
  m.compressed_size = csize;
  m.size = usize;
  return m;
}

// Members must not share bytes with one another or with the central directory: entries that
// overlap (several pointing at one local header, or one member's data quoting another's) let a
// small archive inflate the same data over and over, an "overlapping zip bomb". Python's
// zipfile refuses them too ("Overlapped entries").
void ZipReader::check_disjoint(uint64_t directory_offset) const {
  std::vector<const Member*> order;
  for (const Member& m : members_) order.push_back(&m);
  std::sort(order.begin(), order.end(), [](const Member* a, const Member* b) {
    return a->header_offset < b->header_offset;
  });
  for (size_t i = 0; i < order.size(); ++i) {
    uint64_t end = order[i]->data_offset + order[i]->compressed_size;
    bool last = i + 1 == order.size();
    if (end > (last ? directory_offset : order[i + 1]->header_offset))
      fail(last ? str("is corrupt: member '", order[i]->name, "' overlaps the central directory")
                : str("is corrupt: members '", order[i]->name, "' and '", order[i + 1]->name,
                      "' overlap (an overlapping zip bomb?)"));
  }
}

const ZipReader::Member* ZipReader::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &members_[it->second];
}

size_t ZipReader::index_of(const Member& m) const {
  std::less<const Member*> before;
  if (members_.empty() || before(&m, members_.data()) ||
      !before(&m, members_.data() + members_.size()))
    throw InternalError("jx internal error: ZipReader given a member of another archive");
  return size_t(&m - members_.data());
}

const char* ZipReader::data(const Member& m) {
  size_t i = index_of(m);
  if (m.method != ZipMethod::Stored)
    fail(str("member '", m.name, "' is compressed (method ", uint16_t(m.method),
             ") and cannot be read in place"));
  const char* p = data_ + m.data_offset;
  if (!verified_[i]) {
    if (crc_update(0, p, m.size) != m.crc)
      fail(str("is corrupt: CRC-32 mismatch in member '", m.name, "'"));
    verified_[i] = 1;
  }
  return p;
}

std::string_view ZipReader::read(const Member& m, std::vector<char>& scratch) {
  if (m.method == ZipMethod::Stored) return {data(m), size_t(m.size)};
  index_of(m);
  scratch.resize(size_t(m.size));
  z_stream zs{};
  if (inflateInit2(&zs, -15) != Z_OK) throw InternalError("jx internal error: inflateInit2 failed");
  const char* in = data_ + m.data_offset;
  uint64_t in_off = 0, out_off = 0;
  unsigned char probe = 0;
  bool probing = false;
  int rc = Z_OK;
  for (;;) {
    if (zs.avail_in == 0 && in_off < m.compressed_size) {
      uint64_t take = std::min(kZlibStep, m.compressed_size - in_off);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in + in_off));
      zs.avail_in = uInt(take);
      in_off += take;
    }
    if (zs.avail_out == 0) {
      if (out_off < m.size) {
        uint64_t take = std::min(kZlibStep, m.size - out_off);
        zs.next_out = reinterpret_cast<Bytef*>(scratch.data() + out_off);
        zs.avail_out = uInt(take);
        out_off += take;
      } else {  // all recorded bytes produced: one spare byte detects a longer stream
        zs.next_out = &probe;
        zs.avail_out = 1;
        probing = true;
      }
    }
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK) break;
    if (probing && zs.avail_out == 0) {
      rc = Z_DATA_ERROR;
      break;
    }
  }
  bool ok = rc == Z_STREAM_END && uint64_t(zs.total_out) == m.size;
  inflateEnd(&zs);
  if (!ok)
    fail(str("is corrupt: member '", m.name, "' does not inflate to its recorded ", m.size,
             " bytes"));
  if (crc_update(0, scratch.data(), m.size) != m.crc)
    fail(str("is corrupt: CRC-32 mismatch in member '", m.name, "'"));
  return {scratch.data(), size_t(m.size)};
}

// ---- writing ----

ZipWriter::ZipWriter(Sink sink, Options options)
    : sink_(std::move(sink)), options_(std::move(options)) {
  // The padding must fit one extra field (its length is 16 bits).
  if (options_.alignment == 0 || options_.alignment > 4096)
    throw InternalError(str("jx internal error: zip member alignment ", options_.alignment,
                            " is not in [1, 4096]"));
}

void ZipWriter::emit(const void* p, size_t n) {
  if (n) sink_(p, n);
  pos_ += n;
}

std::string ZipWriter::local_header(const Entry& e) const {
  std::string extra;
  if (e.zip64_local) {
    put16(extra, kZip64ExtraId);
    put16(extra, 16);
    put64(extra, e.size);
    put64(extra, e.compressed_size);
  }
  if (uint64_t align = options_.alignment; align > 1) {
    uint64_t unpadded = e.offset + kLocalHeaderSize + e.name.size() + extra.size() + 4;
    uint64_t pad = (align - unpadded % align) % align;
    put16(extra, kPaddingExtraId);
    put16(extra, pad);
    extra.append(size_t(pad), 'Z');
  }
  std::string h;
  put32(h, kLocalSig);
  put16(h, e.zip64_local ? 45 : 20);
  put16(h, e.flags);
  put16(h, uint16_t(e.method));
  put16(h, e.time);
  put16(h, e.date);
  put32(h, e.crc);
  put32(h, e.zip64_local ? kMax32 : e.compressed_size);
  put32(h, e.zip64_local ? kMax32 : e.size);
  put16(h, e.name.size());
  put16(h, extra.size());
  h += e.name;
  h += extra;
  return h;
}

void ZipWriter::add(const std::string& name, std::initializer_list<std::string_view> pieces,
                    ZipMethod method) {
  if (name.size() > kMax16)
    throw InternalError(str("jx internal error: a zip member name of ", name.size(), " bytes"));
  Entry e;
  e.name = name;
  e.method = method;
  e.offset = pos_;
  for (unsigned char c : name)
    if (c >= 0x80) e.flags |= kFlagUtf8;
  if (options_.timestamps) dos_now(e.time, e.date);
  for (std::string_view p : pieces) e.size += p.size();
  if (method == ZipMethod::Stored) {
    for (std::string_view p : pieces) e.crc = crc_update(e.crc, p.data(), p.size());
    e.compressed_size = e.size;
    e.zip64_local = e.size >= options_.zip64_limit;
    std::string h = local_header(e);
    emit(h.data(), h.size());
    for (std::string_view p : pieces) emit(p.data(), p.size());
  } else {
    deflate_pieces(e, pieces);
  }
  entries_.push_back(std::move(e));
}

// Streams the pieces through zlib (raw deflate, as zip wants it) into the sink, then patches the
// local header with the CRC and compressed size: the archive never holds a member twice in
// memory. Whether the local header needs zip64 sizes is decided before the first byte, from
// zlib's bound on the compressed size, so that the patched header has the same length.
void ZipWriter::deflate_pieces(Entry& e, std::initializer_list<std::string_view> pieces) {
  if (!options_.patch)
    throw InternalError("jx internal error: a deflated zip member needs ZipWriter::Options::patch");
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw InternalError("jx internal error: deflateInit2 failed");
  e.zip64_local =
      deflateBound(&zs, uLong(e.size)) >= options_.zip64_limit || e.size >= options_.zip64_limit;
  std::string h = local_header(e);
  emit(h.data(), h.size());
  uint64_t data_at = pos_;
  std::vector<unsigned char> out(kDeflateChunk);
  auto run = [&](const char* p, size_t n, bool finish) {
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
    zs.avail_in = uInt(n);
    do {  // zlib's usual loop: a full output buffer means more output is pending
      zs.next_out = out.data();
      zs.avail_out = uInt(out.size());
      if (deflate(&zs, finish ? Z_FINISH : Z_NO_FLUSH) == Z_STREAM_ERROR)
        throw InternalError("jx internal error: deflate failed");
      emit(out.data(), out.size() - zs.avail_out);
    } while (zs.avail_out == 0);
  };
  try {
    size_t left = pieces.size();
    for (std::string_view p : pieces) {
      --left;
      size_t done = 0;
      do {
        size_t take = std::min(kDeflateChunk, p.size() - done);
        e.crc = crc_update(e.crc, p.data() + done, take);
        run(p.data() + done, take, left == 0 && done + take == p.size());
        done += take;
      } while (done < p.size());
    }
    if (pieces.size() == 0) run(nullptr, 0, true);
  } catch (...) {
    deflateEnd(&zs);
    throw;
  }
  deflateEnd(&zs);
  e.compressed_size = pos_ - data_at;
  std::string patched = local_header(e);
  options_.patch(e.offset, patched.data(), patched.size());
}

void ZipWriter::finish() {
  const uint64_t limit = options_.zip64_limit;
  uint64_t cd_offset = pos_;
  std::string cd;
  for (const Entry& e : entries_) {
    bool big_u = e.size >= limit, big_c = e.compressed_size >= limit, big_o = e.offset >= limit;
    std::string extra;
    if (big_u || big_c || big_o) {
      std::string body;
      if (big_u) put64(body, e.size);
      if (big_c) put64(body, e.compressed_size);
      if (big_o) put64(body, e.offset);
      put16(extra, kZip64ExtraId);
      put16(extra, body.size());
      extra += body;
    }
    uint16_t version = extra.empty() && !e.zip64_local ? 20 : 45;
    put32(cd, kCentralSig);
    put16(cd, 0x0300 | version);  // made by: Unix
    put16(cd, version);
    put16(cd, e.flags);
    put16(cd, uint16_t(e.method));
    put16(cd, e.time);
    put16(cd, e.date);
    put32(cd, e.crc);
    put32(cd, big_c ? kMax32 : e.compressed_size);
    put32(cd, big_u ? kMax32 : e.size);
    put16(cd, e.name.size());
    put16(cd, extra.size());
    put16(cd, 0);  // comment
    put16(cd, 0);  // disk
    put16(cd, 0);  // internal attributes
    put32(cd, uint64_t(options_.unix_mode) << 16);
    put32(cd, big_o ? kMax32 : e.offset);
    cd += e.name;
    cd += extra;
  }
  uint64_t count = entries_.size(), cd_size = cd.size();
  if (count >= kMax16 || cd_size >= limit || cd_offset >= limit) {
    uint64_t end64 = cd_offset + cd_size;
    put32(cd, kEnd64Sig);
    put64(cd, kEnd64Size - 12);  // the size of the rest of the record
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
  // Values too large for these fields are saturated (the zip64 record holds them), as Python's
  // zipfile and miniz write them.
  put32(cd, kEndSig);
  put16(cd, 0);
  put16(cd, 0);
  put16(cd, std::min(count, kMax16));
  put16(cd, std::min(count, kMax16));
  put32(cd, std::min(cd_size, kMax32));
  put32(cd, std::min(cd_offset, kMax32));
  put16(cd, 0);
  emit(cd.data(), cd.size());
}

}  // namespace jx::detail
