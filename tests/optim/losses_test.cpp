// jx::optim losses: values and gradients against PyTorch float64 (torch.nn.functional with
// reduction='none') or NumPy where torch has no such loss (tests/golden/gen_optim_losses.py);
// float32 values; check_grads (float64, order 2; order 1 through ctc's scan); stability at
// logits of +-1e4; `where` masks against the loss of the unmasked sub-array; jit against
// eager; errors by their text.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "jx/jx.h"
#include "jx/optim/losses.h"
#include "testing/check_grads.h"
#include "testing/expect_error.h"
#include "testing/golden.h"

namespace {

namespace jnp = jx::numpy;
namespace optim = jx::optim;
using jx::Array;
using jx::DType;
using jx::Shape;

const std::vector<jx::testing::NamedGolden> kGoldens = {
#include "golden/optim_losses_golden.inc"
};

constexpr double kF64 = 1e-12;
constexpr double kF32 = 1e-5;

Array in(const std::string& name, DType dtype = DType::Float64) {
  for (const auto& g : kGoldens)
    if (name == g.name) return jnp::array<double>(g.values, Shape(g.shape)).astype(dtype);
  ADD_FAILURE() << "no golden named " << name;
  return Array();
}

void expect_golden(const std::string& name, const Array& x, double tol) {
  jx::testing::expect_named_golden(kGoldens, name, x, tol);
}

using Loss = std::function<Array(const Array&)>;

struct Case {
  const char* golden;  // values; "<golden>_grad" holds d sum(loss) / d input, when has_grad
  const char* input;
  Loss loss;           // of the input; other arguments are read inside (float64, cast to x's dtype)
  bool has_grad = true;
  double tol64 = kF64;
};

Array like(const std::string& name, const Array& x) { return in(name, x.dtype()); }

std::vector<Case> cases() {
  return {
      {"softmax_ce", "in_logits",
       [](const Array& x) { return optim::softmax_cross_entropy(x, like("in_soft_labels", x)); }},
      {"int_ce", "in_logits",
       [](const Array& x) {
         return optim::softmax_cross_entropy_with_integer_labels(x, in("in_int_labels", DType::Int32));
       }},
      {"int_ce_axes12", "in_logits3",
       [](const Array& x) {
         return optim::softmax_cross_entropy_with_integer_labels(
             x, in("in_int_labels3", DType::Int32), {1, 2});
       }},
      {"bce", "in_bce_logits",
       [](const Array& x) { return optim::sigmoid_binary_cross_entropy(x, like("in_bce_labels", x)); }},
      {"focal", "in_bce_logits",
       [](const Array& x) { return optim::sigmoid_focal_loss(x, like("in_bce_labels", x)); }},
      {"focal_a0p25_g1p5", "in_bce_logits",
       [](const Array& x) { return optim::sigmoid_focal_loss(x, like("in_bce_labels", x), 0.25, 1.5); }},
      {"hinge", "in_hinge_outputs",
       [](const Array& x) { return optim::hinge_loss(x, like("in_hinge_targets", x)); }, false},
      {"kl", "in_kl_log_predictions",
       [](const Array& x) { return optim::kl_divergence(x, like("in_kl_targets", x)); }},
      {"kl_zero", "in_kl_log_predictions",
       [](const Array& x) { return optim::kl_divergence(x, like("in_kl_targets_zero", x)); }, false},
      {"kl_log_targets", "in_kl_log_predictions",
       [](const Array& x) {
         return optim::kl_divergence_with_log_targets(x, jnp::log(like("in_kl_targets", x)));
       }},
      {"safe_ce", "in_safe_logits",
       [](const Array& x) { return optim::safe_softmax_cross_entropy(x, like("in_safe_labels", x)); }},
      {"squared_error", "in_pred",
       [](const Array& x) { return optim::squared_error(x, like("in_targ", x)); }},
      {"l2", "in_pred", [](const Array& x) { return optim::l2_loss(x, like("in_targ", x)); }},
      {"huber", "in_pred", [](const Array& x) { return optim::huber_loss(x, like("in_targ", x)); }},
      {"huber_d0p75", "in_pred",
       [](const Array& x) { return optim::huber_loss(x, like("in_targ", x), 0.75); }},
      {"log_cosh", "in_pred", [](const Array& x) { return optim::log_cosh(x, like("in_targ", x)); }},
      {"log_cosh_no_targets", "in_pred", [](const Array& x) { return optim::log_cosh(x); }},
      {"cosine_similarity", "in_cos_a",
       [](const Array& x) { return optim::cosine_similarity(x, like("in_cos_b", x)); }},
      {"cosine_distance", "in_cos_a",
       [](const Array& x) { return optim::cosine_distance(x, like("in_cos_b", x)); }},
      {"cosine_similarity_axis0", "in_cos_a",
       [](const Array& x) { return optim::cosine_similarity(x, like("in_cos_b", x), 0.0, 0); }},
      {"cosine_similarity_eps0p5", "in_cos_small",
       [](const Array& x) { return optim::cosine_similarity(x, like("in_cos_b", x), 0.5); }, false},
      {"smooth_labels_0p1", "in_onehot",
       [](const Array& x) { return optim::smooth_labels(x, 0.1); }, false},
      {"smooth_labels_axis0", "in_onehot",
       [](const Array& x) { return optim::smooth_labels(x, 0.2, 0); }, false},
      {"ctc", "in_ctc_logits",
       [](const Array& x) {
         return optim::ctc_loss(x, like("in_ctc_logit_paddings", x), in("in_ctc_labels", DType::Int32),
                                like("in_ctc_label_paddings", x));
       },
       true, 1e-10},
      {"ctc_blank4", "in_ctc_logits",
       [](const Array& x) {
         return optim::ctc_loss(x, like("in_ctc_logit_paddings", x),
                                in("in_ctc_labels_blank4", DType::Int32),
                                like("in_ctc_label_paddings", x), 4);
       },
       true, 1e-10},
  };
}

TEST(OptimLosses, ValuesAndGradientsMatchTorch) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.golden);
    const Array x = in(c.input);
    Array y = c.loss(x);
    EXPECT_EQ(y.dtype(), DType::Float64);
    expect_golden(c.golden, y, c.tol64);
    if (c.has_grad) {
      auto total = [&c](const Array& v) { return jnp::sum(c.loss(v)); };
      expect_golden(std::string(c.golden) + "_grad", jx::grad(total)(x), c.tol64);
    }
    Array y32 = c.loss(x.astype(DType::Float32));
    EXPECT_EQ(y32.dtype(), DType::Float32);
    expect_golden(c.golden, y32, kF32);
  }
}

TEST(OptimLosses, SoftmaxCrossEntropyLabelGradientIsMinusLogSoftmax) {
  const Array logits = in("in_logits");
  auto of_labels = [&](const Array& y) { return jnp::sum(optim::softmax_cross_entropy(logits, y)); };
  expect_golden("softmax_ce_labels_grad", jx::grad(of_labels)(in("in_soft_labels")), kF64);
}

// ---- check_grads (float64) ----

void expect_grads(const std::string& what, const std::function<Array(const Array&)>& f,
                  const Array& x, int order) {
  auto fn = [f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; };
  try {
    jx::testing::check_grads(fn, {x}, {.order = order});
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

TEST(OptimLosses, CheckGrads) {
  for (const Case& c : cases()) {
    // hinge is piecewise linear, smooth_labels linear and the eps case clipped: their
    // goldens cover them; safe_ce has -inf inputs (finite differences are meaningless).
    const std::string name = c.golden;
    if (!c.has_grad || name == "safe_ce") continue;
    const int order = name.rfind("ctc", 0) == 0 ? 1 : 2;
    expect_grads(name, c.loss, in(c.input), order);
  }
  // Gradients in the second argument, where it is differentiable.
  const Array logits = in("in_logits");
  expect_grads("softmax_ce/labels",
               [&](const Array& y) { return optim::softmax_cross_entropy(logits, y); },
               in("in_soft_labels"), 2);
  expect_grads("bce/labels",
               [](const Array& y) { return optim::sigmoid_binary_cross_entropy(in("in_bce_logits"), y); },
               in("in_bce_labels"), 2);
  // Soft labels only: at a hard label (0 or 1) one logsumexp weight is 0 (see losses.cpp).
  expect_grads("focal/labels",
               [](const Array& y) { return optim::sigmoid_focal_loss(in("in_bce_logits"), y, 0.25); },
               jx::testing::rand_f64({12}, 5, 0.1, 0.9), 2);
  expect_grads("kl/targets",
               [](const Array& p) { return optim::kl_divergence(in("in_kl_log_predictions"), p); },
               in("in_kl_targets"), 2);
  expect_grads("cosine/targets",
               [](const Array& b) { return optim::cosine_similarity(in("in_cos_a"), b); },
               in("in_cos_b"), 2);
  expect_grads("hinge away from the kink",
               [](const Array& h) { return optim::hinge_loss(h, in("in_hinge_targets")); },
               in("in_hinge_outputs"), 1);
  expect_grads("safe_ce finite logits",
               [](const Array& x) { return optim::safe_softmax_cross_entropy(x, in("in_soft_labels")); },
               in("in_logits"), 2);
}

// ---- stability ----

void expect_all_finite(const std::string& what, const Array& x) {
  for (float v : x.astype(DType::Float32).to_vector<float>())
    EXPECT_TRUE(std::isfinite(v)) << what << " has " << v;
}

TEST(OptimLosses, ExtremeLogitsGiveFiniteLossesAndGradients) {
  const Array big = jnp::array<float>({{1e4f, -1e4f, 0.0f}, {-1e4f, -1e4f, 1e4f}});
  const Array soft = jnp::array<float>({{0.0f, 1.0f, 0.0f}, {0.5f, 0.0f, 0.5f}});
  const Array ids = jnp::array<int32_t>({1, 0});
  const Array flat = big.reshape({6});
  const Array bits = jnp::array<float>({0, 1, 1, 0, 0.5f, 1});
  const std::vector<std::pair<std::string, std::function<Array(const Array&)>>> losses = {
      {"softmax_ce", [&](const Array& x) { return optim::softmax_cross_entropy(x, soft); }},
      {"int_ce", [&](const Array& x) { return optim::softmax_cross_entropy_with_integer_labels(x, ids); }},
      {"safe_ce", [&](const Array& x) { return optim::safe_softmax_cross_entropy(x, soft); }},
      {"bce", [&](const Array& x) { return optim::sigmoid_binary_cross_entropy(x.reshape({6}), bits); }},
      {"focal", [&](const Array& x) { return optim::sigmoid_focal_loss(x.reshape({6}), bits, 0.25); }},
      {"focal_gamma0p5",
       [&](const Array& x) { return optim::sigmoid_focal_loss(x.reshape({6}), bits, std::nullopt, 0.5); }},
      {"log_cosh", [](const Array& x) { return optim::log_cosh(x); }},
      {"huber", [](const Array& x) { return optim::huber_loss(x); }},
      {"kl", [](const Array& x) {
         return optim::kl_divergence(jx::nn::log_softmax(x), jnp::full({2, 3}, 1.0f / 3));
       }},
  };
  for (const auto& [name, f] : losses) {
    SCOPED_TRACE(name);
    expect_all_finite(name, f(big));
    expect_all_finite(name + " grad", jx::grad([&f](const Array& x) { return jnp::sum(f(x)); })(big));
  }
  // The exact values where they are simple: a 2e4 margin the wrong way costs 2e4.
  EXPECT_FLOAT_EQ(optim::softmax_cross_entropy_with_integer_labels(big, ids).to_vector<float>()[0], 2e4f);
  EXPECT_FLOAT_EQ(optim::sigmoid_binary_cross_entropy(flat, bits).to_vector<float>()[3], 0.0f);
  EXPECT_FLOAT_EQ(optim::sigmoid_binary_cross_entropy(flat, bits).to_vector<float>()[1], 1e4f);
  // ctc with +-1e4 logits.
  const Array ctc_logits = jnp::where(jnp::arange(2 * 6 * 4).reshape({2, 6, 4}) % 3 == 0,
                                      Array(1e4f), Array(-1e4f));
  const Array lp = jnp::zeros({2, 6});
  const Array labels = jnp::array<int32_t>({{1, 2}, {3, 3}});
  const Array lab_pad = jnp::zeros({2, 2});
  auto ctc = [&](const Array& x) { return optim::ctc_loss(x, lp, labels, lab_pad); };
  expect_all_finite("ctc", ctc(ctc_logits));
  expect_all_finite("ctc grad", jx::grad([&](const Array& x) { return jnp::sum(ctc(x)); })(ctc_logits));
}

TEST(OptimLosses, SafeSoftmaxCrossEntropyIgnoresMinusInfinityWithZeroLabel) {
  const Array x = in("in_safe_logits", DType::Float32);
  const Array y = in("in_safe_labels", DType::Float32);
  expect_golden("safe_ce", optim::safe_softmax_cross_entropy(x, y), kF32);
  // Its custom_jvp keeps the gradient finite (0 at the -inf logit) ...
  Array g = jx::grad([&](const Array& v) { return jnp::sum(optim::safe_softmax_cross_entropy(v, y)); })(x);
  expect_golden("safe_ce_grad", g, kF32);
  // ... where the plain loss gives NaN: 0 * -inf.
  EXPECT_TRUE(std::isnan(optim::softmax_cross_entropy(x, y).to_vector<float>()[0]));
}

// At logit 0, softplus and log_sigmoid evaluate logaddexp at equal arguments, where JAX's
// custom_jvp gives 1/2 to each (differentiating its max-based body would not).
TEST(OptimLosses, SigmoidBinaryCrossEntropyGradientAtLogitZero) {
  const Array x = jnp::zeros({2}, DType::Float64);
  const Array y = jnp::array<double>({1.0, 0.0});
  auto total = [&](const Array& v) { return jnp::sum(optim::sigmoid_binary_cross_entropy(v, y)); };
  // d/dx = sigmoid(x) - y.
  EXPECT_EQ(jx::grad(total)(x).to_vector<double>(), (std::vector<double>{-0.5, 0.5}));
}

// ---- where, forward probabilities, transformations ----

TEST(OptimLosses, WhereMasksLikeDroppingTheEntries) {
  const Array logits = in("in_logits");
  Array labels = in("in_soft_labels");
  // Drop class 2: with its label 0 and the mask false, the loss is that of the 4 other classes.
  const Array keep = jnp::array<bool>({true, true, false, true, true});
  labels = labels * keep.astype(DType::Float64);
  const Array sub_logits = jnp::take(logits, jnp::array<int32_t>({0, 1, 3, 4}), 1);
  const Array sub_labels = jnp::take(labels, jnp::array<int32_t>({0, 1, 3, 4}), 1);
  const Array mask = jnp::broadcast_to(keep, {4, 5});
  jx::testing::expect_close(optim::softmax_cross_entropy(logits, labels, -1, mask),
                            optim::softmax_cross_entropy(sub_logits, sub_labels), 1e-13, 1e-13, "ce");
  const Array ids = jnp::array<int32_t>({3, 0, 4, 1});
  const Array sub_ids = jnp::array<int32_t>({2, 0, 3, 1});
  jx::testing::expect_close(optim::softmax_cross_entropy_with_integer_labels(logits, ids, -1, mask),
                            optim::softmax_cross_entropy_with_integer_labels(sub_logits, sub_ids),
                            1e-13, 1e-13, "int ce");
  // A batch-shaped mask drops whole examples: their loss is 0 for integer labels.
  const Array rows = jnp::array<bool>({true, false, true, false});
  auto r = optim::softmax_cross_entropy_with_integer_labels(logits, ids, -1, rows).to_vector<double>();
  auto full = optim::softmax_cross_entropy_with_integer_labels(logits, ids).to_vector<double>();
  EXPECT_EQ(r[1], 0.0);
  EXPECT_EQ(r[3], 0.0);
  EXPECT_DOUBLE_EQ(r[0], full[0]);
  EXPECT_DOUBLE_EQ(r[2], full[2]);
  // kl and cosine sum only over the selected entries.
  const Array a = in("in_cos_a"), b = in("in_cos_b");
  const Array cols = jnp::broadcast_to(jnp::array<bool>({true, false, true, true, false}), {3, 5});
  const Array idx = jnp::array<int32_t>({0, 2, 3});
  jx::testing::expect_close(optim::cosine_similarity(a, b, 0.0, -1, cols),
                            optim::cosine_similarity(jnp::take(a, idx, 1), jnp::take(b, idx, 1)),
                            1e-14, 1e-13, "cosine");
  jx::testing::expect_close(optim::kl_divergence(a, jnp::abs(b), -1, cols),
                            optim::kl_divergence(jnp::take(a, idx, 1), jnp::take(jnp::abs(b), idx, 1)),
                            1e-14, 1e-13, "kl");
  // smooth_labels divides alpha by the number of selected categories.
  jx::testing::expect_close(optim::smooth_labels(in("in_onehot"), 0.3, -1, cols(jx::slice(0, 3))),
                            0.7 * in("in_onehot") + 0.1, 1e-15, 1e-15, "smooth_labels");
}

TEST(OptimLosses, CtcForwardProbsEndInTheLoss) {
  const Array logits = in("in_ctc_logits");
  auto r = optim::ctc_loss_with_forward_probs(logits, in("in_ctc_logit_paddings"),
                                              in("in_ctc_labels", DType::Int32),
                                              in("in_ctc_label_paddings"));
  EXPECT_EQ(r.logalpha_blank.shape(), (Shape{12, 3, 5}));
  EXPECT_EQ(r.logalpha_nonblank.shape(), (Shape{12, 3, 4}));
  expect_golden("ctc", r.loss, 1e-10);
  // The loss is -log alpha in the blank after the last label, at the last frame.
  const std::vector<int> label_lens = {4, 2, 4};
  for (int b = 0; b < 3; ++b)
    EXPECT_DOUBLE_EQ(r.loss.to_vector<double>()[size_t(b)],
                     -r.logalpha_blank(11, b, label_lens[size_t(b)]).item<double>());
}

TEST(OptimLosses, JitAndVmapEqualEager) {
  const Array logits = in("in_logits", DType::Float32);
  const Array ids = in("in_int_labels", DType::Int32);
  auto f = [](const Array& x, const Array& y) {
    return optim::softmax_cross_entropy_with_integer_labels(x, y);
  };
  jx::testing::expect_close(jx::jit(f)(logits, ids), f(logits, ids), 1e-6, 1e-6, "jit int ce");
  auto ctc = [](const Array& x, const Array& lp, const Array& l, const Array& lpad) {
    return optim::ctc_loss(x, lp, l, lpad);
  };
  const Array cl = in("in_ctc_logits", DType::Float32), clp = in("in_ctc_logit_paddings", DType::Float32),
              lab = in("in_ctc_labels", DType::Int32), lpad = in("in_ctc_label_paddings", DType::Float32);
  jx::testing::expect_close(jx::jit(ctc)(cl, clp, lab, lpad), ctc(cl, clp, lab, lpad), 1e-5, 1e-5, "jit ctc");
  // vmap over examples of a per-example loss equals the batched call.
  auto one = [](const Array& x, const Array& y) {
    return optim::softmax_cross_entropy(x, y);
  };
  const Array soft = in("in_soft_labels", DType::Float32);
  jx::testing::expect_close(jx::vmap(one)(logits, soft), one(logits, soft), 1e-6, 1e-6, "vmap ce");
}

// ---- errors ----

using jx::testing::expect_error;

TEST(OptimLosses, ErrorsNameTheLossTheShapesAndTheFix) {
  const Array logits = jnp::zeros({4, 5});
  expect_error<jx::ShapeError>(
      [&] { optim::softmax_cross_entropy(logits, jnp::zeros({4, 3})); },
      "[optim.softmax_cross_entropy] logits f32[4,5] and labels f32[4,3] do not broadcast together; "
      "give labels the shape of logits");
  expect_error<jx::ShapeError>(
      [&] { optim::softmax_cross_entropy_with_integer_labels(logits, jnp::zeros({5}, DType::Int32)); },
      "[optim.softmax_cross_entropy_with_integer_labels] labels i32[5] do not match logits f32[4,5] "
      "with class axis (1,): labels must have logits' shape without the class axis, i32[4]");
  expect_error<jx::DTypeError>(
      [&] { optim::softmax_cross_entropy_with_integer_labels(logits, jnp::zeros({4})); },
      "[optim.softmax_cross_entropy_with_integer_labels] labels must be integer class ids, got "
      "f32[4]; for one-hot or probability labels use optim::softmax_cross_entropy");
  expect_error<jx::DTypeError>(
      [&] { optim::sigmoid_binary_cross_entropy(jnp::zeros({3}, DType::Int32), jnp::zeros({3})); },
      "[optim.sigmoid_binary_cross_entropy] logits must be floating-point, got i32[3]");
  expect_error<jx::IndexError>([&] { optim::softmax_cross_entropy(logits, logits, 2); },
                               "[optim.softmax_cross_entropy] axis 2 is out of bounds for f32[4,5]");
  expect_error<jx::ShapeError>(
      [&] { optim::squared_error(jnp::zeros({3}), jnp::zeros({3, 1})); },
      "[optim.squared_error] predictions f32[3] and targets f32[3,1] must have the same shape "
      "(Optax does not broadcast here); reshape targets, e.g. targets.reshape(predictions.shape())");
  expect_error<jx::ShapeError>([&] { optim::l2_loss(jnp::zeros({3}), jnp::zeros({2})); },
                               "[optim.l2_loss] predictions f32[3] and targets f32[2]");
  expect_error<jx::ShapeError>([&] { optim::huber_loss(jnp::zeros({3}), jnp::zeros({2})); },
                               "[optim.huber_loss] predictions f32[3] and targets f32[2] do not broadcast");
  expect_error<jx::ShapeError>([&] { optim::cosine_similarity(jnp::zeros({2, 3}), jnp::zeros({2, 4})); },
                               "[optim.cosine_similarity] predictions f32[2,3] and targets f32[2,4]");
  expect_error<jx::ShapeError>([&] { optim::kl_divergence(jnp::zeros({2, 3}), jnp::zeros({3, 2})); },
                               "[optim.kl_divergence] log_predictions f32[2,3] and targets f32[3,2]");
  const Array lp = jnp::zeros({2, 6});
  const Array labels = jnp::zeros({2, 3}, DType::Int32);
  expect_error<jx::ShapeError>(
      [&] { optim::ctc_loss(jnp::zeros({2, 6}), lp, labels, jnp::zeros({2, 3})); },
      "[optim.ctc_loss] logits must be [batch, time, classes], got f32[2,6]");
  expect_error<jx::ShapeError>(
      [&] { optim::ctc_loss(jnp::zeros({2, 6, 4}), jnp::zeros({2, 5}), labels, jnp::zeros({2, 3})); },
      "[optim.ctc_loss] logit_paddings f32[2,5] must be [batch, time] = [2,6] for logits f32[2,6,4]");
  expect_error<jx::ShapeError>(
      [&] { optim::ctc_loss(jnp::zeros({2, 6, 4}), lp, labels, jnp::zeros({2, 2})); },
      "[optim.ctc_loss] label_paddings f32[2,2] must have labels' shape i32[2,3]");
  expect_error<jx::ShapeError>(
      [&] { optim::ctc_loss(jnp::zeros({2, 6, 4}), lp, jnp::zeros({3, 3}, DType::Int32), jnp::zeros({3, 3})); },
      "[optim.ctc_loss] labels i32[3,3] has batch size 3 but logits f32[2,6,4] has 2");
  expect_error<jx::ValueError>(
      [&] { optim::ctc_loss(jnp::zeros({2, 6, 4}), lp, labels, jnp::zeros({2, 3}), 4); },
      "[optim.ctc_loss] blank_id 4 is not a class of f32[2,6,4] (4 classes); use 0..3");
}

}  // namespace
