// C++ code generation for fused kernels. Each kernel step of a FusionPlan becomes
//   extern "C" void jx_kernel_<k>(const void* const* in, void* const* out)
// over the step's inputs and outputs in FusedStep order; shapes are compile-time
// constants (jit compiles per shape). The file includes only <cmath>, <cstdint>,
// <cstring> (through ops/emit_prelude.h's kEmitPrelude) and never a jx header.
//
// Loops: an elementwise kernel whose reads are all at the output index (or scalars) is
// one flat `#pragma omp simd` loop (when large, a parallel loop over chunks of it); with
// broadcasting reads it is an outer loop over rows and an inner simd loop over the last
// dim. These loops run whole blocks of 16 elements, as the eager kernels do, so that every
// element goes through the same vector libm call; the remainder (and rows shorter than
// 16) runs the same code on padded copies of its inputs ("lanes" blocks). A kernel
// with reductions is a row kernel: an outer (parallel) loop over the kept index, inside
// it one simd loop per phase of independent reductions (softmax: max, then sum of
// exp(x - max)), then the per-row results, then a simd loop writing the elementwise
// outputs. When the kernel's innermost non-unit dim is kept (column sums, BatchNorm's
// statistics over N, H, W in NHWC), it is a column kernel instead: blocks of up to 1024
// columns, per phase a loop over the rows with a simd loop over the contiguous columns
// accumulating into per-column arrays, threads over blocks (or over row ranges, partials
// combined in thread order, when there are few blocks). Full reductions to a scalar split
// their range across threads the same way. A row phase over at least 128 elements
// accumulates whole blocks of 64 elements lane-wise into local arrays (four vector
// accumulators, so a long row is not bound by the latency of one vector add), then runs
// the rest as one simd reduction and folds the lanes into it in a fixed order. f32
// transcendentals vectorize through glibc's libmvec without -ffast-math. Bool values are
// never converted to numbers by a cast, and bool inputs are read as bytes compared with 0:
// GCC 12 does not vectorize a loop with either (the loop, libm calls included, would run
// scalar).
//
// Files: codegen.cpp (value emission and the elementwise loop forms), codegen_reduce.cpp
// (row and column kernels), codegen_writer.h (the writer class they share).
//
// Hoisting: values that do not depend on the loop indices -- computed only from literals,
// one-element inputs and broadcasts of such values (Adam's 1 / (1 - pow(0.9, t))) -- are
// computed once in a prologue before every loop (itself a 16-lane loop with every lane
// alike, taken from lane 0, so that its libm calls are vector calls too); one-element
// outputs computed from them
// are written there too, after all the prologue's reads (a donated scalar may share its
// buffer with such an output). Values that use a reduction result or an iota over a
// non-unit dim stay in the loops. In a row kernel, elementwise outputs that use no
// reduction result are written by the first reduction pass instead of a final pass.
#pragma once
#include <string>

#include "compiler/fusion.h"

namespace jx::compiler {

std::string kernel_symbol(int k);

// One source file with every kernel of `plan`, in step order (k counts kernel steps).
std::string generate_source(const ir::Jaxpr& j, const FusionPlan& plan, const std::string& name);

}  // namespace jx::compiler
