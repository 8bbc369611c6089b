// jnp: input and output. Printing (NumPy's arrayprint, as a jax.Array prints) and the
// .npy / .npz file formats (byte-compatible with numpy.save / numpy.savez).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jx/array.h"

namespace jx::numpy {

// ---- Printing -------------------------------------------------------------------------
// NumPy's print options (np.set_printoptions); jnp.set_printoptions is NumPy's.
struct PrintOptions {
  int precision = 8;         // digits after the point (floatmode decides how it is used)
  int64_t threshold = 1000;  // arrays with more elements are summarized with '...'
  int edgeitems = 3;         // items kept at each edge of a summarized axis
  int linewidth = 75;        // characters per line
  bool suppress = false;     // never use scientific notation for small numbers
  char sign = '-';           // '-': sign of negatives only; '+': always; ' ': space for positives
  // "maxprec" (default), "fixed", "unique" or "maxprec_equal".
  std::string floatmode = "maxprec";
  std::string nanstr = "nan";
  std::string infstr = "inf";
};
// Process-wide, as in NumPy; throws ValueError for an invalid option.
void set_printoptions(const PrintOptions& opts);
PrintOptions get_printoptions();
// Sets options for a scope: { jnp::printoptions p({.precision = 3}); std::cout << x; }
class printoptions {
 public:
  explicit printoptions(const PrintOptions& opts);
  ~printoptions();
  printoptions(const printoptions&) = delete;
  printoptions& operator=(const printoptions&) = delete;

 private:
  PrintOptions saved_;
};

// np.array2string with the current options (or `opts`); separator ' ' as str() prints.
std::string array2string(const Array& a, const std::string& separator = " ",
                         const std::string& prefix = "", const std::string& suffix = "",
                         std::optional<PrintOptions> opts = std::nullopt);
// What Python's repr() / str() show for a jax.Array: Array([1., 2.], dtype=float32) / [1. 2.].
std::string array_repr(const Array& a);
std::string array_str(const Array& a);

// np.format_float_positional / np.format_float_scientific (NumPy's Dragon4). The value is
// printed in its own precision: float16 and float32 values give their shortest digits.
// A negative precision/pad/min_digits means "not given"; trim is one of 'k', '.', '0', '-'.
std::string format_float_positional(const Array& x, int precision = -1, bool unique = true,
                                    bool fractional = true, char trim = 'k', bool sign = false,
                                    int pad_left = -1, int pad_right = -1, int min_digits = -1);
std::string format_float_scientific(const Array& x, int precision = -1, bool unique = true,
                                    char trim = 'k', bool sign = false, int pad_left = -1,
                                    int exp_digits = -1, int min_digits = -1);

// ---- .npy / .npz files ----------------------------------------------------------------
// np.save: writes one array in .npy format (version 1.0, or 2.0 when the header needs it),
// byte-for-byte what NumPy writes. As np.save does, ".npy" is appended to a path that does
// not end in it. bfloat16 is written as jnp.save writes it (descr '<V2', the raw bits);
// jnp::load reads it back as bfloat16. The file is written to a temporary file in the same
// directory and renamed, so a reader never sees a half-written file.
void save(const std::string& path, const Array& a);
// np.load of a .npy file (versions 1.0, 2.0, 3.0; little- or big-endian; C or Fortran
// order). Throws jx::IOError naming the file and the problem for a malformed file, and for
// an .npz archive (use load_npz).
Array load(const std::string& path);

// The arrays of an .npz archive, in archive order, keyed by member name without ".npy".
class NpzFile {
 public:
  const std::vector<std::string>& files() const { return names_; }
  bool contains(const std::string& name) const;
  // Throws jx::IndexError naming the available keys when `name` is absent.
  const Array& operator[](const std::string& name) const;
  size_t size() const { return names_.size(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

  void add(std::string name, Array a);  // used by load_npz

 private:
  std::vector<std::string> names_;
  std::vector<std::pair<std::string, Array>> items_;
};

// np.savez / np.savez_compressed: one .npy member per array ("name.npy"), stored or deflated,
// in the order given. ".npz" is appended to a path that does not end in it. Zip64 records are
// written when sizes or offsets need them.
void savez(const std::string& path, const std::vector<std::pair<std::string, Array>>& arrays);
void savez(const std::string& path, const std::map<std::string, Array>& arrays);
// Unnamed arrays are called arr_0, arr_1, ... as NumPy names positional arguments.
void savez(const std::string& path, const std::vector<Array>& arrays);
void savez_compressed(const std::string& path,
                      const std::vector<std::pair<std::string, Array>>& arrays);
void savez_compressed(const std::string& path, const std::map<std::string, Array>& arrays);
void savez_compressed(const std::string& path, const std::vector<Array>& arrays);
// Reads an .npz archive written by NumPy (stored or deflated members, zip64) or by savez.
NpzFile load_npz(const std::string& path);

}  // namespace jx::numpy
