// The errors of jx::nn's module system, as flax/errors.py names them. Each message names
// the module path ("/Conv_0"), the variable and the collection, and says how to fix it.
#pragma once
#include "jx/error.h"

namespace jx::nn {

// Writing to a collection that apply() was not told is mutable (flax's
// ModifyScopeVariableError): pass nn::Mutable{"batch_stats"}.
class ModifyScopeVariableError : public ValueError {
 public:
  using ValueError::ValueError;
};
// Reading a variable of a collection that the variables passed to apply() do not have
// (ScopeCollectionNotFound).
class ScopeCollectionNotFound : public ValueError {
 public:
  using ValueError::ValueError;
};
// A parameter missing from a present "params" collection (ScopeParamNotFoundError).
class ScopeParamNotFoundError : public ValueError {
 public:
  using ValueError::ValueError;
};
// A variable missing from a present collection (ScopeVariableNotFoundError).
class ScopeVariableNotFoundError : public ValueError {
 public:
  using ValueError::ValueError;
};
// A stored parameter whose shape is not what the module would create now, e.g. a Dense
// applied to inputs of another width than at init (ScopeParamShapeError).
class ScopeParamShapeError : public ShapeError {
 public:
  using ShapeError::ShapeError;
};
// make_rng for a stream apply() got no key for, and no "params" key to fall back to
// (InvalidRngError): pass nn::Rngs{{"dropout", key}}.
class InvalidRngError : public ValueError {
 public:
  using ValueError::ValueError;
};
// Two variables or submodules of one module with the same name (NameInUseError).
class NameInUseError : public ValueError {
 public:
  using ValueError::ValueError;
};
// apply() got {"params": {"params": ...}}: the result of init() wrapped once more
// (ApplyScopeInvalidVariablesStructureError).
class ApplyScopeInvalidVariablesStructureError : public ValueError {
 public:
  using ValueError::ValueError;
};
// A module called outside init/apply/bind and outside another module's call
// (CallCompactUnboundModuleError).
class CallCompactUnboundModuleError : public ValueError {
 public:
  using ValueError::ValueError;
};

}  // namespace jx::nn
