// The flow-table contract: one concept that every table in table/ satisfies, so that every test,
// benchmark and network function runs on every table unchanged.
//
// A flow table maps a connection key to a FlowId: a dense index in [0, capacity) into a state array
// that the caller owns and preallocates. The table chooses the id on insert and keeps it stable for as
// long as the entry lives (even when the entry moves inside the table, as in cuckoo or robin hood), and
// frees it on erase; ids are reused after erase. Keeping state outside the table is what lets every
// design be measured alike.
//
// The caller computes the key's hash once per packet and passes it to every call. The hash must be well
// mixed in all 32 bits for the keys that reach this table: an RSS hash whose low bits chose the core is
// NOT, because every key on one core then shares those bits. Use CRC32C of the key (hash/crc32c.hpp).
//
// Capacity is fixed at construction: an insert into a full table returns InsertStatus::full and leaves
// the table exactly as it was. Nothing on the hot path throws or allocates.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

using FlowId = std::uint32_t;
inline constexpr FlowId kNoFlow = ~FlowId{0};

// The largest burst that find_bulk accepts (its hit mask is one 64-bit word).
inline constexpr std::size_t kMaxBulk = 64;

enum class InsertStatus : std::uint8_t {
  inserted,  // the key was absent; `id` is newly allocated and the caller must initialise its state
  existed,   // the key was present; `id` is its id
  full,      // no room; the table is unchanged; `id` is kNoFlow
  // Only tables with lazy expiry (cuckoo_pp.hpp): the key was absent and took over the slot and the id of
  // an expired flow; the caller must retire that flow's state under `id` before initialising the new one.
  recycled,
};

struct InsertResult {
  FlowId id = kNoFlow;
  InsertStatus status = InsertStatus::full;

  bool ok() const { return status != InsertStatus::full; }
  bool is_new() const { return status == InsertStatus::inserted || status == InsertStatus::recycled; }
};

// What a table promises about concurrent use; the conformance tests hold each table to its promise.
enum class Concurrency : std::uint8_t {
  single_thread,               // no concurrent calls at all
  single_writer_many_readers,  // find/find_bulk may run on any thread while one thread modifies
  many_writers,                // every call may run on any thread at any time
};

// What a scan visitor tells the table to do with the entry it was shown.
enum class ScanAction : std::uint8_t { keep, erase };

template <class Key>
concept FlowKeyType = std::same_as<Key, FlowKeyV4> || std::same_as<Key, FlowKeyV6>;

namespace detail {
template <class Key>
struct KeepEverything {
  ScanAction operator()(const Key&, FlowId) const { return ScanAction::keep; }
};
}  // namespace detail

// find_bulk(keys, hashes, ids) looks up keys.size() <= kMaxBulk keys, writes each id (kNoFlow for a
// miss) and returns a mask whose bit i is set when keys[i] was found. It must give exactly what
// find() gives key by key; its point is to overlap the memory accesses of the burst.
//
// scan(cursor, max_positions, visit) walks the table's internal positions [cursor, cursor +
// max_positions), calls visit(key, id) for every live entry there, erases the entry when visit returns
// ScanAction::erase, advances cursor and wraps it to 0 after the last position; it returns the number
// of entries visited. A sweep of scan_positions() positions from cursor 0 visits every entry that is
// present for the whole sweep exactly once, however many the visitor erases. This is how aging scans
// incrementally and how iteration is written (for_each_flow below).
template <class T>
concept FlowTable =
    FlowKeyType<typename T::key_type> && std::constructible_from<T, std::size_t> &&
    requires(T& table, const T& const_table, const typename T::key_type& key, std::uint32_t hash,
             std::span<const typename T::key_type> keys, std::span<const std::uint32_t> hashes,
             std::span<FlowId> ids, std::size_t& cursor, std::size_t count) {
      { T::kName } -> std::convertible_to<std::string_view>;
      { T::kConcurrency } -> std::convertible_to<Concurrency>;
      { const_table.find(key, hash) } -> std::same_as<FlowId>;
      { const_table.find_bulk(keys, hashes, ids) } -> std::same_as<std::uint64_t>;
      { table.insert(key, hash) } -> std::same_as<InsertResult>;
      { table.erase(key, hash) } -> std::same_as<bool>;
      { table.scan(cursor, count, detail::KeepEverything<typename T::key_type>{}) } -> std::same_as<std::size_t>;
      { const_table.scan_positions() } -> std::same_as<std::size_t>;
      { const_table.size() } -> std::same_as<std::size_t>;
      { const_table.capacity() } -> std::same_as<std::size_t>;
      { const_table.memory_bytes() } -> std::same_as<std::size_t>;
    };

// A table whose entries can be removed without freeing their ids, for lock-free readers: a reader may
// still hold the id of an entry the writer just removed, so the id must not be handed to a new flow
// until the reader is done with it (sync/lock_free_table.hpp decides when, by a grace period).
//   retire(key, hash)  removes the entry like erase() but keeps its id allocated; returns the id, or
//                      kNoFlow when the key is absent. Allowed inside a scan visitor (it frees nothing).
//   reclaim(id)        frees a retired id for reuse.
//   stored_hash(id)    the hash the entry was inserted with (for retiring what a scan found).
// A retired id counts in size() and against capacity until it is reclaimed.
template <class T>
concept RetiringTable = FlowTable<T> && requires(T& table, const T& const_table, const typename T::key_type& key,
                                                 std::uint32_t hash, FlowId id) {
  { table.retire(key, hash) } -> std::same_as<FlowId>;
  { table.reclaim(id) } -> std::same_as<void>;
  { const_table.stored_hash(id) } -> std::same_as<std::uint32_t>;
};

// A table that can store an entry under an id its caller chooses, so that the caller's own numbering
// (the connection tracker's: twice the connection plus the direction) is what a lookup returns and no
// id-to-owner array sits between a hit and the caller's state.
//   insert_named(key, hash, id)  inserts under `id` (< capacity(), held by no live entry); an existing
//                                key returns its own id with InsertStatus::existed, a full table
//                                InsertStatus::full, and the table is then unchanged.
//   erase_named(key, hash)       removes an entry inserted so; false when the key is absent.
// A table instance takes either its own ids (insert, erase, scan) or its caller's (these two), never
// both: scan() walks the ids the table handed out, so it does not see caller-named entries.
template <class T>
concept NamedIdTable = FlowTable<T> && requires(T& table, const typename T::key_type& key, std::uint32_t hash,
                                                FlowId id) {
  { table.insert_named(key, hash, id) } -> std::same_as<InsertResult>;
  { table.erase_named(key, hash) } -> std::same_as<bool>;
};

// find_bulk for a table without a staged one: find() key by key, after whatever prefetching the table
// did. Returns the hit mask.
template <class Table, class Key>
std::uint64_t find_each(const Table& table, std::span<const Key> keys, std::span<const std::uint32_t> hashes,
                        std::span<FlowId> ids) {
  std::uint64_t hits = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ids[i] = table.find(keys[i], hashes[i]);
    hits |= std::uint64_t{ids[i] != kNoFlow} << i;
  }
  return hits;
}

// Visits every live entry once: visit(key, id).
template <FlowTable Table, class Visit>
void for_each_flow(Table& table, Visit&& visit) {
  std::size_t cursor = 0;
  table.scan(cursor, table.scan_positions(), [&](const typename Table::key_type& key, FlowId id) {
    visit(key, id);
    return ScanAction::keep;
  });
}

}  // namespace flowtrack
