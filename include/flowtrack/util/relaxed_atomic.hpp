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

// Eight bytes from any address (x86-64, where unaligned loads are legal), read as a relaxed atomic load
// of one word would be: an access that the compiler neither assumes unchanged nor merges, and that
// ThreadSanitizer does not report, because the bytes may be in the middle of a rewrite that the caller's
// validation rejects. C++ has no unaligned atomics, hence one load instruction in asm. Under
// AddressSanitizer (never built with ThreadSanitizer) it is a plain copy, so that its bounds are checked,
// and so it is on other processors.
inline std::uint64_t load_unaligned_relaxed(const void* from) {
  std::uint64_t value;
#if defined(__SANITIZE_ADDRESS__) || !defined(__x86_64__)
  std::memcpy(&value, from, sizeof value);
#else
  asm("movq %1, %0" : "=r"(value) : "m"(*static_cast<const unsigned char(*)[8]>(from)));
#endif
  return value;
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
