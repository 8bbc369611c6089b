// Checkpoints other tools can read and write: a checkpoint written by Python from the format's
// spec (tests/golden/gen_checkpoint.py, NumPy + json + struct) restores in jx with the values
// of its formulas; a checkpoint jx writes reads in Python with NumPy alone
// (tests/golden/read_checkpoint_numpy.py) to the same bytes.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "checkpoint_testing.h"

namespace {

namespace ocp = jx::ckpt;
namespace jnp = jx::numpy;
using ckpt_testing::bytes_of;
using ckpt_testing::expect_identical;
using ckpt_testing::pattern;
using ckpt_testing::TempDir;
using jx::Array;
using jx::DType;
using jx::Tree;

struct PyTarget {
  std::map<std::string, Tree> params;
  std::tuple<std::map<std::string, Array>, jx::None> opt_state;
  Array mask, ids;
  int64_t epoch = 0;
  std::string name;
  double lr = 0;
};
JX_PYTREE(PyTarget, params, opt_state, mask, ids, epoch, name, lr)

std::string source_dir() { return std::string(JX_TEST_DATA_DIR) + "/.."; }

TEST(CheckpointInterop, PythonWrittenCheckpointRestores) {
  std::string path = std::string(JX_TEST_DATA_DIR) + "/checkpoint/python_ckpt";
  Tree t = ocp::restore(path);
  const Array& kernel = t["params"]["Dense_0"]["kernel"].array();
  ASSERT_EQ(kernel.dtype(), DType::Float32);
  ASSERT_EQ(kernel.shape(), jx::Shape({3, 2}));
  auto k = kernel.to_vector<float>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(k[size_t(i)], 0.25f * float(i) - 0.5f);
  const Array& bias = t["params"]["Dense_0"]["bias"].array();
  EXPECT_EQ(bias.dtype(), DType::Float16);
  EXPECT_EQ(bias.astype(DType::Float32).to_vector<float>(), (std::vector<float>{0.5f, 1.5f}));
  Array emb = t["params"]["emb"].array();
  EXPECT_EQ(emb.dtype(), DType::BFloat16);
  EXPECT_EQ(emb.astype(DType::Float32).to_vector<float>(), (std::vector<float>{-1.5f, -0.5f, 0.5f, 1.5f}));
  EXPECT_EQ(t["opt_state"][0]["count"].array().item<int32_t>(), 7);
  EXPECT_EQ(t["opt_state"][0]["mu"].array().shape(), jx::Shape({0}));
  EXPECT_TRUE(t["opt_state"][1].is_none());
  EXPECT_EQ(t["mask"].array().to_vector<bool>(), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(t["ids"].array().to_vector<uint64_t>(),
            (std::vector<uint64_t>{uint64_t(1) << 63, (uint64_t(1) << 63) + 1}));
  EXPECT_EQ(t["epoch"].static_value().as_int(), 3);
  EXPECT_EQ(t["name"].static_value().as_string(), "mlp");
  EXPECT_EQ(t["lr"].static_value().as_float(), 0.001);

  // Into a typed target of the same structure (a std::tuple where Python wrote a tuple).
  PyTarget target;
  target.params = {{"Dense_0", Tree{{"kernel", jnp::zeros({3, 2})}, {"bias", jnp::zeros({2}, DType::Float16)}}},
                   {"emb", Tree(jnp::zeros({2, 2}, DType::BFloat16))}};
  std::get<0>(target.opt_state) = {{"count", jnp::zeros({}, DType::Int32)}, {"mu", jnp::zeros({0}, DType::Float64)}};
  target.mask = jnp::zeros({4}, DType::Bool);
  target.ids = jnp::zeros({2}, DType::UInt64);
  PyTarget typed = ocp::restore(path, target);
  EXPECT_EQ(typed.epoch, 3);
  EXPECT_EQ(typed.name, "mlp");
  EXPECT_EQ(typed.lr, 0.001);
  expect_identical(typed.params.at("Dense_0")["kernel"].array(), kernel);
  EXPECT_EQ(std::get<0>(typed.opt_state).at("count").item<int32_t>(), 7);
  expect_identical(typed.ids, t["ids"].array());
}

bool python_with_numpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

TEST(CheckpointInterop, NumpyAloneReadsWhatJxWrites) {
  if (!python_with_numpy())
    GTEST_SKIP() << "/usr/bin/python3 with NumPy is not installed (scripts/install-deps installs it)";
  TempDir dir;
  Tree t;
  for (int d = 0; d < jx::kNumDTypes; ++d)
    t["by_dtype"][jx::dtype_name(DType(d))] = pattern(DType(d), {2, 3}, d);
  t["nested"] = Tree::list({Tree(pattern(DType::Float32, {})), Tree(pattern(DType::Int64, {0, 4}))});
  t["epoch"] = Tree::static_value(jx::tree::StaticValue::integer(5));
  ocp::save(dir / "ckpt", t);
  std::string cmd = "/usr/bin/python3 " + source_dir() + "/golden/read_checkpoint_numpy.py " +
                    (dir / "ckpt") + " " + (dir / "out");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream manifest(dir / "out/manifest.txt");
  std::string line;
  Tree back = ocp::restore(dir / "ckpt");
  int n = 0;
  while (std::getline(manifest, line)) {
    std::istringstream in(line);
    std::string k, name, dtype, shape;
    in >> k >> name >> dtype >> shape;
    // name is the key path joined by '/': find the leaf it names.
    const Tree* node = &back;
    std::stringstream parts(name);
    std::string part;
    while (std::getline(parts, part, '/'))
      node = node->is_list() ? &(*node)[std::stoi(part)] : &(*node)[part];
    const Array& mine = node->array();
    Array theirs = jnp::load(dir / ("out/" + k + ".npy"));
    EXPECT_EQ(dtype, jx::dtype_name(mine.dtype())) << name;
    EXPECT_EQ(theirs.shape(), mine.shape()) << name;
    EXPECT_EQ(bytes_of(theirs), bytes_of(mine)) << name;
    ++n;
  }
  EXPECT_EQ(n, jx::kNumDTypes + 2);
}

}  // namespace
