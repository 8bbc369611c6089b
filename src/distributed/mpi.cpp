// jx::distributed over MPI (include/jx/parallel.h): initialize() joins an `mpirun` launch
// and installs the process group (support/process_group.h) that the collectives and
// checkpoints use. The only file that includes mpi.h.
//
// Every transfer is preceded by a small header exchange (operation, dtype, byte count):
// processes whose programs went out of step get a DistributedError naming both sides
// instead of reducing unrelated buffers or deadlocking. The header exchange is polled
// against a deadline, so a process that stops answering (without dying, which the launcher
// sees and ends the job for) turns into a DistributedError after the timeout rather than a
// hang. Once it has shown that every process is there, the transfer itself is MPI's
// blocking collective: Open MPI's tuned blocking algorithms move 12.9 MB in 3.9 ms on
// these machines where the non-blocking MPI_Iallreduce, progressed by polling, takes 5.9.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/allocator.h"
#include "jx/parallel.h"
#include "support/process_group.h"
#include "support/str.h"

namespace jx {
namespace {

// The launchers whose environment marks a process as one of an MPI job.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

double env_timeout() {
  const char* v = std::getenv("JX_DISTRIBUTED_TIMEOUT");
  if (!v || !*v) return 300;
  char* end = nullptr;
  const double t = std::strtod(v, &end);
  if (*end != '\0' || !(t > 0))
    throw ValueError(str("JX_DISTRIBUTED_TIMEOUT='", v, "' is not a number of seconds; give a positive number"));
  return t;
}

// What a transfer is, compared across processes before it runs.
struct Header {
  char op[24] = {};
  int32_t dtype = -1;
  int64_t bytes = 0;
  std::string str() const { return jx::str(op, dtype >= 0 ? jx::str(" of ", dtype_name(DType(dtype))) : "", " (", bytes, " bytes)"); }
};

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int8: return MPI_INT8_T;
    case DType::Int16: return MPI_INT16_T;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::UInt8: return MPI_UINT8_T;
    case DType::UInt16: return MPI_UINT16_T;
    case DType::UInt32: return MPI_UINT32_T;
    case DType::UInt64: return MPI_UINT64_T;
    default: return MPI_DATATYPE_NULL;
  }
}

// A transfer's staging block, from jx's caching allocator: fresh pages from malloc cost
// several ms per MB in page faults on every call.
struct Scratch {
  explicit Scratch(size_t n) : bytes(n), data(detail::allocate(n)) {}
  ~Scratch() { detail::deallocate(data, bytes); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  size_t bytes;
  void* data;
};

// sum = a + b elementwise, for the dtypes MPI reduces (mpi_type).
template <class T>
void add_typed(void* sum, const void* a, const void* b, int64_t n) {
  T* out = static_cast<T*>(sum);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (int64_t i = 0; i < n; ++i) out[i] = T(x[i] + y[i]);
}

void add_blocks(DType dtype, void* sum, const void* a, const void* b, int64_t n) {
  switch (dtype) {
    case DType::Float32: return add_typed<float>(sum, a, b, n);
    case DType::Float64: return add_typed<double>(sum, a, b, n);
    case DType::Int8: return add_typed<int8_t>(sum, a, b, n);
    case DType::Int16: return add_typed<int16_t>(sum, a, b, n);
    case DType::Int32: return add_typed<int32_t>(sum, a, b, n);
    case DType::Int64: return add_typed<int64_t>(sum, a, b, n);
    case DType::UInt8: return add_typed<uint8_t>(sum, a, b, n);
    case DType::UInt16: return add_typed<uint16_t>(sum, a, b, n);
    case DType::UInt32: return add_typed<uint32_t>(sum, a, b, n);
    case DType::UInt64: return add_typed<uint64_t>(sum, a, b, n);
    default: throw InternalError(str("[reduce_scatter] no MPI sum of ", dtype_name(dtype)));
  }
}

class MpiGroup final : public support::ProcessGroup {
 public:
  MpiGroup(MPI_Comm comm, double timeout, std::shared_ptr<std::atomic<bool>> broken = nullptr)
      : comm_(comm), rank_(rank_of(comm)), size_(size_of(comm)), timeout_(timeout),
        broken_(broken ? std::move(broken) : std::make_shared<std::atomic<bool>>(false)) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  bool can_reduce(DType dtype) const override { return mpi_type(dtype) != MPI_DATATYPE_NULL; }

  void all_reduce(const void* send, void* recv, int64_t count, DType dtype, Reduce op, const char* what) override {
    const MPI_Datatype type = reducible(dtype, what);
    std::lock_guard<std::mutex> g(mu_);
    agree(what, dtype, count * int64_t(itemsize(dtype)));
    const MPI_Op mop = op == Reduce::Sum ? MPI_SUM : op == Reduce::Max ? MPI_MAX : MPI_MIN;
    const int64_t step = INT_MAX / 2;
    for (int64_t at = 0; at < count; at += step) {
      const int n = int(std::min(step, count - at));
      const size_t off = size_t(at) * itemsize(dtype);
      MPI_Allreduce(send == recv ? MPI_IN_PLACE : static_cast<const char*>(send) + off, static_cast<char*>(recv) + off,
                    n, type, mop, comm_);
    }
  }

  void reduce_scatter(const void* send, void* recv, int64_t count, DType dtype, const char* what) override {
    const MPI_Datatype type = reducible(dtype, what);
    const int64_t block = count / size_;
    if (block * size_ != count || block > INT_MAX)
      throw DistributedError(str("[", what, "] cannot split ", count, " elements into ", size_,
                                 " blocks of at most 2^31 - 1"));
    std::lock_guard<std::mutex> g(mu_);
    agree("reduce_scatter", dtype, count * int64_t(itemsize(dtype)));  // not an all-reduce's header
    // A ring of MPI_Sendrecv: at step k each process passes its running sum of block
    // rank - k - 1 to the next and adds the previous one's to its own copy of block
    // rank - k - 2, so after size - 1 steps it holds the whole sum of block rank. Open MPI's
    // MPI_Reduce_scatter_block takes 2.4-3.1 ms for 12.9 MB over 2 processes here, the ring
    // 1.0 ms (and an in-place all-reduce of the same bytes 1.65 ms).
    const size_t bytes = size_t(block) * itemsize(dtype);
    const char* in = static_cast<const char*>(send);
    if (size_ == 1) {
      std::memcpy(recv, in, bytes);
      return;
    }
    Scratch partial(bytes), incoming(bytes);
    const int right = (rank_ + 1) % size_, left = (rank_ + size_ - 1) % size_;
    auto at = [&](int k) { return in + size_t((rank_ + 2 * size_ - k) % size_) * bytes; };  // block rank - k
    for (int step = 0; step < size_ - 1; ++step) {
      MPI_Sendrecv(step == 0 ? at(1) : partial.data, int(block), type, right, 0, incoming.data, int(block), type,
                   left, 0, comm_, MPI_STATUS_IGNORE);
      void* sum = step == size_ - 2 ? recv : partial.data;
      add_blocks(dtype, sum, at(step + 2), incoming.data, block);
    }
  }

  void all_gather(const void* send, void* recv, int64_t bytes, const char* what) override {
    std::lock_guard<std::mutex> g(mu_);
    agree(what, std::nullopt, bytes);
    if (bytes > INT_MAX)
      throw DistributedError(str("[", what, "] ", bytes, " bytes per process in one collective; jx's MPI transport "
                                 "moves at most 2 GiB at once: split the array"));
    // Already in its place in recv: MPI's in-place form (0.58 against 1.02 ms for 6.4 MB).
    const bool in_place = send == static_cast<const char*>(recv) + size_t(rank_) * size_t(bytes);
    MPI_Allgather(in_place ? MPI_IN_PLACE : send, int(bytes), MPI_BYTE, recv, int(bytes), MPI_BYTE, comm_);
  }

  void barrier(const char* what) override {
    std::lock_guard<std::mutex> g(mu_);
    agree(what, std::nullopt, 0);
  }

  std::shared_ptr<support::ProcessGroup> split(int color, int key, const char* what) override {
    std::lock_guard<std::mutex> g(mu_);
    agree(what, std::nullopt, 0);  // every process is here, so MPI_Comm_split cannot hang
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(comm_, color, key, &sub);
    return std::make_shared<MpiGroup>(sub, timeout_, broken_);  // one broken flag for the run
  }

  // After a timed-out exchange the processes are out of step: the job can only end.
  bool broken() const { return *broken_; }

 private:
  MPI_Datatype reducible(DType dtype, const char* what) const {
    const MPI_Datatype type = mpi_type(dtype);
    if (type == MPI_DATATYPE_NULL)
      throw InternalError(str("[", what, "] MPI reduction of ", dtype_name(dtype), " (check can_reduce first)"));
    return type;
  }

  // Every process is about to run the same transfer, or a DistributedError says which differ.
  void agree(const char* what, std::optional<DType> dtype, int64_t bytes) {
    if (*broken_)
      throw DistributedError(str("[", what, "] an earlier collective of process ", rank_, " timed out, so the "
                                 "processes are out of step; end the run (jx aborts it at exit)"));
    Header mine;
    std::strncpy(mine.op, what, sizeof(mine.op) - 1);
    mine.dtype = dtype ? int32_t(*dtype) : -1;
    mine.bytes = bytes;
    std::vector<Header> all(static_cast<size_t>(size_));
    MPI_Request req;
    MPI_Iallgather(&mine, sizeof(Header), MPI_BYTE, all.data(), sizeof(Header), MPI_BYTE, comm_, &req);
    wait(req, what);
    for (int p = 0; p < size_; ++p) {
      const Header& h = all[size_t(p)];
      // Every process saw every header, so all of them throw here and stay in step.
      if (std::strcmp(h.op, mine.op) != 0 || h.dtype != mine.dtype || h.bytes != mine.bytes)
        throw DistributedError(str("[", what, "] process ", rank_, " runs ", mine.str(), " while process ", p,
                                   " runs ", h.str(), " at the same point: every process must run the same "
                                   "program with the same shapes (same pmap, same local device count)"));
    }
  }

  // Polls the request until it completes or the timeout passes, backing off after 1 ms so
  // that a process waiting long for a slow peer (its first compile, say) does not spin a
  // core the whole time.
  void wait(MPI_Request& req, const char* what) {
    const auto start = std::chrono::steady_clock::now();
    int done = 0;
    for (;;) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      const auto waited = std::chrono::steady_clock::now() - start;
      if (waited > std::chrono::duration<double>(timeout_)) {
        *broken_ = true;
        throw DistributedError(str("[", what, "] process ", rank_, " of ", size_, " waited ", timeout_,
                                   " s for the other processes to reach this collective. One of them is stuck "
                                   "or has left the run; raise JX_DISTRIBUTED_TIMEOUT if a step (or its first "
                                   "compile) really takes longer"));
      }
      if (waited > std::chrono::milliseconds(1)) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  static int rank_of(MPI_Comm c) {
    int r = 0;
    MPI_Comm_rank(c, &r);
    return r;
  }
  static int size_of(MPI_Comm c) {
    int n = 0;
    MPI_Comm_size(c, &n);
    return n;
  }

  // Sub-groups' communicators are never freed: MPI_Comm_free is collective, and a mesh's
  // groups live as long as the process (shard_map caches them).
  const MPI_Comm comm_;
  const int rank_, size_;
  const double timeout_;
  std::mutex mu_;
  const std::shared_ptr<std::atomic<bool>> broken_;
};

std::mutex g_init_mu;
std::shared_ptr<MpiGroup> g_mpi;
bool g_finalized = false;
char g_term_message[256];

// The launcher ends the other processes with SIGTERM when one fails: say so on stderr
// (async-signal-safe), then die of the signal as before.
void on_sigterm(int sig) {
  ssize_t ignored = write(STDERR_FILENO, g_term_message, std::strlen(g_term_message));
  (void)ignored;
  signal(sig, SIG_DFL);
  raise(sig);
}

void finalize_at_exit() {
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (!g_mpi || g_finalized) return;
  g_finalized = true;
  // A failed collective left the processes out of step: MPI_Finalize could wait forever.
  if (g_mpi->broken()) MPI_Abort(MPI_COMM_WORLD, 1);
  support::set_world(nullptr);
  MPI_Finalize();
}

}  // namespace

namespace distributed {

void initialize(const InitializeOptions& options) {
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (g_mpi || g_finalized)
    throw ValueError(g_finalized ? "[distributed::initialize] called after distributed::shutdown(); MPI cannot "
                                   "start twice in one process"
                                 : "[distributed::initialize] called twice; call it once, at the start of main");
  if (!launched_by_mpi()) return;  // a single process: nothing to join
  const double timeout = options.timeout_seconds > 0 ? options.timeout_seconds : env_timeout();
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw DistributedError("[distributed::initialize] this MPI library does not support calls from several "
                           "threads (MPI_THREAD_SERIALIZED), which pmap's replica threads make");
  }
  auto group = std::make_shared<MpiGroup>(MPI_COMM_WORLD, timeout);
  const int rank = group->rank(), size = group->size();
  // Every process must have the same number of local devices (the global list is
  // process-major, as JAX's).
  const int64_t mine = local_device_count();
  std::vector<int64_t> counts(static_cast<size_t>(size));
  group->all_gather(&mine, counts.data(), sizeof(mine), "distributed::initialize");
  for (int p = 0; p < size; ++p)
    if (counts[size_t(p)] != mine)
      throw ValueError(str("[distributed::initialize] process ", p, " has ", counts[size_t(p)],
                           " CPU devices but process ", rank, " has ", mine,
                           "; give every process the same JX_NUM_CPU_DEVICES"));
  g_mpi = group;
  support::set_world(group);
  std::snprintf(g_term_message, sizeof(g_term_message),
                "jx.distributed: process %d of %d stopped by the MPI launcher (SIGTERM), usually because "
                "another process failed; its error is in the launcher's output\n",
                rank, size);
  signal(SIGTERM, on_sigterm);
  std::atexit(finalize_at_exit);
}

void barrier(const std::string& name) {
  if (auto world = support::world()) world->barrier(name.c_str());
}

void shutdown() { finalize_at_exit(); }

bool is_initialized() {
  std::lock_guard<std::mutex> lock(g_init_mu);
  return g_mpi != nullptr && !g_finalized;
}

}  // namespace distributed

int process_index() { return support::process_index(); }
int process_count() { return support::process_count(); }

}  // namespace jx
