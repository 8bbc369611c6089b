// Mutation fuzzing of the checkpoint readers (tests/testing/fuzz.h): the tree description
// (tree.json), the arrays file inside a checkpoint, and the step description a manager reads
// when it opens. Every mutant either restores or throws a typed error naming the operation;
// crafted files with huge shapes or deep nesting fail fast without allocating.
#include <fstream>

#include "checkpoint_testing.h"
#include "testing/fuzz.h"

namespace {

namespace fs = std::filesystem;
namespace ocp = jx::ckpt;
using ckpt_testing::pattern;
using ckpt_testing::TempDir;
using jx::DType;
using jx::Tree;

Tree sample() {
  return Tree{{"params", {{"Dense_0", {{"kernel", pattern(DType::Float32, {3, 2})},
                                        {"bias", pattern(DType::BFloat16, {2})}}}}},
              {"opt", Tree::list({Tree(pattern(DType::Int32, {})), Tree(), Tree(2.5)})},
              {"epoch", Tree::static_value(jx::tree::StaticValue::integer(3))},
              {"name", Tree::static_value(jx::tree::StaticValue::string("mlp"))},
              {"lr", Tree::static_value(jx::tree::StaticValue::floating(1e-3))}};
}

std::string file_bytes(const std::string& path) { return jx::testing::read_file_bytes(path); }

TEST(CheckpointFuzz, TreeDescription) {
  TempDir dir;
  ocp::save(dir / "ckpt", sample());
  jx::testing::Fuzzer fuzzer({.op = "checkpoint.restore", .require_path = false,
                              .require_io_error = false, .file_name = "tree.json"});
  // The mutant is written as <temp>/tree.json beside an intact arrays file.
  fs::copy_file(dir / "ckpt/arrays.safetensors", fuzzer.temp_dir() + "/arrays.safetensors");
  Tree target = sample();
  auto read = [&](const std::string& path) {
    std::string ckpt = fs::path(path).parent_path();
    Tree t = ocp::restore(ckpt);
    ocp::restore(ckpt, target);
  };
  jx::testing::MutationOptions options;
  options.integer_regions = {{0, 0}};
  options.integer_alignment = 7;
  fuzzer.fuzz_file("tree.json", file_bytes(dir / "ckpt/tree.json"), read, options);
  EXPECT_EQ(fuzzer.report().failures, 0u) << fuzzer.summary();

  auto nested = [](int depth) {
    std::string s = "{\"format\":\"jx.checkpoint\",\"version\":1,\"tree\":";
    for (int i = 0; i < depth; ++i) s += "{\"list\":[";
    s += "{\"none\":null}";
    for (int i = 0; i < depth; ++i) s += "]}";
    return s + "}";
  };
  fuzzer.expect_file_error("100000 nested lists", nested(100000), read, "nesting is too deep");
  std::string huge = file_bytes(dir / "ckpt/tree.json");
  const std::string small = "\"shape\":[3,2]";
  huge.replace(huge.find(small), small.size(), "\"shape\":[4611686018427387904,2]");
  fuzzer.expect_file_error("kernel of shape [2^62, 2]", huge, read,
                           "holds \"params/Dense_0/kernel\" as f32[3,2]");
  std::cout << fuzzer.summary() << "\n";
}

TEST(CheckpointFuzz, ArraysFile) {
  TempDir dir;
  ocp::save(dir / "ckpt", sample());
  jx::testing::Fuzzer fuzzer({.op = "checkpoint.restore", .require_path = true,
                              .require_io_error = true, .file_name = "arrays.safetensors"});
  fs::copy_file(dir / "ckpt/tree.json", fuzzer.temp_dir() + "/tree.json");
  Tree target = sample();
  auto read = [&](const std::string& path) { ocp::restore(fs::path(path).parent_path(), target); };
  jx::testing::MutationOptions options;
  options.integer_regions = {{0, 16}};
  fuzzer.fuzz_file("arrays.safetensors", file_bytes(dir / "ckpt/arrays.safetensors"), read, options);
  EXPECT_EQ(fuzzer.report().failures, 0u) << fuzzer.summary();
  std::cout << fuzzer.summary() << "\n";
}

TEST(CheckpointFuzz, StepDescription) {
  TempDir dir;
  {
    ocp::CheckpointManager m(dir / "run", {.enable_async_checkpointing = false});
    m.save(1, sample(), ocp::Metrics{{"loss", 0.25}, {"accuracy", 0.875}});
  }
  jx::testing::Fuzzer fuzzer({.op = "CheckpointManager", .require_path = false,
                              .require_io_error = true, .file_name = "_CHECKPOINT_METADATA"});
  // Each mutant becomes step 1's description in a manager's directory, read when it opens.
  auto read = [&](const std::string& path) {
    fs::copy_file(path, dir / "run/1/_CHECKPOINT_METADATA", fs::copy_options::overwrite_existing);
    ocp::CheckpointManager m(dir / "run", {.read_only = true});
    m.metrics(1);
  };
  fuzzer.fuzz_file("_CHECKPOINT_METADATA", file_bytes(dir / "run/1/_CHECKPOINT_METADATA"), read);
  EXPECT_EQ(fuzzer.report().failures, 0u) << fuzzer.summary();
  std::cout << fuzzer.summary() << "\n";
}

}  // namespace
