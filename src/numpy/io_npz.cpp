// .npz archives: a zip file with one .npy member per array (numpy.savez / numpy.load), through
// the zip module (numpy/zip.h). Written as Python's zipfile writes them: local-time stamps,
// rw------- members, deflated by zlib for savez_compressed, zip64 records only where a size or
// offset needs them. Read from a memory mapping: stored members are decoded in place.
#include <algorithm>
#include <set>
#include <vector>

#include "core/array_impl.h"
#include "jx/numpy/io.h"
#include "numpy/io_npy.h"
#include "numpy/zip.h"
#include "support/str.h"

namespace jx {
namespace detail {

void write_npz(const std::string& path_in, const std::vector<std::pair<std::string, Array>>& arrays,
               bool compress, uint64_t limit) {
  const char* op = compress ? "savez_compressed" : "savez";
  std::set<std::string> seen;
  for (const auto& [name, a] : arrays) {
    require_savable(a, op);
    if (!seen.insert(name).second)
      throw ValueError(str("[", op, "] the name '", name, "' is used twice"));
    if (name.size() > 0xFFFF - 4)  // a zip member name (with ".npy") has a 16-bit length
      throw ValueError(str("[", op, "] a name of ", name.size(),
                           " bytes is too long for a zip archive; use at most 65531 bytes"));
  }
  std::string path = with_extension(path_in, ".npz");
  AtomicFile f(path, op);
  ZipWriter zip([&](const void* p, size_t n) { f.write(p, n); },
                {.zip64_limit = limit,
                 .timestamps = true,
                 .unix_mode = 0600,  // as Python's zipfile writes
                 .patch = [&](uint64_t at, const void* p, size_t n) {
                   f.seek(at);
                   f.write(p, n);
                   f.seek_end();
                 }});
  for (const auto& [name, a] : arrays) {
    std::string header = npy_header(a, op);
    std::string_view bytes(static_cast<const char*>(raw_data(a)), a.nbytes());
    zip.add(name + ".npy", {header, bytes}, compress ? ZipMethod::Deflated : ZipMethod::Stored);
  }
  zip.finish();
  f.commit();
}

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
  const char* op = "load_npz";
  detail::MappedFile f(path, op);
  if (detail::has_npy_magic(f.data(), f.size()))
    detail::io_fail(op, path, "is an .npy file, not an .npz archive; read it with jnp::load");
  detail::ZipReader zip(f.data(), f.size(), path, op);
  NpzFile out;
  std::vector<char> scratch;  // a deflated member's bytes, reused from member to member
  for (const detail::ZipReader::Member& m : zip.members()) {
    std::string_view data = zip.read(m, scratch);
    std::string what = str(path, "' member '", m.name);
    if (!detail::has_npy_magic(data.data(), data.size()))
      detail::io_fail(op, what, "is not an .npy array");
    std::string key = m.name;
    if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    out.add(key, detail::npy_decode(data.data(), data.size(), what, op));
  }
  return out;
}

}  // namespace numpy
}  // namespace jx
