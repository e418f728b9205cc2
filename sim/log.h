// Logging through spdlog: silent by default; `--log debug` logs every
// scheduling decision with its reason. Messages are formatted only when the
// level is enabled, so the hot loop pays one branch.
#pragma once

#include <spdlog/spdlog.h>

#include <atomic>
#include <string_view>

namespace schedlab {

spdlog::logger& sim_log();
// level: off, error, warn, info, debug, trace. Returns false if unknown.
bool set_log_level(std::string_view level);
// Whether debug messages are wanted, kept by set_log_level(): the hot loop
// tests one flag instead of calling sim_log() (a guarded function-local
// static) and the logger's level at each of its many SL_DEBUG sites.
inline std::atomic<bool> sim_log_debug{false};

#define SL_DEBUG(...)                                                            \
  do {                                                                           \
    if (::schedlab::sim_log_debug.load(std::memory_order_relaxed)) [[unlikely]]  \
      ::schedlab::sim_log().debug(__VA_ARGS__);                                  \
  } while (0)
#define SL_WARN(...) ::schedlab::sim_log().warn(__VA_ARGS__)

}  // namespace schedlab
