// PNG plots by the python3-matplotlib scripts in experiments/plots/. The
// C++ side writes a small JSON file of what to draw (quantiles, changes,
// per-point means) and runs the script on it; the scripts do no statistics.
#pragma once

#include <string>
#include <vector>

namespace schedlab {

// The directory holding the scripts: $SCHEDLAB_PLOTS_DIR when set, else
// experiments/plots of the source tree this binary was built from, else
// ../experiments/plots next to the binary.
std::string plots_dir();

// Runs `PYTHON plots_dir()/script args...`, waits, and throws
// std::runtime_error when it fails. PYTHON is the first of
// $SCHEDLAB_PYTHON, python3 on PATH and /usr/bin/python3 that imports
// matplotlib (none: an error saying how to install it).
void run_plot_script(const std::string& script, const std::vector<std::string>& args);

}  // namespace schedlab
