// Checkpoint save and restore of a 105 MB tree (10 dense layers [1024, 2560] + biases, float32)
// against this disk's bandwidth measured in the same run: a plain write() + fsync of the same
// bytes, and a read() of them with the page cache dropped for the file (posix_fadvise
// DONTNEED) and warm. PyTorch's torch.save / torch.load of the same tensors is
// bench/peers/torch_checkpoint.py; run both with bench/checkpoint.sh.
//
//   bench_checkpoint [DIR]    (DIR: where to write; default the current directory)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "jx/checkpoint.h"
#include "jx/jx.h"

namespace fs = std::filesystem;
namespace jnp = jx::numpy;
namespace ocp = jx::ckpt;
using jx::Tree;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Evicts a file's pages from the page cache (it must be synced first): the next read is cold.
void drop_cache(const std::string& path) {
  auto drop = [](const std::string& p) {
    int fd = ::open(p.c_str(), O_RDONLY);
    if (fd < 0) return;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  };
  if (fs::is_directory(path)) {
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file()) drop(e.path());
  } else {
    drop(path);
  }
}

void write_raw(const std::string& path, const std::vector<char>& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0) std::abort();
    done += size_t(w);
  }
  ::fsync(fd);
  ::close(fd);
}

void read_raw(const std::string& path, std::vector<char>& into) {
  int fd = ::open(path.c_str(), O_RDONLY);
  size_t done = 0;
  while (done < into.size()) {
    ssize_t r = ::read(fd, into.data() + done, into.size() - done);
    if (r <= 0) std::abort();
    done += size_t(r);
  }
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  std::string base = argc > 1 ? argv[1] : ".";
  std::string dir = base + "/jx_bench_checkpoint";
  fs::remove_all(dir);
  fs::create_directories(dir);

  Tree params = Tree::dict();
  jx::Array key = jx::random::PRNGKey(0);
  for (int i = 0; i < 10; ++i) {
    auto k = jx::random::fold_in(key, i);
    params.insert("Dense_" + std::to_string(i),
                  Tree{{"kernel", jx::random::normal(k, {1024, 2560})}, {"bias", jnp::zeros({2560})}});
  }
  auto [leaves, def] = jx::tree::flatten(params);
  size_t bytes = 0;
  for (const auto& a : leaves) bytes += size_t(a.nbytes());
  std::vector<char> raw(bytes, 1);
  std::vector<char> back(bytes);
  const double mb = double(bytes) / 1e6;
  const int reps = 5;

  std::vector<double> t_write, t_read_cold, t_read_warm, t_save, t_async_return, t_async_total,
      t_restore_cold, t_restore_warm;
  for (int r = 0; r < reps; ++r) {
    std::string rawf = dir + "/raw.bin";
    double t0 = now();
    write_raw(rawf, raw);
    t_write.push_back(now() - t0);
    drop_cache(rawf);
    t0 = now();
    read_raw(rawf, back);
    t_read_cold.push_back(now() - t0);
    t0 = now();
    read_raw(rawf, back);
    t_read_warm.push_back(now() - t0);
    fs::remove(rawf);

    std::string ck = dir + "/ckpt";
    t0 = now();
    ocp::save(ck, params);
    t_save.push_back(now() - t0);
    drop_cache(ck);
    t0 = now();
    Tree restored = ocp::restore(ck, params);
    t_restore_cold.push_back(now() - t0);
    t0 = now();
    restored = ocp::restore(ck, params);
    t_restore_warm.push_back(now() - t0);
    fs::remove_all(ck);

    ocp::CheckpointManager m(dir + "/run");
    t0 = now();
    m.save(r, params);
    t_async_return.push_back(now() - t0);
    m.wait_until_finished();
    t_async_total.push_back(now() - t0);
    fs::remove_all(dir + "/run");
  }
  fs::remove_all(dir);

  auto line = [&](const char* what, const std::vector<double>& t, double ref) {
    double s = median(t);
    std::printf("%-44s %8.1f ms %8.0f MB/s", what, s * 1e3, mb / s);
    if (ref > 0) std::printf("   %5.2fx the disk", (mb / s) / (mb / ref));
    std::printf("\n");
  };
  std::printf("tree: %zu leaves, %.1f MB float32; median of %d; directory %s\n", leaves.size(), mb,
              reps, base.c_str());
  double w = median(t_write), rc = median(t_read_cold), rw = median(t_read_warm);
  line("disk: write() + fsync", t_write, 0);
  line("disk: read(), page cache dropped", t_read_cold, 0);
  line("disk: read(), page cache warm", t_read_warm, 0);
  line("ckpt::save (sync, fsync, rename)", t_save, w);
  line("CheckpointManager.save: until it returns", t_async_return, 0);
  line("CheckpointManager.save: until committed", t_async_total, w);
  line("ckpt::restore, page cache dropped", t_restore_cold, rc);
  line("ckpt::restore, page cache warm", t_restore_warm, rw);
  return 0;
}
