// An array of `width`-bit cells (1..64) packed back to back in 64-bit words: the compact structures'
// storage, so that memory follows the formulas (2.33 l bits per key for Othello, l bits per slot for Ludo).
//
// A cell may straddle two words; a read always loads both (no branch). Every word access is a relaxed
// atomic (see util/relaxed_atomic.hpp), so one writer may update cells while readers read: a reader can
// then see a cell half old, half new, and must validate with the structure's version stripes
// (version_stripes.hpp).
// The word array has one spare word at the end so a read of the last cell never leaves it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack::compact {

class PackedCells {
 public:
  PackedCells() = default;
  PackedCells(std::size_t cells, unsigned width)
      : cells_(cells), width_(width), mask_(width >= 64 ? ~0ull : (1ull << width) - 1),
        words_((cells * width + 63) / 64 + 1, 0) {}

  std::size_t size() const { return cells_; }
  unsigned width() const { return width_; }
  std::size_t bytes() const { return words_.size() * sizeof(std::uint64_t); }

  std::uint64_t get(std::size_t i) const { return packed_cell(words_.data(), i, width_, mask_); }

  // Cell i of `width`-bit cells packed in `words` (one spare word after the last cell's): both words a
  // cell may touch are loaded, so the read has no branch (a straddling cell is an unpredictable one).
  static std::uint64_t packed_cell(const std::uint64_t* words, std::size_t i, unsigned width, std::uint64_t mask) {
    const std::size_t bit = i * width;
    return bits_from(words + bit / 64, bit % 64) & mask;
  }
  // The 64 bits from bit `shift` % 64 of *word on, the rest taken from the next word: a cell whose
  // first bit is there, unmasked.
  static std::uint64_t bits_from(const std::uint64_t* word, unsigned shift) {
    const std::uint64_t low = load_relaxed(word[0]), high = load_relaxed(word[1]);
    const unsigned __int128 both = static_cast<unsigned __int128>(high) << 64 | low;  // one double shift
    return static_cast<std::uint64_t>(both >> (shift % 64));
  }
  // A cell of at most 57 bits as one integer that a bulk lookup's first pass can hand on to the pass
  // that reads it: its bit address, the address of the word array (8-byte aligned) times 8 plus the
  // index of the cell's first bit in the array (x86-64 user addresses are below 2^47: the product fits).
  // The read is one unaligned 8-byte load from the byte holding that bit (bit address / 8), shifted
  // right by the bit's place in it; the spare word after the last cell's keeps the load inside the array.
  static std::uint64_t bit_address(const std::uint64_t* words, std::size_t bit) {
    return reinterpret_cast<std::uintptr_t>(words) * 8 + bit;
  }
  static const void* byte_at(std::uint64_t bit_address) { return reinterpret_cast<const void*>(bit_address / 8); }
  static std::uint64_t bits_at(std::uint64_t bit_address) {
    return load_unaligned_relaxed(byte_at(bit_address)) >> (bit_address % 8);
  }

  // Writer only. Other cells sharing the words keep their values.
  void set(std::size_t i, std::uint64_t value) {
    const std::size_t bit = i * width_;
    const std::size_t word = bit / 64;
    const unsigned shift = bit % 64;
    value &= mask_;
    store_relaxed(words_[word], (words_[word] & ~(mask_ << shift)) | (value << shift));
    if (shift + width_ > 64) {
      const unsigned spill = 64 - shift;
      store_relaxed(words_[word + 1], (words_[word + 1] & ~(mask_ >> spill)) | (value >> spill));
    }
  }

  // The cache line holding the cell's first bit, for bulk lookups that prefetch before they read.
  const void* address_of(std::size_t i) const { return &words_[i * width_ / 64]; }

  // Writer only (or with no reader): the raw words, to compare or copy whole arrays.
  const std::vector<std::uint64_t>& words() const { return words_; }
  void assign_words(const std::vector<std::uint64_t>& words) {
    for (std::size_t w = 0; w < words_.size() && w < words.size(); ++w) store_relaxed(words_[w], words[w]);
  }

  friend bool operator==(const PackedCells& a, const PackedCells& b) {
    return a.width_ == b.width_ && a.cells_ == b.cells_ && a.words_ == b.words_;
  }

 private:
  std::size_t cells_ = 0;
  unsigned width_ = 1;
  std::uint64_t mask_ = 1;
  std::vector<std::uint64_t> words_;
};

}  // namespace flowtrack::compact
