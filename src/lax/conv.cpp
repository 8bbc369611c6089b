// jx::lax's convolutions: conv_general_dilated and the wrappers jax.lax defines over it.
#include "jx/lax.h"
#include "ops/conv.h"
#include "ops/window_params.h"
#include "support/str.h"

namespace jx::lax {

namespace {

std::vector<int64_t> ones_if_empty(const std::vector<int64_t>& v, size_t n) {
  return v.empty() ? std::vector<int64_t>(n, 1) : v;
}

std::vector<int64_t> take(const Shape& s, const std::vector<int64_t>& idx, size_t from) {
  std::vector<int64_t> r;
  for (size_t i = from; i < idx.size(); ++i) r.push_back(s[size_t(idx[i])]);
  return r;
}

// jax's _conv_transpose_padding for one dim: the forward conv's padding mode (or pair),
// as padding of the transposed conv.
std::pair<int64_t, int64_t> transpose_padding(int64_t k, int64_t s, const std::string& mode,
                                              std::pair<int64_t, int64_t> pair) {
  int64_t pad_len, pad_a;
  if (mode == "SAME") {
    pad_len = k + s - 2;
    pad_a = s > k - 1 ? k - 1 : (pad_len + 1) / 2;
  } else if (mode == "VALID") {
    pad_len = k + s - 2 + std::max<int64_t>(k - s, 0);
    pad_a = k - 1;
  } else {
    pad_a = k - pair.first - 1;
    pad_len = pad_a + (k - pair.second - 1);
  }
  return {pad_a, pad_len - pad_a};
}

}  // namespace

Array conv_general_dilated(const Array& lhs, const Array& rhs,
                           const std::vector<int64_t>& window_strides, const Padding& padding,
                           const std::vector<int64_t>& lhs_dilation,
                           const std::vector<int64_t>& rhs_dilation,
                           const ConvDimensions& dimension_numbers, int64_t feature_group_count,
                           int64_t batch_group_count, std::optional<DType> preferred_element_type) {
  const char* op = "conv_general_dilated";
  ops::ConvArgs a;
  a.dimension_numbers = dimension_numbers.resolve(op, lhs.ndim(), rhs.ndim());
  const size_t ns = size_t(lhs.ndim() - 2);
  if (window_strides.size() != ns)
    throw ShapeError(str("[conv_general_dilated] window_strides ", list_str(window_strides), " has ",
                         window_strides.size(), " entries for ", ns, " spatial dims: lhs ",
                         type_str(lhs.dtype(), lhs.shape()), ", rhs ", type_str(rhs.dtype(), rhs.shape())));
  a.window_strides = window_strides;
  a.lhs_dilation = ones_if_empty(lhs_dilation, ns);
  a.rhs_dilation = ones_if_empty(rhs_dilation, ns);
  if (padding.is_named()) {
    for (int64_t d : a.lhs_dilation)
      if (d != 1)
        throw ValueError("[conv_general_dilated] string padding is not implemented for transposed "
                         "convolution (lhs_dilation > 1); give explicit (lo, hi) pairs or use "
                         "lax::conv_transpose");
    if (a.rhs_dilation.size() != ns)
      throw ShapeError(str("[conv_general_dilated] rhs_dilation ", list_str(a.rhs_dilation),
                           " has ", a.rhs_dilation.size(), " entries for ", ns, " spatial dims"));
    std::vector<int64_t> window = take(rhs.shape(), a.dimension_numbers.rhs_spec, 2);
    for (size_t i = 0; i < ns; ++i) window[i] = ops::dilate_dim(window[i], a.rhs_dilation[i]);
    a.padding = padding.resolve(op, take(lhs.shape(), a.dimension_numbers.lhs_spec, 2), window,
                                window_strides);
  } else {
    a.padding = padding.resolve(op, std::vector<int64_t>(ns), {}, {});
  }
  a.feature_group_count = feature_group_count;
  a.batch_group_count = batch_group_count;
  a.preferred_element_type = preferred_element_type;
  return ops::conv_bind(lhs, rhs, a);
}

Array conv(const Array& lhs, const Array& rhs, const std::vector<int64_t>& window_strides,
           const Padding& padding, std::optional<DType> preferred_element_type) {
  return conv_general_dilated(lhs, rhs, window_strides, padding, {}, {}, {}, 1, 1,
                              preferred_element_type);
}

Array conv_with_general_padding(const Array& lhs, const Array& rhs,
                                const std::vector<int64_t>& window_strides,
                                const Padding& padding, const std::vector<int64_t>& lhs_dilation,
                                const std::vector<int64_t>& rhs_dilation,
                                std::optional<DType> preferred_element_type) {
  return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, {},
                              1, 1, preferred_element_type);
}

Array conv_transpose(const Array& lhs, const Array& rhs_in, const std::vector<int64_t>& strides,
                     const Padding& padding, const std::vector<int64_t>& rhs_dilation,
                     const ConvDimensions& dimension_numbers, bool transpose_kernel,
                     std::optional<DType> preferred_element_type, bool use_consistent_padding) {
  const char* op = "conv_transpose";
  Array rhs = rhs_in;
  const int64_t nd = lhs.ndim();
  ConvDimensions dims = dimension_numbers;
  if (!dims.given()) {
    switch (nd) {
      case 2: dims = ConvDimensions("NC", "IO", "NC"); break;
      case 3: dims = ConvDimensions("NHC", "HIO", "NHC"); break;
      case 4: dims = ConvDimensions("NHWC", "HWIO", "NHWC"); break;
      case 5: dims = ConvDimensions("NHWDC", "HWDIO", "NHWDC"); break;
      default:
        throw ValueError(str("[conv_transpose] no default dimension numbers for rank ", nd,
                             "; give them explicitly"));
    }
  }
  const ConvDimensionNumbers dn = dims.resolve(op, nd, rhs.ndim());
  const size_t ns = size_t(nd - 2);
  if (strides.size() != ns)
    throw ShapeError(str("[conv_transpose] strides ", list_str(strides), " has ", strides.size(),
                         " entries for ", ns, " spatial dims"));
  const std::vector<int64_t> rd = ones_if_empty(rhs_dilation, ns);
  const std::vector<int64_t> k = take(rhs.shape(), dn.rhs_spec, 2);
  std::string mode = padding.is_named() ? padding.name() : "";
  Padding pads = padding;
  if (use_consistent_padding || mode == "SAME" || mode == "VALID") {
    if (!padding.is_named() && padding.pairs().size() != ns)
      throw ShapeError(str("[conv_transpose] padding has ", padding.pairs().size(),
                           " pairs for ", ns, " spatial dims"));
    if (padding.is_named() && mode != "SAME" && mode != "VALID")
      throw ValueError(str("[conv_transpose] padding \"", mode, "\": use \"SAME\", \"VALID\" or pairs"));
    Padding::Pairs p;
    for (size_t i = 0; i < ns; ++i)
      p.push_back(transpose_padding(ops::dilate_dim(k[i], rd[i]), strides[i], mode,
                                    padding.is_named() ? std::pair<int64_t, int64_t>{} : padding.pairs()[i]));
    pads = Padding(p);
  }
  if (transpose_kernel) {
    rhs = lax::rev(rhs, {dn.rhs_spec.begin() + 2, dn.rhs_spec.end()});
    std::vector<int64_t> perm(size_t(rhs.ndim()));
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = int64_t(i);
    std::swap(perm[size_t(dn.rhs_spec[0])], perm[size_t(dn.rhs_spec[1])]);
    rhs = lax::transpose(rhs, perm);
  }
  return conv_general_dilated(lhs, rhs, std::vector<int64_t>(ns, 1), pads, strides, rd, dn, 1, 1,
                              preferred_element_type);
}

}  // namespace jx::lax
