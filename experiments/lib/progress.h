// Progress of long runs on stderr. On a terminal: one line redrawn in
// place, "[#########.........] 45/140 runs  32%  ETA 0:12", at most ten
// times a second. Otherwise (logs, CI, Slurm): plain lines at every tenth
// of the work, plus whatever note() is given. The ETA is the mean time per
// unit of work so far times the units left.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace schedlab {

class Progress {
 public:
  // `unit` names what is counted ("runs"). Disabled: every call is a no-op.
  Progress(std::string unit, size_t total, bool enabled, bool tty);
  ~Progress();
  void update(size_t done);
  // A line of its own (e.g. "point p0003 done"); on a terminal, printed
  // above the bar.
  void note(const std::string& line);
  // Clears the bar (terminal) or prints the last line.
  void finish();

  // "1:02:03" / "2:03" / "0:07".
  static std::string clock_text(double seconds);

 private:
  void draw(bool force);
  std::string unit_;
  size_t total_, done_ = 0;
  bool enabled_, tty_, finished_ = false;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace schedlab
