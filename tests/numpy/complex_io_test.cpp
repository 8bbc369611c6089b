// complex64 / complex128 outside arithmetic: repr() / str() against NumPy's own output
// (goldens made by tests/golden/gen_complex_print.py), .npy / .npz files NumPy wrote (both byte
// orders, Fortran order, deflated members) and jx's own round trips, safetensors' C64, torch
// state dicts (ComplexFloatStorage / ComplexDoubleStorage), item<T>() / to_vector<T>()
// conversions to and from complex, and creation from C++ data.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/array_impl.h"
#include "jx/io.h"
#include "jx/numpy.h"
#include "jx/numpy/safetensors.h"
#include "testing/expect_error.h"
#include "testing/temp_dir.h"

namespace {

namespace jnp = jx::numpy;
using jx::Array;
using jx::DType;
using jx::testing::expect_error;
using jx::testing::TempDir;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

struct Opts {
  int precision;
  int64_t threshold;
  int edgeitems;
  int linewidth;
  bool suppress;
  char sign;
  const char* floatmode;
  const char* nanstr;
  const char* infstr;
};

struct PrintCase {
  const char* dtype;
  std::vector<int64_t> shape;
  const char* hex;
  bool arange;
  bool weak;
  Opts opts;
  const char* repr;
  const char* str;
};

struct NpyFile {
  const char* name;
  const char* hex;
};

struct NpyArray {
  const char* file;
  const char* member;  // "" for an .npy file
  const char* dtype;
  std::vector<int64_t> shape;
  const char* hex;  // C-order little-endian values
};

#define JX_PRINT_CASE(...) PrintCase{__VA_ARGS__},
#define JX_NPY_FILE(...)
#define JX_NPY_ARRAY(...)
const PrintCase kPrintCases[] = {
#include "golden/complex_print_golden.inc"
};
#undef JX_PRINT_CASE
#undef JX_NPY_FILE
#define JX_PRINT_CASE(...)
#define JX_NPY_FILE(...) NpyFile{__VA_ARGS__},
const NpyFile kNpyFiles[] = {
#include "golden/complex_print_golden.inc"
};
#undef JX_NPY_FILE
#undef JX_NPY_ARRAY
#define JX_NPY_FILE(...)
#define JX_NPY_ARRAY(...) NpyArray{__VA_ARGS__},
const NpyArray kNpyArrays[] = {
#include "golden/complex_print_golden.inc"
};
#undef JX_PRINT_CASE
#undef JX_NPY_FILE
#undef JX_NPY_ARRAY

std::string unhex(const std::string& h) {
  std::string r(h.size() / 2, '\0');
  for (size_t i = 0; i < r.size(); ++i) r[i] = char(std::stoi(h.substr(2 * i, 2), nullptr, 16));
  return r;
}

std::string hex_of(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string r;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<const unsigned char*>(p)[i];
    r.push_back(d[c >> 4]);
    r.push_back(d[c & 15]);
  }
  return r;
}
std::string hex_of(const Array& a) { return hex_of(jx::detail::raw_data(a), a.nbytes()); }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

Array from_hex(DType dt, const jx::Shape& shape, const std::string& hex, bool weak = false) {
  Array a = jx::detail::empty_array(shape, dt, weak);
  std::string b = unhex(hex);
  EXPECT_EQ(b.size(), a.nbytes());
  if (!b.empty()) std::memcpy(jx::detail::raw_data(a), b.data(), std::min(b.size(), a.nbytes()));
  return a;
}

// gen_complex_print.py's arange_c: element i is complex(i, -i / 2).
Array make(const PrintCase& c) {
  DType dt = jx::dtype_from_name(c.dtype);
  if (!c.arange) return from_hex(dt, jx::Shape(c.shape), c.hex, c.weak);
  Array a = jx::detail::empty_array(jx::Shape(c.shape), dt, c.weak);
  for (int64_t i = 0; i < a.size(); ++i) {
    if (dt == DType::Complex64)
      jx::detail::data<c64>(a)[i] = c64(float(i), -0.5f * float(i));
    else
      jx::detail::data<c128>(a)[i] = c128(double(i), -0.5 * double(i));
  }
  return a;
}

jnp::PrintOptions to_options(const Opts& o) {
  jnp::PrintOptions p;
  p.precision = o.precision;
  p.threshold = o.threshold;
  p.edgeitems = o.edgeitems;
  p.linewidth = o.linewidth;
  p.suppress = o.suppress;
  p.sign = o.sign;
  p.floatmode = o.floatmode;
  p.nanstr = o.nanstr;
  p.infstr = o.infstr;
  return p;
}

template <class T>
Array complex_array(std::vector<T> v, jx::Shape shape) {
  return jnp::array(v, shape);
}

}  // namespace

// ---- printing ---------------------------------------------------------------------------------

TEST(ComplexPrint, MatchesNumPyGoldens) {
  int n = 0;
  for (const PrintCase& c : kPrintCases) {
    Array a = make(c);
    jnp::printoptions scope(to_options(c.opts));
    EXPECT_EQ(a.repr(), c.repr) << "case " << n;
    EXPECT_EQ(jnp::array_str(a), c.str) << "case " << n;
    std::ostringstream os;
    os << a;
    EXPECT_EQ(os.str(), c.str) << "case " << n;
    ++n;
  }
  EXPECT_GT(n, 100);
}

TEST(ComplexPrint, HandWrittenExamples) {
  Array a = complex_array<c64>({{1, 2}, {3, -4.5f}}, {2});
  EXPECT_EQ(a.repr(), "Array([1.+2.j , 3.-4.5j], dtype=complex64)");
  EXPECT_EQ(jnp::array_str(a), "[1.+2.j  3.-4.5j]");
  Array s = complex_array<c128>({{0, -1}}, {});
  EXPECT_EQ(s.repr(), "Array(0.-1.j, dtype=complex128)");
  EXPECT_EQ(jnp::array_str(s), "-1j");
  // format_float_* take real floats only.
  EXPECT_THROW(jnp::format_float_positional(s), jx::ValueError);
}

// ---- .npy / .npz ------------------------------------------------------------------------------

TEST(ComplexNpy, LoadsWhatNumPyWrote) {
  TempDir dir;
  for (const NpyFile& f : kNpyFiles) write_bytes(dir / f.name, unhex(f.hex));
  int n = 0;
  for (const NpyArray& w : kNpyArrays) {
    SCOPED_TRACE(std::string(w.file) + " " + w.member);
    std::string path = dir / w.file;
    Array got = *w.member ? jnp::load_npz(path)[w.member] : jnp::load(path);
    EXPECT_EQ(got.dtype(), jx::dtype_from_name(w.dtype));
    EXPECT_EQ(got.shape(), jx::Shape(w.shape));
    EXPECT_EQ(hex_of(got), w.hex);
    ++n;
  }
  EXPECT_EQ(n, 14);
}

// jnp::save writes NumPy's bytes: '<c8' / '<c16' descr, same header and padding.
TEST(ComplexNpy, SaveWritesNumPysBytes) {
  TempDir dir;
  int n = 0;
  for (const NpyFile& f : kNpyFiles) {
    std::string name = f.name;
    if (name.find("_be") != std::string::npos || name.find("fortran") != std::string::npos ||
        name.find(".npz") != std::string::npos)
      continue;  // jx writes little-endian C order only
    SCOPED_TRACE(name);
    write_bytes(dir / "in.npy", unhex(f.hex));
    jnp::save(dir / "out.npy", jnp::load(dir / "in.npy"));
    EXPECT_EQ(hex_of(read_bytes(dir / "out.npy").data(), read_bytes(dir / "out.npy").size()),
              std::string(f.hex));
    ++n;
  }
  EXPECT_EQ(n, 4);
}

TEST(ComplexNpy, RoundTrips) {
  TempDir dir;
  const float fnan = std::numeric_limits<float>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Array a = complex_array<c64>({{1, 2}, {-0.0f, fnan}, {3e38f, -1e-45f}, {0, 0}, {5, 6}, {7, 8}},
                               {2, 3});
  Array b = complex_array<c128>({{1.0 / 3, -inf}, {1e-300, 2}}, {2, 1});
  Array s = complex_array<c128>({{-1, 0.5}}, {});
  Array e = complex_array<c64>({}, {0, 4});
  for (const Array& x : {a, b, s, e}) {
    jnp::save(dir / "x.npy", x);
    Array y = jnp::load(dir / "x.npy");
    EXPECT_EQ(y.dtype(), x.dtype());
    EXPECT_EQ(y.shape(), x.shape());
    EXPECT_EQ(hex_of(y), hex_of(x));
  }
  for (bool compressed : {false, true}) {
    std::vector<std::pair<std::string, Array>> arrays = {{"a", a}, {"b", b}, {"s", s}, {"e", e}};
    if (compressed)
      jnp::savez_compressed(dir / "z.npz", arrays);
    else
      jnp::savez(dir / "z.npz", arrays);
    jnp::NpzFile z = jnp::load_npz(dir / "z.npz");
    for (const auto& [k, x] : arrays) {
      EXPECT_EQ(z[k].dtype(), x.dtype()) << k;
      EXPECT_EQ(z[k].shape(), x.shape()) << k;
      EXPECT_EQ(hex_of(z[k]), hex_of(x)) << k;
    }
  }
}

TEST(ComplexNpy, ReadsTypeCodesAndNames) {
  // 'F' / 'D' (NumPy's type characters) and dtype names are read as the '<c8' / '<c16' descr.
  TempDir dir;
  for (const char* descr : {"<F", "<D", "complex64", "complex128"}) {
    std::string dict =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }\n";
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file.push_back(char(dict.size() & 0xff));
    file.push_back(char(dict.size() >> 8));
    file += dict;
    bool wide = descr[1] == 'D' || std::string(descr) == "complex128";
    if (wide) {
      c128 v(1.5, -2);
      file.append(reinterpret_cast<const char*>(&v), sizeof v);
    } else {
      c64 v(1.5f, -2);
      file.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    write_bytes(dir / "t.npy", file);
    Array x = jnp::load(dir / "t.npy");
    EXPECT_EQ(x.dtype(), wide ? DType::Complex128 : DType::Complex64) << descr;
    EXPECT_EQ(x.to_vector<c128>(), std::vector<c128>{c128(1.5, -2)}) << descr;
  }
}

// ---- safetensors and torch ----------------------------------------------------------------

TEST(ComplexSafetensors, Complex64IsC64) {
  TempDir dir;
  Array a = complex_array<c64>({{1, 2}, {3, -4}, {0, 0.5f}}, {3});
  jnp::save_safetensors(dir / "t.safetensors", {{"a", a}});
  std::string bytes = read_bytes(dir / "t.safetensors");
  EXPECT_NE(bytes.find("\"dtype\":\"C64\",\"shape\":[3]"), std::string::npos);
  auto back = jnp::load_safetensors(dir / "t.safetensors");
  EXPECT_EQ(back.at("a").dtype(), DType::Complex64);
  EXPECT_EQ(hex_of(back.at("a")), hex_of(a));
}

TEST(ComplexSafetensors, Complex128IsRefused) {
  TempDir dir;
  Array b = complex_array<c128>({{1, 2}}, {1});
  expect_error<jx::DTypeError>(
      [&] { jnp::save_safetensors(dir / "t.safetensors", {{"b", b}}); },
      {"[save_safetensors]", "\"b\"", "complex128", "astype(jx::complex64)", "savez"});
  EXPECT_TRUE(dir.entries().empty());
  // A "C128" (not a safetensors dtype) in a header is an unknown dtype.
  std::string header = R"({"b":{"dtype":"C128","shape":[1],"data_offsets":[0,16]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  uint64_t n = header.size();
  std::string file(reinterpret_cast<const char*>(&n), 8);
  file += header + std::string(16, '\0');
  write_bytes(dir / "c128.safetensors", file);
  expect_error<jx::IOError>([&] { jnp::load_safetensors(dir / "c128.safetensors"); },
                            {"unknown dtype \"C128\"", "C64"});
}

TEST(ComplexTorch, StateDictRoundTrips) {
  TempDir dir;
  Array a = complex_array<c64>({{1, 2}, {3, -4}, {5, 6}, {7, 8}}, {2, 2});
  Array b = complex_array<c128>({{1.0 / 3, -1e300}}, {});
  jx::io::save_torch_state_dict(dir / "sd.pt", {{"a", a}, {"b", b}});
  std::string bytes = read_bytes(dir / "sd.pt");
  EXPECT_NE(bytes.find("ComplexFloatStorage"), std::string::npos);
  EXPECT_NE(bytes.find("ComplexDoubleStorage"), std::string::npos);
  jx::io::StateDict back = jx::io::load_torch_state_dict(dir / "sd.pt");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "a");
  EXPECT_EQ(back[0].second.dtype(), DType::Complex64);
  EXPECT_EQ(back[0].second.shape(), a.shape());
  EXPECT_EQ(hex_of(back[0].second), hex_of(a));
  EXPECT_EQ(back[1].second.dtype(), DType::Complex128);
  EXPECT_EQ(hex_of(back[1].second), hex_of(b));
}

// ---- item / to_vector -------------------------------------------------------------------------

TEST(ComplexItem, FromEveryKindOfDtype) {
  Array ci = complex_array<c64>({{1.5f, -2}}, {});
  EXPECT_EQ(ci.item<c64>(), c64(1.5f, -2));
  EXPECT_EQ(ci.item<c128>(), c128(1.5, -2));
  // A complex element as a real type is its real part (NumPy's astype, minus the warning).
  EXPECT_EQ(ci.item<double>(), 1.5);
  EXPECT_EQ(ci.item<float>(), 1.5f);
  EXPECT_EQ(ci.item<int32_t>(), 1);
  EXPECT_EQ(ci.item<uint8_t>(), 1);
  EXPECT_EQ(float(ci.item<jx::half>()), 1.5f);
  EXPECT_EQ(float(ci.item<jx::bhalf>()), 1.5f);
  // bool tests both parts, as bool(1j) and np.array(1j).astype(bool) do.
  EXPECT_TRUE(complex_array<c64>({{0, 1}}, {}).item<bool>());
  EXPECT_FALSE(complex_array<c128>({{0, -0.0}}, {}).item<bool>());
  EXPECT_TRUE(bool(complex_array<c64>({{0, 1}}, {})));
  EXPECT_FALSE(bool(complex_array<c64>({{0, 0}}, {})));

  // Real dtypes become complex with imaginary part 0.
  EXPECT_EQ(Array(int32_t(-7)).item<c64>(), c64(-7, 0));
  EXPECT_EQ(jnp::array(std::vector<int64_t>{int64_t(1) << 40}).item<c128>(),
            c128(double(int64_t(1) << 40), 0));
  EXPECT_EQ(jnp::array(std::vector<uint64_t>{7}).item<c64>(), c64(7, 0));
  EXPECT_EQ(Array(true).item<c128>(), c128(1, 0));
  EXPECT_EQ(Array(0.1).item<c128>(), c128(double(0.1f), 0));  // a weak float32
  EXPECT_EQ(Array(jx::half(2.5f)).item<c64>(), c64(2.5f, 0));
  EXPECT_EQ(Array(jx::bhalf(-3.0f)).item<c128>(), c128(-3, 0));
  EXPECT_EQ(jnp::array(std::vector<double>{0.1}).item<c128>(), c128(0.1, 0));
}

TEST(ComplexItem, ToVector) {
  Array a = complex_array<c128>({{1, 2}, {3.25, -4}, {1e300, 1e-300}}, {3});
  EXPECT_EQ(a.to_vector<c128>(), (std::vector<c128>{{1, 2}, {3.25, -4}, {1e300, 1e-300}}));
  EXPECT_EQ(a.to_vector<c64>()[1], c64(3.25f, -4));
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{1, 3.25, 1e300}));
  EXPECT_EQ(a.to_vector<bool>(), (std::vector<bool>{true, true, true}));
  Array i = jnp::array(std::vector<int16_t>{-1, 0, 5});
  EXPECT_EQ(i.to_vector<c64>(), (std::vector<c64>{{-1, 0}, {0, 0}, {5, 0}}));
  Array e = complex_array<c64>({}, {0});
  EXPECT_TRUE(e.to_vector<c128>().empty());
}

// ---- creation ---------------------------------------------------------------------------------

TEST(ComplexCreation, FromCppData) {
  Array v = jnp::array(std::vector<c64>{{1, 2}, {3, 4}});
  EXPECT_EQ(v.dtype(), DType::Complex64);
  EXPECT_FALSE(v.weak_type());
  EXPECT_EQ(v.shape(), jx::Shape{2});
  Array l = jnp::array({c128(1, -1), c128(0, 2), c128(3, 0)});
  EXPECT_EQ(l.dtype(), DType::Complex128);
  EXPECT_EQ(l.to_vector<c128>()[1], c128(0, 2));
  Array m = jnp::array<c64>({{c64(1, 1), c64(2, 2)}, {c64(3, 3), c64(4, 4)}});
  EXPECT_EQ(m.shape(), (jx::Shape{2, 2}));
  EXPECT_EQ(m.to_vector<c64>()[3], c64(4, 4));
  Array p = jnp::array<c128>({{{c128(1, 0), c128(0, 1)}}});
  EXPECT_EQ(p.shape(), (jx::Shape{1, 1, 2}));
  EXPECT_THROW(jnp::array(std::vector<c64>{{1, 2}}, {2}), jx::ShapeError);
}

TEST(ComplexCreation, ScalarHasImaginaryZero) {
  Array s = jnp::scalar(0.1, DType::Complex64);
  EXPECT_EQ(s.dtype(), DType::Complex64);
  EXPECT_EQ(s.shape(), jx::Shape{});
  EXPECT_FALSE(s.weak_type());
  EXPECT_EQ(s.item<c64>(), c64(0.1f, 0));
  EXPECT_EQ(jnp::scalar(-2.5, DType::Complex128).item<c128>(), c128(-2.5, 0));
}

// These go through the broadcast_in_dim and convert_element_type kernels on complex.
TEST(ComplexCreation, FilledArrays) {
  EXPECT_EQ(jnp::array(3, DType::Complex128).item<c128>(), c128(3, 0));
  Array z = jnp::zeros({2, 3}, DType::Complex64);
  EXPECT_EQ(z.dtype(), DType::Complex64);
  EXPECT_EQ(z.to_vector<c64>(), std::vector<c64>(6, c64(0, 0)));
  Array o = jnp::ones({3}, DType::Complex128);
  EXPECT_EQ(o.to_vector<c128>(), std::vector<c128>(3, c128(1, 0)));
  Array f = jnp::full({2}, complex_array<c64>({{1, -1}}, {}));
  EXPECT_EQ(f.to_vector<c64>(), std::vector<c64>(2, c64(1, -1)));
  Array e = jnp::eye(2, std::nullopt, 0, DType::Complex64);
  EXPECT_EQ(e.to_vector<c64>(), (std::vector<c64>{{1, 0}, {0, 0}, {0, 0}, {1, 0}}));
  Array zl = jnp::zeros_like(complex_array<c128>({{1, 2}, {3, 4}}, {2}));
  EXPECT_EQ(zl.dtype(), DType::Complex128);
  EXPECT_EQ(zl.to_vector<c128>(), std::vector<c128>(2, c128(0, 0)));
}
