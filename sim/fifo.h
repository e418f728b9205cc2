// A first-in first-out queue that keeps its storage: a ring over a vector
// that doubles when full and never shrinks, so a queue that fills and
// drains in the hot loop stops allocating once it has seen its largest
// size (std::deque frees and allocates a block every few elements).
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace schedlab {

template <typename T>
class Fifo {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() {
    assert(size_ > 0);
    return slots_[head_];
  }
  void push_back(T v) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) % slots_.size()] = std::move(v);
    ++size_;
  }
  void pop_front() {
    assert(size_ > 0);
    slots_[head_] = T{};  // release what the element holds now, not at overwrite
    head_ = (head_ + 1) % slots_.size();
    --size_;
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 4 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) % slots_.size()]);
    slots_ = std::move(bigger);
    head_ = 0;
  }
  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace schedlab
