// A compiled sub-jaxpr's buffer plan and run loop (control_body.h).
#include "compiler/control_body.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/array_impl.h"
#include "ops/common.h"
#include "support/check.h"
#include "support/str.h"

namespace jx::compiler {
namespace {

size_t nbytes_of(const Aval& a) { return size_t(a.shape.numel()) * itemsize(a.dtype); }

// A float32 product of two matrices that cpu::small_sgemm computes: no batch dims, one
// contracted dim, B contracted along its rows.
std::optional<cpu::SmallGemm> small_gemm_of(const ir::Jaxpr& j, const ir::Eqn& e) {
  if (e.prim != ops::Prim::DotGeneral) return std::nullopt;
  const Aval l = j.aval_of(e.inputs[0]), r = j.aval_of(e.inputs[1]), o = j.avals[size_t(e.outputs[0])];
  if (l.dtype != DType::Float32 || r.dtype != DType::Float32 || o.dtype != DType::Float32) return std::nullopt;
  const auto &lc = e.params.ints("lhs_contracting"), &rc = e.params.ints("rhs_contracting");
  if (l.shape.size() != 2 || r.shape.size() != 2 || !e.params.ints("lhs_batch").empty() || lc.size() != 1 ||
      rc != std::vector<int64_t>{0})
    return std::nullopt;
  cpu::SmallGemm g;
  g.lhs_transposed = lc[0] == 0;
  g.K = l.shape[size_t(lc[0])];
  g.M = l.shape[size_t(1 - lc[0])];
  g.N = r.shape[1];
  if (!cpu::small_sgemm_supported(g.M, g.N, g.K)) return std::nullopt;
  return g;
}

}  // namespace

CompiledBody::CompiledBody(const ir::Jaxpr& j, FusionPlan plan, std::vector<bool> in_array,
                           std::vector<bool> out_array, std::vector<std::shared_ptr<const ControlDriver>> controls,
                           std::shared_ptr<const ir::Jaxpr> owner)
    : owner_(std::move(owner)),
      j_(j),
      plan_(std::move(plan)),
      in_array_(std::move(in_array)),
      out_array_(std::move(out_array)),
      controls_(std::move(controls)) {
  JX_CHECK(in_array_.size() == j_.invars.size() && out_array_.size() == j_.outvars.size(),
           "CompiledBody: one flag per input and output");
  JX_CHECK(controls_.size() == plan_.steps.size(), "CompiledBody: one driver entry per step");
  plan_buffers();
}

void CompiledBody::plan_buffers() {
  const ir::Jaxpr& j = j_;
  slots_.assign(j.avals.size(), Slot{});
  for (size_t v = 0; v < j.avals.size(); ++v) slots_[v].aval = j.avals[v];
  auto literal_slot = [&](const Array& lit) {
    literals_.push_back(lit);
    slots_.push_back(Slot{Where::Literal, int(literals_.size()) - 1, ops::aval_of(lit)});
    return int(slots_.size()) - 1;
  };
  for (size_t i = 0; i < j.constvars.size(); ++i) {
    literals_.push_back(j.consts[i]);
    slots_[size_t(j.constvars[i])].where = Where::Literal;
    slots_[size_t(j.constvars[i])].index = int(literals_.size()) - 1;
  }
  for (size_t i = 0; i < j.invars.size(); ++i) {
    slots_[size_t(j.invars[i])].where = Where::Input;
    slots_[size_t(j.invars[i])].index = int(i);
  }

  // Steps, which step produces each slot, and which slots library calls read.
  std::vector<int> producer(slots_.size(), -1);
  for (size_t si = 0; si < plan_.steps.size(); ++si) {
    const FusedStep& fs = plan_.steps[si];
    Step s;
    if (fs.is_kernel) {
      s.kind = Kind::Kernel;
      s.kernel = num_kernels_++;
      s.in_slots = fs.inputs;
      s.out_slots = fs.outputs;
    } else {
      const ir::Eqn& e = j.eqns[size_t(fs.eqns[0])];
      s.params = &e.params;
      if (controls_[si]) {
        s.kind = Kind::Control;
        s.control = controls_[si].get();
      } else if (std::optional<cpu::SmallGemm> g = small_gemm_of(j, e)) {
        s.kind = Kind::Gemm;
        s.gemm = *g;
      } else {
        s.impl = ops::info(e.prim).impl;
        JX_CHECK(s.impl, "no impl rule for ", ops::name(e.prim));
      }
      for (const ir::Atom& a : e.inputs) s.in_slots.push_back(a.is_var() ? a.var : literal_slot(a.literal));
      s.out_slots = e.outputs;
    }
    for (int v : s.out_slots) {
      s.out_bytes.push_back(nbytes_of(j.avals[size_t(v)]));
      producer[size_t(v)] = int(si);
    }
    max_in_ = std::max(max_in_, s.in_slots.size());
    max_out_ = std::max(max_out_, s.out_slots.size());
    steps_.push_back(std::move(s));
  }
  producer.resize(slots_.size(), -1);
  std::vector<bool> lib_read(slots_.size(), false);
  for (const Step& s : steps_)
    if (s.kind == Kind::Library || s.kind == Kind::Control)
      for (int v : s.in_slots) lib_read[size_t(v)] = true;
  invar_needs_array_.clear();
  for (int v : j.invars) invar_needs_array_.push_back(lib_read[size_t(v)]);

  // Outputs: straight into the destination where the producer can write there, else a
  // copy at the end (from the arena, an input, a literal).
  const int nsteps = int(steps_.size());
  std::vector<int> last(slots_.size(), -1);
  for (size_t k = 0; k < j.outvars.size(); ++k) {
    const ir::Atom& a = j.outvars[k];
    int v = a.is_var() ? a.var : literal_slot(a.literal);
    if (size_t(v) >= producer.size()) {
      producer.resize(slots_.size(), -1);
      lib_read.resize(slots_.size(), false);
      last.resize(slots_.size(), -1);
    }
    Slot& sl = slots_[size_t(v)];
    const int p = producer[size_t(v)];
    if (sl.where == Where::Unused && p >= 0) {
      const bool by_kernel = steps_[size_t(p)].kind == Kind::Kernel || steps_[size_t(p)].kind == Kind::Gemm;
      if (out_array_[k] || (by_kernel && !lib_read[size_t(v)])) {
        sl.where = Where::Direct;
        sl.index = int(k);
        direct_.emplace_back(v, int(k));
        continue;
      }
    }
    JX_CHECK(sl.where != Where::Unused || p >= 0, "CompiledBody: output ", k, " is never computed");
    end_copies_.push_back(EndCopy{int(k), v});
    last[size_t(v)] = nsteps;
  }

  plan_overwrites(producer);

  // Arena: values that are neither inputs, literals nor written in place, with buffers
  // shared between values of the same size whose lifetimes do not overlap (a buffer is
  // free for the step after its value's last reader).
  for (int si = 0; si < nsteps; ++si) {
    for (int v : steps_[size_t(si)].in_slots) last[size_t(v)] = std::max(last[size_t(v)], si);
    for (int v : steps_[size_t(si)].out_slots) last[size_t(v)] = std::max(last[size_t(v)], si);
  }
  std::vector<std::vector<int>> release_at(size_t(nsteps) + 1);
  std::vector<int> free_buffers;
  for (int si = 0; si < nsteps; ++si) {
    for (int b : release_at[size_t(si)]) free_buffers.push_back(b);
    for (int v : steps_[size_t(si)].out_slots) {
      Slot& sl = slots_[size_t(v)];
      if (sl.where != Where::Unused) continue;
      const size_t bytes = nbytes_of(sl.aval);
      auto it = std::find_if(free_buffers.begin(), free_buffers.end(),
                             [&](int b) { return arena_bytes_[size_t(b)] == bytes; });
      if (it != free_buffers.end()) {
        sl.index = *it;
        free_buffers.erase(it);
      } else {
        arena_bytes_.push_back(bytes);
        sl.index = int(arena_bytes_.size()) - 1;
      }
      sl.where = Where::Arena;
      if (last[size_t(v)] < nsteps) release_at[size_t(last[size_t(v)]) + 1].push_back(sl.index);
    }
  }
}

void CompiledBody::plan_overwrites(const std::vector<int>& producer) {
  const ir::Jaxpr& j = j_;
  overwrites_.assign(j.outvars.size(), {});
  std::vector<int> readers(slots_.size(), 0);
  for (const Step& s : steps_)
    for (int v : s.in_slots) ++readers[size_t(v)];
  for (const ir::Atom& a : j.outvars)
    if (a.is_var()) ++readers[size_t(a.var)];
  for (const auto& [v, k] : direct_) {
    const int p = producer[size_t(v)];
    if (p < 0 || steps_[size_t(p)].kind != Kind::Kernel || plan_.steps[size_t(p)].has_reduction()) continue;
    const Aval& va = j.avals[size_t(v)];
    for (size_t i = 0; i < j.invars.size(); ++i) {
      const int x = j.invars[i];
      const Aval& xa = j.avals[size_t(x)];
      const auto& ins = steps_[size_t(p)].in_slots;
      if (xa.shape != va.shape || xa.dtype != va.dtype || plan_.steps[size_t(p)].domain != xa.shape ||
          readers[size_t(x)] != 1 || std::count(ins.begin(), ins.end(), x) != 1)
        continue;
      overwrites_[size_t(k)].push_back(int(i));
    }
  }
}

std::unique_ptr<CompiledBody::Frame> CompiledBody::new_frame() const {
  auto f = std::make_unique<Frame>();
  f->ptr.assign(slots_.size(), nullptr);
  f->arr.assign(slots_.size(), Array());
  for (size_t b = 0; b < arena_bytes_.size(); ++b)
    f->buffers.push_back(detail::empty_array({int64_t(arena_bytes_[b])}, DType::UInt8));
  for (size_t v = 0; v < slots_.size(); ++v) {
    const Slot& sl = slots_[v];
    if (sl.where == Where::Literal) {
      f->arr[v] = literals_[size_t(sl.index)];
      f->ptr[v] = detail::raw_data(f->arr[v]);
    } else if (sl.where == Where::Arena) {
      const Array& buf = f->buffers[size_t(sl.index)];
      f->arr[v] = detail::alias_array(buf, sl.aval.shape, sl.aval.dtype, sl.aval.weak);
      f->ptr[v] = detail::raw_data(buf);
    }
  }
  f->staging.resize(j_.invars.size());
  for (size_t i = 0; i < j_.invars.size(); ++i)
    if (invar_needs_array_[i] && !in_array_[i]) {
      const Aval& a = j_.avals[size_t(j_.invars[i])];
      f->staging[i] = detail::empty_array(a.shape, a.dtype, a.weak);
    }
  f->children.resize(steps_.size());
  for (size_t si = 0; si < steps_.size(); ++si)
    if (steps_[si].control) f->children[si] = steps_[si].control->new_state();
  f->ins.resize(max_in_);
  f->outs.resize(max_out_);
  f->lib_in.reserve(max_in_);
  f->lib_out.reserve(max_out_);
  return f;
}

void CompiledBody::run(Frame& f, const void* const* in_ptr, const Array* const* in_arr, void* const* out_ptr,
                       const Array* const* out_arr) const {
  for (size_t i = 0; i < j_.invars.size(); ++i) {
    const size_t v = size_t(j_.invars[i]);
    f.ptr[v] = const_cast<void*>(in_ptr[i]);
    // Only library and control steps read Arrays. Copying one costs two atomic updates of
    // its count, which both threads of a row-blocked loop would make on the same consts'
    // counts every step.
    if (!invar_needs_array_[i]) continue;
    if (in_arr[i]) {
      f.arr[v] = *in_arr[i];
    } else {
      // A library call reads a row of xs: it needs an Array of its own.
      const Array& st = f.staging[i];
      void* d = detail::raw_data(st);
      if (st.nbytes()) std::memcpy(d, in_ptr[i], st.nbytes());
      f.arr[v] = st;
      f.ptr[v] = d;
    }
  }
  for (const auto& [v, k] : direct_) {
    f.ptr[size_t(v)] = out_ptr[k];
    if (out_arr[k]) f.arr[size_t(v)] = *out_arr[k];
  }
  for (size_t si = 0; si < steps_.size(); ++si) {
    const Step& s = steps_[si];
    if (s.kind == Kind::Kernel) {
      for (size_t k = 0; k < s.in_slots.size(); ++k) f.ins[k] = f.ptr[size_t(s.in_slots[k])];
      for (size_t k = 0; k < s.out_slots.size(); ++k) f.outs[k] = f.ptr[size_t(s.out_slots[k])];
      kernels_[size_t(s.kernel)](f.ins.data(), f.outs.data());
      continue;
    }
    if (s.kind == Kind::Gemm) {
      cpu::small_sgemm(s.gemm, static_cast<const float*>(f.ptr[size_t(s.in_slots[0])]),
                       static_cast<const float*>(f.ptr[size_t(s.in_slots[1])]),
                       static_cast<float*>(f.ptr[size_t(s.out_slots[0])]));
      continue;
    }
    f.lib_in.clear();
    f.lib_out.clear();
    for (int v : s.in_slots) f.lib_in.push_back(f.arr[size_t(v)]);
    for (int v : s.out_slots) f.lib_out.push_back(f.arr[size_t(v)]);
    if (s.kind == Kind::Control) s.control->run(*f.children[si], f.lib_in, f.lib_out);
    else s.impl(f.lib_in, f.lib_out, *s.params);
    // A rule may hand back an array aliasing one of its inputs: the value still has to
    // be where the plan put it.
    for (size_t k = 0; k < s.out_slots.size(); ++k) {
      void* want = f.ptr[size_t(s.out_slots[k])];
      const void* got = detail::raw_data(f.lib_out[k]);
      if (got != want && s.out_bytes[k]) std::memmove(want, got, s.out_bytes[k]);
    }
  }
  for (const EndCopy& c : end_copies_) {
    const void* src = f.ptr[size_t(c.slot)];
    const size_t n = nbytes_of(slots_[size_t(c.slot)].aval);
    if (src != out_ptr[c.k] && n) std::memcpy(out_ptr[c.k], src, n);
  }
}

std::string CompiledBody::describe(const std::string& indent) const {
  return describe_with_controls(j_, plan_, controls_, indent);
}

}  // namespace jx::compiler
