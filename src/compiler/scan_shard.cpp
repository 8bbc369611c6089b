// Row shards of a scan body: the loop split across threads by rows of its carries.
//
// A scan's steps depend on each other through the carry, so its iterations cannot run in
// parallel; but when the carry is a batch (an RNN's hidden state [B, H]) the body often
// never mixes its rows: row b of the next carry depends only on row b of this one, on
// row b of the step's xs, and on the consts. Then the whole loop splits into P
// independent loops, one per block of B/P rows, each on its own thread with no
// synchronization per step: the split a hand-written multithreaded RNN loop would make.
//
// shard_scan_rows decides by following the leading axis through the body. A value is
//   row      its axis 0 is the carry's batch axis (carries, xs slices with B rows, and
//            what the rules below derive from them);
//   uniform  equal along an axis 0 of size B (a broadcast of a row-free value that does
//            not map into axis 0, such as the bias broadcast to [B, H]);
//   free     anything else (consts and what is computed from them alone).
// An equation that reads a row value keeps rows separate when it is elementwise (its
// other operands 0-d, uniform, or free with a size-1 axis 0 that broadcasts), a
// broadcast, reshape, squeeze or transpose that keeps axis 0 in place, a reduction over
// other axes, or a dot_general of a row lhs (axis 0 neither contracted nor batched) with
// a free rhs, or of two row operands batched over axis 0. Anything else (a nested loop, a
// gather, a reduction over axis 0, a row value as a product's rhs) leaves the scan as it
// is. A carry without B rows (a step counter) must be computed from row-free values
// only: every block then computes it alike, in buffers of its own. Consts with B rows
// are split like the carries when the body reads them row by row (the per-example
// targets of an iterative solver). The sharded body is the same body with axis 0 of
// every row value (and of each uniform value a row equation reads) cut to B/P.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "compiler/passes.h"

namespace jx::compiler {
namespace {

using ops::Aval;
using ops::Prim;
using ints = std::vector<int64_t>;

// A shard keeps at least this many rows and this many carry elements: below that the
// fork and join of the threads cost more than the halved steps save.
constexpr int64_t kMinRows = 4;
constexpr int64_t kMinElements = 512;

enum class Kind { Free, Row, Uniform };

bool contains(const ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool is_rowwise_reduce(Prim p) {
  switch (p) {
    case Prim::ReduceSum: case Prim::ReduceProd: case Prim::ReduceMax: case Prim::ReduceMin:
    case Prim::ReduceAnd: case Prim::ReduceOr: case Prim::ReduceXor: case Prim::Argmax: case Prim::Argmin:
      return true;
    default:
      return false;
  }
}

class Sharder {
 public:
  Sharder(const ir::Jaxpr& body, size_t nc, size_t ncar, int64_t rows, int shards, bool row_consts)
      : r_(body), nc_(nc), ncar_(ncar), B_(rows), P_(shards), row_consts_(row_consts),
        kind_(body.avals.size(), Kind::Free) {}

  // The sharded body and which of its inputs are split by rows, or nullopt.
  std::optional<RowShards> run() {
    std::vector<bool> row_inputs(r_.invars.size(), false);
    for (size_t i = 0; i < r_.invars.size(); ++i) {
      const int v = r_.invars[i];
      row_inputs[i] = is_b_rows(r_.avals[size_t(v)]) && (i >= nc_ || row_consts_);
      if (row_inputs[i]) mark_row(v);
    }
    std::vector<ir::Eqn> eqns;
    for (const ir::Eqn& e : r_.eqns) {
      bool reads_rows = false;
      for (const ir::Atom& a : e.inputs) reads_rows |= a.is_var() && kind_[size_t(a.var)] == Kind::Row;
      if (!reads_rows) {
        if (is_uniform_broadcast(e)) {
          kind_[size_t(e.outputs[0])] = Kind::Uniform;
          producer_[e.outputs[0]] = e;
        }
        eqns.push_back(e);
        continue;
      }
      std::optional<ir::Eqn> sharded = shard(e, eqns);
      if (!sharded) return std::nullopt;
      for (int v : sharded->outputs) mark_row(v);
      eqns.push_back(std::move(*sharded));
    }
    // A carry split by rows comes back split; one without the batch rows (a step
    // counter) comes back computed from unsplit values alone, the same in every block;
    // every ys is split.
    for (size_t k = 0; k < r_.outvars.size(); ++k) {
      const ir::Atom& a = r_.outvars[k];
      const bool row = a.is_var() && kind_[size_t(a.var)] == Kind::Row;
      const bool want_row = k >= ncar_ || row_inputs[nc_ + k];
      if (row != want_row || (!row && a.is_var() && kind_[size_t(a.var)] != Kind::Free)) return std::nullopt;
    }
    r_.eqns = std::move(eqns);
    try {
      ir::verify(r_);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    return RowShards{eliminate_dead_code(r_), P_, std::move(row_inputs)};
  }

 private:
  bool is_b_rows(const Aval& a) const { return !a.shape.empty() && a.shape[0] == B_; }

  void mark_row(int v) {
    kind_[size_t(v)] = Kind::Row;
    r_.avals[size_t(v)].shape[0] = B_ / P_;
  }

  // out = broadcast_in_dim(free or literal x) with x not mapped into an axis 0 of size B.
  bool is_uniform_broadcast(const ir::Eqn& e) const {
    if (e.prim != Prim::BroadcastInDim) return false;
    if (!is_b_rows(r_.avals[size_t(e.outputs[0])])) return false;
    const ints& bd = e.params.ints("broadcast_dimensions");
    return !contains(bd, 0) || r_.aval_of(e.inputs[0]).shape[0] == 1;
  }

  // A uniform value as a row-shaped one: its broadcast again, to B/P rows.
  std::optional<ir::Atom> cut(int v, std::vector<ir::Eqn>& eqns) {
    if (auto it = cut_.find(v); it != cut_.end()) return ir::Atom::of_var(it->second);
    const ir::Eqn& b = producer_.at(v);
    ops::Params p = b.params;
    ints shape = p.ints("shape");
    shape[0] = B_ / P_;
    p.set("shape", shape);
    auto out = passes::emit_eqn(r_, eqns, Prim::BroadcastInDim, b.inputs, std::move(p));
    if (out) {
      kind_.resize(r_.avals.size(), Kind::Free);
      kind_[size_t(out->var)] = Kind::Row;
      cut_[v] = out->var;
    }
    return out;
  }

  Kind kind(const ir::Atom& a) const { return a.is_var() ? kind_[size_t(a.var)] : Kind::Free; }

  // The equation over B/P rows, or nullopt when it may mix rows.
  std::optional<ir::Eqn> shard(const ir::Eqn& e, std::vector<ir::Eqn>& eqns) {
    ir::Eqn s = e;
    if (ops::info(e.prim).fusion == ops::FusionKind::Elementwise) {
      for (ir::Atom& a : s.inputs) {
        const Kind k = kind(a);
        if (k == Kind::Uniform) {
          auto c = cut(a.var, eqns);
          if (!c) return std::nullopt;
          a = *c;
        } else if (k == Kind::Free) {
          // Elementwise operands broadcast their size-1 dims: a free one must be 0-d or
          // have a size-1 axis 0 to read the same values for every row.
          const Shape& sh = r_.aval_of(a).shape;
          if (!sh.empty() && sh[0] != 1) return std::nullopt;
        }
      }
    } else if (e.prim == Prim::BroadcastInDim) {
      // The operand is a row value (its aval already cut to B/P rows).
      const ints& bd = e.params.ints("broadcast_dimensions");
      ints shape = e.params.ints("shape");
      if (bd.empty() || bd[0] != 0 || r_.aval_of(e.inputs[0]).shape[0] != B_ / P_ || shape[0] != B_)
        return std::nullopt;
      shape[0] = B_ / P_;
      s.params.set("shape", shape);
    } else if (e.prim == Prim::Reshape) {
      ints sizes = e.params.ints("new_sizes");
      if (sizes.empty() || sizes[0] != B_) return std::nullopt;
      sizes[0] = B_ / P_;
      s.params.set("new_sizes", sizes);
    } else if (e.prim == Prim::Squeeze) {
      if (contains(e.params.ints("dimensions"), 0)) return std::nullopt;
    } else if (e.prim == Prim::Transpose) {
      const ints& perm = e.params.ints("permutation");
      if (perm.empty() || perm[0] != 0) return std::nullopt;
    } else if (is_rowwise_reduce(e.prim)) {
      if (contains(e.params.ints("axes"), 0)) return std::nullopt;
    } else if (e.prim == Prim::DotGeneral) {
      const ints &lb = e.params.ints("lhs_batch"), &rb = e.params.ints("rhs_batch");
      const ints& lc = e.params.ints("lhs_contracting");
      const Kind kl = kind(e.inputs[0]), kr = kind(e.inputs[1]);
      const bool row_free = kl == Kind::Row && kr == Kind::Free && lb.empty() && !contains(lc, 0);
      const bool both_rows = kl == Kind::Row && kr == Kind::Row && !lb.empty() && lb[0] == 0 && rb[0] == 0;
      if (!row_free && !both_rows) return std::nullopt;
    } else {
      return std::nullopt;
    }
    // The outputs' types at B/P rows (the rows must stay on axis 0).
    std::vector<Aval> in;
    for (const ir::Atom& a : s.inputs) in.push_back(r_.aval_of(a));
    std::vector<Aval> out;
    try {
      out = ops::abstract_eval(s.prim, in, s.params);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    for (size_t k = 0; k < out.size(); ++k) {
      Aval want = r_.avals[size_t(s.outputs[k])];
      if (!is_b_rows(want)) return std::nullopt;
      want.shape[0] = B_ / P_;
      if (!(out[k] == want)) return std::nullopt;
    }
    return s;
  }

  ir::Jaxpr r_;
  size_t nc_, ncar_;
  int64_t B_;
  int P_;
  bool row_consts_;
  std::vector<Kind> kind_;
  std::map<int, ir::Eqn> producer_;  // uniform value -> its broadcast
  std::map<int, int> cut_;           // uniform value -> its B/P-row broadcast
};

bool disabled_by_env() {
  const char* v = std::getenv("JX_SCAN_SHARDS");
  return v && std::strcmp(v, "0") == 0;
}

}  // namespace

std::optional<RowShards> shard_scan_rows(const ir::Jaxpr& body, size_t num_consts, size_t num_carry,
                                         int max_shards) {
  if (disabled_by_env() || max_shards < 2) return std::nullopt;
  // The batch: axis 0 of the largest carry.
  int64_t B = 0, largest = 0, elements = 0;
  for (size_t k = 0; k < num_carry; ++k) {
    const Aval& a = body.avals[size_t(body.invars[num_consts + k])];
    elements += a.shape.numel();
    if (!a.shape.empty() && a.shape.numel() > largest) largest = a.shape.numel(), B = a.shape[0];
  }
  for (int P = max_shards; P >= 2; --P) {
    if (B == 0 || B % P != 0 || B / P < kMinRows || elements / P < kMinElements) continue;
    // Consts with B rows are split too when the body reads them row by row (a per-example
    // target); when one is read otherwise (a [B, B] weight) they all stay whole.
    for (bool row_consts : {true, false})
      if (std::optional<RowShards> r = Sharder(body, num_consts, num_carry, B, P, row_consts).run()) return r;
    return std::nullopt;  // the body mixes rows at any P
  }
  return std::nullopt;
}

}  // namespace jx::compiler
