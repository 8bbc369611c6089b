// jx::data: IDX reading (plain and gzip, every type code, every malformed-file error), IDX
// writing, Fashion-MNIST against facts read by NumPy (tests/golden/gen_data.py), and batches.
// IDX files are written byte by byte here, following the format description, into a temp dir.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "jx/data.h"
#include "jx/jx.h"
#include "testing/expect_error.h"
#include "testing/golden.h"

namespace jnp = jx::numpy;
namespace fs = std::filesystem;
using jx::Array;
using Bytes = std::vector<unsigned char>;

#include "golden/data_golden.inc"

namespace {

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("jx_idx_test_") + std::to_string(getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const Bytes& b) {
    std::string p = (dir_ / name).string();
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    return p;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// A gzip image of `raw` (zlib's deflate with a gzip wrapper: windowBits 15 + 16).
Bytes gzip(const Bytes& raw) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&s, uLong(raw.size())) + 32);
  s.next_in = const_cast<unsigned char*>(raw.data());
  s.avail_in = unsigned(raw.size());
  s.next_out = out.data();
  s.avail_out = unsigned(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// A uint8 IDX file of shape [2, 3, 4] holding 0..23, as the format description lays it out.
Bytes u8_2x3x4() {
  Bytes b = {0, 0, 0x08, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4};
  for (int i = 0; i < 24; ++i) b.push_back(uint8_t(i));
  return b;
}

template <class T>
std::vector<T> values(const Array& a) {
  return a.to_vector<T>();
}

using jx::testing::expect_error;

TEST_F(IdxTest, ReadsUint8Plain) {
  Array a = jx::data::load_idx(write("a-idx3-ubyte", u8_2x3x4()));
  EXPECT_EQ(a.dtype(), jx::DType::UInt8);
  EXPECT_EQ(a.shape(), (jx::Shape{2, 3, 4}));
  std::vector<int> expect(24);
  for (int i = 0; i < 24; ++i) expect[size_t(i)] = i;
  EXPECT_EQ(values<int32_t>(a.reshape({-1})), std::vector<int32_t>(expect.begin(), expect.end()));
}

TEST_F(IdxTest, ReadsGzipWhateverTheName) {
  Bytes gz = gzip(u8_2x3x4());
  ASSERT_EQ(gz[0], 0x1f);  // the gzip magic: the reader goes by content, not by name
  for (const char* name : {"a-idx3-ubyte.gz", "no-extension"}) {
    Array a = jx::data::load_idx(write(name, gz));
    EXPECT_EQ(a.shape(), (jx::Shape{2, 3, 4}));
    EXPECT_EQ(values<int32_t>(a(1, 2)), (std::vector<int32_t>{20, 21, 22, 23}));
  }
}

TEST_F(IdxTest, ReadsLabelsAndZeroSizes) {
  Array labels = jx::data::load_idx(write("l", {0, 0, 0x08, 1, 0, 0, 0, 3, 9, 0, 255}));
  EXPECT_EQ(labels.shape(), (jx::Shape{3}));
  EXPECT_EQ(values<int32_t>(labels), (std::vector<int32_t>{9, 0, 255}));
  Array empty = jx::data::load_idx(write("e", {0, 0, 0x08, 2, 0, 0, 0, 0, 0, 0, 0, 5}));
  EXPECT_EQ(empty.shape(), (jx::Shape{0, 5}));
}

// Multi-byte types are big-endian in the file; the values are hand-encoded.
TEST_F(IdxTest, ReadsEveryTypeCodeBigEndian) {
  Array i8 = jx::data::load_idx(write("i8", {0, 0, 0x09, 1, 0, 0, 0, 2, 0xFF, 0x80}));
  EXPECT_EQ(i8.dtype(), jx::DType::Int8);
  EXPECT_EQ(values<int32_t>(i8), (std::vector<int32_t>{-1, -128}));

  Array i16 = jx::data::load_idx(write("i16", {0, 0, 0x0B, 1, 0, 0, 0, 2, 0x01, 0x02, 0xFF, 0xFE}));
  EXPECT_EQ(i16.dtype(), jx::DType::Int16);
  EXPECT_EQ(values<int32_t>(i16), (std::vector<int32_t>{258, -2}));

  Array i32 = jx::data::load_idx(
      write("i32", {0, 0, 0x0C, 1, 0, 0, 0, 2, 0x01, 0x02, 0x03, 0x04, 0xFF, 0xFF, 0xFF, 0xFE}));
  EXPECT_EQ(i32.dtype(), jx::DType::Int32);
  EXPECT_EQ(values<int32_t>(i32), (std::vector<int32_t>{16909060, -2}));

  // 1.5f = 0x3FC00000, -2.0f = 0xC0000000.
  Array f32 = jx::data::load_idx(
      write("f32", {0, 0, 0x0D, 1, 0, 0, 0, 2, 0x3F, 0xC0, 0, 0, 0xC0, 0, 0, 0}));
  EXPECT_EQ(f32.dtype(), jx::DType::Float32);
  EXPECT_EQ(values<float>(f32), (std::vector<float>{1.5f, -2.0f}));

  // -0.25 = 0xBFD0000000000000.
  Array f64 = jx::data::load_idx(write("f64", {0, 0, 0x0E, 1, 0, 0, 0, 1, 0xBF, 0xD0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(f64.dtype(), jx::DType::Float64);
  EXPECT_EQ(values<double>(f64), (std::vector<double>{-0.25}));
}

TEST_F(IdxTest, MissingFile) {
  std::string p = path("nope-idx1-ubyte.gz");
  expect_error<jx::IOError>([&] { jx::data::load_idx(p); }, {"[load_idx] '" + p + "'", "cannot be opened", "No such file"});
}

TEST_F(IdxTest, BadMagic) {
  Bytes b = u8_2x3x4();
  b[0] = 0x93;  // e.g. an .npy file
  std::string p = write("bad", b);
  expect_error<jx::IOError>([&] { jx::data::load_idx(p); },
               {"[load_idx] '" + p + "'", "is not an IDX file", "magic number 0x93000803"});
  expect_error<jx::IOError>([&] { jx::data::load_idx(write("unknown_type", {0, 0, 0x0A, 1, 0, 0, 0, 1, 7})); },
               {"unknown IDX type code 0xa"});
  expect_error<jx::IOError>([&] { jx::data::load_idx(write("tiny", {0, 0, 8})); },
               {"too short to be an IDX file (3 bytes"});
}

TEST_F(IdxTest, TruncatedPlainFile) {
  Bytes b = u8_2x3x4();
  b.resize(b.size() - 4);
  std::string p = write("cut", b);
  expect_error<jx::IOError>([&] { jx::data::load_idx(p); },
               {"[load_idx] '" + p + "' is truncated", "needs 24 bytes for shape (2, 3, 4)", "only 20 remain"});
  // Cut inside the dimension sizes.
  expect_error<jx::IOError>([&] { jx::data::load_idx(write("cut_dims", {0, 0, 8, 3, 0, 0, 0, 2, 0, 0})); },
               {"is truncated: the sizes of its 3 dimensions needs 12 bytes, only 6 remain"});
}

TEST_F(IdxTest, TruncatedAndCorruptGzip) {
  Bytes gz = gzip(u8_2x3x4());
  Bytes cut(gz.begin(), gz.end() - 6);  // loses part of the CRC-32 / size trailer
  expect_error<jx::IOError>([&] { jx::data::load_idx(write("cut.gz", cut)); },
               {"is truncated: its gzip stream ends before the end of the compressed data"});
  Bytes half(gz.begin(), gz.begin() + 14);  // inside the deflate data
  expect_error<jx::IOError>([&] { jx::data::load_idx(write("half.gz", half)); }, {"is truncated"});
  Bytes bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0xFF;  // first byte of the CRC-32
  expect_error<jx::IOError>([&] { jx::data::load_idx(write("crc.gz", bad_crc)); },
               {"has corrupt gzip data (zlib: incorrect data check)"});
}

TEST_F(IdxTest, BytesAfterTheData) {
  Bytes b = u8_2x3x4();
  b.push_back(0);
  expect_error<jx::IOError>([&] { jx::data::load_idx(write("long", b)); },
               {"has bytes after the data of shape (2, 3, 4)"});
  expect_error<jx::IOError>([&] { jx::data::load_idx(write("long.gz", gzip(b))); }, {"has bytes after the data"});
}

TEST_F(IdxTest, SaveWritesTheFormatByteForByte) {
  Array a = jnp::arange(24).astype(jx::DType::UInt8).reshape({2, 3, 4});
  std::string p = path("s-idx3-ubyte");
  jx::data::save_idx(p, a);
  std::ifstream f(p, std::ios::binary);
  Bytes written((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, u8_2x3x4());

  Array i16 = jnp::array<int16_t>({258, -2});
  std::string q = path("s16");
  jx::data::save_idx(q, i16);
  std::ifstream g(q, std::ios::binary);
  Bytes w16((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  EXPECT_EQ(w16, (Bytes{0, 0, 0x0B, 1, 0, 0, 0, 2, 0x01, 0x02, 0xFF, 0xFE}));
}

TEST_F(IdxTest, SaveCompressedRoundTrips) {
  Array f = jnp::array<float>({1.5f, -2.0f, 0.25f, 3.0f, 1e-3f, -7.0f}).reshape({3, 2});
  std::string p = path("f.gz");
  jx::data::save_idx(p, f, /*compress=*/true);
  std::ifstream in(p, std::ios::binary);
  EXPECT_EQ(in.get(), 0x1f);
  EXPECT_EQ(in.get(), 0x8b);
  Array back = jx::data::load_idx(p);
  EXPECT_EQ(back.shape(), (jx::Shape{3, 2}));
  EXPECT_EQ(values<float>(back.reshape({-1})), values<float>(f.reshape({-1})));

  expect_error<jx::DTypeError>([&] { jx::data::save_idx(path("b"), jnp::array<bool>({true})); },
                               {"[save_idx] IDX files hold uint8", "not bool"});
}

TEST(FashionMnist, MatchesNumPyReading) {
  if (!fs::exists(jx::data::kFashionMnistDir))
    GTEST_SKIP() << "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)";
  jx::data::ImageDataset ds = jx::data::load_fashion_mnist();
  EXPECT_EQ(ds.train_images.shape(), (jx::Shape{60000, 28, 28}));
  EXPECT_EQ(ds.train_labels.shape(), (jx::Shape{60000}));
  EXPECT_EQ(ds.test_images.shape(), (jx::Shape{10000, 28, 28}));
  EXPECT_EQ(ds.test_labels.shape(), (jx::Shape{10000}));
  EXPECT_EQ(ds.train_images.dtype(), jx::DType::UInt8);
  using jx::testing::expect_named_golden;
  const auto& g = kFashionMnistGolden;
  expect_named_golden(g, "train_labels_first10", ds.train_labels(jx::slice(0, 10)));
  expect_named_golden(g, "test_labels_last10", ds.test_labels(jx::slice(-10, jx::none)));
  Array classes = jnp::arange(10);
  auto counts = [&](const Array& y) {
    return jnp::sum((y.astype(jx::DType::Int32).reshape({-1, 1}) == classes).astype(jx::DType::Int32), 0);
  };
  expect_named_golden(g, "train_label_counts", counts(ds.train_labels));
  expect_named_golden(g, "test_label_counts", counts(ds.test_labels));
  expect_named_golden(g, "train_image0_row14", ds.train_images(0, 14));
  expect_named_golden(g, "test_image9999_row20", ds.test_images(9999, 20));
  expect_named_golden(g, "train_image_sums_first5",
                      jnp::sum(ds.train_images(jx::slice(0, 5)).astype(jx::DType::Int32).reshape({5, -1}), 1));
}

TEST_F(IdxTest, FashionMnistDirectoryErrors) {
  std::string want = (dir_ / "train-images-idx3-ubyte.gz").string();
  expect_error<jx::IOError>([&] { jx::data::load_fashion_mnist(dir_.string()); },
               {"[load_fashion_mnist] '" + want + "' does not exist", "dataset-fashion-mnist"});
  // Plain (uncompressed) files are found too; labels that disagree with images are an error.
  Bytes images = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 5, 6};
  write("train-images-idx3-ubyte", images);
  write("train-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, 2, 1, 2});
  write("t10k-images-idx3-ubyte.gz", gzip(images));
  write("t10k-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3});
  expect_error<jx::ValueError>([&] { jx::data::load_fashion_mnist(dir_.string()); },
                               {"t10k-labels-idx1-ubyte' labels u8[3]", "images u8[2,1,1]"});
  write("t10k-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, 2, 7, 8});
  jx::data::ImageDataset ds = jx::data::load_fashion_mnist(dir_.string());
  EXPECT_EQ(values<int32_t>(ds.test_images.reshape({-1})), (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(values<int32_t>(ds.test_labels), (std::vector<int32_t>{7, 8}));
}

// ---- batches ----

// x rows are [i, i] and y is 10 * i, so a batch shows which rows it took and that x and y stay paired.
struct Toy {
  Array x = jnp::stack({jnp::arange(10), jnp::arange(10)}, 1);
  Array y = jnp::arange(10) * 10;
};

TEST(Batches, InOrderWithAShortLastBatch) {
  Toy t;
  auto b = jx::data::batches(t.x, t.y, 4);
  ASSERT_EQ(b.size(), 3);
  std::vector<std::vector<int32_t>> ys;
  for (auto [xb, yb] : b) {
    EXPECT_EQ(xb.shape()[1], 2);
    ys.push_back(values<int32_t>(yb));
  }
  EXPECT_EQ(ys, (std::vector<std::vector<int32_t>>{{0, 10, 20, 30}, {40, 50, 60, 70}, {80, 90}}));
  EXPECT_EQ(values<int32_t>(b[2].first.reshape({-1})), (std::vector<int32_t>{8, 8, 9, 9}));
  EXPECT_EQ(jx::data::batches(t.x, t.y, 4, {.drop_last = true}).size(), 2);
  EXPECT_EQ(jx::data::batches(t.x, t.y, 5, {.drop_last = true}).size(), 2);
  EXPECT_EQ(jx::data::batches(t.x, t.y, 11, {.drop_last = true}).size(), 0);
  EXPECT_EQ(jx::data::batches(t.x, t.y, 11).size(), 1);
}

TEST(Batches, ShuffledByKeyKeepsPairsAndCoversEveryRow) {
  Toy t;
  Array key = jx::random::PRNGKey(0);
  auto b = jx::data::batches(t.x, t.y, 3, key);
  ASSERT_EQ(b.size(), 4);
  std::vector<int32_t> order;
  for (auto [xb, yb] : b) {
    std::vector<int32_t> xs = values<int32_t>(xb(jx::slice(), 0)), ys = values<int32_t>(yb);
    ASSERT_EQ(xs.size(), ys.size());
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ys[i], 10 * xs[i]);
    order.insert(order.end(), xs.begin(), xs.end());
  }
  std::vector<int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_NE(order, sorted);  // a fixed key whose permutation is not the identity
  // The order is jax.random.permutation(key, 10), batch after batch.
  EXPECT_EQ(order, values<int32_t>(jx::random::permutation(key, 10)));
  // Same key, same order; another key, another order.
  auto again = jx::data::batches(t.x, t.y, 3, key);
  EXPECT_EQ(values<int32_t>(again[1].second), values<int32_t>(b[1].second));
  std::vector<int32_t> other;
  for (auto [xb, yb] : jx::data::batches(t.x, t.y, 3, jx::random::PRNGKey(1)))
    for (int32_t v : values<int32_t>(yb)) other.push_back(v / 10);
  EXPECT_NE(other, order);
}

TEST(Batches, DropLastWhenShuffledDropsTheTailOfThePermutation) {
  Toy t;
  Array key = jx::random::PRNGKey(7);
  auto b = jx::data::batches(t.x, t.y, 4, key, {.drop_last = true});
  ASSERT_EQ(b.size(), 2);
  std::vector<int32_t> perm = values<int32_t>(jx::random::permutation(key, 10));
  std::vector<int32_t> got = values<int32_t>(jnp::concatenate({b[0].second, b[1].second}) / 10);
  EXPECT_EQ(got, std::vector<int32_t>(perm.begin(), perm.begin() + 8));
}

TEST(Batches, Errors) {
  Toy t;
  expect_error<jx::ValueError>([&] { jx::data::batches(t.x, t.y, 0); }, {"[batches] batch_size must be at least 1, got 0"});
  expect_error<jx::ValueError>([&] { jx::data::batches(t.x, jnp::arange(9), 2, jx::random::PRNGKey(0)); },
                               {"[batches] x and y must have as many rows", "x is i32[10,2], y is i32[9]"});
  expect_error<jx::ValueError>([&] { jx::data::batches(Array(3), t.y, 2); }, {"need a leading axis of rows"});
  expect_error<jx::IndexError>([&] { jx::data::batches(t.x, t.y, 4)[3]; }, {"[batches] batch 3 is out of range: there are 3"});
}

}  // namespace
