#pragma once

#include <stdexcept>
#include <string>

namespace schedlab {

// A parameter combination the model cannot run (e.g. affinity to a CPU that
// does not exist). The CLI prints it and exits with code 2.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace schedlab
