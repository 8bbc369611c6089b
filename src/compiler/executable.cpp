// Step execution with a precomputed buffer plan (executable.h).
#include "compiler/executable.h"

#include <algorithm>
#include <filesystem>

#include "core/array_impl.h"
#include "ops/common.h"
#include "support/check.h"
#include "support/profiler.h"
#include "support/str.h"

namespace jx::compiler {
namespace {

using ops::Aval;

class PlannedExecutable : public Executable {
 public:
  explicit PlannedExecutable(Program p) : p_(std::move(p)) { plan(); }

  std::vector<Array> run(std::span<const Array> args) const override {
    const ir::Jaxpr& j = p_.jaxpr;
    if (args.size() != j.invars.size())
      throw ValueError(str("[jit] the compiled function takes ", j.invars.size(),
                           " array arguments, got ", args.size()));
    for (size_t i = 0; i < args.size(); ++i) {
      const Aval& want = j.avals[size_t(j.invars[i])];
      if (!args[i].valid() || !args[i].is_concrete() || args[i].dtype() != want.dtype ||
          args[i].shape() != want.shape)
        throw ValueError(str("[jit] argument ", i, " must be a concrete ", ops::aval_str(want),
                             (args[i].valid() && args[i].is_concrete()
                                  ? str(", got ", ops::aval_str(ops::aval_of(args[i])))
                                  : std::string(", got a traced or empty array")),
                             "; call the executable only with the types it was compiled for"));
    }
    std::vector<Array> env(init_env_);
    for (size_t i = 0; i < args.size(); ++i) env[size_t(j.invars[i])] = args[i];
    std::vector<const void*> ins(max_in_);
    std::vector<void*> outs(max_out_);
    std::vector<Array> lib_in, lib_out;
    for (const Step& s : steps_) {
      prof::Scope step_scope(prof_sites_[size_t(&s - steps_.data())]);
      if (s.kernel) {
        for (size_t k = 0; k < s.in_slots.size(); ++k) ins[k] = detail::raw_data(env[size_t(s.in_slots[k])]);
        for (size_t k = 0; k < s.out_slots.size(); ++k) {
          Array a = new_output(s, k, args);
          outs[k] = detail::raw_data(a);
          env[size_t(s.out_slots[k])] = std::move(a);
        }
        s.fn(ins.data(), outs.data());
      } else {
        lib_in.clear();
        lib_out.clear();
        // Operands that die here are handed over, not shared: an impl that finds itself the
        // only owner of a buffer may reuse it (the in-place all-reduce of psum).
        for (size_t k = 0; k < s.in_slots.size(); ++k) {
          Array& v = env[size_t(s.in_slots[k])];
          lib_in.push_back(s.hand_over[k] ? std::move(v) : v);
        }
        for (size_t k = 0; k < s.out_slots.size(); ++k) lib_out.push_back(new_output(s, k, args));
        if (s.control) {
          // Compiled control flow: its state (arena, scratch carries) lives for this call.
          std::unique_ptr<ControlState> st = s.control->new_state();
          s.control->run(*st, lib_in, lib_out);
        } else {
          s.impl(lib_in, lib_out, *s.params);
        }
        for (size_t k = 0; k < s.out_slots.size(); ++k) env[size_t(s.out_slots[k])] = std::move(lib_out[k]);
      }
      for (int slot : s.release) env[size_t(slot)] = Array();
    }
    std::vector<Array> result;
    result.reserve(out_slots_.size());
    for (int slot : out_slots_) result.push_back(env[size_t(slot)]);
    return result;
  }

  std::string describe() const override { return description_; }
  const Program& program() const override { return p_; }
  MemoryAnalysis memory_analysis() const override;

 private:
  struct Step {
    bool kernel = false;
    KernelFn fn = nullptr;
    ops::ImplRule impl = nullptr;
    const ControlDriver* control = nullptr;
    const ops::Params* params = nullptr;
    std::vector<int> in_slots, out_slots;
    std::vector<Aval> out_avals;
    std::vector<int> donor;    // per output: argument whose buffer it takes, or -1
    std::vector<int> release;  // slots dead after this step
    std::vector<bool> hand_over;  // per input of a library step: dead after it, read once
  };

  Program p_;
  std::vector<const prof::Site*> prof_sites_ =  // per step: its trace event (profiler.h)
      prof::step_sites(compiler::describe(p_.jaxpr, p_.plan));
  std::vector<Step> steps_;
  std::vector<Array> init_env_;  // constants and literal operands; the rest empty
  std::vector<int> out_slots_;
  size_t max_in_ = 0, max_out_ = 0;
  std::string description_;

  Array new_output(const Step& s, size_t k, std::span<const Array> args) const {
    const Aval& a = s.out_avals[k];
    if (s.donor[k] >= 0) return detail::alias_array(args[size_t(s.donor[k])], a.shape, a.dtype, a.weak);
    return detail::empty_array(a.shape, a.dtype, a.weak);
  }

  void plan() {
    const ir::Jaxpr& j = p_.jaxpr;
    const size_t nvars = j.avals.size();
    init_env_.assign(nvars, Array());
    for (size_t i = 0; i < j.constvars.size(); ++i) init_env_[size_t(j.constvars[i])] = j.consts[i];
    auto literal_slot = [&](const Array& lit) {
      init_env_.push_back(lit);
      return int(init_env_.size()) - 1;
    };

    int kernel_index = 0;
    for (size_t si = 0; si < p_.plan.steps.size(); ++si) {
      const FusedStep& fs = p_.plan.steps[si];
      Step s;
      s.kernel = fs.is_kernel;
      if (fs.is_kernel) {
        s.fn = p_.kernels[size_t(kernel_index++)];
        s.in_slots = fs.inputs;
        s.out_slots = fs.outputs;
      } else {
        const ir::Eqn& e = j.eqns[size_t(fs.eqns[0])];
        s.impl = ops::info(e.prim).impl;
        JX_CHECK(s.impl, "no impl rule for ", ops::name(e.prim));
        s.params = &e.params;
        if (si < p_.controls.size()) s.control = p_.controls[si].get();
        for (const ir::Atom& a : e.inputs) s.in_slots.push_back(a.is_var() ? a.var : literal_slot(a.literal));
        s.out_slots = e.outputs;
      }
      for (int v : s.out_slots) s.out_avals.push_back(j.avals[size_t(v)]);
      s.donor.assign(s.out_slots.size(), -1);
      max_in_ = std::max(max_in_, s.in_slots.size());
      max_out_ = std::max(max_out_, s.out_slots.size());
      steps_.push_back(std::move(s));
    }
    for (const ir::Atom& a : j.outvars) out_slots_.push_back(a.is_var() ? a.var : literal_slot(a.literal));

    // Liveness: release each slot after its last reader (or its producer, if unread).
    std::vector<int> last(init_env_.size(), -1);
    std::vector<bool> keep(init_env_.size(), false);
    for (int slot : out_slots_) keep[size_t(slot)] = true;
    for (size_t si = 0; si < steps_.size(); ++si) {
      for (int slot : steps_[si].in_slots) last[size_t(slot)] = int(si);
      for (int slot : steps_[si].out_slots) last[size_t(slot)] = std::max(last[size_t(slot)], int(si));
    }
    for (size_t slot = 0; slot < last.size(); ++slot)
      if (last[slot] >= 0 && !keep[slot]) steps_[size_t(last[slot])].release.push_back(int(slot));
    plan_donation(last);
    for (Step& s : steps_) {
      s.hand_over.assign(s.in_slots.size(), false);
      if (s.kernel) continue;
      for (size_t k = 0; k < s.in_slots.size(); ++k) {
        const int slot = s.in_slots[k];
        s.hand_over[k] = std::count(s.release.begin(), s.release.end(), slot) > 0 &&
                         std::count(s.in_slots.begin(), s.in_slots.end(), slot) == 1;
      }
    }

    description_ = p_.header.empty() ? "" : p_.header + "\n";
    description_ += describe_with_controls(j, p_.plan, p_.controls, "");
    for (const Step& s : steps_)
      for (size_t k = 0; k < s.donor.size(); ++k)
        if (s.donor[k] >= 0)
          description_ += str("donated argument ", s.donor[k], " -> ", ops::aval_str(s.out_avals[k]), "\n");
  }

  // A donated argument's buffer becomes a returned value of the same type, written after
  // the argument's last read (or at it, by an elementwise kernel reading at the same
  // index). Only arguments that kernels alone read qualify: a library call may have
  // aliased the buffer into a value that is still alive.
  void plan_donation(const std::vector<int>& last) {
    const ir::Jaxpr& j = p_.jaxpr;
    std::vector<bool> returned(init_env_.size(), false);
    for (int slot : out_slots_) returned[size_t(slot)] = true;
    std::vector<bool> taken(init_env_.size(), false);
    for (size_t i = 0; i < j.invars.size() && i < p_.donate.size(); ++i) {
      if (!p_.donate[i]) continue;
      const int d = j.invars[i];
      if (returned[size_t(d)]) continue;
      bool kernels_only = true;
      for (const Step& s : steps_)
        if (!s.kernel && std::count(s.in_slots.begin(), s.in_slots.end(), d)) kernels_only = false;
      if (!kernels_only) continue;
      const Aval& da = j.avals[size_t(d)];
      bool done = false;
      for (size_t si = 0; si < steps_.size() && !done; ++si) {
        Step& s = steps_[si];
        const FusedStep& fs = p_.plan.steps[si];
        for (size_t k = 0; k < s.out_slots.size() && !done; ++k) {
          const int v = s.out_slots[k];
          const Aval& va = s.out_avals[k];
          if (!returned[size_t(v)] || taken[size_t(v)] || va.shape != da.shape || va.dtype != da.dtype)
            continue;
          bool ok = last[size_t(d)] < int(si) ||
                    (last[size_t(d)] == int(si) && s.kernel && !fs.has_reduction() && fs.domain == da.shape);
          if (!ok) continue;
          s.donor[k] = int(i);
          taken[size_t(v)] = true;
          done = true;
        }
      }
    }
  }
};

// Replays the buffer plan: an intermediate is alive from its step to its release. Control
// steps' own arenas (loop bodies) are not counted; aliasing library outputs (a reshape's
// view) are counted as buffers, so temp_bytes is an upper bound.
MemoryAnalysis PlannedExecutable::memory_analysis() const {
  const ir::Jaxpr& j = p_.jaxpr;
  auto slot_bytes = [&](int slot) -> int64_t {
    const bool var = size_t(slot) < j.avals.size();
    const Aval a = var ? j.avals[size_t(slot)] : ops::aval_of(init_env_[size_t(slot)]);
    return a.shape.numel() * int64_t(itemsize(a.dtype));
  };
  MemoryAnalysis m;
  for (int v : j.invars) m.argument_bytes += slot_bytes(v);
  for (int v : j.constvars) m.constant_bytes += slot_bytes(v);
  std::vector<bool> returned(init_env_.size(), false);
  for (int slot : out_slots_) {
    if (returned[size_t(slot)]) continue;
    returned[size_t(slot)] = true;
    m.output_bytes += slot_bytes(slot);
  }
  std::vector<bool> temp(init_env_.size(), false);
  int64_t live = 0;
  for (const Step& s : steps_) {
    for (size_t k = 0; k < s.out_slots.size(); ++k) {
      const int slot = s.out_slots[k];
      if (s.donor[k] >= 0) m.alias_bytes += slot_bytes(slot);
      if (returned[size_t(slot)] || temp[size_t(slot)]) continue;
      temp[size_t(slot)] = true;
      live += slot_bytes(slot);
    }
    m.temp_bytes = std::max(m.temp_bytes, live);
    for (int slot : s.release)
      if (temp[size_t(slot)]) live -= slot_bytes(slot);
  }
  std::error_code ec;
  std::vector<const SharedLibrary*> libs;
  if (p_.library) libs.push_back(p_.library.get());
  for (const auto& l : p_.extra_libraries) libs.push_back(l.get());
  for (const SharedLibrary* l : libs) {
    const auto n = std::filesystem::file_size(l->path(), ec);
    if (!ec) m.generated_code_bytes += int64_t(n);
  }
  return m;
}

}  // namespace

std::shared_ptr<const Executable> make_executable(Program p) {
  return std::make_shared<PlannedExecutable>(std::move(p));
}

}  // namespace jx::compiler
