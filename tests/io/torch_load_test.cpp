// jx::io::load_torch_state_dict / save_torch_state_dict: files written by torch.save (PyTorch
// 1.13, tests/golden/gen_torch_state_dict.py) load with the values spelled out here for every
// storage dtype, strided, offset, shared, 0-d, empty and expanded tensors, with pickle
// protocols 2 and 4; pickles asking for any other global (os.system, eval, subprocess.Popen;
// GLOBAL, STACK_GLOBAL, REDUCE, NEWOBJ) are refused without running anything; malformed
// archives throw IOError naming the problem; jx's own files round-trip exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "io/torch_common.h"
#include "jx/numpy.h"
#include "support/str.h"

namespace {

using namespace torch_test;
using jx::DType;
namespace jio = jx::io;

std::map<std::string, Array> as_map(const jio::StateDict& sd) {
  std::map<std::string, Array> m;
  for (const auto& [k, v] : sd) m.emplace(k, v);
  return m;
}

void expect_values(const Array& a, DType dtype, const jx::Shape& shape, const std::vector<double>& want,
                   const std::string& name) {
  SCOPED_TRACE(name);
  EXPECT_EQ(a.dtype(), dtype);
  EXPECT_EQ(a.shape(), shape);
  std::vector<double> got = a.to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

void expect_dtypes_file(const jio::StateDict& sd) {
  std::vector<std::string> order;
  for (const auto& [k, v] : sd) order.push_back(k);
  EXPECT_EQ(order, (std::vector<std::string>{"f32", "f64", "f16", "bf16", "i64", "i32", "i16", "i8",
                                             "u8", "b", "transposed", "stepped", "shared_a",
                                             "shared_b", "scalar", "empty", "expanded", "param"}));
  auto m = as_map(sd);
  expect_values(m["f32"], DType::Float32, {2, 3}, {1.5, -2.25, 3.0, 0.125, -0.0, double(1e30f)}, "f32");
  EXPECT_TRUE(std::signbit(m["f32"].to_vector<float>()[4]));
  expect_values(m["f64"], DType::Float64, {3}, {0.1, -1e300, 2.5}, "f64");
  expect_values(m["f16"], DType::Float16, {4}, {1.0, -2.5, 65504.0, std::ldexp(1.0, -14)}, "f16");
  expect_values(m["bf16"], DType::BFloat16, {4}, {1.0, -3.5, 256.0, 0.0078125}, "bf16");
  EXPECT_EQ(m["i64"].to_vector<int64_t>(),
            (std::vector<int64_t>{-(int64_t(1) << 62), 0, (int64_t(1) << 40) + 3}));
  EXPECT_EQ(m["i64"].dtype(), DType::Int64);
  expect_values(m["i32"], DType::Int32, {3}, {-2147483648.0, 7, 2147483647.0}, "i32");
  expect_values(m["i16"], DType::Int16, {3}, {-32768, 12, 32767}, "i16");
  expect_values(m["i8"], DType::Int8, {3}, {-128, 5, 127}, "i8");
  expect_values(m["u8"], DType::UInt8, {3}, {0, 200, 255}, "u8");
  expect_values(m["b"], DType::Bool, {3}, {1, 0, 1}, "b");
  // arange(12).view(3, 4).t(): element [i][j] = 4 j + i.
  expect_values(m["transposed"], DType::Float32, {4, 3}, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11},
                "transposed");
  // arange(20).view(4, 5)[::2, 1::2]
  expect_values(m["stepped"], DType::Int64, {2, 2}, {1, 3, 11, 13}, "stepped");
  expect_values(m["shared_a"], DType::Int32, {3}, {2, 3, 4}, "shared_a");
  expect_values(m["shared_b"], DType::Int32, {2, 3}, {4, 5, 6, 7, 8, 9}, "shared_b");
  expect_values(m["scalar"], DType::Float64, {}, {7.5}, "scalar");
  expect_values(m["empty"], DType::Float32, {0, 3}, {}, "empty");
  expect_values(m["expanded"], DType::Float32, {2, 3}, {1, 2, 3, 1, 2, 3}, "expanded");
  expect_values(m["param"], DType::Float32, {2}, {0.25, -0.5}, "param");
}

TEST(TorchLoad, EveryStorageDtypeAndViewLoadsWithItsValues) {
  expect_dtypes_file(jio::load_torch_state_dict(data_path("dtypes.pt")));
}

TEST(TorchLoad, PickleProtocol4LoadsTheSame) {  // FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL
  expect_dtypes_file(jio::load_torch_state_dict(data_path("dtypes_p4.pt")));
}

TEST(TorchLoad, ModelStateDictKeepsOrderShapesAndDtypes) {
  jio::StateDict sd = jio::load_torch_state_dict(data_path("cnn.pt"));
  std::string listing;
  for (const auto& [k, v] : sd) listing += k + " " + jx::type_str(v.dtype(), v.shape()) + "; ";
  EXPECT_EQ(listing,
            "conv.weight f32[4,3,3,3]; conv.bias f32[4]; bn.weight f32[4]; bn.bias f32[4]; "
            "bn.running_mean f32[4]; bn.running_var f32[4]; bn.num_batches_tracked i64[]; "
            "fc1.weight f32[16,64]; fc1.bias f32[16]; fc2.weight f32[5,16]; fc2.bias f32[5]; ");
  EXPECT_EQ(as_map(sd)["bn.num_batches_tracked"].item<int64_t>(), 3);  // three training forwards
}

// Each evil_*.pt would run `touch /tmp/jx_torch_pwned_<name>` under Python's pickle.
TEST(TorchLoad, RefusesPicklesThatAskForOtherGlobals) {
  struct Case {
    const char* file;
    const char* global;
    const char* marker;
  };
  for (const Case& c : {Case{"evil_os_system.pt", "'posix.system'", "os_system"},
                        Case{"evil_eval.pt", "'__builtin__.eval'", "eval"},
                        Case{"evil_popen.pt", "'commands.Popen'", "popen"},  // protocol 2's name
                        Case{"evil_p4.pt", "'posix.system'", "p4"}}) {
    std::string marker = std::string("/tmp/jx_torch_pwned_") + c.marker;
    std::filesystem::remove(marker);
    std::string err = error_of([&] { jio::load_torch_state_dict(data_path(c.file)); });
    EXPECT_NE(err.find(std::string("refused: its data.pkl asks for the global ") + c.global),
              std::string::npos)
        << err;
    EXPECT_NE(err.find(c.file), std::string::npos) << err;
    EXPECT_FALSE(std::filesystem::exists(marker)) << marker;
  }
}

TEST(TorchLoad, RefusesGlobalsHoweverTheyAreReached) {
  auto refused = [](const std::string& pickle, const std::string& global) {
    std::string err = error_of([&] { load_bytes(archive(pickle)); });
    EXPECT_NE(err.find("asks for the global '" + global + "'"), std::string::npos) << err;
  };
  // GLOBAL, then REDUCE of it.
  refused(Pickle().global("builtins", "eval").str("1+1").op(char(0x85)).op('R').done(), "builtins.eval");
  // STACK_GLOBAL (protocol 4) of os.system, with REDUCE.
  refused(Pickle().op(char(0x8c)).op(char(2)).raw("os").op(char(0x8c)).op(char(6)).raw("system")
              .op(char(0x93)).str("touch /tmp/x").op(char(0x85)).op('R').done(),
          "os.system");
  // Inside a state dict, after a valid tensor: refused before any storage is read (the
  // storage "0" is not even in the archive).
  refused(Pickle().ordered_dict().op('(').str("w").tensor("FloatStorage", "0", 2, 0, {2}, {1})
              .str("x").global("subprocess", "Popen").op(')').op('R').op('u').done(),
          "subprocess.Popen");
  // As the class of NEWOBJ, and as a persistent id's storage type.
  refused(Pickle().global("posix", "system").op(')').op(char(0x81)).done(), "posix.system");
  refused(Pickle().op('(').str("storage").global("torch", "QInt8Storage").str("0").str("cpu")
              .integer(1).op('t').op('Q').done(),
          "torch.QInt8Storage");
  refused(Pickle().global("torch._utils", "_rebuild_qtensor").done(), "torch._utils._rebuild_qtensor");
  refused(Pickle().global("__torch__.Net", "Net").done(), "__torch__.Net.Net");
  // Unsupported opcodes that would call or import (INST, OBJ, EXT1) are refused too.
  for (char op : {'i', 'o', char(0x82)}) {
    std::string err = error_of([&] { load_bytes(archive(Pickle().op('(').op(op).raw("a\nb\n").done())); });
    EXPECT_NE(err.find("is not one a torch.save state dict uses"), std::string::npos) << err;
  }
}

TEST(TorchLoad, HandMadeStateDictWithSharedStorageAndParameter) {
  std::string p = Pickle()
                      .ordered_dict()
                      .op('(')
                      .str("a")
                      .tensor("FloatStorage", "k", 6, 1, {2, 2}, {1, 2})  // [[s1, s3], [s2, s4]]
                      .str("b")
                      .global("torch._utils", "_rebuild_parameter")
                      .op('(')
                      .tensor("FloatStorage", "k", 6, 4, {2}, {1})
                      .op(char(0x88))
                      .ordered_dict()
                      .op('t')
                      .op('R')
                      .op('u')
                      .done();
  auto sd = load_bytes(archive(p, {{"k", float_bytes({0, 1, 2, 3, 4, 5})}}));
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_EQ(sd[0].second.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(sd[1].second.to_vector<float>(), (std::vector<float>{4, 5}));
}

TEST(TorchLoad, MalformedFilesThrowIOErrorNamingTheProblem) {
  auto expect_io = [](const std::string& bytes, const std::string& needle) {
    try {
      load_bytes(bytes);
      ADD_FAILURE() << "loaded; expected an IOError with: " << needle;
    } catch (const jx::IOError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto one = [](const std::string& type, int64_t numel, int64_t offset, std::vector<int64_t> sizes,
                std::vector<int64_t> strides) {
    return Pickle().ordered_dict().op('(').str("w").tensor(type, "0", numel, offset, sizes, strides)
        .op('u').done();
  };
  std::string f4 = float_bytes({1, 2, 3, 4});
  expect_io(std::string("\x80\x02}q\x00.", 6), "legacy (pre-1.6) serialization format");
  expect_io("hello", "is not a zip archive");
  expect_io(archive(one("FloatStorage", 4, 0, {4}, {1})), "lacks the member 'archive/data/0'");
  expect_io(archive(one("FloatStorage", 5, 0, {4}, {1}), {{"0", f4}}), "holds 16 bytes");
  expect_io(archive(one("FloatStorage", 4, 1, {4}, {1}), {{"0", f4}}), "reaches outside its storage");
  expect_io(archive(one("FloatStorage", 4, 0, {2, 2}, {3, 1}), {{"0", f4}}), "reaches outside");
  expect_io(archive(one("FloatStorage", 4, 0, {int64_t(1) << 40}, {1}), {{"0", f4}}), "reaches outside");
  expect_io(archive(one("FloatStorage", 4, 0, {int64_t(1) << 40, int64_t(1) << 40}, {0, 0}), {{"0", f4}}),
            "reaches outside");  // the element count overflows 64 bits
  expect_io(archive(one("FloatStorage", 4, 0, {int64_t(1) << 40}, {0}), {{"0", f4}}),
            "over the limit");  // an expanded tensor of 4 TiB
  expect_io(archive(one("FloatStorage", 4, 0, {-1}, {1}), {{"0", f4}}), "negative values");
  expect_io(archive(one("BoolStorage", 2, 0, {2}, {1}), {{"0", std::string("\x01\x02", 2)}}),
            "holds the byte 2");
  expect_io(archive(Pickle().str("x").done()), "holds a str, not a state dict");
  expect_io(archive(Pickle().op('}').str("epoch").op('K').op(char(3)).op('s').done()),
            "an entry 'epoch' that is an int, not a tensor");
  expect_io(archive(Pickle().op(char(0x80)).op(char(6)).done()), "pickle protocol 6");
  std::string no_pkl = jx::detail::torch_archive_of("", {}, "x");
  no_pkl.replace(no_pkl.find("x/data.pkl"), 10, "x/other.pk");
  no_pkl.replace(no_pkl.rfind("x/data.pkl"), 10, "x/other.pk");
  expect_io(no_pkl, "without a data.pkl");
  // A deflated member (a re-zipped archive).
  std::string deflated = archive(Pickle().op('}').done());
  size_t cd = deflated.rfind(std::string("PK\x01\x02", 4));
  deflated[cd + 10] = 8;
  expect_io(deflated, "is compressed (method 8)");
}

TEST(TorchSave, RoundTripsEveryDtypeExactly) {
  ScratchDir dir;
  jio::StateDict sd = jio::load_torch_state_dict(data_path("dtypes.pt"));
  jio::save_torch_state_dict(dir / "out.pt", sd);
  jio::StateDict back = jio::load_torch_state_dict(dir / "out.pt");
  ASSERT_EQ(back.size(), sd.size());
  for (size_t i = 0; i < sd.size(); ++i) {
    SCOPED_TRACE(sd[i].first);
    EXPECT_EQ(back[i].first, sd[i].first);
    EXPECT_EQ(back[i].second.dtype(), sd[i].second.dtype());
    EXPECT_EQ(back[i].second.shape(), sd[i].second.shape());
    EXPECT_EQ(0, std::memcmp(jx::detail::raw_data(back[i].second), jx::detail::raw_data(sd[i].second),
                             sd[i].second.nbytes()));
  }
  // Only the file itself is left: the temporary file was renamed.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  // Every member's data is 64-byte aligned, as torch.save aligns them.
  std::string bytes = read_bytes(dir / "out.pt");
  jx::detail::ZipReader zip(bytes.data(), bytes.size(), "out.pt", "test");
  for (const auto& m : zip.members()) EXPECT_EQ(m.data_offset % 64, 0u) << m.name;
  EXPECT_NE(zip.find("archive/version"), nullptr);
}

TEST(TorchSave, Zip64RecordsRoundTrip) {
  jio::StateDict sd = jio::load_torch_state_dict(data_path("cnn.pt"));
  std::string bytes;
  jx::detail::write_torch_archive(
      sd, [&](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); }, "test",
      /*zip64_limit=*/0);
  jio::StateDict back = load_bytes(bytes);
  ASSERT_EQ(back.size(), sd.size());
  for (size_t i = 0; i < sd.size(); ++i)
    EXPECT_TRUE(bool(jx::numpy::array_equal(back[i].second, sd[i].second))) << sd[i].first;
}

TEST(TorchSave, RejectsWhatTorchCannotHold) {
  ScratchDir dir;
  Array u = jx::numpy::zeros({2}, DType::UInt32);
  EXPECT_THROW(jio::save_torch_state_dict(dir / "a.pt", {{"u", u}}), jx::ValueError);
  Array f = jx::numpy::zeros({2});
  EXPECT_THROW(jio::save_torch_state_dict(dir / "a.pt", {{"w", f}, {"w", f}}), jx::ValueError);
  EXPECT_TRUE(fs::is_empty(dir.path()));
  EXPECT_THROW(jio::save_torch_state_dict(dir / "missing/a.pt", {{"w", f}}), jx::IOError);
  EXPECT_THROW(jio::load_torch_state_dict(dir / "nothing.pt"), jx::IOError);
}

}  // namespace
