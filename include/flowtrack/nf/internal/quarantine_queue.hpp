// Things (ports, port blocks) waiting out a quarantine before they may be given again (RFC 6888 REQ-8),
// in a ring of fixed capacity.
//
// Invariant: items are pushed in the order of their free_at times. Every item of one queue waits the
// same quarantine and the clock never goes back, so pushing in release order keeps it; a restore pushes
// saved items in their saved order. So the front is always the next item due, and pop_due() stops at
// the first one that is not.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/util/time.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack {

template <class Item>
class QuarantineQueue {
 public:
  struct Entry {
    Nanos free_at;
    Item item;
  };

  explicit QuarantineQueue(std::size_t capacity) : entries_(capacity) {}

  // size() < capacity(): the caller's invariant (an item is in the queue at most once).
  void push(Nanos free_at, Item item) {
    FLOWTRACK_ASSERT(length_ < entries_.size(), "an item waits in the quarantine at most once");
    FLOWTRACK_ASSERT(length_ == 0 || back().free_at <= free_at, "items are pushed in the order of their times");
    std::size_t tail = head_ + length_;
    if (tail >= entries_.size()) tail -= entries_.size();
    entries_[tail] = {free_at, item};
    ++length_;
  }

  // Whether an item free at `free_at` may be pushed now: the queue's order allows it and there is room.
  bool accepts(Nanos free_at) const { return length_ < entries_.size() && (length_ == 0 || back().free_at <= free_at); }

  // Calls on_free(item) for every item due by `now`, oldest first, and forgets them.
  template <class OnFree>
  void pop_due(Nanos now, OnFree&& on_free) {
    while (length_ != 0 && entries_[head_].free_at <= now) {
      on_free(entries_[head_].item);
      if (++head_ == entries_.size()) head_ = 0;
      --length_;
    }
  }

  // Visits every waiting entry, oldest first (what a saved state holds).
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (std::size_t i = 0, at = head_; i < length_; ++i) {
      visit(entries_[at]);
      if (++at == entries_.size()) at = 0;
    }
  }

  void prefetch_front() const { __builtin_prefetch(&entries_[head_]); }
  std::size_t size() const { return length_; }
  std::size_t capacity() const { return entries_.size(); }

 private:
  const Entry& back() const {
    std::size_t last = head_ + length_ - 1;
    if (last >= entries_.size()) last -= entries_.size();
    return entries_[last];
  }

  std::vector<Entry> entries_;
  std::size_t head_ = 0, length_ = 0;
};

}  // namespace flowtrack
