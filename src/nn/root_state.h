// The state of one init/apply/bind (nn/scope.cpp), shared with nn/tabulate.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jx/nn/module.h"

namespace jx::nn::detail {

// One module call recorded for nn::tabulate.
struct CallRecord {
  std::vector<std::string> path;
  std::string type, inputs, outputs;
};

struct RootState {
  Tree variables = Tree::dict();  // collection -> module path... -> name -> value
  std::map<std::string, Array> rngs;
  Mutable mutable_ = Mutable::none();
  bool initializing = false;
  // make_rng's counters, by module path and stream (Flax keeps them per scope and reuses
  // a child's when the child is pushed again, so a path's counters persist in a call).
  std::map<std::pair<std::vector<std::string>, std::string>, uint64_t> rng_counters;
  bool recording = false;
  std::vector<CallRecord> records;
};

}  // namespace jx::nn::detail
