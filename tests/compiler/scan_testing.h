// Helpers of the scan pass tests (scan_hoist_test.cpp, scan_remat_test.cpp): the scan
// equations of an optimized program, their bodies, and the tanh RNN both differentiate.
#pragma once
#include <vector>

#include "ir/jaxpr.h"
#include "jx/control_flow.h"
#include "jx/jx.h"

namespace jx::testing {

// The scan equations of a program, in order.
inline std::vector<const ir::Eqn*> scans(const ir::Jaxpr& j) {
  std::vector<const ir::Eqn*> r;
  for (const ir::Eqn& e : j.eqns)
    if (e.prim == ops::Prim::Scan) r.push_back(&e);
  return r;
}

inline const ir::Jaxpr& body(const ir::Eqn* scan) { return ir::jaxpr_of(scan->params, "jaxpr"); }

inline int count(const ir::Jaxpr& j, ops::Prim p) {
  int n = 0;
  for (const ir::Eqn& e : j.eqns) n += e.prim == p;
  return n;
}

// sum(h_T^2) of h <- tanh(h W + x_t U + b) over xs.
inline Array rnn_loss(const Array& W, const Array& U, const Array& b, const Array& h0, const Array& xs) {
  auto [h, hs] = lax::scan(
      [&](const Array& h, const Array& x) {
        Array n = numpy::tanh(numpy::matmul(h, W) + numpy::matmul(x, U) + b);
        return std::make_pair(n, jx::none);
      },
      h0, xs);
  return (h * h).sum();
}

}  // namespace jx::testing
