// Internals of jx::checkify shared by checkify.cpp (the checking interpreter) and
// checkify_error.cpp (messages, the Error value, user checks).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "jx/checkify.h"
#include "ops/params.h"

namespace jx::checkify::detail {

// Values a message can show: the payload of an Error is float64[..., kPayload].
inline constexpr int64_t kPayload = 8;

// One message: a str.format-style template whose fields {0}..{n-1} show payload slots of
// the given dtypes (integers print as integers, floats as the shortest repr of their dtype).
struct Entry {
  std::string fmt;
  std::vector<DType> slots;
};
using Table = std::vector<Entry>;

// "{" and "}" doubled, for fixed text placed in a template.
std::string escape_braces(std::string_view s);
// The table as the static string an Error carries, and back.
std::string serialize(const Table& t);
Table parse_table(const std::string& s);
// Renders entry e with payload values (throws ValueError for a template that does not fit).
std::string render(const Entry& e, const double* payload);
// Checks that fmt is a valid template for n values (throws ValueError / IndexError naming
// `op`); used when the check is written, so a bad template fails early.
void validate_format(const char* op, std::string_view fmt, const std::vector<DType>& slots);

// A user check staged as a debug_callback equation: its callback's description names it
// ("checkify.check#17 ..."); the CheckInfo is found again by that id while it is alive
// (the equation's callback holds it).
struct CheckInfo {
  uint64_t id = 0;
  Entry entry;  // message template (with "check failed at" appended) and arg dtypes
  ~CheckInfo();
};
// The check an equation's params describe, or null for another debug_callback.
std::shared_ptr<const CheckInfo> find_check(const ops::Params& p);

// Whether checkify is tracing a function on this thread (user checks may then be staged).
class TracingGuard {
 public:
  TracingGuard();
  ~TracingGuard();
  TracingGuard(const TracingGuard&) = delete;
  TracingGuard& operator=(const TracingGuard&) = delete;
};

}  // namespace jx::checkify::detail
