// The processes of a multi-process run, as the layers below jx::distributed see them: the
// collectives (ops/collective) exchange bytes through it and checkpoints ask which process
// writes. jx::distributed::initialize() installs the MPI implementation
// (src/distributed/mpi.cpp); a GPU build would install one over NCCL behind the same calls.
// Without it (world() null) the run is one process.
#pragma once
#include <cstdint>
#include <memory>

#include "jx/dtype.h"

namespace jx::support {

class ProcessGroup {
 public:
  enum class Reduce { Sum, Max, Min };
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Whether all_reduce and reduce_scatter take this dtype (not float16, bfloat16, bool:
  // for those the caller gathers and reduces itself).
  virtual bool can_reduce(DType dtype) const = 0;
  // recv = the elementwise reduction over the processes of every process' send (`count`
  // elements of `dtype`); recv == send reduces in place. `what` names the operation in errors; every process must make
  // the same calls in the same order (checked: a mismatch throws DistributedError naming
  // both sides).
  virtual void all_reduce(const void* send, void* recv, int64_t count, DType dtype, Reduce op,
                          const char* what) = 0;
  // recv (count / size() elements) = block rank() of the elementwise sum over the processes
  // of send (count elements, a multiple of size()): half the traffic of all_reduce.
  virtual void reduce_scatter(const void* send, void* recv, int64_t count, DType dtype, const char* what) = 0;
  // recv (size() * bytes) = every process' `bytes` bytes of send, in process order; send
  // may be recv's own block (recv + rank() * bytes).
  virtual void all_gather(const void* send, void* recv, int64_t bytes, const char* what) = 0;
  // Returns once every process has called it.
  virtual void barrier(const char* what) = 0;
  // The processes of this group that pass the same `color`, ranked by `key` (MPI_Comm_split;
  // ncclCommSplit on GPUs): a mesh axis' collectives among the processes along it. Every
  // process of this group must call it, in the same order.
  virtual std::shared_ptr<ProcessGroup> split(int color, int key, const char* what) = 0;
};

// The process group of this run, or null for a single process.
std::shared_ptr<ProcessGroup> world();
void set_world(std::shared_ptr<ProcessGroup> group);
// world()'s rank and size, 0 and 1 without one.
int process_index();
int process_count();

}  // namespace jx::support
