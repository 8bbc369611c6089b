// jx error types. User mistakes throw a subclass of jx::Error; bugs inside jx throw
// jx::InternalError, which deliberately does not derive from jx::Error so that a
// `catch (const jx::Error&)` around user code never swallows a library bug.
#pragma once
#include <stdexcept>
#include <string>

namespace jx {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Incompatible or invalid shapes (broadcasting, reshape sizes, contraction dims).
class ShapeError : public Error {
 public:
  using Error::Error;
};
// Wrong or unsupported dtype for an operation.
class DTypeError : public Error {
 public:
  using Error::Error;
};
// Bad axis, index or index type.
class IndexError : public Error {
 public:
  using Error::Error;
};
// A valid type but a bad value (negative size, unknown mode string, ...).
class ValueError : public Error {
 public:
  using Error::Error;
};
// A file that cannot be read or written, or whose contents are malformed.
class IOError : public Error {
 public:
  using Error::Error;
};
// A traced value was used where a concrete one is needed.
class ConcretizationError : public Error {
 public:
  using Error::Error;
};

// Mismatched types between values that must agree (a loop carry and the body's result,
// the branches of a cond), as JAX's TypeError.
class TypeError : public Error {
 public:
  using Error::Error;
};
// A NaN produced under jx::config::debug_nans (JAX raises Python's FloatingPointError).
class FloatingPointError : public Error {
 public:
  using Error::Error;
};

// A PRNG key consumed twice under jx::config::debug_key_reuse (JAX's
// jax.errors.KeyReuseError, a JAXTypeError).
class KeyReuseError : public TypeError {
 public:
  using TypeError::TypeError;
};

// A collective between processes that failed: a process that stopped answering within the
// timeout, or processes that reached different collectives (jx::distributed; JAX raises
// XlaRuntimeError). The run cannot continue: the processes' programs are out of step.
class DistributedError : public Error {
 public:
  using Error::Error;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace jx
