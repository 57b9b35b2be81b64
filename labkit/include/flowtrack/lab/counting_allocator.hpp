// An allocator that adds every byte it hands out to a counter, so the adapters over standard-style
// containers report their real footprint (nodes, bucket arrays, control bytes) in memory_bytes().
#pragma once

#include <cstddef>
#include <memory>

namespace flowtrack {

template <class T>
class CountingAllocator {
 public:
  using value_type = T;

  explicit CountingAllocator(std::size_t* counter) : counter_(counter) {}
  template <class U>
  CountingAllocator(const CountingAllocator<U>& other) : counter_(other.counter()) {}

  T* allocate(std::size_t n) {
    *counter_ += n * sizeof(T);
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) {
    *counter_ -= n * sizeof(T);
    std::allocator<T>{}.deallocate(p, n);
  }

  std::size_t* counter() const { return counter_; }

  template <class U>
  bool operator==(const CountingAllocator<U>& other) const { return counter_ == other.counter(); }

 private:
  std::size_t* counter_;
};

}  // namespace flowtrack
