// Relaxed atomic loads and stores on plain memory, for data that a seqlock-style writer changes while
// optimistic readers read it (the readers validate what they read with a version counter afterwards).
// Making every such access atomic, even relaxed, keeps the program free of data races in the C++ sense
// and for ThreadSanitizer; on x86 each compiles to an ordinary load or store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace flowtrack {

template <class T>
T load_relaxed(const T& from) {
  return __atomic_load_n(&from, __ATOMIC_RELAXED);
}

template <class T>
void store_relaxed(T& to, T value) {
  __atomic_store_n(&to, value, __ATOMIC_RELAXED);
}

// Copies a trivially copyable object 4 bytes at a time, each a relaxed atomic access. The copy may mix
// two versions of the object; the caller's validation must reject it then.
template <class T>
T load_words_relaxed(const T& from) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0 && alignof(T) >= 4);
  std::uint32_t words[sizeof(T) / 4];
  const auto* source = reinterpret_cast<const std::uint32_t*>(&from);
  for (std::size_t i = 0; i < sizeof(T) / 4; ++i) words[i] = load_relaxed(source[i]);
  T copy;
  std::memcpy(&copy, words, sizeof(T));
  return copy;
}

template <class T>
void store_words_relaxed(T& to, const T& value) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0 && alignof(T) >= 4);
  std::uint32_t words[sizeof(T) / 4];
  std::memcpy(words, &value, sizeof(T));
  auto* target = reinterpret_cast<std::uint32_t*>(&to);
  for (std::size_t i = 0; i < sizeof(T) / 4; ++i) store_relaxed(target[i], words[i]);
}

}  // namespace flowtrack
