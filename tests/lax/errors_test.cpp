// Bad input to jx::lax, table-driven (issue 19, "bad input everywhere"): every row is a
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
namespace lax = jx::lax;
using jx::Array;
using jx::DType;

using jx::testing::ErrorRow;
using jx::testing::row;
using jx::testing::run_rows;

Array f32(const jx::Shape& s) { return jnp::zeros(s); }

TEST(LaxErrors, EveryBadCallThrowsTheTypedError) {
  const Array m23 = f32({2, 3});
  const Array v4 = f32({4});
  const Array i3 = jnp::array<int32_t>({1, 2, 3});
  const Array i0 = jnp::array(0, DType::Int32);
  const std::vector<ErrorRow> rows = {
      // ---- elementwise ----
      row<jx::DTypeError>("add_dtype_mismatch",
                          [&] { lax::add(v4, jnp::zeros({4}, DType::Int32)); },
                          {"[add]", "same dtype", "f32[4], i32[4]", "astype"}),
      row<jx::ShapeError>("add_rank_mismatch", [&] { lax::add(m23, f32({3})); },
                          {"[add]", "equal rank", "f32[2,3], f32[3]", "jnp functions"}),
      row<jx::ShapeError>("mul_dim_mismatch",
                          [&] {
                            lax::mul(m23, f32({2, 4}));
                          },
                          {"[mul]", "f32[2,3], f32[2,4]", "3 vs 4"}),
      row<jx::DTypeError>("sin_int", [&] { lax::sin(i3); },
                          {"[sin]", "floating", "i32[3]", "astype(jx::float32)"}),
      row<jx::DTypeError>("exp_bool", [] { lax::exp(jnp::zeros({2}, DType::Bool)); },
                          {"[exp]", "floating", "bool[2]", "astype"}),
      row<jx::DTypeError>("bitwise_not_float", [&] { lax::bitwise_not(v4); },
                          {"[not]", "integer or bool", "f32[4]", "astype"}),
      row<jx::DTypeError>("shift_left_float", [&] { lax::shift_left(v4, v4); },
                          {"[shift_left]", "integer", "f32[4]", "astype"}),
      row<jx::DTypeError>("population_count_float", [&] { lax::population_count(v4); },
                          {"[population_count]", "integer", "f32[4]", "astype"}),
      row<jx::DTypeError>("erf_inv_int", [&] { lax::erf_inv(i3); },
                          {"[erf_inv]", "floating", "i32[3]", "astype"}),
      row<jx::DTypeError>("integer_pow_bool",
                          [] { lax::integer_pow(jnp::zeros({2}, DType::Bool), 2); },
                          {"[integer_pow]", "non-bool", "bool[2]", "astype"}),
      row<jx::ShapeError>(
          "bitcast_size_mismatch", [&] { lax::bitcast_convert_type(Array(1.0f), DType::Float64); },
          {"[bitcast_convert_type]", "f32[]", "float64", "last dimension of size 2"}),
      row<jx::DTypeError>("select_n_float_which",
                          [&] {
                            lax::select_n(v4, {v4, v4});
                          },
                          {"[select_n]", "bool or int32", "f32[4]", "astype(jx::int32)"}),
      row<jx::ShapeError>("select_n_case_shape",
                          [&] {
                            lax::select_n(jnp::zeros({4}, DType::Bool), {v4, f32({3})});
                          },
                          {"[select_n]", "bool[4], f32[4], f32[3]", "4 vs 3"}),
      row<jx::ValueError>("select_n_no_cases",
                          [&] { lax::select_n(jnp::zeros({4}, DType::Bool), {}); },
                          {"[select_n]", "at least one case"}),
      row<jx::ShapeError>("clamp_shape", [&] { lax::clamp(f32({3}), v4, f32({3})); },
                          {"[clamp]", "f32[3], f32[4], f32[3]", "3 vs 4"}),
      // ---- reductions, cumulative, sort ----
      row<jx::IndexError>("reduce_sum_axis_out_of_range", [&] { lax::reduce_sum(m23, {2}); },
                          {"[reduce_sum]", "axis 2", "rank 2", "-2..1"}),
      row<jx::IndexError>("reduce_sum_duplicate_axis",
                          [&] {
                            lax::reduce_sum(m23, {1, 1});
                          },
                          {"[reduce_sum]", "axis 1 appears twice", "(1, 1)"}),
      row<jx::DTypeError>("reduce_and_float", [&] { lax::reduce_and(m23, {0}); },
                          {"[reduce_and]", "f32[2,3]", "bool or integer"}),
      row<jx::IndexError>("argmax_axis_out_of_range", [&] { lax::argmax(m23, 3); },
                          {"[argmax]", "axis 3", "-2..1"}),
      row<jx::DTypeError>("argmax_float_index_dtype", [&] { lax::argmax(m23, 0, DType::Float32); },
                          {"[argmax]", "index_dtype", "integer", "float32"}),
      row<jx::IndexError>("cumsum_axis_out_of_range", [&] { lax::cumsum(m23, 2); },
                          {"[cumsum]", "axis 2", "-2..1"}),
      row<jx::ValueError>("sort_num_keys_too_many", [&] { lax::sort({v4}, 0, true, 2); },
                          {"[sort]", "num_keys", "1..1", "got 2"}),
      row<jx::ShapeError>("sort_operand_shapes",
                          [&] {
                            lax::sort({v4, f32({3})}, 0);
                          },
                          {"[sort]", "same shape", "f32[4], f32[3]"}),
      // ---- shape ----
      row<jx::ShapeError>("reshape_size", [&] { lax::reshape(m23, {4}); },
                          {"[reshape]", "f32[2,3]", "(4,)", "6 elements"}),
      row<jx::IndexError>("transpose_bad_permutation",
                          [&] {
                            lax::transpose(m23, {0, 0});
                          },
                          {"[transpose]", "(0, 0)", "f32[2,3]", "exactly once"}),
      row<jx::ShapeError>("squeeze_non_unit", [&] { lax::squeeze(m23, {0}); },
                          {"[squeeze]", "f32[2,3]", "size is 2, not 1"}),
      row<jx::ShapeError>("broadcast_in_dim_bad_size",
                          [&] {
                            lax::broadcast_in_dim(m23, {2, 4}, {0, 1});
                          },
                          {"[broadcast_in_dim]", "f32[2,3]", "(2, 4)", "must be 1 or equal"}),
      row<jx::ShapeError>("broadcast_in_dim_dims_length",
                          [&] {
                            lax::broadcast_in_dim(m23, {2, 3, 4}, {0});
                          },
                          {"[broadcast_in_dim]", "(0,)", "one entry per operand dim", "f32[2,3]"}),
      row<jx::IndexError>("rev_dim_out_of_range", [&] { lax::rev(m23, {2}); },
                          {"[rev]", "axis 2", "-2..1"}),
      row<jx::ShapeError>("concatenate_shape",
                          [&] {
                            lax::concatenate({m23, f32({3, 3})}, 1);
                          },
                          {"[concatenate]", "f32[2,3], f32[3,3]", "only along dimension 1"}),
      row<jx::DTypeError>("concatenate_dtype",
                          [&] {
                            lax::concatenate({v4, jnp::zeros({4}, DType::Int32)}, 0);
                          },
                          {"[concatenate]", "same dtype", "f32[4], i32[4]", "astype"}),
      row<jx::ShapeError>("pad_config_length",
                          [&] {
                            lax::pad(m23, Array(0.0f), {{1, 1, 0}});
                          },
                          {"[pad]", "one (lo, hi, interior) per dimension", "f32[2,3]"}),
      row<jx::ValueError>("pad_negative_interior",
                          [&] {
                            lax::pad(v4, Array(0.0f), {{0, 0, -1}});
                          },
                          {"[pad]", "nonnegative", "interior=(-1,)", "f32[4]"}),
      row<jx::ShapeError>("pad_value_not_scalar",
                          [&] {
                            lax::pad(v4, f32({1}), {{1, 1, 0}});
                          },
                          {"[pad]", "scalar", "f32[1]"}),
      row<jx::ValueError>("iota_negative", [] { lax::iota(DType::Int32, -1); },
                          {"[iota]", "(-1,)", "negative"}),
      row<jx::IndexError>("broadcasted_iota_dimension",
                          [] {
                            lax::broadcasted_iota(DType::Int32, {2, 3}, 2);
                          },
                          {"[broadcasted_iota]", "axis 2", "rank 2", "-2..1"}),
      // ---- slicing, gather, scatter ----
      row<jx::IndexError>("slice_out_of_bounds",
                          [&] {
                            lax::slice(m23, {0, 0}, {2, 4});
                          },
                          {"[slice]", "[0:4]", "f32[2,3]", "0 <= start <= limit <= 3"}),
      row<jx::ValueError>("slice_zero_stride",
                          [&] {
                            lax::slice(m23, {0, 0}, {2, 3}, {1, 0});
                          },
                          {"[slice]", "positive", "(1, 0)", "lax::rev"}),
      row<jx::IndexError>("slice_rank_mismatch", [&] { lax::slice(m23, {0}, {2}); },
                          {"[slice]", "one entry per dimension", "f32[2,3]"}),
      row<jx::IndexError>(
          "dynamic_slice_index_count",
          [&] {
            lax::dynamic_slice(m23, {i0}, {1, 1});
          },
          {"[dynamic_slice]", "one start index per dimension", "f32[2,3]", "got 1"}),
      row<jx::DTypeError>("dynamic_slice_float_index",
                          [&] { lax::dynamic_slice(v4, {Array(0.0f)}, {2}); },
                          {"[dynamic_slice]", "integer scalars", "f32[]"}),
      row<jx::IndexError>("dynamic_slice_size_too_large",
                          [&] { lax::dynamic_slice(v4, {i0}, {5}); },
                          {"[dynamic_slice]", "(5,)", "f32[4]", "0 <= size <= dim"}),
      row<jx::ShapeError>("dynamic_update_slice_too_large",
                          [&] { lax::dynamic_update_slice(v4, f32({5}), {i0}); },
                          {"[dynamic_update_slice]", "f32[5]", "f32[4]", "dimension 0"}),
      row<jx::ValueError>("gather_bad_dnums",
                          [&] {
                            lax::gather(m23, jnp::zeros({2, 1}, DType::Int32),
                                        lax::GatherDimensionNumbers{{1}, {0}, {2}, {}, {}}, {1, 3});
                          },
                          {"[gather]", "start_index_map (2,)", "f32[2,3]", "i32[2,1]"}),
      row<jx::ShapeError>("gather_slice_size_too_large",
                          [&] {
                            lax::gather(m23, jnp::zeros({2, 1}, DType::Int32),
                                        lax::GatherDimensionNumbers{{1}, {0}, {0}, {}, {}}, {1, 4});
                          },
                          {"[gather]", "(1, 4)", "0 <= size <= operand dim", "f32[2,3]"}),
      row<jx::ShapeError>("scatter_updates_shape",
                          [&] {
                            lax::scatter_add(m23, jnp::zeros({2, 1}, DType::Int32), f32({2, 4}),
                                             lax::ScatterDimensionNumbers{{1}, {0}, {0}, {}, {}});
                          },
                          {"[scatter_add]", "window dim 1 (4)", "f32[2,3]", "f32[2,4]"}),
      // ---- contractions, convolution, windows ----
      row<jx::ShapeError>("dot_general_contracting_sizes",
                          [&] {
                            lax::dot_general(m23, m23, lax::DotDimensionNumbers{{1}, {0}, {}, {}});
                          },
                          {"[dot_general]", "f32[2,3] · f32[2,3]"}),
      row<jx::ShapeError>(
          "dot_general_batch_sizes",
          [&] {
            lax::dot_general(m23, f32({3, 3}), lax::DotDimensionNumbers{{1}, {1}, {0}, {0}});
          },
          {"[dot_general]", "batch dimensions differ", "f32[2,3] · f32[3,3]"}),
      row<jx::IndexError>("dot_general_dim_out_of_range",
                          [&] {
                            lax::dot_general(m23, m23, lax::DotDimensionNumbers{{2}, {0}, {}, {}});
                          },
                          {"[dot_general]", "lhs_contracting (2,)", "rank 2", "below the rank"}),
      row<jx::DTypeError>("dot_general_dtype_mismatch",
                          [&] {
                            lax::dot_general(v4, jnp::zeros({4}, DType::Int32),
                                             lax::DotDimensionNumbers{{0}, {0}, {}, {}});
                          },
                          {"[dot_general]", "same dtype", "f32[4], i32[4]", "astype"}),
      row<jx::ShapeError>("dot_rank3",
                          [] {
                            lax::dot(f32({2, 2, 2}), f32({2, 2}));
                          },
                          {"[dot]", "rank 1 or 2", "f32[2,2,2]", "dot_general"}),
      row<jx::ShapeError>(
          "conv_feature_mismatch",
          [] {
            lax::conv(f32({1, 3, 5, 5}), f32({4, 2, 3, 3}), {1, 1}, "SAME");
          },
          {"[conv_general_dilated]", "f32[1,3,5,5] * f32[4,2,3,3]", "dimension numbers"}),
      row<jx::ValueError>("conv_bad_padding_name",
                          [] {
                            lax::conv(f32({1, 3, 5, 5}), f32({4, 3, 3, 3}), {1, 1}, "HALF");
                          },
                          {"[conv_general_dilated]", "\"HALF\"", "\"SAME\""}),
      row<jx::ShapeError>("conv_rank_mismatch",
                          [] {
                            lax::conv(f32({1, 3, 5}), f32({4, 3, 3, 3}), {1, 1}, "SAME");
                          },
                          {"[conv_general_dilated]", "same rank", "3 and 4", "NCHW"}),
      row<jx::ValueError>(
          "conv_string_padding_with_lhs_dilation",
          [] {
            lax::conv_general_dilated(f32({1, 3, 5, 5}), f32({4, 3, 3, 3}), {1, 1}, "SAME", {2, 2});
          },
          {"[conv_general_dilated]", "lhs_dilation", "explicit (lo, hi) pairs"}),
      row<jx::ValueError>(
          "conv_dimension_numbers_bad_string",
          [] {
            lax::conv_dimension_numbers({1, 5, 5, 3}, {3, 3, 3, 4}, {"NHWC", "HWIX", "NHWC"});
          },
          {"[conv_dimension_numbers]", "\"HWIX\"", "'O' and 'I'"}),
      row<jx::ValueError>("padtype_to_pads_bad_name",
                          [] { lax::padtype_to_pads({5}, {3}, {1}, "FULL"); },
                          {"[padtype_to_pads]", "\"FULL\"", "\"VALID\""}),
      row<jx::ShapeError>("reduce_window_dims_length",
                          [&] { lax::reduce_window_sum(m23, {2}, {1}, "VALID"); },
                          {"[reduce_window_sum]", "(2,)", "f32[2,3]", "one per operand dim"}),
      row<jx::ValueError>("reduce_window_zero_stride",
                          [&] {
                            lax::reduce_window_max(m23, {1, 2}, {1, 0}, "VALID");
                          },
                          {"[reduce_window_max]", "(1, 0)", "positive"}),
      row<jx::ShapeError>("select_and_scatter_add_source_shape",
                          [] {
                            lax::select_and_scatter_add(f32({3}), f32({4}), lax::WindowSelect::ge,
                                                        {2}, {2}, {{0, 0}});
                          },
                          {"[select_and_scatter_add]", "f32[3]", "f32[4]", "(2,)"}),
      // ---- leaked tracers ----
      row<jx::ConcretizationError>("leaked_tracer_after_jit",
                                   [] {
                                     Array leaked;
                                     jx::jit([&](const Array& x) {
                                       leaked = lax::mul(x, x);
                                       return x;
                                     })(jnp::ones({3}));
                                     lax::add(leaked, leaked);
                                   },
                                   {"[add]", "f32[3]", "escaped", "Return it from the function"}),
      row<jx::ConcretizationError>("leaked_tracer_after_grad",
                                   [] {
                                     Array leaked;
                                     jx::grad([&](const Array& x) {
                                       leaked = lax::sin(x);
                                       return x;
                                     })(Array(1.0f));
                                     lax::exp(leaked);
                                   },
                                   {"[exp]", "f32[]", "escaped", "Return it from the function"}),
  };
  run_rows(rows);
}

}  // namespace
