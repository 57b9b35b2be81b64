// "dpdk", "dpdk-rwlock", "dpdk-lf": adapters over DPDK's rte_hash (a bucketized cuckoo table with
// 16-bit signatures), the anchor our own cuckoo is measured against.
//
// The FlowId is the key position rte_hash returns, which stays fixed while the key lives (rte_hash moves
// bucket entries, not keys). Positions are in [0, capacity) because no mode uses per-lcore slot caches.
// All calls pass the caller's hash (the *_with_hash API), so rte_hash never hashes.
//
// Modes (selected by type, each its own name):
//  - plain:     no concurrency support; single thread.
//  - rwlock:    RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY: readers and the writer take DPDK's rwlock;
//               single writer, many readers.
//  - lock_free: RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF with extendable buckets: readers never block,
//               they retry on a version change; single writer, many readers. DPDK does not free a
//               deleted key's slot in this mode; erase() frees it at once, which is only safe when no
//               reader may still hold the position; retire() and reclaim() split the two steps, and the lock-free
//               strategy (sync/lock_free_table.hpp) reclaims after a grace period.
//
// Footprint: measured, as the growth of DPDK's heap when the table was created.
#pragma once

#include <rte_hash.h>
#include <rte_malloc.h>

#include <array>
#include <atomic>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/dpdk_eal.hpp"
#include "flowtrack/table/flow_table.hpp"

namespace flowtrack {

enum class DpdkMode : std::uint8_t { plain, rwlock, lock_free };

template <FlowKeyType Key, DpdkMode Mode = DpdkMode::plain>
class DpdkTable {
 public:
  using key_type = Key;
  static constexpr std::string_view kName =
      Mode == DpdkMode::plain ? "dpdk" : (Mode == DpdkMode::rwlock ? "dpdk-rwlock" : "dpdk-lf");
  static constexpr Concurrency kConcurrency =
      Mode == DpdkMode::plain ? Concurrency::single_thread : Concurrency::single_writer_many_readers;

  explicit DpdkTable(std::size_t capacity) : capacity_(capacity), hashes_(capacity) {
    ensure_dpdk_eal();
    static std::atomic<unsigned> instance{0};
    const std::string name = fmt::format("ft{}", instance++);
    rte_hash_parameters params{};
    params.name = name.c_str();
    params.entries = static_cast<std::uint32_t>(std::max<std::size_t>(capacity, 8));
    params.key_len = sizeof(Key);
    params.hash_func = &hash_function;
    params.socket_id = SOCKET_ID_ANY;
    if constexpr (Mode == DpdkMode::rwlock) params.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY;
    if constexpr (Mode == DpdkMode::lock_free) {
      params.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF | RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
    }
    const std::size_t heap_before = heap_bytes();
    table_ = rte_hash_create(&params);
    if (table_ == nullptr) throw std::runtime_error(fmt::format("rte_hash_create({} entries) failed", capacity));
    dpdk_bytes_ = heap_bytes() - heap_before;
  }

  DpdkTable(const DpdkTable&) = delete;
  DpdkTable& operator=(const DpdkTable&) = delete;
  ~DpdkTable() { rte_hash_free(table_); }

  FlowId find(const Key& key, std::uint32_t hash) const {
    const std::int32_t position = rte_hash_lookup_with_hash(table_, &key, hash);
    return position >= 0 ? static_cast<FlowId>(position) : kNoFlow;
  }

  std::uint64_t find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                          std::span<FlowId> ids) const {
    std::array<const void*, kMaxBulk> pointers;
    std::array<hash_sig_t, kMaxBulk> signatures;  // the API takes them non-const
    std::array<std::int32_t, kMaxBulk> positions;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      pointers[i] = &keys[i];
      signatures[i] = hashes[i];
    }
    rte_hash_lookup_with_hash_bulk(table_, pointers.data(), signatures.data(), static_cast<std::uint32_t>(keys.size()),
                                   positions.data());
    std::uint64_t hits = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ids[i] = positions[i] >= 0 ? static_cast<FlowId>(positions[i]) : kNoFlow;
      hits |= std::uint64_t{positions[i] >= 0} << i;
    }
    return hits;
  }

  InsertResult insert(const Key& key, std::uint32_t hash) {
    if (const FlowId found = find(key, hash); found != kNoFlow) return {found, InsertStatus::existed};
    if (size() >= capacity_) return {};
    const std::int32_t position = rte_hash_add_key_with_hash(table_, &key, hash);
    if (position < 0) return {};  // -ENOSPC: no room in either bucket; the table is unchanged
    hashes_[position] = hash;
    return {static_cast<FlowId>(position), InsertStatus::inserted};
  }

  bool erase(const Key& key, std::uint32_t hash) {
    const std::int32_t position = rte_hash_del_key_with_hash(table_, &key, hash);
    if (position < 0) return false;
    if constexpr (Mode == DpdkMode::lock_free) rte_hash_free_key_with_position(table_, position);
    return true;
  }

  // lock_free only (the mode in which DPDK does not free a deleted key's slot): the RetiringTable
  // contract of flow_table.hpp, mapped onto rte_hash's own delete-then-free-position protocol.
  FlowId retire(const Key& key, std::uint32_t hash)
    requires(Mode == DpdkMode::lock_free)
  {
    const std::int32_t position = rte_hash_del_key_with_hash(table_, &key, hash);
    return position >= 0 ? static_cast<FlowId>(position) : kNoFlow;
  }
  void reclaim(FlowId id)
    requires(Mode == DpdkMode::lock_free)
  {
    rte_hash_free_key_with_position(table_, static_cast<std::int32_t>(id));
  }
  std::uint32_t stored_hash(FlowId id) const { return hashes_[id]; }

  template <class Visit>
  std::size_t scan(std::size_t& cursor, std::size_t max_positions, Visit&& visit) {
    std::size_t visited = 0;
    const std::size_t end = std::min(cursor + max_positions, capacity_);
    for (; cursor < end; ++cursor) {
      void* stored = nullptr;
      if (rte_hash_get_key_with_position(table_, static_cast<std::int32_t>(cursor), &stored) != 0) continue;
      Key key;  // rte_hash stores keys 8-byte aligned; FlowKeyV4 wants 16: copy, do not reference
      std::memcpy(&key, stored, sizeof(Key));
      ++visited;
      if (visit(key, static_cast<FlowId>(cursor)) == ScanAction::erase) erase(key, hashes_[cursor]);
    }
    if (cursor == capacity_) cursor = 0;
    return visited;
  }

  std::size_t scan_positions() const { return capacity_; }
  std::size_t size() const { return static_cast<std::size_t>(rte_hash_count(table_)); }
  std::size_t capacity() const { return capacity_; }
  std::size_t memory_bytes() const { return sizeof(*this) + dpdk_bytes_ + hashes_.capacity() * sizeof(std::uint32_t); }

 private:
  // Only rte_hash_hash() would call it (flowtrack always passes the hash); kept consistent anyway.
  static std::uint32_t hash_function(const void* key, std::uint32_t, std::uint32_t seed) {
    Key copy;
    std::memcpy(&copy, key, sizeof(Key));
    return flow_hash(copy, seed);
  }

  static std::size_t heap_bytes() {
    std::size_t total = 0;
    for (unsigned socket = 0; socket < rte_socket_count(); ++socket) {
      rte_malloc_socket_stats stats{};
      if (rte_malloc_get_socket_stats(static_cast<int>(rte_socket_id_by_idx(socket)), &stats) == 0) {
        total += stats.heap_allocsz_bytes;
      }
    }
    return total;
  }

  rte_hash* table_ = nullptr;
  std::size_t capacity_;
  std::size_t dpdk_bytes_ = 0;
  std::vector<std::uint32_t> hashes_;  // by position: scan erases by position
};

}  // namespace flowtrack
