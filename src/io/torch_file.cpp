// load_torch_state_dict / save_torch_state_dict: the torch.save zip archive around the
// pickle (io/pickle.cpp). The file is memory-mapped and every storage is copied out of the
// mapping into its own Array, so the file can go away afterwards.
#include <cerrno>
#include <cstring>
#include <set>

#include "core/array_impl.h"
#include "io/torch_archive.h"
#include "jx/error.h"
#include "numpy/io_npy.h"
#include "support/str.h"

namespace jx {
namespace detail {
namespace {

constexpr const char* kLoadOp = "load_torch_state_dict";
constexpr const char* kSaveOp = "save_torch_state_dict";

}  // namespace

io::StateDict torch_state_dict_from_bytes(const char* data, uint64_t size, const std::string& what,
                                          const PickleLimits& limits) {
  const char* op = kLoadOp;
  if (size >= 2 && static_cast<unsigned char>(data[0]) == 0x80 && data[1] <= 5)
    io_fail(op, what,
            "is in PyTorch's legacy (pre-1.6) serialization format, which is not read; re-save "
            "it with torch.save(torch.load(path), path) in PyTorch >= 1.6 (the zip format)");
  if (size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0)
    io_fail(op, what, "is an .npy file, not a torch.save archive; read it with jnp::load");
  ZipReader zip(data, size, what, op);
  if (zip.members().empty()) io_fail(op, what, "is an empty zip archive, not a torch.save archive");
  // Storages are used in place, so every member must be stored.
  for (const ZipReader::Member& m : zip.members())
    if (m.method != ZipMethod::Stored)
      io_fail(op, what,
              str("member '", m.name, "' is compressed (method ", uint16_t(m.method),
                  "); torch.save stores members uncompressed: re-save the file with torch.save "
                  "instead of re-zipping it"));
  // As PyTorch's reader does: every record lives in the folder of the first member.
  const std::string& first = zip.members()[0].name;
  size_t slash = first.find('/');
  std::string prefix = slash == std::string::npos ? "" : first.substr(0, slash + 1);
  const ZipReader::Member* pkl = prefix.empty() ? nullptr : zip.find(prefix + "data.pkl");
  if (!pkl)
    io_fail(op, what,
            str("is a zip archive without a data.pkl next to its first member '", first,
                "': not written by torch.save (an .npz archive? read it with jnp::load_npz)"));
  if (zip.find(prefix + "constants.pkl"))
    io_fail(op, what,
            "is a TorchScript archive (torch.jit.save), not a state dict; in Python, save "
            "model.state_dict() with torch.save");
  if (const ZipReader::Member* bo = zip.find(prefix + "byteorder")) {
    std::string order(zip.data(*bo), size_t(bo->size));
    if (order != "little")
      io_fail(op, what, str("stores its tensors in '", order, "' byte order; only 'little' is read"));
  }
  StorageResolver storages = [&](const std::string& key, DType dtype, uint64_t numel) {
    const ZipReader::Member* m = zip.find(str(prefix, "data/", key));
    if (!m) io_fail(op, what, str("lacks the member '", prefix, "data/", key, "' of storage '", key, "'"));
    uint64_t bytes;
    uint64_t item = itemsize(dtype);
    if (__builtin_mul_overflow(numel, item, &bytes) || m->size < bytes || m->size - bytes >= item)
      io_fail(op, what,
              str("has a storage '", key, "' of ", numel, " ", dtype_name(dtype), " elements, but its member '",
                  m->name, "' holds ", m->size, " bytes"));
    return zip.data(*m);
  };
  return read_torch_pickle(zip.data(*pkl), size_t(pkl->size), storages, what, op, limits);
}

void write_torch_archive(const io::StateDict& state_dict, const ZipWriter::Sink& sink,
                         const char* op, uint64_t zip64_limit) {
  std::set<std::string> seen;
  for (const auto& [name, a] : state_dict)
    if (!seen.insert(name).second)
      throw ValueError(str("[", op, "] the name '", name, "' is used twice"));
  std::string pkl = write_torch_pickle(state_dict, op);  // validates every array first
  ZipWriter zip(sink, {.alignment = 64, .zip64_limit = zip64_limit});
  zip.add("archive/data.pkl", {pkl});
  zip.add("archive/byteorder", {"little"});
  for (size_t i = 0; i < state_dict.size(); ++i) {
    const Array& a = state_dict[i].second;
    zip.add(str("archive/data/", i), {{static_cast<const char*>(raw_data(a)), a.nbytes()}});
  }
  zip.add("archive/version", {"3\n"});  // PyTorch 1.13's file format version
  zip.finish();
}

std::string torch_archive_of(const std::string& pickle,
                             const std::vector<std::pair<std::string, std::string>>& storages,
                             const std::string& prefix, uint64_t zip64_limit) {
  std::string out;
  ZipWriter zip([&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); },
                {.alignment = 64, .zip64_limit = zip64_limit});
  zip.add(str(prefix, "/data.pkl"), {pickle});
  for (const auto& [key, bytes] : storages) zip.add(str(prefix, "/data/", key), {bytes});
  zip.add(str(prefix, "/version"), {"3\n"});
  zip.finish();
  return out;
}

}  // namespace detail

namespace io {

StateDict load_torch_state_dict(const std::string& path) {
  detail::MappedFile f(path, detail::kLoadOp);
  return detail::torch_state_dict_from_bytes(f.data(), f.size(), path);
}

void save_torch_state_dict(const std::string& path, const StateDict& state_dict) {
  const char* op = detail::kSaveOp;
  // Validate before the temporary file exists, so that a bad state dict leaves nothing behind.
  for (const auto& [name, a] : state_dict) {
    detail::require_savable(a, op);
    detail::torch_storage_name(a.dtype(), op);
  }
  detail::AtomicFile f(path, op);
  detail::write_torch_archive(state_dict, [&](const void* p, size_t n) { f.write(p, n); }, op);
  f.commit();
}

}  // namespace io
}  // namespace jx
