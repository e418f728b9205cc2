#include "sim/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace schedlab {

spdlog::logger& sim_log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_color_st("schedlab");
    l->set_level(spdlog::level::warn);
    l->set_pattern("[%l] %v");
    return l;
  }();
  return *logger;
}

bool set_log_level(std::string_view level) {
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") return false;
  sim_log().set_level(lvl);
  sim_log_debug.store(sim_log().should_log(spdlog::level::debug), std::memory_order_relaxed);
  return true;
}

}  // namespace schedlab
