// Bad input to jx::optim (issue 19, "bad input everywhere"): a table of wrong calls, each
// of which must throw exactly the expected jx error type with a message that names the
// operation ("[optim.chain]"), the offending shape, dtype, structure or value, and the fix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "testing/error_table.h"

namespace {

namespace jnp = jx::numpy;
namespace optim = jx::optim;
using jx::Array;
using jx::DType;
using jx::Tree;

using jx::testing::ErrorRow;
using jx::testing::row;
using jx::testing::run_rows;

Array f32(std::vector<float> v) { return jnp::array(v); }
Array i32(std::vector<int32_t> v) { return jnp::array<int32_t>(v); }
Tree params() { return Tree{{"w", f32({1, 2, 3})}, {"b", f32({0.5f})}}; }

std::vector<ErrorRow> optim_rows() {
  std::vector<ErrorRow> rows;
  const Array logits = jnp::zeros({2, 3});
  // ---- trees of params and updates ----
  rows.push_back(row<jx::ValueError>(
      "apply_updates: a missing key",
      [] {
        optim::apply_updates(params(), Tree{{"w", f32({1, 2, 3})}});
      },
      {"[optim.apply_updates]", "{'w': *}", "{'b': *, 'w': *}", "same keys and containers"}));
  rows.push_back(row<jx::ShapeError>(
      "apply_updates: a leaf of another shape",
      [] {
        optim::apply_updates(params(), Tree{{"w", f32({1, 2})}, {"b", f32({1})}});
      },
      {"[optim.apply_updates]", "['w']", "updates are f32[2]", "params are f32[3]",
       "keep its shape"}));
  rows.push_back(row<jx::ShapeError>(
      "apply_updates: an update that would broadcast the param",
      [] {
        optim::apply_updates(params(), Tree{{"w", jnp::zeros({2, 3})}, {"b", f32({1})}});
      },
      {"[optim.apply_updates]", "['w']", "updates are f32[2,3]", "params are f32[3]"}));
  rows.push_back(
      row<jx::ValueError>("incremental_update: mismatched trees",
                          [] {
                            optim::incremental_update(params(), Tree{{"w", f32({1, 2, 3})}}, 0.5);
                          },
                          {"[optim.incremental_update]", "{'w': *}", "same keys and containers"}));
  rows.push_back(row<jx::ValueError>("adam: the state of another optimizer",
                                     [] {
                                       Tree state = optim::sgd(0.1).init(params());
                                       optim::adam(1e-3).update(params(), state, params());
                                     },
                                     {"[optim.scale_by_adam]", "no field \"mu\"",
                                      "the state this transformation's init returned"}));
  rows.push_back(row<jx::ValueError>(
      "adam: the state of other params",
      [] {
        Tree state = optim::adam(1e-3).init(Tree{{"w", f32({1, 2})}, {"b", f32({0})}});
        optim::adam(1e-3).update(params(), state, params());
      },
      {"[optim.scale_by_adam]", "the state's \"mu\"", "params shaped like these updates"}));
  rows.push_back(row<jx::ValueError>(
      "sgd momentum: the state of other params",
      [] {
        Tree state = optim::sgd(0.1, {.momentum = 0.9}).init(Tree{{"w", f32({1, 2})}, {"b", f32({0})}});
        optim::sgd(0.1, {.momentum = 0.9}).update(params(), state, params());
      },
      {"[optim.trace]", "the state's \"trace\"", "params shaped like these updates"}));
  rows.push_back(row<jx::ValueError>(
      "chain: the state of a shorter chain",
      [] {
        Tree state = optim::chain(optim::clip_by_global_norm(1.0)).init(params());
        optim::chain(optim::clip_by_global_norm(1.0), optim::sgd(0.1))
            .update(params(), state, params());
      },
      {"[optim.chain]", "the state must be the list of 2"}));
  rows.push_back(row<jx::ValueError>(
      "masked: a traced mask (a tracer deciding structure)",
      [] {
        auto f = jx::jit([](const Array& m) {
          auto opt = optim::masked(optim::sgd(0.1), Tree{{"w", Tree(m)}, {"b", Tree(m)}});
          return jx::tree::leaves(opt.update(params(), opt.init(params())).first)[0];
        });
        f(jnp::array(true));
      },
      {"[optim.masked]", "traced value", "must be concrete"}));
  rows.push_back(row<jx::ValueError>(
      "add_decayed_weights: no params",
      [] {
        auto opt = optim::add_decayed_weights(1e-4);
        opt.update(params(), opt.init(params()));
      },
      {"[optim.add_decayed_weights]", "needs the params", "update(grads, state, params)"}));
  rows.push_back(row<jx::ValueError>("adamw: a mask with too few leaves",
                                     [] {
                                       auto opt = optim::adamw(
                                           1e-3, {.mask = optim::MaskFn([](const Tree&) {
                                                    return Tree{{"w", Tree(true)}};
                                                  })});
                                       opt.update(params(), opt.init(params()), params());
                                     },
                                     {"[optim.add_decayed_weights]", "the mask has 1 leaves"}));
  rows.push_back(
      row<jx::ValueError>("masked: a mask of another structure",
                          [] {
                            auto opt = optim::masked(optim::sgd(0.1), Tree{{"v", Tree(true)}});
                            opt.init(params());
                          },
                          {"[optim.masked]"}));
  rows.push_back(row<jx::ValueError>(
      "partition: a label without a transformation",
      [] {
        auto opt = optim::partition({{"a", optim::sgd(0.1)}},
                                    Tree{{"w", optim::label("a")}, {"b", optim::label("frozen")}});
        opt.init(params());
      },
      {"[optim.partition]", "frozen"}));
  rows.push_back(
      row<jx::ValueError>("inject_hyperparams: an unknown hyper-parameter",
                          [] {
                            auto opt = optim::inject_hyperparams(
                                [](const optim::Hyperparams& h) { return optim::sgd(h["lr"]); },
                                {{"learning_rate", 0.1}});
                            opt.init(params());
                          },
                          {"[optim.inject_hyperparams]", "lr", "learning_rate"}));
  rows.push_back(row<jx::ValueError>("TrainState.apply_gradients: grads of another structure",
                                     [] {
                                       auto s = optim::TrainState::create(
                                           [](const Tree&, const Array& x) { return x; }, params(),
                                           optim::sgd(0.1));
                                       s.apply_gradients(Tree{{"w", f32({1, 2, 3})}});
                                     },
                                     {"[optim.TrainState.apply_gradients]"}));
  // ---- schedules ----
  rows.push_back(row<jx::ValueError>(
      "cosine_decay_schedule: decay_steps 0", [] { optim::cosine_decay_schedule(1.0, 0); },
      {"[optim.cosine_decay_schedule]", "decay_steps must be positive", "0"}));
  rows.push_back(row<jx::ValueError>("warmup_cosine_decay_schedule: decay_steps < warmup",
                                     [] { optim::warmup_cosine_decay_schedule(0.0, 1.0, 10, 5); },
                                     {"[optim.warmup_cosine_decay_schedule]", "decay_steps (5"}));
  rows.push_back(row<jx::ValueError>("sgdr_schedule: no cycle", [] { optim::sgdr_schedule({}); },
                                     {"[optim.sgdr_schedule]", "at least one cycle"}));
  rows.push_back(row<jx::ValueError>(
      "linear_onecycle_schedule: transition_steps 0",
      [] { optim::linear_onecycle_schedule(0, 1.0); },
      {"[optim.linear_onecycle_schedule]", "transition_steps must be positive"}));
  rows.push_back(row<jx::ValueError>("join_schedules: as many boundaries as schedules",
                                     [] {
                                       optim::join_schedules({optim::constant_schedule(1.0),
                                                              optim::constant_schedule(2.0)},
                                                             {5, 10});
                                     },
                                     {"[optim.join_schedules]", "one boundary fewer"}));
  rows.push_back(
      row<jx::ValueError>("piecewise_interpolate_schedule: an unknown type",
                          [] {
                            optim::piecewise_interpolate_schedule("cubic", 1.0, {{10, 0.5}});
                          },
                          {"[optim.piecewise_interpolate_schedule]", "cubic"}));
  rows.push_back(
      row<jx::ValueError>("piecewise_constant_schedule: a negative scale",
                          [] {
                            optim::piecewise_constant_schedule(1.0, {{10, -0.5}});
                          },
                          {"[optim.piecewise_constant_schedule]", "non-negative", "-0.5"}));
  // ---- transformations' arguments ----
  rows.push_back(row<jx::ValueError>("scale_by_rss: a negative accumulator",
                                     [] { optim::scale_by_rss(-1.0); },
                                     {"[optim.scale_by_rss]", ">= 0", "-1"}));
  rows.push_back(row<jx::ValueError>("clip_by_block_rms: threshold 0",
                                     [] { optim::clip_by_block_rms(0.0); },
                                     {"[optim.clip_by_block_rms]", "threshold must be > 0"}));
  // ---- losses ----
  rows.push_back(row<jx::ShapeError>("softmax_cross_entropy: labels of another shape",
                                     [logits] {
                                       optim::softmax_cross_entropy(logits, jnp::zeros({2, 4}));
                                     },
                                     {"[optim.softmax_cross_entropy]", "f32[2,4]", "f32[2,3]"}));
  rows.push_back(row<jx::DTypeError>(
      "softmax_cross_entropy_with_integer_labels: float labels",
      [logits] {
        optim::softmax_cross_entropy_with_integer_labels(logits, f32({0, 1}));
      },
      {"[optim.softmax_cross_entropy_with_integer_labels]", "integer", "f32[2]"}));
  rows.push_back(row<jx::DTypeError>(
      "softmax_cross_entropy_with_integer_labels: integer logits",
      [] {
        optim::softmax_cross_entropy_with_integer_labels(jnp::zeros({2, 3}, DType::Int32),
                                                         i32({0, 1}));
      },
      {"[optim.softmax_cross_entropy_with_integer_labels]", "floating-point", "i32[2,3]"}));
  rows.push_back(row<jx::IndexError>("softmax_cross_entropy: axis out of range",
                                     [logits] { optim::softmax_cross_entropy(logits, logits, 2); },
                                     {"[optim.softmax_cross_entropy]", "axis 2", "f32[2,3]"}));
  rows.push_back(
      row<jx::ShapeError>("sigmoid_binary_cross_entropy: labels of another shape",
                          [logits] {
                            optim::sigmoid_binary_cross_entropy(logits, jnp::zeros({3, 2}));
                          },
                          {"[optim.sigmoid_binary_cross_entropy]", "f32[3,2]", "f32[2,3]"}));
  rows.push_back(row<jx::ShapeError>("squared_error: targets of another shape",
                                     [logits] { optim::squared_error(logits, jnp::zeros({4})); },
                                     {"[optim.squared_error]", "f32[4]", "f32[2,3]"}));
  rows.push_back(row<jx::ShapeError>("ctc_loss: logits of rank 2",
                                     [logits] {
                                       optim::ctc_loss(logits, jnp::zeros({2}),
                                                       jnp::zeros({2, 1}, DType::Int32),
                                                       jnp::zeros({2, 1}));
                                     },
                                     {"[optim.ctc_loss]", "[batch, time, classes]", "f32[2,3]"}));
  rows.push_back(row<jx::ValueError>("ctc_loss: blank_id out of range",
                                     [] {
                                       optim::ctc_loss(jnp::zeros({1, 4, 3}), jnp::zeros({1, 4}),
                                                       jnp::zeros({1, 2}, DType::Int32),
                                                       jnp::zeros({1, 2}), 3);
                                     },
                                     {"[optim.ctc_loss]", "blank_id 3"}));
  rows.push_back(row<jx::ShapeError>("kl_divergence: targets of another shape",
                                     [logits] {
                                       optim::kl_divergence(logits, jnp::zeros({2, 2}));
                                     },
                                     {"[optim.kl_divergence]", "f32[2,2]", "f32[2,3]"}));
  rows.push_back(
      row<jx::ShapeError>("cosine_similarity: targets of another shape",
                          [logits] { optim::cosine_similarity(logits, jnp::zeros({4})); },
                          {"[optim.cosine_similarity]", "f32[4]", "f32[2,3]"}));
  return rows;
}

TEST(OptimErrors, EveryBadCallThrowsATypedErrorNamingTheOperation) {
  const std::vector<ErrorRow> rows = optim_rows();
  EXPECT_GE(rows.size(), 20u);
  run_rows(rows);
}

}  // namespace
