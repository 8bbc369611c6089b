// The primitive registry: every primitive of ops/primitives.def with its rules side by side.
// Family files (ops/<family>.cpp) fill the rules in their register_<family>() function;
// check_registry() fails on any rule that is missing without an explicit opt-out.
#pragma once
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "jx/array.h"
#include "ops/params.h"

namespace jx::ops {

enum class Prim : uint16_t {
#define JX_PRIMITIVE(id, name, family, kind) id,
#include "ops/primitives.def"
#undef JX_PRIMITIVE
};
inline constexpr int kNumPrims = 0
#define JX_PRIMITIVE(id, name, family, kind) +1
#include "ops/primitives.def"
#undef JX_PRIMITIVE
    ;

// How the fusion pass may group a primitive (TVM's op pattern kinds).
enum class FusionKind { Elementwise, Broadcast, Reduction, Opaque, Control };

// The abstract value ("aval") of an array: what tracing and shape inference see.
struct Aval {
  Shape shape;
  DType dtype = DType::Float32;
  bool weak = false;
  friend bool operator==(const Aval& a, const Aval& b) {
    return a.shape == b.shape && a.dtype == b.dtype && a.weak == b.weak;
  }
};
Aval aval_of(const Array& a);

using Avals = std::vector<Aval>;
using Arrays = std::vector<Array>;

// Shape/dtype inference; throws a user error (naming the op) on invalid input.
using AbstractEvalRule = Avals (*)(std::span<const Aval> in, const Params& params);
// Eager execution on concrete inputs. `out` arrives allocated from abstract_eval's avals;
// a rule may instead replace an entry with an array that aliases an input's buffer.
using ImplRule = void (*)(std::span<const Array> in, std::span<Array> out, const Params& params);

// Rule slots for the transformation issues. An invalid (default) Array in `tangents`
// is a symbolic zero.
using JvpRule = Arrays (*)(std::span<const Array> primals, std::span<const Array> primal_outs,
                           std::span<const Array> tangents, const Params& params);
// For higher-order primitives, in place of a JvpRule: primal and tangent outputs together,
// so the primal is computed once. Runs with the tangent trace current; with `linearize`
// (grad/vjp/linearize) primal work must be bound apart from tangent work, so that it
// runs at once while only the tangent work is staged into the linear jaxpr.
using FullJvpRule = std::pair<Arrays, Arrays> (*)(std::span<const Array> primals,
                                                  std::span<const Array> tangents,
                                                  const Params& params, bool linearize);
// Cotangents for the linear inputs (where `linear[i]`; those `inputs[i]` are invalid and
// only `in_avals[i]` is known), given the output cotangents (invalid = zero). Entries
// for non-linear inputs are ignored.
using TransposeRule = Arrays (*)(std::span<const Array> cotangents, std::span<const Array> inputs,
                                 std::span<const Aval> in_avals, std::span<const bool> linear,
                                 const Params& params);
// Batched outputs and their batch dims (-1: unbatched) from inputs and their batch dims.
using BatchRule = std::pair<Arrays, std::vector<int>> (*)(std::span<const Array> in,
                                                           std::span<const int> dims,
                                                           const Params& params);
// C++ expression for one element, given the operands' expressions (fusible kinds only).
using EmitRule = std::string (*)(std::span<const std::string> args, std::span<const Aval> in,
                                 const Params& params);

struct PrimitiveInfo {
  Prim id{};
  const char* name = "";
  const char* family = "";
  FusionKind fusion = FusionKind::Opaque;
  AbstractEvalRule abstract_eval = nullptr;
  ImplRule impl = nullptr;
  JvpRule jvp = nullptr;
  FullJvpRule full_jvp = nullptr;  // satisfies the jvp requirement
  TransposeRule transpose = nullptr;
  BatchRule batch = nullptr;
  EmitRule emit = nullptr;
  // Explicit opt-outs that satisfy check_registry.
  bool not_linear = false;         // no transpose rule needed
  bool zero_tangent = false;       // integer/bool outputs: tangent is always zero
  // A collective over a named axis (ops/collective.h): vmap calls its batching rule even
  // when no operand is batched, and constant folding never evaluates it.
  bool collective = false;
  // Accepts and produces complex64/complex128 (bind() rejects complex operands and results
  // of every other primitive with a TypeError that names it).
  bool complex = false;
};

const PrimitiveInfo& info(Prim p);
// info(p).abstract_eval, after rejecting complex operands of a primitive not marked
// `complex`; every bind goes through it.
Avals abstract_eval(Prim p, std::span<const Aval> in, const Params& params);
PrimitiveInfo& mutable_info(Prim p);  // for register_<family>() only
const char* name(Prim p);

// Which rule slots check_registry() demands. Issue order: the foundation needs
// abstract_eval + impl; autodiff adds jvp/transpose; vmap adds batch; jit adds emit.
struct RuleSet {
  bool jvp = false, transpose = false, batch = false, emit = false;
};
// Returns one line per missing rule ("exp: no jvp rule"); empty when complete.
std::vector<std::string> missing_rules(RuleSet required);
// Throws InternalError listing missing_rules({}) if the registry is incomplete.
void check_registry();

}  // namespace jx::ops
