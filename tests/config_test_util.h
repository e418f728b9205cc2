// Helpers shared by the YAML configuration tests (test_config_yaml.cc,
// test_platform.cc, test_pm_wq_study.cc): a minimal task list and the
// ConfigError a scenario raises.
#pragma once

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "models/config/config.h"

namespace schedlab::testing {

// A minimal valid task list to append after the keys a test cares about.
inline const char* const kOneTask =
    "tasks:\n"
    "  - name: t\n"
    "    events:\n"
    "      - run: 1ms\n";

// Loads `yaml` (as test.yaml), which must fail, and returns the error.
inline ConfigError error_of(const std::string& yaml) {
  try {
    load_scenario_yaml(yaml, "test.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for:\n" << yaml);
  throw std::logic_error("unreachable");
}

// The error of `yaml` (loaded as x.yaml) with the first `from` replaced
// by `to`; "no error" if that loads.
inline std::string error_when_replaced(const std::string& yaml, const std::string& from, const std::string& to) {
  std::string y = yaml;
  y.replace(y.find(from), from.size(), to);
  try {
    load_scenario_yaml(y, "x.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace schedlab::testing
