// How often the kernel model took a decision for one reason
// (`schedlab run --why`): the reasons --log debug prints, counted.
#pragma once

#include <cstdint>
#include <string>

namespace schedlab {

struct DecisionCount {
  std::string kind;    // "placement", "wake-up preemption", "tick", "pick", "idle state"
  std::string group;   // the task group (for idle states: the CPU, "cpu3")
  std::string reason;
  uint64_t count = 0;
};

}  // namespace schedlab
