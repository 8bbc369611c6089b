// The torch.save archive layer of jx::io, exposed to the tests (which feed it bytes held in
// memory: mutated archives, hand-made pickles). Internal to jx.
#pragma once
#include <cstdint>
#include <string>

#include "io/pickle.h"
#include "jx/io/torch.h"
#include "numpy/zip.h"

namespace jx::detail {

// load_torch_state_dict of an archive held in [data, data + size); `what` names it in errors.
io::StateDict torch_state_dict_from_bytes(const char* data, uint64_t size, const std::string& what,
                                          const PickleLimits& limits = {});

// The archive save_torch_state_dict writes, through `sink` (members "archive/data.pkl",
// "archive/byteorder", "archive/data/<i>", "archive/version"). Validates the state dict
// (names, dtypes) before the first byte is written.
void write_torch_archive(const io::StateDict& state_dict, const ZipWriter::Sink& sink,
                         const char* op, uint64_t zip64_limit = 0xFFFFFFFFu);

// An archive of the given members in the layout torch.save uses ("<prefix>/data.pkl",
// "<prefix>/data/<key>", "<prefix>/version"), for tests that craft pickles by hand.
std::string torch_archive_of(const std::string& pickle,
                             const std::vector<std::pair<std::string, std::string>>& storages,
                             const std::string& prefix = "archive", uint64_t zip64_limit = 0xFFFFFFFFu);

}  // namespace jx::detail
