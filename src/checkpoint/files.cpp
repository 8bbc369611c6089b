#include "checkpoint/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "jx/error.h"
#include "support/process_group.h"
#include "support/str.h"

namespace jx::ckpt::detail {

namespace {

[[noreturn]] void fail(const char* op, const std::string& path, const std::string& what) {
  throw IOError(str("[", op, "] '", path, "' ", what, ": ", std::strerror(errno)));
}

std::string unique_suffix() {
  auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  return str(::getpid(), "-", ns);
}

}  // namespace

bool path_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_directory(const std::string& path, const char* op) {
  if (::mkdir(path.c_str(), 0777) != 0) fail(op, path, "cannot be created");
}

void make_directories(const std::string& path, const char* op) {
  if (path.empty() || is_directory(path)) return;
  std::string parent = parent_directory(path);
  if (parent != path) make_directories(parent, op);
  if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) fail(op, path, "cannot be created");
}

void write_file(const std::string& path, const std::vector<std::pair<const void*, size_t>>& pieces,
                const char* op) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(op, path, "cannot be created");
  for (auto [p, n] : pieces) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      // Linux writes at most 0x7ffff000 bytes per call.
      ssize_t w = ::write(fd, c, n < (size_t(1) << 30) ? n : (size_t(1) << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        errno = e;
        fail(op, path, "cannot be written");
      }
      c += w;
      n -= size_t(w);
    }
  }
  if (::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    fail(op, path, "cannot be synced to disk");
  }
  if (::close(fd) != 0) fail(op, path, "cannot be closed");
}

std::string read_small_file(const std::string& path, size_t limit, const char* op) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(op, path, "cannot be opened");
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IOError(str("[", op, "] '", path, "' is not a regular file"));
  }
  if (uint64_t(st.st_size) > limit) {
    ::close(fd);
    throw IOError(str("[", op, "] '", path, "' has ", st.st_size, " bytes, over the limit of ",
                      limit, " for this file"));
  }
  std::string out(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ::close(fd);
      throw IOError(str("[", op, "] '", path, "' could not be read to its end"));
    }
    got += size_t(r);
  }
  ::close(fd);
  return out;
}

void fsync_directory(const std::string& path, const char* op) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(op, path, "cannot be opened");
  int r = ::fsync(fd);
  int e = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory (EINVAL); their renames are then as durable
  // as they can be.
  if (r != 0 && e != EINVAL) {
    errno = e;
    fail(op, path, "cannot be synced to disk");
  }
}

void rename_path(const std::string& from, const std::string& to, const char* op) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    fail(op, to, str("cannot be made from '", from, "'"));
}

bool exchange_paths(const std::string& a, const std::string& b, const char* op) {
  if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0) return true;
  if (errno == EINVAL || errno == ENOSYS) return false;
  fail(op, b, str("cannot be exchanged with '", a, "'"));
}

void remove_tree(const std::string& path, const char* op) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    fail(op, path, "cannot be inspected");
  }
  if (S_ISDIR(st.st_mode)) {
    for (const std::string& name : list_directory(path, op)) remove_tree(join_path(path, name), op);
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) fail(op, path, "cannot be removed");
  } else if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    fail(op, path, "cannot be removed");
  }
}

std::vector<std::string> list_directory(const std::string& path, const char* op) {
  DIR* d = ::opendir(path.c_str());
  if (!d) fail(op, path, "cannot be listed");
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  ::closedir(d);
  return names;
}

std::string temporary_name(const std::string& base) { return str(base, ".jx-tmp-", unique_suffix()); }
std::string deleting_name(const std::string& base) {
  return str(base, ".jx-deleting-", unique_suffix());
}
bool is_temporary_name(const std::string& name) {
  return name.find(".jx-tmp-") != std::string::npos ||
         name.find(".jx-deleting-") != std::string::npos;
}

void delete_checkpoint_dir(const std::string& path, const char* op) {
  std::string gone = deleting_name(path);
  rename_path(path, gone, op);
  fsync_directory(parent_directory(path), op);
  remove_tree(gone, op);
}

bool is_primary_process() { return support::process_index() == 0; }

void agree_written(bool failed, const char* op, const std::string& path) {
  auto world = support::world();
  if (!world || world->size() == 1) return;
  const int32_t mine = failed ? 1 : 0;
  int32_t any = 0;
  world->all_reduce(&mine, &any, 1, DType::Int32, support::ProcessGroup::Reduce::Max, op);
  if (any && !failed)
    throw IOError(str("[", op, "] process 0, which writes the checkpoints of this run, failed to write '", path,
                      "'; its error is in its output"));
}

std::string parent_directory(const std::string& path) {
  size_t end = path.size();
  while (end > 1 && path[end - 1] == '/') --end;
  size_t slash = path.rfind('/', end - 1);
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : str(a, "/", b);
}

}  // namespace jx::ckpt::detail
