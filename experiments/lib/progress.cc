#include "experiments/lib/progress.h"

#include <fmt/format.h>

#include <cstdio>

namespace schedlab {

Progress::Progress(std::string unit, size_t total, bool enabled, bool tty)
    : unit_(std::move(unit)), total_(total), enabled_(enabled && total > 0), tty_(tty) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

std::string Progress::clock_text(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

void Progress::update(size_t done) {
  if (!enabled_ || finished_) return;
  done_ = done;
  draw(done_ == total_);
}

void Progress::note(const std::string& line) {
  if (!enabled_ || finished_) return;
  if (tty_) std::fputs("\r\033[K", stderr);
  std::fprintf(stderr, "%s\n", line.c_str());
  if (tty_) draw(true);
  std::fflush(stderr);
}

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = done_ > 0 ? elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_) : 0;
  const int pct = static_cast<int>(100.0 * static_cast<double>(done_) / static_cast<double>(total_));
  if (tty_) {
    if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * static_cast<double>(done_) / static_cast<double>(total_));
    std::fprintf(stderr, "\r\033[K[%s%s] %zu/%zu %s  %3d%%  %s", std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(kWidth - filled), '.').c_str(), done_, total_, unit_.c_str(), pct,
                 done_ > 0 ? ("ETA " + clock_text(eta)).c_str() : "");
    std::fflush(stderr);
    return;
  }
  // Plain lines at each tenth (100% included): logs stay short.
  const int decile = pct / 10;
  if (decile == last_decile_) return;
  last_decile_ = decile;
  std::fprintf(stderr, "progress: %zu/%zu %s (%d%%), elapsed %s, ETA %s\n", done_, total_, unit_.c_str(), pct,
               clock_text(elapsed).c_str(), clock_text(eta).c_str());
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (tty_) std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

}  // namespace schedlab
