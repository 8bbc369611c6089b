// .npz archives: a zip file with one .npy member per array (numpy.savez / numpy.load).
// Written with zlib (raw deflate, CRC-32); zip64 records appear only when a size or offset
// needs them. Read: stored and deflated members, zip64 (NumPy writes a zip64 extra field in
// every local header), CRC-checked.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <limits>
#include <set>
#include <vector>

#include "core/array_impl.h"
#include "jx/numpy/io.h"
#include "numpy/io_npy.h"
#include "support/str.h"

namespace jx {
namespace detail {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kEnd64LocatorSig = 0x07064b50;
constexpr uint64_t kMax32 = 0xFFFFFFFFu;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr size_t kChunk = size_t(1) << 20;

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
uint64_t get(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

struct Member {
  std::string name;
  uint16_t method = 0, time = 0, date = 0, flags = 0;
  uint32_t crc = 0;
  uint64_t csize = 0, usize = 0, offset = 0;
  bool zip64_local = false;
};

// MS-DOS date and time of now, as Python's zipfile stamps members (local time).
void dos_now(uint16_t& time, uint16_t& date) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  int year = std::max(tm.tm_year + 1900, 1980);
  date = uint16_t(((year - 1980) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday);
  time = uint16_t((tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2));
}

std::string local_header(const Member& m) {
  std::string h;
  put32(h, kLocalSig);
  put16(h, m.zip64_local ? 45 : 20);
  put16(h, m.flags);
  put16(h, m.method);
  put16(h, m.time);
  put16(h, m.date);
  put32(h, m.crc);
  put32(h, m.zip64_local ? kMax32 : m.csize);
  put32(h, m.zip64_local ? kMax32 : m.usize);
  put16(h, m.name.size());
  put16(h, m.zip64_local ? 20 : 0);
  h += m.name;
  if (m.zip64_local) {
    put16(h, kZip64ExtraId);
    put16(h, 16);
    put64(h, m.usize);
    put64(h, m.csize);
  }
  return h;
}

// Writes one .npy member (header + array bytes) at the current end of `f`.
Member write_member(AtomicFile& f, const std::string& name, const Array& a, bool compress,
                    uint64_t limit) {
  Member m;
  m.name = name + ".npy";
  for (unsigned char c : m.name)
    if (c >= 0x80) m.flags |= 0x800;  // UTF-8 name
  m.method = compress ? 8 : 0;
  dos_now(m.time, m.date);
  std::string header = npy_header(a, compress ? "savez_compressed" : "savez");
  m.usize = header.size() + a.nbytes();
  m.offset = f.tell();
  z_stream zs{};
  if (compress) {
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw InternalError("jx internal error: deflateInit2 failed");
    m.zip64_local = deflateBound(&zs, uLong(m.usize)) >= limit || m.usize >= limit;
  } else {
    m.zip64_local = m.usize >= limit;
  }
  std::string lh = local_header(m);
  f.write(lh.data(), lh.size());
  uLong crc = crc32(0, nullptr, 0);
  std::vector<unsigned char> out(compress ? kChunk : 0);
  auto feed = [&](const char* p, size_t n, bool last) {
    size_t done = 0;
    do {
      size_t take = std::min(kChunk, n - done);
      crc = crc32(crc, reinterpret_cast<const Bytef*>(p + done), uInt(take));
      if (!compress) {
        f.write(p + done, take);
        m.csize += take;
      } else {
        bool finish = last && done + take == n;
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p + done));
        zs.avail_in = uInt(take);
        do {  // zlib's usual loop: a full output buffer means more output is pending
          zs.next_out = out.data();
          zs.avail_out = uInt(out.size());
          if (deflate(&zs, finish ? Z_FINISH : Z_NO_FLUSH) == Z_STREAM_ERROR)
            throw InternalError("jx internal error: deflate failed");
          size_t have = out.size() - zs.avail_out;
          f.write(out.data(), have);
          m.csize += have;
        } while (zs.avail_out == 0);
      }
      done += take;
    } while (done < n);
  };
  try {
    feed(header.data(), header.size(), a.nbytes() == 0);
    if (a.nbytes()) feed(static_cast<const char*>(raw_data(a)), a.nbytes(), true);
  } catch (...) {
    if (compress) deflateEnd(&zs);
    throw;
  }
  if (compress) deflateEnd(&zs);
  m.crc = uint32_t(crc);
  // Sizes and CRC are known only now: rewrite the local header in place.
  uint64_t end = f.tell();
  f.seek(m.offset);
  std::string patched = local_header(m);
  f.write(patched.data(), patched.size());
  f.seek(end);
  return m;
}

}  // namespace

void write_npz(const std::string& path_in, const std::vector<std::pair<std::string, Array>>& arrays,
               bool compress, uint64_t limit) {
  const char* op = compress ? "savez_compressed" : "savez";
  std::set<std::string> seen;
  for (const auto& [name, a] : arrays) {
    require_savable(a, op);
    if (!seen.insert(name).second)
      throw ValueError(str("[", op, "] the name '", name, "' is used twice"));
  }
  std::string path = with_extension(path_in, ".npz");
  AtomicFile f(path, op);
  std::vector<Member> members;
  for (const auto& [name, a] : arrays) members.push_back(write_member(f, name, a, compress, limit));

  uint64_t cd_offset = f.tell();
  std::string cd;
  for (const Member& m : members) {
    std::string extra;
    bool big_u = m.usize >= limit, big_c = m.csize >= limit, big_o = m.offset >= limit;
    if (big_u || big_c || big_o) {
      std::string body;
      if (big_u) put64(body, m.usize);
      if (big_c) put64(body, m.csize);
      if (big_o) put64(body, m.offset);
      put16(extra, kZip64ExtraId);
      put16(extra, body.size());
      extra += body;
    }
    uint16_t version = extra.empty() && !m.zip64_local ? 20 : 45;
    put32(cd, kCentralSig);
    put16(cd, 0x0300 | version);  // made by: Unix
    put16(cd, version);
    put16(cd, m.flags);
    put16(cd, m.method);
    put16(cd, m.time);
    put16(cd, m.date);
    put32(cd, m.crc);
    put32(cd, big_c ? kMax32 : m.csize);
    put32(cd, big_u ? kMax32 : m.usize);
    put16(cd, m.name.size());
    put16(cd, extra.size());
    put16(cd, 0);                     // comment
    put16(cd, 0);                     // disk
    put16(cd, 0);                     // internal attributes
    put32(cd, uint64_t(0600) << 16);  // rw-------, as Python's zipfile writes
    put32(cd, big_o ? kMax32 : m.offset);
    cd += m.name;
    cd += extra;
  }
  uint64_t count = members.size(), cd_size = cd.size();
  if (count >= 0xFFFF || cd_size >= limit || cd_offset >= limit) {
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
  put16(cd, std::min<uint64_t>(count, 0xFFFF));
  put16(cd, std::min<uint64_t>(count, 0xFFFF));
  put32(cd, std::min<uint64_t>(cd_size, kMax32));
  put32(cd, std::min<uint64_t>(cd_offset, kMax32));
  put16(cd, 0);
  f.write(cd.data(), cd.size());
  f.commit();
}

namespace {

// ---- reading ----

struct Directory {
  uint64_t count = 0, size = 0, offset = 0;
};

Directory find_directory(InputFile& f) {
  const char* op = f.op();
  uint64_t fsize = f.size();
  if (fsize < 22)
    io_fail(op, f.path(),
            "is not a zip archive (too short for an end-of-central-directory record)");
  uint64_t tail = std::min<uint64_t>(fsize, 22 + 0xFFFF);
  std::vector<unsigned char> buf(static_cast<size_t>(tail));
  f.read_at(fsize - tail, buf.data(), buf.size(), "end of central directory");
  // The record is 22 bytes plus a comment; search backwards for one whose comment fits.
  int64_t pos = -1;
  for (int64_t i = int64_t(tail) - 22; i >= 0; --i) {
    if (get(&buf[size_t(i)], 4) == kEndSig &&
        uint64_t(i) + 22 + get(&buf[size_t(i) + 20], 2) == tail) {
      pos = i;
      break;
    }
  }
  if (pos < 0)
    io_fail(op, f.path(), "is not a valid zip archive: no end-of-central-directory record");
  const unsigned char* e = &buf[size_t(pos)];
  Directory d{get(e + 10, 2), get(e + 12, 4), get(e + 16, 4)};
  if (get(e + 4, 2) != 0 || get(e + 6, 2) != 0)
    io_fail(op, f.path(), "is a multi-disk zip archive, which is not supported");
  uint64_t eocd_at = fsize - tail + uint64_t(pos);
  if (eocd_at >= 20) {
    unsigned char loc[20];
    f.read_at(eocd_at - 20, loc, 20, "zip64 end-of-central-directory locator");
    if (get(loc, 4) == kEnd64LocatorSig) {
      unsigned char e64[56];
      f.read_at(get(loc + 8, 8), e64, 56, "zip64 end-of-central-directory record");
      if (get(e64, 4) != kEnd64Sig)
        io_fail(op, f.path(), "is corrupt: bad zip64 end-of-central-directory signature");
      d = {get(e64 + 32, 8), get(e64 + 40, 8), get(e64 + 48, 8)};
    }
  }
  if (d.offset > fsize || d.size > fsize - d.offset)
    io_fail(op, f.path(), "is corrupt or truncated: the central directory lies outside the file");
  return d;
}

std::vector<Member> read_directory(InputFile& f, const Directory& d) {
  const char* op = f.op();
  std::vector<unsigned char> cd(static_cast<size_t>(d.size));
  f.read_at(d.offset, cd.data(), cd.size(), "central directory");
  std::vector<Member> out;
  size_t p = 0;
  for (uint64_t i = 0; i < d.count; ++i) {
    if (p + 46 > cd.size() || get(&cd[p], 4) != kCentralSig)
      io_fail(op, f.path(), str("is corrupt: bad central directory entry ", i));
    const unsigned char* c = &cd[p];
    Member m;
    m.flags = uint16_t(get(c + 8, 2));
    m.method = uint16_t(get(c + 10, 2));
    m.crc = uint32_t(get(c + 16, 4));
    m.csize = get(c + 20, 4);
    m.usize = get(c + 24, 4);
    size_t nlen = size_t(get(c + 28, 2)), xlen = size_t(get(c + 30, 2)),
           clen = size_t(get(c + 32, 2));
    m.offset = get(c + 42, 4);
    if (p + 46 + nlen + xlen + clen > cd.size())
      io_fail(op, f.path(),
              str("is corrupt: central directory entry ", i, " overruns the directory"));
    m.name.assign(reinterpret_cast<const char*>(c + 46), nlen);
    // zip64 extra: 8-byte values for exactly the fields saturated at 0xFFFFFFFF, in this order.
    for (size_t x = 46 + nlen, xe = x + xlen; x + 4 <= xe;) {
      size_t id = size_t(get(c + x, 2)), len = size_t(get(c + x + 2, 2));
      if (x + 4 + len > xe) break;
      if (id == kZip64ExtraId) {
        size_t q = x + 4;
        auto take = [&](uint64_t& field) {
          if (field != kMax32) return;
          if (q + 8 > x + 4 + len)
            io_fail(op, f.path(), str("is corrupt: short zip64 field in '", m.name, "'"));
          field = get(c + q, 8);
          q += 8;
        };
        take(m.usize);
        take(m.csize);
        take(m.offset);
      }
      x += 4 + len;
    }
    out.push_back(m);
    p += 46 + nlen + xlen + clen;
  }
  return out;
}

// Members must not share bytes with one another or with the central directory: entries that
// overlap (several pointing at one local header, or one member's data quoting another's) let a
// small archive inflate the same data over and over, an "overlapping zip bomb". Python's
// zipfile refuses them too ("Overlapped entries").
void check_disjoint(InputFile& f, const std::vector<Member>& members, uint64_t directory_at) {
  struct Span {
    uint64_t begin, end;
    const std::string* name;
  };
  std::vector<Span> spans;
  for (const Member& m : members) {
    unsigned char lh[30];
    f.read_at(m.offset, lh, 30, "local file header");
    uint64_t data_at = m.offset + 30 + get(lh + 26, 2) + get(lh + 28, 2);
    if (data_at > f.size() || m.csize > f.size() - data_at)
      io_fail(f.op(), f.path(),
              str("is truncated: member '", m.name, "' needs ", m.csize, " bytes of data"));
    spans.push_back({m.offset, data_at + m.csize, &m.name});
  }
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (size_t i = 0; i < spans.size(); ++i) {
    uint64_t next = i + 1 < spans.size() ? spans[i + 1].begin : directory_at;
    if (spans[i].end > next)
      io_fail(f.op(), f.path(),
              i + 1 < spans.size()
                  ? str("is corrupt: members '", *spans[i].name, "' and '", *spans[i + 1].name,
                        "' overlap (an overlapping zip bomb?)")
                  : str("is corrupt: member '", *spans[i].name,
                        "' overlaps the central directory"));
  }
}

std::vector<char> read_member(InputFile& f, const Member& m) {
  const char* op = f.op();
  const std::string where = str("member '", m.name, "'");
  if (m.flags & 1) io_fail(op, f.path(), str(where, " is encrypted, which is not supported"));
  if (m.method != 0 && m.method != 8)
    io_fail(op, f.path(),
            str(where, " uses compression method ", m.method,
                "; only stored (0) and deflate (8) are supported"));
  unsigned char lh[30];
  f.read_at(m.offset, lh, 30, "local file header");
  if (get(lh, 4) != kLocalSig)
    io_fail(op, f.path(), str("is corrupt: bad local header signature for ", where));
  uint64_t nlen = get(lh + 26, 2), xlen = get(lh + 28, 2);
  std::string lname(size_t(nlen), '\0');
  f.read_at(m.offset + 30, lname.data(), lname.size(), "local file name");
  if (lname != m.name)
    io_fail(op, f.path(), str("is corrupt: the local header of ", where, " names '", lname, "'"));
  uint64_t data_at = m.offset + 30 + nlen + xlen;
  if (data_at > f.size() || m.csize > f.size() - data_at)
    io_fail(op, f.path(), str("is truncated: ", where, " needs ", m.csize, " bytes of data"));
  // deflate expands at most ~1032:1, so a larger recorded size is corrupt (and must not be
  // allocated).
  if (m.usize > m.csize * 1040 + 1024 || (m.method == 0 && m.usize != m.csize))
    io_fail(op, f.path(), str("is corrupt: bad sizes for ", where));
  std::vector<char> comp(static_cast<size_t>(m.csize));
  f.read_at(data_at, comp.data(), comp.size(), "member data");
  std::vector<char> data;
  if (m.method == 0) {
    data = std::move(comp);
  } else {
    data.resize(static_cast<size_t>(m.usize));
    z_stream zs{};
    if (inflateInit2(&zs, -15) != Z_OK)
      throw InternalError("jx internal error: inflateInit2 failed");
    constexpr size_t kStep = size_t(1) << 30;  // zlib counts in 32-bit uInt
    size_t in_off = 0, out_off = 0;
    unsigned char probe = 0;
    bool probing = false;
    int rc = Z_OK;
    for (;;) {
      if (zs.avail_in == 0 && in_off < comp.size()) {
        size_t take = std::min(kStep, comp.size() - in_off);
        zs.next_in = reinterpret_cast<Bytef*>(comp.data() + in_off);
        zs.avail_in = uInt(take);
        in_off += take;
      }
      if (zs.avail_out == 0) {
        if (out_off < data.size()) {
          size_t take = std::min(kStep, data.size() - out_off);
          zs.next_out = reinterpret_cast<Bytef*>(data.data() + out_off);
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
    bool ok = rc == Z_STREAM_END && uint64_t(zs.total_out) == m.usize;
    inflateEnd(&zs);
    if (!ok)
      io_fail(op, f.path(),
              str("is corrupt: ", where, " does not inflate to its recorded ", m.usize, " bytes"));
  }
  uLong crc = crc32(0, nullptr, 0);
  for (size_t done = 0; done < data.size();) {
    size_t take = std::min(kChunk * 64, data.size() - done);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + done), uInt(take));
    done += take;
  }
  if (uint32_t(crc) != m.crc) io_fail(op, f.path(), str("is corrupt: CRC-32 mismatch in ", where));
  return data;
}

}  // namespace
}  // namespace detail

namespace numpy {

bool NpzFile::contains(const std::string& name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

const Array& NpzFile::operator[](const std::string& name) const {
  for (const auto& [n, a] : items_)
    if (n == name) return a;
  std::string keys;
  for (const auto& n : names_) keys += (keys.empty() ? "'" : ", '") + n + "'";
  throw IndexError(str("[NpzFile] '", name, "' is not in the archive; its arrays are: ",
                       keys.empty() ? "(none)" : keys));
}

void NpzFile::add(std::string name, Array a) {
  names_.push_back(name);
  items_.emplace_back(std::move(name), std::move(a));
}

void savez(const std::string& path, const std::vector<std::pair<std::string, Array>>& arrays) {
  detail::write_npz(path, arrays, false);
}
void savez(const std::string& path, const std::map<std::string, Array>& arrays) {
  detail::write_npz(path, {arrays.begin(), arrays.end()}, false);
}
void savez(const std::string& path, const std::vector<Array>& arrays) {
  std::vector<std::pair<std::string, Array>> named;
  for (size_t i = 0; i < arrays.size(); ++i) named.emplace_back(str("arr_", i), arrays[i]);
  detail::write_npz(path, named, false);
}
void savez_compressed(const std::string& path,
                      const std::vector<std::pair<std::string, Array>>& arrays) {
  detail::write_npz(path, arrays, true);
}
void savez_compressed(const std::string& path, const std::map<std::string, Array>& arrays) {
  detail::write_npz(path, {arrays.begin(), arrays.end()}, true);
}
void savez_compressed(const std::string& path, const std::vector<Array>& arrays) {
  std::vector<std::pair<std::string, Array>> named;
  for (size_t i = 0; i < arrays.size(); ++i) named.emplace_back(str("arr_", i), arrays[i]);
  detail::write_npz(path, named, true);
}

NpzFile load_npz(const std::string& path) {
  detail::InputFile f(path, "load_npz");
  char magic[8] = {};
  f.read_at(0, magic, std::min<uint64_t>(8, f.size()), "magic string");
  if (detail::has_npy_magic(magic, std::min<uint64_t>(8, f.size())))
    detail::io_fail("load_npz", path,
                    "is an .npy file, not an .npz archive; read it with jnp::load");
  detail::Directory d = detail::find_directory(f);
  std::vector<detail::Member> members = detail::read_directory(f, d);
  detail::check_disjoint(f, members, d.offset);
  NpzFile out;
  for (const detail::Member& m : members) {
    std::vector<char> data = detail::read_member(f, m);
    std::string what = str(path, "' member '", m.name);
    if (!detail::has_npy_magic(data.data(), data.size()))
      detail::io_fail("load_npz", what, "is not an .npy array");
    std::string key = m.name;
    if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    out.add(key, detail::npy_decode(data.data(), data.size(), what, "load_npz"));
  }
  return out;
}

}  // namespace numpy
}  // namespace jx
