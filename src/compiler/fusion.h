// Fusion: groups a jaxpr's equations into the steps of an executable. A step is either a
// fused kernel (one generated C++ loop nest) or a library call (the primitive's eager
// impl on preallocated outputs: dot_general, gather, sort, control flow, ...).
//
// A kernel has a loop domain X (a shape) and optionally a set R of reduced dims of X; its
// values are placed on the domain: a value's placement maps each of its dims to a domain
// dim (-1 for a size-1 dim, which always indexes 0). Two levels occur:
//   X level: the value covers every non-unit domain dim (elementwise values);
//   O level: it covers exactly the non-unit kept dims (a reduction result and what is
//            computed from such results: one value per row of a row kernel).
// Size-1 broadcasting, broadcast_in_dim, squeeze and reshapes that only add or drop size-1
// dims become index arithmetic on these placements; nothing is materialized. Inputs
// read from memory (step inputs) may be read through any map, so a bias vector or a
// row statistic broadcasts for free.
//
// A splat (broadcast_in_dim of a literal) is in no group: each kernel reading it lists its
// equation first and computes it as an immediate (it is not one of the kernel's inputs).
// A library step at the start of the plan materializes it only when a library step reads
// it or the program returns it.
#pragma once
#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace jx::compiler {

struct FusedStep {
  bool is_kernel = false;
  std::vector<int> eqns;      // indices into the jaxpr's eqns, in dependency order
  // Kernel steps only:
  Shape domain;               // X
  std::vector<bool> reduced;  // per domain dim: in R (all false: an elementwise kernel)
  std::vector<int> inputs;    // vars read from memory (invars, constvars, other steps' outputs)
  std::vector<int> outputs;   // vars written to memory (used by later steps or returned)
  bool has_reduction() const;
};

struct FusionPlan {
  std::vector<FusedStep> steps;              // in execution order
  std::vector<std::vector<int>> placement;   // per var computed in a kernel; else empty
};

struct FusionOptions {
  bool kernels = true;  // false: every equation is its own library step (the interpreter)
};

FusionPlan fuse(const ir::Jaxpr& j, const FusionOptions& opts = {});

// How fuse() treats an equation: a library call, or a kernel member of one of these kinds
// (View: broadcast_in_dim, squeeze, reshape; a splat is a View of a literal).
enum class FusionRole { Library, Elementwise, Iota, View, Reduce };
FusionRole fusion_role(const ir::Jaxpr& j, const ir::Eqn& e);

// Element types that generated code handles (bool, 8-64 bit ints, float, double); a
// float16/bfloat16 value stays in library calls.
bool codegen_dtype(DType t);

// One line per step, e.g. "kernel k0 f32[1000]: mul add tanh logistic mul" or
// "library dot_general -> f32[4,8]".
std::string describe(const ir::Jaxpr& j, const FusionPlan& plan);

}  // namespace jx::compiler
