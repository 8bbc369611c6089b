// Bad input to jx::numpy, table-driven (issue 19, "bad input everywhere"): every row is a
// wrong rank, dtype, shape, axis, out-of-range argument or leaked tracer, and must throw
// exactly the expected jx error type whose message names the operation, the offending
// shape/dtype/value and the fix. Nothing may abort, hang or throw a non-jx exception.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "testing/error_table.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;

using jx::testing::ErrorRow;
using jx::testing::row;
using jx::testing::run_rows;

Array f32(const jx::Shape& s) { return jnp::zeros(s); }

TEST(NumpyErrors, EveryBadCallThrowsTheTypedError) {
  const Array m23 = f32({2, 3});
  const Array v4 = f32({4});
  const Array i3 = jnp::array<int32_t>({1, 2, 3});
  const std::vector<ErrorRow> rows = {
      // ---- creation ----
      row<jx::ValueError>("zeros_negative_dim",
                          [] {
                            jnp::zeros({2, -1});
                          },
                          {"[zeros]", "(2, -1)", ">= 0"}),
      row<jx::ShapeError>("array_data_shape_mismatch",
                          [] {
                            jnp::array<float>({1, 2, 3}, jx::Shape{2, 2});
                          },
                          {"[array]", "3 values", "(2, 2)"}),
      row<jx::ValueError>("arange_zero_step", [] { jnp::arange(0, 5, 0); },
                          {"[arange]", "step", "zero"}),
      row<jx::ValueError>("linspace_negative_num", [] { jnp::linspace(0, 1, -1); },
                          {"[linspace]", "-1", "non-negative"}),
      row<jx::ValueError>("eye_negative", [] { jnp::eye(-2); }, {"[eye]", "N=-2"}),
      row<jx::ShapeError>("full_fill_not_broadcastable",
                          [] {
                            jnp::full({2, 3}, jnp::zeros({4}));
                          },
                          {"[full]", "(4,)", "(2, 3)", "broadcast"}),
      row<jx::ValueError>("diagonal_same_axes", [&] { jnp::diagonal(m23, 0, 1, 1); },
                          {"[diagonal]", "different", "1 and 1"}),
      row<jx::ValueError>("meshgrid_bad_indexing",
                          [] { jnp::meshgrid({jnp::zeros({2})}, false, "ab"); },
                          {"[meshgrid]", "'xy' or 'ij'", "'ab'"}),
      // ---- shape manipulation ----
      row<jx::ShapeError>("reshape_size_mismatch", [&] { jnp::reshape(m23, {4}); },
                          {"[reshape]", "f32[2,3]", "(4,)", "sizes must match"}),
      row<jx::ValueError>("reshape_two_minus_one",
                          [&] {
                            jnp::reshape(m23, {-1, -1});
                          },
                          {"[reshape]", "one unknown dimension", "(-1, -1)"}),
      row<jx::IndexError>("transpose_repeated_axis",
                          [&] {
                            jnp::transpose(m23, {0, 0});
                          },
                          {"[transpose]", "axis 0 appears twice", "(0, 0)"}),
      row<jx::IndexError>("swapaxes_axis_out_of_range", [&] { jnp::swapaxes(m23, 0, 5); },
                          {"[swapaxes]", "axis 5", "rank 2", "-2..1"}),
      row<jx::IndexError>("expand_dims_axis_out_of_range", [&] { jnp::expand_dims(m23, 4); },
                          {"[expand_dims]", "axis 4", "-3..2"}),
      row<jx::ShapeError>("squeeze_non_unit_axis", [&] { jnp::squeeze(m23, 1); },
                          {"[squeeze]", "f32[2,3]", "size is 3, not 1"}),
      row<jx::IndexError>("moveaxis_repeated",
                          [&] {
                            jnp::moveaxis(m23, {0, 0}, {0, 1});
                          },
                          {"[moveaxis]", "axis 0 appears twice"}),
      row<jx::ValueError>("matrix_transpose_rank1", [&] { jnp::matrix_transpose(v4); },
                          {"[matrix_transpose]", "at least 2 dimensions", "f32[4]"}),
      row<jx::ShapeError>("broadcast_to_incompatible",
                          [&] {
                            jnp::broadcast_to(m23, {2, 4});
                          },
                          {"[broadcast_to]", "(2, 3)", "(2, 4)", "3 vs 4"}),
      row<jx::ShapeError>("broadcast_shapes_incompatible",
                          [] {
                            jnp::broadcast_shapes({{2, 3}, {4}});
                          },
                          {"[broadcast_shapes]", "(2, 3)", "(4,)"}),
      row<jx::ShapeError>("concatenate_shape_mismatch",
                          [&] {
                            jnp::concatenate({m23, f32({3, 3})}, 1);
                          },
                          {"[concatenate]", "f32[2,3]", "f32[3,3]", "only along dimension 1"}),
      row<jx::ValueError>("concatenate_empty", [] { jnp::concatenate({}); },
                          {"[concatenate]", "at least one array"}),
      row<jx::IndexError>("concatenate_axis_out_of_range",
                          [&] {
                            jnp::concatenate({m23, m23}, 2);
                          },
                          {"[concatenate]", "axis 2", "-2..1"}),
      row<jx::ShapeError>("stack_shape_mismatch",
                          [&] {
                            jnp::stack({m23, f32({3, 2})});
                          },
                          {"[stack]", "same shape", "f32[2,3]", "f32[3,2]"}),
      row<jx::ValueError>("split_unequal", [&] { jnp::split(m23, 2, 1); },
                          {"[split]", "f32[2,3]", "size 3", "array_split"}),
      row<jx::ValueError>("tile_negative_reps", [&] { jnp::tile(m23, -1); },
                          {"[tile]", "(-1,)", "negative"}),
      row<jx::ValueError>("repeat_negative", [&] { jnp::repeat(m23, -1); },
                          {"[repeat]", "negative", "(-1,)"}),
      row<jx::ShapeError>("repeat_count_mismatch",
                          [&] {
                            jnp::repeat(m23, std::vector<int64_t>{1, 2}, 1);
                          },
                          {"[repeat]", "2 entries", "f32[2,3]", "one per element"}),
      row<jx::ValueError>("pad_unknown_mode", [&] { jnp::pad(m23, 1, "mirror"); },
                          {"[pad]", "'mirror'", "reflect"}),
      row<jx::ValueError>("pad_negative_width", [&] { jnp::pad(m23, -1); },
                          {"[pad]", "negative", "(-1, -1)"}),
      row<jx::ValueError>(
          "pad_width_rank_mismatch",
          [&] {
            jnp::pad(m23, jnp::PadWidth{{1, 1}, {1, 1}, {1, 1}});
          },
          {"[pad]", "3 (before, after) pairs", "2 dimensions", "one per dimension"}),
      row<jx::ValueError>("rot90_same_axes",
                          [&] {
                            jnp::rot90(m23, 1, {0, 0});
                          },
                          {"[rot90]", "different", "(0, 0)"}),
      row<jx::IndexError>("flip_axis_out_of_range", [&] { jnp::flip(m23, 3); },
                          {"[flip]", "axis 3", "-2..1"}),
      // ---- math ----
      row<jx::ShapeError>("add_incompatible_shapes", [&] { jnp::add(m23, v4); },
                          {"[add]", "f32[2,3]", "f32[4]", "3 vs 4"}),
      row<jx::DTypeError>("bitwise_and_float", [&] { jnp::bitwise_and(m23, m23); },
                          {"[bitwise_and]", "f32[2,3]", "astype", "logical_"}),
      row<jx::DTypeError>("left_shift_float", [&] { jnp::left_shift(m23, i3); },
                          {"[left_shift]", "f32[2,3]", "astype"}),
      row<jx::DTypeError>("invert_float", [&] { jnp::invert(v4); },
                          {"[invert]", "f32[4]", "astype"}),
      row<jx::ValueError>("convolve_bad_mode", [&] { jnp::convolve(v4, v4, "middle"); },
                          {"[convolve]", "\"middle\"", "\"valid\""}),
      row<jx::ShapeError>("convolve_rank2", [&] { jnp::convolve(m23, v4); },
                          {"[convolve]", "1-D", "f32[2,3]"}),
      row<jx::ShapeError>("isclose_incompatible", [&] { jnp::isclose(m23, v4); },
                          {"[isclose]", "(2, 3)", "(4,)", "3 vs 4"}),
      // ---- reductions ----
      row<jx::IndexError>("sum_axis_out_of_range", [&] { jnp::sum(m23, 2); },
                          {"[sum]", "axis 2", "-2..1"}),
      row<jx::ValueError>("sum_duplicate_axis",
                          [&] {
                            jnp::sum(m23, {1, -1});
                          },
                          {"[sum]", "duplicate", "(1, -1)", "once"}),
      row<jx::ValueError>("max_empty_no_initial", [] { jnp::max(jnp::zeros({0})); },
                          {"[max]", "f32[0]", "initial"}),
      row<jx::ValueError>("argmax_empty", [] { jnp::argmax(jnp::zeros({0})); },
                          {"[argmax]", "empty", "f32[0]"}),
      row<jx::ValueError>("quantile_q_out_of_range", [&] { jnp::quantile(v4, 1.5); },
                          {"[quantile]", "[0, 1]", "1.5"}),
      row<jx::IndexError>("sort_axis_out_of_range", [&] { jnp::sort(m23, 2); },
                          {"[sort]", "axis 2", "-2..1"}),
      row<jx::IndexError>("cumsum_axis_out_of_range", [&] { jnp::cumsum(m23, -3); },
                          {"[cumsum]", "axis -3", "-2..1"}),
      row<jx::ValueError>("cumulative_sum_no_axis_2d", [&] { jnp::cumulative_sum(m23); },
                          {"[cumulative_sum]", "rank 2", "axis was not given"}),
      row<jx::ShapeError>("average_weights_mismatch", [&] { jnp::average(m23, 1, f32({2})); },
                          {"[average]", "weights (2)", "axis 1", "(2, 3)"}),
      row<jx::ValueError>("lexsort_no_keys", [] { jnp::lexsort({}); },
                          {"[lexsort]", "at least one key"}),
      // ---- selection ----
      row<jx::ShapeError>("where_incompatible",
                          [&] {
                            jnp::where(jnp::zeros({2, 3}, DType::Bool), m23, v4);
                          },
                          {"[where]", "(2, 3)", "(4,)", "3 vs 4"}),
      row<jx::IndexError>("take_axis_out_of_range", [&] { jnp::take(m23, i3, 2); },
                          {"[take]", "axis 2", "rank 2"}),
      row<jx::DTypeError>("take_float_indices", [&] { jnp::take(m23, v4, 0); },
                          {"[take]", "integer", "f32[4]", "astype"}),
      row<jx::ValueError>("take_along_axis_rank_mismatch",
                          [&] { jnp::take_along_axis(m23, i3, 1); },
                          {"[take_along_axis]", "same number of dimensions", "1 vs. 2"}),
      row<jx::ValueError>("put_along_axis_inplace",
                          [&] {
                            jnp::put_along_axis(m23, jnp::zeros({2, 1}, DType::Int32), m23, 1);
                          },
                          {"[put_along_axis]", "immutable", "inplace=false"}),
      row<jx::ValueError>("compress_condition_2d",
                          [&] {
                            jnp::compress(jnp::zeros({2, 3}, DType::Bool), m23, 0);
                          },
                          {"[compress]", "1-d", "bool[2,3]", "extract"}),
      row<jx::ValueError>("select_length_mismatch",
                          [&] {
                            jnp::select({jnp::zeros({4}, DType::Bool)}, {v4, v4});
                          },
                          {"[select]", "same length", "1 and 2"}),
      row<jx::ValueError>("searchsorted_2d", [&] { jnp::searchsorted(m23, v4); },
                          {"[searchsorted]", "1-dimensional", "(2, 3)"}),
      row<jx::ValueError>("digitize_2d_bins", [&] { jnp::digitize(v4, m23); },
                          {"[digitize]", "1-dimensional", "(2, 3)"}),
      row<jx::ValueError>("choose_raise_out_of_range",
                          [&] {
                            jnp::choose(jnp::array<int32_t>({0, 5}), {f32({2}), f32({2})});
                          },
                          {"[choose]", "entry 5", "0 <= a < 2", "ChooseMode::wrap"}),
      // ---- traced values where concrete ones are needed, and leaked tracers ----
      row<jx::ConcretizationError>(
          "nonzero_under_jit",
          [] { jx::jit([](const Array& x) { return jnp::nonzero(x)[0]; })(jnp::ones({3})); },
          {"[nonzero]", "concrete", "size="}),
      row<jx::ConcretizationError>(
          "unique_under_jit",
          [] { jx::jit([](const Array& x) { return jnp::unique(x); })(jnp::ones({3})); },
          {"[unique]", "traced f32[3]", "outside jit"}),
      row<jx::DTypeError>(
          "lax_cholesky_int",
          [] { jx::lax::linalg::cholesky(jnp::eye(2, std::nullopt, 0, DType::Int32)); },
          {"[cholesky]", "i32[2,2]", "astype(float32)"}),
      row<jx::ConcretizationError>("leaked_tracer_after_jit",
                                   [] {
                                     Array leaked;
                                     jx::jit([&](const Array& x) {
                                       leaked = x * 2.0f;
                                       return x;
                                     })(jnp::ones({3}));
                                     jnp::sum(leaked);
                                   },
                                   {"got a tracer (f32[3])", "escaped",
                                    "Return it from the function"}),
      // ---- contractions and linalg ----
      row<jx::ShapeError>("matmul_inner_mismatch", [&] { jnp::matmul(m23, m23); },
                          {"[matmul]", "f32[2,3] @ f32[2,3]", "3 columns", "2 rows"}),
      row<jx::ValueError>("matmul_scalar", [&] { jnp::matmul(Array(1.0f), m23); },
                          {"[matmul]", "f32[]", "jnp::multiply"}),
      row<jx::ShapeError>("dot_inner_mismatch", [&] { jnp::dot(v4, i3); },
                          {"[dot]", "f32[4]", "i32[3]"}),
      row<jx::ShapeError>("vdot_size_mismatch", [&] { jnp::vdot(v4, m23); },
                          {"[vdot]", "same number of elements", "f32[4]", "f32[2,3]"}),
      row<jx::ShapeError>("tensordot_axes_mismatch", [&] { jnp::tensordot(m23, m23, 1); },
                          {"[tensordot]", "axis 1 of a has size 3", "axis 0 of b has size 2"}),
      row<jx::ValueError>("trace_rank1", [&] { jnp::trace(v4); },
                          {"[trace]", "rank >= 2", "f32[4]"}),
      row<jx::ShapeError>("inv_not_square", [&] { jnp::linalg::inv(m23); },
                          {"[linalg.inv]", "square", "f32[2,3]"}),
      row<jx::ShapeError>("inv_rank1", [&] { jnp::linalg::inv(v4); },
                          {"[linalg.inv]", "rank >= 2", "f32[4]"}),
      row<jx::ShapeError>("solve_mismatch", [&] { jnp::linalg::solve(jnp::eye(3), v4); },
                          {"[linalg.solve]", "f32[3,3]", "f32[4]", "3 rows"}),
      row<jx::ValueError>("qr_bad_mode", [&] { jnp::linalg::qr(jnp::eye(3), "full"); },
                          {"[linalg.qr]", "\"full\"", "\"reduced\""}),
      row<jx::ValueError>("norm_bad_ord", [&] { jnp::linalg::norm(m23, "max"); },
                          {"[linalg.norm]", "\"max\""}),
      row<jx::ShapeError>("matrix_power_not_square", [&] { jnp::linalg::matrix_power(m23, 2); },
                          {"[linalg.matrix_power]", "square", "f32[2,3]"}),
      row<jx::ValueError>("einsum_too_few_operands", [&] { jnp::einsum("ij,jk->ik", m23); },
                          {"[einsum]", "\"ij,jk->ik\"", "2 operand(s)", "1 were given"}),
      // ---- io ----
      row<jx::IOError>("load_missing_file", [] { jnp::load("/nonexistent-jx-dir/a.npy"); },
                       {"[load]", "/nonexistent-jx-dir/a.npy", "cannot be opened"}),
      row<jx::ValueError>("printoptions_bad_floatmode",
                          [] { jnp::set_printoptions({.floatmode = "exact"}); },
                          {"[set_printoptions]", "\"exact\"", "\"maxprec\""}),
      row<jx::IndexError>("npz_missing_key",
                          [] {
                            jnp::NpzFile f;
                            f.add("a", jnp::zeros({1}));
                            (void)f["b"];
                          },
                          {"[NpzFile]", "'b'", "'a'"}),
  };
  run_rows(rows);
}

}  // namespace
