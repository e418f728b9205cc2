#include "models/config/policy_names.h"

namespace schedlab::config {
namespace {

struct NamedPolicy {
  std::string_view name;
  std::string_view short_name;
  Policy policy;
};

// SCHED_NORMAL is the kernel's name for SCHED_OTHER (include/uapi/linux/sched.h).
constexpr NamedPolicy kPolicies[] = {
    {"SCHED_OTHER", "other", Policy::kNormal}, {"SCHED_NORMAL", "normal", Policy::kNormal},
    {"SCHED_BATCH", "batch", Policy::kBatch},  {"SCHED_IDLE", "idle", Policy::kIdle},
    {"SCHED_FIFO", "fifo", Policy::kFifo},     {"SCHED_RR", "rr", Policy::kRr},
};

}  // namespace

std::optional<Policy> policy_from_name(std::string_view name, bool allow_short) {
  for (const NamedPolicy& p : kPolicies)
    if (name == p.name || (allow_short && name == p.short_name)) return p.policy;
  return std::nullopt;
}

std::vector<std::string> policy_names(bool allow_short) {
  std::vector<std::string> out;
  for (const NamedPolicy& p : kPolicies) out.emplace_back(p.name);
  if (allow_short)
    for (const NamedPolicy& p : kPolicies) out.emplace_back(p.short_name);
  return out;
}

std::string policy_text(Policy p) {
  for (const NamedPolicy& n : kPolicies)
    if (n.policy == p) return std::string(n.name);
  return "?";
}

}  // namespace schedlab::config
