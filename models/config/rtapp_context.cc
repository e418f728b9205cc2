#include "models/config/rtapp_context.h"

#include <fmt/format.h>

#include "models/config/config.h"
#include "models/config/diagnostics.h"
#include "models/config/policy_names.h"

namespace schedlab::config::rtapp {
namespace {

// 365 days: beyond any simulation, and far from int64 overflow in ns.
constexpr int64_t kMaxUsec = 365LL * 24 * 3600 * 1000000;

std::string list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string child(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string expected(const std::string& what, const Value& got) {
  return fmt::format("expected {}, got {}", what, json::describe(got.type));
}

void Context::fail(const Value& at, const std::string& path, const std::string& message) const {
  throw ConfigError(file_, at.line, at.column, path, message);
}

void Context::fail(const Member& at, const std::string& path, const std::string& message) const {
  throw ConfigError(file_, at.line, at.column, path, message);
}

void Context::warn(const Value& at, const std::string& path, const std::string& message) {
  out_.warnings.push_back({file_, at.line, at.column, path, message});
}

void Context::warn(const Member& at, const std::string& path, const std::string& message) {
  out_.warnings.push_back({file_, at.line, at.column, path, message});
}

void Context::warn(const std::string& message) { out_.warnings.push_back({file_, 0, 0, "", message}); }

int64_t Context::get_int(const Value& v, const std::string& path, int64_t lo, int64_t hi) const {
  if (!v.is(Type::kInt)) fail(v, path, expected("an integer", v));
  if (v.integer < lo || v.integer > hi)
    fail(v, path, fmt::format("{} is out of range (expected {}..{})", v.integer, lo, hi));
  return v.integer;
}

Time Context::get_usec(const Value& v, const std::string& path, int64_t min_us) const {
  if (!v.is(Type::kInt)) fail(v, path, expected("an integer number of microseconds", v));
  if (v.integer < min_us || v.integer > kMaxUsec)
    fail(v, path, fmt::format("{} us is out of range (expected {}..{})", v.integer, min_us, kMaxUsec));
  return Time::us(v.integer);
}

bool Context::get_bool(const Value& v, const std::string& path) const {
  if (!v.is(Type::kBool)) fail(v, path, expected("true or false", v));
  return v.boolean;
}

std::string Context::get_string(const Value& v, const std::string& path, bool allow_empty) const {
  if (!v.is(Type::kString)) fail(v, path, expected("a string", v));
  if (!allow_empty && v.text.empty()) fail(v, path, "expected a name, got an empty string");
  return v.text;
}

Policy Context::get_policy(const Value& v, const std::string& path) const {
  std::string name = get_string(v, path);
  if (name == "SCHED_DEADLINE")
    fail(v, path, fmt::format("SCHED_DEADLINE is not modelled (supported: {})", list(policy_names(false))));
  auto p = policy_from_name(name, false);
  if (!p) fail(v, path, fmt::format("unknown policy '{}' (expected one of: {})", name, list(policy_names(false))));
  return *p;
}

}  // namespace schedlab::config::rtapp
