// One compiled sub-jaxpr (a scan or while body, a while cond, a cond branch) and its
// runtime: the fusion plan's kernels and library calls, nested control-flow drivers, and
// a buffer plan fixed at compile time (control_flow.h).
//
// A run binds the inputs (a pointer each, plus an Array where the driver has one) and
// the outputs' destinations (a pointer each, plus an Array where the destination is a
// whole buffer: a carry, a cond result), runs the steps, and leaves the outputs at their
// destinations. A value returned by the body is computed straight into its destination
// when a kernel computes it, or a library call does and the destination is an Array;
// otherwise (and for a second output of the same value, an input or a literal returned
// as is) it is copied there at the end. The other values live in the frame's arena.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/small_gemm.h"
#include "compiler/control_flow.h"
#include "ops/primitive.h"

namespace jx::compiler {

using ops::Aval;

class CompiledBody {
 public:
  // `j` is an optimized sub-jaxpr closed over nothing; in_array[i] / out_array[k]: the
  // driver always passes input i / output k's destination as an Array. `controls` has one
  // entry per step of `plan`.
  // `owner` keeps `j` alive when nothing else does (a body rewritten for the driver).
  CompiledBody(const ir::Jaxpr& j, FusionPlan plan, std::vector<bool> in_array, std::vector<bool> out_array,
               std::vector<std::shared_ptr<const ControlDriver>> controls,
               std::shared_ptr<const ir::Jaxpr> owner = nullptr);

  struct Frame {
    std::vector<void*> ptr;      // per slot: where the value is this run
    std::vector<Array> arr;      // per slot: the value as an Array, where one exists
    std::vector<Array> buffers;  // the arena
    std::vector<Array> staging;  // per invar: a copy for library readers of a bare pointer
    std::vector<std::unique_ptr<ControlState>> children;  // per step (control steps only)
    std::vector<const void*> ins;
    std::vector<void*> outs;
    std::vector<Array> lib_in, lib_out;
  };
  // Allocates the arena and the nested drivers' states: the only allocations of a run.
  std::unique_ptr<Frame> new_frame() const;

  // in_arr[i] / out_arr[k] may be null (memory only), except where in_array[i] / out_array[k].
  void run(Frame& f, const void* const* in_ptr, const Array* const* in_arr, void* const* out_ptr,
           const Array* const* out_arr) const;

  // Whether output k may be computed over input i: a kernel that reads input i at the
  // index it writes (elementwise, same shape, no reduction) computes output k straight
  // into its destination, and nothing else reads input i or returns it. A loop driver may
  // then pass one buffer as both (a carry updated in place, which saves the second
  // buffer's traffic: Newton's x <- (x + a/x)/2 over 1M floats).
  bool may_overwrite(size_t i, size_t k) const {
    return std::find(overwrites_[k].begin(), overwrites_[k].end(), int(i)) != overwrites_[k].end();
  }

  const ir::Jaxpr& jaxpr() const { return j_; }
  const FusionPlan& plan() const { return plan_; }
  int num_kernels() const { return num_kernels_; }
  void set_kernels(std::vector<KernelFn> k) { kernels_ = std::move(k); }
  std::string describe(const std::string& indent) const;

 private:
  // Gemm: a small float32 dot_general run by cpu::small_sgemm on raw pointers, like a
  // kernel (no Arrays, no staging).
  enum class Kind { Kernel, Gemm, Library, Control };
  struct Step {
    Kind kind = Kind::Library;
    int kernel = -1;
    cpu::SmallGemm gemm;
    ops::ImplRule impl = nullptr;
    const ops::Params* params = nullptr;
    const ControlDriver* control = nullptr;
    std::vector<int> in_slots, out_slots;
    std::vector<size_t> out_bytes;
  };
  // Where a slot's value is during a run.
  enum class Where { Input, Literal, Arena, Direct, Unused };
  struct Slot {
    Where where = Where::Unused;
    int index = -1;  // invar index, literal index, arena buffer, or output position
    Aval aval;
  };
  struct EndCopy {
    int k = 0;      // output position
    int slot = -1;  // source slot
  };

  void plan_buffers();
  void plan_overwrites(const std::vector<int>& producer);

  std::shared_ptr<const ir::Jaxpr> owner_;
  const ir::Jaxpr& j_;
  FusionPlan plan_;
  std::vector<bool> in_array_, out_array_;
  std::vector<std::shared_ptr<const ControlDriver>> controls_;
  std::vector<KernelFn> kernels_;
  int num_kernels_ = 0;
  std::vector<Step> steps_;
  std::vector<Slot> slots_;
  std::vector<Array> literals_;
  std::vector<size_t> arena_bytes_;
  std::vector<bool> invar_needs_array_;
  std::vector<EndCopy> end_copies_;
  std::vector<std::pair<int, int>> direct_;  // (slot, output position) written in place
  std::vector<std::vector<int>> overwrites_;  // per output: the inputs it may overwrite
  size_t max_in_ = 0, max_out_ = 0;
};

}  // namespace jx::compiler
