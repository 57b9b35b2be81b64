// The lock-free scaling strategy ("lockfree"): one table shared by every worker, lookups without any
// lock, writes serialised, and FlowIds of removed entries reused only after a grace period.
//
// The inner table must promise single_writer_many_readers (cuckoo-lf: optimistic version stripes;
// dpdk-lf: rte_hash's RW_CONCURRENCY_LF) and be a RetiringTable. Writers (insert, erase, scan) take a
// Spinlock, so the inner table sees one writer at a time. Erase retires the entry: its id leaves the
// table at once but stays allocated, queued with a QSBR token (sync/qsbr.hpp); writers reclaim the ids
// whose token every reader has passed. So a reader that found id X, and then reads or writes the
// caller's state[X] until its next quiescent(), never shares X with a new flow.
//
// Readers: every thread that calls find or find_bulk must hold a reader slot (register_reader) and call
// quiescent(slot) whenever it holds no id obtained from the table (the runtime: after each burst). A
// registered reader that stops announcing (stuck, or descheduled by the OS: pin workers to cores of
// their own) holds reclamation back; ids then run out and inserts fail as full, which is the correct,
// counted outcome.
#pragma once

#include <algorithm>
#include <mutex>
#include <string_view>
#include <vector>

#include "flowtrack/sync/qsbr.hpp"
#include "flowtrack/util/spinlock.hpp"
#include "flowtrack/table/flow_table.hpp"

namespace flowtrack {

template <RetiringTable Table>
  requires(Table::kConcurrency == Concurrency::single_writer_many_readers)
class LockFreeTable {
 public:
  using key_type = typename Table::key_type;
  static constexpr std::string_view kName = Table::kName;
  static constexpr Concurrency kConcurrency = Concurrency::many_writers;
  static constexpr unsigned kDefaultMaxReaders = 64;

  explicit LockFreeTable(std::size_t capacity, unsigned max_readers = kDefaultMaxReaders)
      : table_(capacity), qsbr_(max_readers), limbo_(std::max<std::size_t>(table_.capacity(), 1)), retired_(table_.capacity(), false) {}

  unsigned register_reader() { return qsbr_.register_reader(); }
  void unregister_reader(unsigned slot) { qsbr_.unregister_reader(slot); }
  void quiescent(unsigned slot) { qsbr_.quiescent(slot); }

  FlowId find(const key_type& key, std::uint32_t hash) const { return table_.find(key, hash); }

  std::uint64_t find_bulk(std::span<const key_type> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    return table_.find_bulk(keys, hashes, ids);
  }

  InsertResult insert(const key_type& key, std::uint32_t hash) {
    std::lock_guard guard(writer_);
    reclaim_passed();
    return table_.insert(key, hash);
  }

  bool erase(const key_type& key, std::uint32_t hash) {
    std::lock_guard guard(writer_);
    const FlowId id = table_.retire(key, hash);
    if (id == kNoFlow) return false;
    defer(id);
    reclaim_passed();
    return true;
  }

  // Visits live entries only (a retired id waiting for its grace period is skipped); an erase asked by
  // the visitor retires the entry like erase().
  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    std::lock_guard guard(writer_);
    std::size_t visited = 0;
    table_.scan(cursor, max_positions, [&](const key_type& key, FlowId id) {
      if (retired_[id]) return ScanAction::keep;
      ++visited;
      if (visit(key, id) == ScanAction::erase && table_.retire(key, table_.stored_hash(id)) == id) defer(id);
      return ScanAction::keep;
    });
    reclaim_passed();
    return visited;
  }

  // Reclaims every id whose grace period is over; what remains waits for a reader's quiescent().
  void reclaim_now() {
    std::lock_guard guard(writer_);
    reclaim_passed();
  }

  // Retired ids not yet reusable.
  std::size_t pending() const {
    std::lock_guard guard(writer_);
    return count_;
  }

  std::size_t scan_positions() const { return table_.scan_positions(); }
  // Live entries (retired ones excluded).
  std::size_t size() const {
    std::lock_guard guard(writer_);
    return table_.size() - count_;
  }
  std::size_t capacity() const { return table_.capacity(); }
  std::size_t memory_bytes() const {
    return sizeof(*this) - sizeof(Table) + table_.memory_bytes() + limbo_.capacity() * sizeof(Retired) +
           retired_.capacity() / 8 + qsbr_.max_readers() * 64;
  }

 private:
  struct Retired {
    FlowId id;
    std::uint64_t token;
  };

  // Queues a retired id. The FIFO cannot overflow: it holds only allocated ids, at most capacity.
  void defer(FlowId id) {
    retired_[id] = true;
    limbo_[(head_ + count_) % limbo_.size()] = {id, qsbr_.retire()};
    ++count_;
  }

  // Tokens grow along the FIFO, so reclaiming stops at the first one the readers have not passed. The
  // horizon only grows, so the last one read stays valid and is refreshed (a walk over every reader
  // slot) only when the oldest retired id is beyond it.
  void reclaim_passed() {
    if (count_ == 0) return;
    if (limbo_[head_].token > horizon_) horizon_ = qsbr_.horizon();
    while (count_ > 0 && limbo_[head_].token <= horizon_) {
      const FlowId id = limbo_[head_].id;
      retired_[id] = false;
      table_.reclaim(id);
      head_ = (head_ + 1) % limbo_.size();
      --count_;
    }
  }

  alignas(64) mutable Spinlock writer_;
  alignas(64) Table table_;  // readers load its fields; keep them off the writer lock's cache line
  QsbrDomain qsbr_;
  // Writer-only state, guarded by writer_.
  std::vector<Retired> limbo_;  // ring: [head_, head_ + count_) in retirement order
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::uint64_t horizon_ = 0;  // a horizon read from qsbr_ earlier (a lower bound of the current one)
  std::vector<bool> retired_;  // by id: retired and not yet reclaimed
};

}  // namespace flowtrack
