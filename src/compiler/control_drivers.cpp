// The loop drivers of compiled control flow (control_flow.h) and the compiler that builds
// them: scan, while and cond over compiled bodies (control_body.h).
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <optional>

#include "compiler/codegen.h"
#include "compiler/control_body.h"
#include "compiler/passes.h"
#include "core/array_impl.h"
#include "ops/emit_prelude.h"
#include "support/check.h"
#include "support/str.h"

namespace jx::compiler {
namespace {

using Frame = CompiledBody::Frame;

void copy_array(const Array& from, const Array& to) {
  const size_t n = to.nbytes();
  void* d = detail::raw_data(to);
  const void* s = detail::raw_data(from);
  if (n && d != s) std::memcpy(d, s, n);
}

// ", carries 0 2 in place" for describe(), or nothing.
std::string in_place_str(const std::vector<bool>& in_place) {
  std::string r;
  for (size_t k = 0; k < in_place.size(); ++k)
    if (in_place[k]) r += str(" ", k);
  return r.empty() ? r : str(", carries", r, " in place");
}

// Pointer and Array slots for one body's inputs and outputs, reused every iteration.
struct BodyArgs {
  std::vector<const void*> in_ptr;
  std::vector<const Array*> in_arr;
  std::vector<void*> out_ptr;
  std::vector<const Array*> out_arr;
  void resize(const CompiledBody& b) {
    in_ptr.assign(b.jaxpr().invars.size(), nullptr);
    in_arr.assign(b.jaxpr().invars.size(), nullptr);
    out_ptr.assign(b.jaxpr().outvars.size(), nullptr);
    out_arr.assign(b.jaxpr().outvars.size(), nullptr);
  }
  void set_in(size_t i, const Array& a) {
    in_ptr[i] = detail::raw_data(a);
    in_arr[i] = &a;
  }
  void set_out(size_t k, const Array& a) {
    out_ptr[k] = detail::raw_data(a);
    out_arr[k] = &a;
  }
  void run(const CompiledBody& b, Frame& f) const {
    b.run(f, in_ptr.data(), in_arr.data(), out_ptr.data(), out_arr.data());
  }
};

// The second buffer of each carry (none for a carry updated in place).
std::vector<Array> scratch_for(const std::vector<Aval>& avals, const std::vector<bool>& in_place) {
  std::vector<Array> r;
  for (size_t k = 0; k < avals.size(); ++k)
    r.push_back(in_place[k] ? Array() : detail::empty_array(avals[k].shape, avals[k].dtype, avals[k].weak));
  return r;
}

// scan: operands [consts..., carry..., xs...], outputs [carry..., ys...]. Iteration t
// reads row i of every xs and writes row i of every ys in place (i = t, or L-1-t in
// reverse); carries alternate between the output array and one scratch buffer, arranged
// so that the last iteration writes the output, except that a carry the body may update
// in place (CompiledBody::may_overwrite) lives in the output array from the first
// iteration on.
//
// With row shards (scan_shard.cpp) the body is compiled for one block of rows and each
// block runs the whole loop on its own thread: block s reads and writes its rows of the
// split inputs (carries, xs rows, consts) and of the ys through pointers offset by s
// blocks, reads the other inputs whole, and keeps a carry without the batch rows in two
// buffers of its own (block 0's final value is the output).
class ScanDriver final : public ControlDriver {
 public:
  // `full` is the scan's own body; `body` compiles it, or its row-sharded form, whose
  // inputs are split where `row_inputs` says.
  ScanDriver(std::shared_ptr<CompiledBody> body, const ops::Params& p, const ir::Jaxpr& full, int shards,
             const std::vector<bool>& row_inputs)
      : body_(std::move(body)),
        nc_(size_t(p.i("num_consts"))),
        ncar_(size_t(p.i("num_carry"))),
        length_(p.i("length")),
        reverse_(p.b("reverse")),
        shards_(shards) {
    std::vector<Aval> in = full.in_avals(), out = full.out_avals(), sin = body_->jaxpr().in_avals(),
                      sout = body_->jaxpr().out_avals();
    carry_avals_.assign(in.begin() + long(nc_), in.begin() + long(nc_ + ncar_));
    auto bytes = [](const Aval& a) { return a.shape.numel() * int64_t(itemsize(a.dtype)); };
    for (size_t i = 0; i < in.size(); ++i) in_block_.push_back(shards_ > 1 && row_inputs[i] ? bytes(sin[i]) : 0);
    for (size_t i = nc_ + ncar_; i < in.size(); ++i) x_row_.push_back(bytes(in[i]));
    for (size_t k = ncar_; k < out.size(); ++k) {
      y_row_.push_back(bytes(out[k]));
      y_block_.push_back(shards_ > 1 ? bytes(sout[k]) : 0);
    }
    for (size_t k = 0; k < ncar_; ++k)
      in_place_.push_back(!own_carry(k) && body_->may_overwrite(nc_ + k, k));
    // A carry the body also returns as a ys lives in that ys' rows (row blocks only, where
    // carries are bare pointers): no copy per step, one at the end.
    const auto& outs = body_->jaxpr().outvars;
    carry_ys_.assign(ncar_, -1);
    for (size_t k = 0; k < ncar_ && shards_ > 1; ++k)
      for (size_t y = ncar_; y < outs.size() && !own_carry(k) && !in_place_[k] && carry_ys_[k] < 0; ++y)
        if (outs[k].is_var() && outs[y].is_var() && outs[y].var == outs[k].var) carry_ys_[k] = int(y - ncar_);
  }

  struct Block {
    std::unique_ptr<Frame> frame;
    BodyArgs args;
    std::vector<std::array<Array, 2>> own;  // per carry kept apart from the other blocks
  };
  struct State final : ControlState {
    std::vector<Block> blocks;  // one per block of rows
    std::vector<Array> scratch;
  };

  std::unique_ptr<ControlState> new_state() const override {
    auto st = std::make_unique<State>();
    st->blocks.resize(size_t(shards_));
    for (Block& b : st->blocks) {
      b.frame = body_->new_frame();
      b.args.resize(*body_);
      b.own.resize(ncar_);
      for (size_t k = 0; k < ncar_; ++k)
        if (own_carry(k))
          for (Array& a : b.own[k]) a = detail::empty_array(carry_avals_[k].shape, carry_avals_[k].dtype, carry_avals_[k].weak);
    }
    std::vector<bool> no_scratch = in_place_;
    for (size_t k = 0; k < ncar_; ++k) no_scratch[k] = no_scratch[k] || own_carry(k) || carry_ys_[k] >= 0;
    st->scratch = scratch_for(carry_avals_, no_scratch);
    return st;
  }

  void run(ControlState& base, std::span<const Array> in, std::span<Array> out) const override {
    State& st = static_cast<State&>(base);
    if (length_ == 0) {
      for (size_t k = 0; k < ncar_; ++k) copy_array(in[nc_ + k], out[k]);
      return;
    }
    if (shards_ == 1) return run_block(st, 0, in, out);
    // Inside another parallel region (a loop nested in a sharded loop) the blocks run in turn.
    const int threads = omp_in_parallel() ? 1 : std::min(shards_, omp_get_max_threads());
    std::exception_ptr error;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int s = 0; s < shards_; ++s) {
      try {
        run_block(st, s, in, out);
      } catch (...) {
#pragma omp critical(jx_scan_block_error)
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
  }

  std::string describe(const std::string& indent) const override {
    return str(indent, "scan body, ", length_, " steps", reverse_ ? ", reverse" : "",
               shards_ > 1 ? str(", ", shards_, " row blocks on their own threads") : std::string(),
               in_place_str(in_place_), ":\n", body_->describe(indent + "  "));
  }

 private:
  // A carry that every block computes whole, in buffers of its own.
  bool own_carry(size_t k) const { return shards_ > 1 && in_block_[nc_ + k] == 0; }

  // The whole loop for block s of the rows (the only block without shards).
  void run_block(State& st, int s, std::span<const Array> in, std::span<Array> out) const {
    const int64_t L = length_;
    Block& blk = st.blocks[size_t(s)];
    BodyArgs& a = blk.args;
    auto at = [](const Array& arr, int64_t offset) { return static_cast<char*>(detail::raw_data(arr)) + offset; };
    for (size_t i = 0; i < nc_; ++i) {
      if (in_block_[i] == 0) {
        a.set_in(i, in[i]);
      } else {
        a.in_ptr[i] = at(in[i], s * in_block_[i]);
      }
    }
    const size_t nx = x_row_.size(), ny = y_row_.size();
    auto ys_block = [&](size_t y, int64_t row) { return at(out[ncar_ + y], row * y_row_[y] + s * y_block_[y]); };
    for (int64_t t = 0; t < L; ++t) {
      const int64_t row = reverse_ ? L - 1 - t : t;
      for (size_t k = 0; k < ncar_; ++k) {
        if (carry_ys_[k] >= 0) {
          const size_t y = size_t(carry_ys_[k]);
          a.in_ptr[nc_ + k] = t == 0 ? at(in[nc_ + k], s * in_block_[nc_ + k]) : ys_block(y, reverse_ ? row + 1 : row - 1);
          a.out_ptr[k] = ys_block(y, row);
          continue;
        }
        if (own_carry(k)) {
          a.in_ptr[nc_ + k] = t == 0 ? detail::raw_data(in[nc_ + k]) : detail::raw_data(blk.own[k][size_t(t - 1) % 2]);
          a.out_ptr[k] = detail::raw_data(blk.own[k][size_t(t) % 2]);
          continue;
        }
        const Array& from = t == 0 ? in[nc_ + k] : in_place_[k] || (L - t) % 2 == 0 ? out[k] : st.scratch[k];
        const Array& to = in_place_[k] || (L - 1 - t) % 2 == 0 ? out[k] : st.scratch[k];
        if (shards_ == 1) {
          a.set_in(nc_ + k, from);
          a.set_out(k, to);
        } else {
          a.in_ptr[nc_ + k] = at(from, s * in_block_[nc_ + k]);
          a.out_ptr[k] = at(to, s * in_block_[nc_ + k]);
        }
      }
      for (size_t x = 0; x < nx; ++x) {
        const size_t i = nc_ + ncar_ + x;
        a.in_ptr[i] = at(in[i], row * x_row_[x] + s * in_block_[i]);
      }
      for (size_t y = 0; y < ny; ++y) a.out_ptr[ncar_ + y] = ys_block(y, row);
      a.run(*body_, *blk.frame);
    }
    for (size_t k = 0; k < ncar_; ++k) {
      if (own_carry(k) && s == 0) copy_array(blk.own[k][size_t(L - 1) % 2], out[k]);
      if (carry_ys_[k] >= 0)
        std::memcpy(at(out[k], s * in_block_[nc_ + k]), ys_block(size_t(carry_ys_[k]), reverse_ ? 0 : L - 1),
                    size_t(in_block_[nc_ + k]));
    }
  }

  std::shared_ptr<CompiledBody> body_;
  size_t nc_, ncar_;
  int64_t length_;
  bool reverse_;
  int shards_;
  std::vector<Aval> carry_avals_;
  std::vector<int64_t> in_block_;       // per input: bytes of one block of rows (0: read whole)
  std::vector<int64_t> x_row_, y_row_;  // per xs / ys: bytes of one step
  std::vector<int64_t> y_block_;        // per ys: bytes of one block of a step's rows
  std::vector<bool> in_place_;          // per carry
  std::vector<int> carry_ys_;           // per carry: the ys whose rows hold it, or -1
};

// while: operands [cond consts..., body consts..., carry...]. The cond writes its bool
// into a local; carries alternate between the output and a scratch buffer, and the
// result is copied into the output when the last iteration wrote the scratch one. A
// carry the body may update in place lives in the output from the first iteration on.
class WhileDriver final : public ControlDriver {
 public:
  WhileDriver(std::shared_ptr<CompiledBody> cond, std::shared_ptr<CompiledBody> body, const ops::Params& p)
      : cond_(std::move(cond)), body_(std::move(body)), cn_(size_t(p.i("cond_nconsts"))), bn_(size_t(p.i("body_nconsts"))) {
    carry_avals_ = body_->jaxpr().out_avals();
    for (size_t k = 0; k < carry_avals_.size(); ++k) in_place_.push_back(body_->may_overwrite(bn_ + k, k));
  }

  struct State final : ControlState {
    std::unique_ptr<Frame> cond_frame, body_frame;
    std::vector<Array> scratch;
    BodyArgs cond_args, body_args;
  };

  std::unique_ptr<ControlState> new_state() const override {
    auto st = std::make_unique<State>();
    st->cond_frame = cond_->new_frame();
    st->body_frame = body_->new_frame();
    st->scratch = scratch_for(carry_avals_, in_place_);
    st->cond_args.resize(*cond_);
    st->body_args.resize(*body_);
    return st;
  }

  void run(ControlState& base, std::span<const Array> in, std::span<Array> out) const override {
    State& st = static_cast<State&>(base);
    const size_t ncar = carry_avals_.size();
    BodyArgs& c = st.cond_args;
    BodyArgs& b = st.body_args;
    for (size_t i = 0; i < cn_; ++i) c.set_in(i, in[i]);
    for (size_t i = 0; i < bn_; ++i) b.set_in(i, in[cn_ + i]);
    bool more = false;
    c.out_ptr[0] = &more;
    std::vector<const Array*>& cur = st.body_args.in_arr;  // the carries live at [bn_, ...)
    for (size_t k = 0; k < ncar; ++k) b.set_in(bn_ + k, in[cn_ + bn_ + k]);
    int parity = 0;
    for (;;) {
      for (size_t k = 0; k < ncar; ++k) {
        c.in_ptr[cn_ + k] = b.in_ptr[bn_ + k];
        c.in_arr[cn_ + k] = cur[bn_ + k];
      }
      c.run(*cond_, *st.cond_frame);
      if (!more) break;
      for (size_t k = 0; k < ncar; ++k) b.set_out(k, in_place_[k] || parity == 0 ? out[k] : st.scratch[k]);
      b.run(*body_, *st.body_frame);
      for (size_t k = 0; k < ncar; ++k) b.set_in(bn_ + k, *b.out_arr[k]);
      parity ^= 1;
    }
    for (size_t k = 0; k < ncar; ++k) copy_array(*cur[bn_ + k], out[k]);
  }

  std::string describe(const std::string& indent) const override {
    return str(indent, "while cond:\n", cond_->describe(indent + "  "), indent, "while body",
               in_place_str(in_place_), ":\n", body_->describe(indent + "  "));
  }

 private:
  std::shared_ptr<CompiledBody> cond_, body_;
  size_t cn_, bn_;
  std::vector<Aval> carry_avals_;
  std::vector<bool> in_place_;  // per carry
};

// cond: operands [index, ops...]; the clamped index picks the branch, which writes the
// outputs in place. A branch's frame is made the first time it runs.
class CondDriver final : public ControlDriver {
 public:
  explicit CondDriver(std::vector<std::shared_ptr<CompiledBody>> branches) : branches_(std::move(branches)) {}

  struct State final : ControlState {
    std::vector<std::unique_ptr<Frame>> frames;
    std::vector<BodyArgs> args;
  };

  std::unique_ptr<ControlState> new_state() const override {
    auto st = std::make_unique<State>();
    st->frames.resize(branches_.size());
    st->args.resize(branches_.size());
    return st;
  }

  void run(ControlState& base, std::span<const Array> in, std::span<Array> out) const override {
    State& st = static_cast<State&>(base);
    const int32_t raw = *static_cast<const int32_t*>(detail::raw_data(in[0]));
    const size_t b = size_t(std::clamp<int32_t>(raw, 0, int32_t(branches_.size()) - 1));
    const CompiledBody& body = *branches_[b];
    if (!st.frames[b]) {
      st.frames[b] = body.new_frame();
      st.args[b].resize(body);
    }
    BodyArgs& a = st.args[b];
    for (size_t i = 1; i < in.size(); ++i) a.set_in(i - 1, in[i]);
    for (size_t k = 0; k < out.size(); ++k) a.set_out(k, out[k]);
    a.run(body, *st.frames[b]);
  }

  std::string describe(const std::string& indent) const override {
    std::string r;
    for (size_t b = 0; b < branches_.size(); ++b)
      r += str(indent, "branch ", b, ":\n", branches_[b]->describe(indent + "  "));
    return r;
  }

 private:
  std::vector<std::shared_ptr<CompiledBody>> branches_;
};

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

std::string kernel_prefix() {
  std::string p = kernel_symbol(0);
  return p.substr(0, p.size() - 1);  // "jx_kernel_"
}

std::string unit_symbol(size_t unit, int k) { return str(kernel_prefix(), "u", unit + 1, "_", k); }

}  // namespace

std::string describe_with_controls(const ir::Jaxpr& j, const FusionPlan& plan,
                                   const std::vector<std::shared_ptr<const ControlDriver>>& controls,
                                   const std::string& indent) {
  std::string lines = describe(j, plan), r;
  size_t start = 0;
  for (size_t si = 0; si < plan.steps.size() && start < lines.size(); ++si) {
    size_t nl = lines.find('\n', start);
    if (nl == std::string::npos) nl = lines.size() - 1;
    r += indent + lines.substr(start, nl - start + 1);
    start = nl + 1;
    if (si < controls.size() && controls[si]) r += controls[si]->describe(indent + "  ");
  }
  return r;
}

ControlCompiler::~ControlCompiler() = default;

std::shared_ptr<CompiledBody> ControlCompiler::body(const ir::Jaxpr& j, const std::vector<bool>& in_array,
                                                    const std::vector<bool>& out_array,
                                                    std::shared_ptr<const ir::Jaxpr> owner) {
  FusionPlan plan = fuse(j, FusionOptions{.kernels = kernels_});
  std::vector<std::shared_ptr<const ControlDriver>> controls = drivers(j, plan);
  auto b = std::make_shared<CompiledBody>(j, std::move(plan), in_array, out_array, std::move(controls),
                                          std::move(owner));
  units_.push_back(b);
  return b;
}

std::vector<std::shared_ptr<const ControlDriver>> ControlCompiler::drivers(const ir::Jaxpr& j,
                                                                          const FusionPlan& plan) {
  std::vector<std::shared_ptr<const ControlDriver>> r(plan.steps.size());
  for (size_t si = 0; si < plan.steps.size(); ++si) {
    const FusedStep& fs = plan.steps[si];
    if (fs.is_kernel) continue;
    const ir::Eqn& e = j.eqns[size_t(fs.eqns[0])];
    const ops::Params& p = e.params;
    if (e.prim == ops::Prim::Scan) {
      const ir::Jaxpr& sub = ir::jaxpr_of(p, "jaxpr");
      const size_t nc = size_t(p.i("num_consts")), ncar = size_t(p.i("num_carry"));
      std::vector<bool> in_array(sub.invars.size(), false), out_array(sub.outvars.size(), false);
      if (std::optional<RowShards> rs = shard_scan_rows(sub, nc, ncar, omp_get_max_threads())) {
        // Blocks of rows reach the body as pointers: only whole consts come as Arrays.
        for (size_t i = 0; i < nc; ++i) in_array[i] = !rs->row_inputs[i];
        auto owner = std::make_shared<const ir::Jaxpr>(std::move(rs->body));
        r[si] = std::make_shared<ScanDriver>(body(*owner, in_array, out_array, owner), p, sub, rs->shards,
                                             rs->row_inputs);
        continue;
      }
      std::fill(in_array.begin(), in_array.begin() + long(nc + ncar), true);
      std::fill(out_array.begin(), out_array.begin() + long(ncar), true);
      r[si] = std::make_shared<ScanDriver>(body(sub, in_array, out_array), p, sub, 1,
                                           std::vector<bool>(sub.invars.size(), false));
    } else if (e.prim == ops::Prim::While) {
      const ir::Jaxpr& c = ir::jaxpr_of(p, "cond_jaxpr");
      const ir::Jaxpr& b = ir::jaxpr_of(p, "body_jaxpr");
      auto cb = body(c, std::vector<bool>(c.invars.size(), true), std::vector<bool>(c.outvars.size(), false));
      auto bb = body(b, std::vector<bool>(b.invars.size(), true), std::vector<bool>(b.outvars.size(), true));
      r[si] = std::make_shared<WhileDriver>(std::move(cb), std::move(bb), p);
    } else if (e.prim == ops::Prim::Cond) {
      std::vector<std::shared_ptr<CompiledBody>> bs;
      for (size_t k = 0; k < ir::num_jaxprs(p, "branches"); ++k) {
        const ir::Jaxpr& bj = ir::jaxpr_of(p, "branches", k);
        bs.push_back(body(bj, std::vector<bool>(bj.invars.size(), true), std::vector<bool>(bj.outvars.size(), true)));
      }
      r[si] = std::make_shared<CondDriver>(std::move(bs));
    }
  }
  return r;
}

int ControlCompiler::num_kernels() const {
  int n = 0;
  for (const auto& u : units_) n += u->num_kernels();
  return n;
}

std::string ControlCompiler::source(const std::string& name) {
  const std::string prelude = ops::kEmitPrelude, prefix = kernel_prefix();
  std::string r;
  in_source_.assign(units_.size(), false);
  for (size_t u = 0; u < units_.size(); ++u) {
    const CompiledBody& b = *units_[u];
    if (b.num_kernels() == 0) continue;
    std::string s = generate_source(b.jaxpr(), b.plan(), str(name, ".u", u + 1));
    const size_t at = s.find(prelude);
    if (at == std::string::npos) continue;  // built on its own by bind()
    s.erase(0, at + prelude.size());
    replace_all(s, prefix, str(prefix, "u", u + 1, "_"));
    r += str("\n// Unit ", u + 1, ": a control-flow sub-jaxpr of '", name, "'.", s);
    in_source_[u] = true;
  }
  return r;
}

std::string ControlCompiler::bind(const std::shared_ptr<SharedLibrary>& lib, const std::string& name) {
  in_source_.resize(units_.size(), false);
  for (size_t u = 0; u < units_.size(); ++u) {
    CompiledBody& b = *units_[u];
    if (b.num_kernels() == 0) continue;
    std::shared_ptr<SharedLibrary> from = lib;
    if (!in_source_[u]) {
      BuildResult own = build_shared_library(generate_source(b.jaxpr(), b.plan(), str(name, ".u", u + 1)), name);
      if (!own.library) return own.error;
      from = own.library;
      extra_.push_back(own.library);
    }
    std::vector<KernelFn> fns;
    for (int k = 0; k < b.num_kernels(); ++k) {
      const std::string sym = in_source_[u] ? unit_symbol(u, k) : kernel_symbol(k);
      auto fn = reinterpret_cast<KernelFn>(from ? from->symbol(sym) : nullptr);
      if (!fn) return str("the generated library lacks ", sym);
      fns.push_back(fn);
    }
    b.set_kernels(std::move(fns));
  }
  return {};
}

}  // namespace jx::compiler
