#include "sim/simulator.h"

namespace schedlab {

void Simulator::run_until(Time end) {
  for (;;) {
    bool more_now = !queue_.empty() && queue_.next_time() == now_;
    if (!more_now && hook_ && hook_->on_instant_end()) continue;
    if (queue_.empty() || queue_.next_time() > end) break;
    now_ = queue_.next_time();
    queue_.dispatch_next();
  }
  if (end > now_) now_ = end;  // time never runs backwards
}

}  // namespace schedlab
