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
  // Front-to-back iteration (range for).
  template <typename Q, typename V>
  class Iter {
   public:
    Iter(Q* q, size_t i) : q_(q), i_(i) {}
    V& operator*() const { return (*q_)[i_]; }
    V* operator->() const { return &(*q_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }

   private:
    Q* q_;
    size_t i_;
  };

 public:
  using iterator = Iter<Fifo, T>;
  using const_iterator = Iter<const Fifo, const T>;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() {
    assert(size_ > 0);
    return slots_[head_];
  }
  const T& front() const {
    assert(size_ > 0);
    return slots_[head_];
  }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }
  // The i-th element from the front.
  T& operator[](size_t i) {
    assert(i < size_);
    return slots_[slot(i)];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return slots_[slot(i)];
  }
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }
  void push_back(T v) {
    if (size_ == slots_.size()) grow();
    slots_[slot(size_)] = std::move(v);
    ++size_;
  }
  void pop_front() {
    assert(size_ > 0);
    slots_[head_] = T{};  // release what the element holds now, not at overwrite
    head_ = slot(1);
    --size_;
  }
  // Removes the n front elements (n <= size()).
  void drop_front(size_t n) {
    assert(n <= size_);
    while (n-- > 0) pop_front();
  }
  // Removes the front element and returns it.
  T take_front() {
    T v = std::move(front());
    pop_front();
    return v;
  }
  // Removes the i-th element from the front (i < size()), keeping the
  // order of the others (list_del_init() of a queued entry).
  void remove_at(size_t i) {
    assert(i < size_);
    for (; i + 1 < size_; ++i) (*this)[i] = std::move((*this)[i + 1]);
    slots_[slot(size_ - 1)] = T{};
    --size_;
  }
  // Inserts v before the i-th element from the front (i <= size()),
  // keeping the order of the others (list_add_tail() before an entry).
  void insert_at(size_t i, T v) {
    assert(i <= size_);
    push_back(std::move(v));
    for (size_t k = size_ - 1; k > i; --k) std::swap((*this)[k], (*this)[k - 1]);
  }
  // Removes the first element equal to v, keeping the order of the
  // others; whether there was one.
  bool remove(const T& v) {
    for (size_t i = 0; i < size_; ++i)
      if ((*this)[i] == v) {
        remove_at(i);
        return true;
      }
    return false;
  }
  // Room for n elements without growing.
  void reserve(size_t n) {
    if (n > slots_.size()) regrow(n);
  }
  // Empties the queue, keeping its storage.
  void clear() {
    while (size_ > 0) pop_front();
    head_ = 0;
  }

 private:
  // The slot of the i-th element from the front: head_ + i is below twice
  // the slot count, so one subtraction wraps it (no division).
  size_t slot(size_t i) const {
    const size_t s = head_ + i;
    return s >= slots_.size() ? s - slots_.size() : s;
  }
  void grow() { regrow(slots_.empty() ? 4 : 2 * slots_.size()); }
  void regrow(size_t n) {
    std::vector<T> bigger(n);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[slot(i)]);
    slots_ = std::move(bigger);
    head_ = 0;
  }
  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace schedlab
