// One worker's run-to-completion loop body: a burst of up to kBurst packets from the packet store goes
// through parse -> hash -> bulk lookup -> insert of the misses -> per-flow accounting -> expiry, and each
// stage's TSC cycles are added to the worker's counters.
//
// The worker sees its table through the FlowTable concept only, so the same code runs on a table of
// its own (sharded) or on one shared by all workers (locked, striped, lock-free, concurrent); a
// LockFreeTable additionally gets a reader slot, announced quiescent after every burst, when the worker
// holds no id from the table any more.
//
// Per-flow state is a FlowRecord in a caller-owned array indexed by FlowId (the table's contract).
// With a shared table the array is shared too, but a flow's record is written only by the worker its
// packets are steered to (RSS sends a connection's packets to one worker), so there is no shared write.
// Aging, when on, is a timer wheel per worker over the table's id space: a worker arms the flows it
// inserted and erases them from the table when they expire.
//
// The hash of a packet is computed once (CRC32C of the key) and passed to every table call.
#pragma once

#include <x86intrin.h>

#include <array>
#include <optional>
#include <span>

#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/runtime/worker_counters.hpp"
#include "flowtrack/table/flow_table.hpp"

namespace flowtrack {

inline constexpr std::size_t kBurst = 32;

struct FlowRecord {
  FlowKeyV4 key;  // kept for expiry: erasing needs the key
  std::uint32_t hash = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  Nanos first_seen = 0;
};

struct AgingOptions {
  Nanos timeout = 0;  // 0: no aging (flows stay until the table is dropped)
  Nanos tick = kNanosPerMilli;
  std::size_t budget = 4096;  // timers handled per burst at most; the rest waits for the next burst
};

template <FlowTable Table>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
class Worker {
  static constexpr bool kHasReaderSlot = requires(Table& t, unsigned slot) { t.quiescent(slot); };

 public:
  Worker(Table& table, std::span<FlowRecord> records, const AgingOptions& aging, Nanos start,
         WorkerCounters& counters)
      : table_(table), records_(records), aging_(aging), counters_(counters) {
    if (aging.timeout > 0) wheel_.emplace(table.capacity(), TimerWheelConfig{.tick = aging.tick, .levels = 4, .start = start});
    if constexpr (kHasReaderSlot) reader_slot_ = table.register_reader();
  }
  ~Worker() {
    if constexpr (kHasReaderSlot) table_.unregister_reader(reader_slot_);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Processes packets store[i] for i in `burst` (at most kBurst) at time `now`.
  void process(const PacketStore& store, std::span<const std::uint32_t> burst, Nanos now) {
    std::uint64_t t0 = __rdtsc();
    std::size_t n = 0;
    for (const std::uint32_t index : burst) {
      const PacketView packet = store[index];
      ParsedPacket parsed;
      const ParseStatus status = parse_frame(packet.bytes, store.link_type(), parsed);
      if (status != ParseStatus::ok) {
        ++counters_.parse_drops[static_cast<std::size_t>(status)];
      } else if (parsed.ip_version != 4) {
        ++counters_.runtime_drops[static_cast<std::size_t>(RuntimeDrop::not_ipv4)];
      } else {
        keys_[n] = parsed.key4;
        hashes_[n] = flow_hash(parsed.key4);
        lengths_[n] = packet.wire_length;
        ++n;
      }
    }
    counters_.packets += burst.size();
    ++counters_.bursts;
    t0 = charge(Stage::parse, t0);

    const std::uint64_t hits = table_.find_bulk(std::span(keys_).first(n), std::span(hashes_).first(n), std::span(ids_).first(n));
    t0 = charge(Stage::lookup, t0);

    for (std::size_t i = 0; i < n; ++i) {
      if ((hits >> i) & 1) continue;
      insert_miss(i, now);
    }
    t0 = charge(Stage::insert, t0);

    for (std::size_t i = 0; i < n; ++i) {
      const FlowId id = ids_[i];
      if (id == kNoFlow) continue;
      FlowRecord& record = records_[id];
      ++record.packets;
      record.bytes += lengths_[i];
      counters_.bytes += lengths_[i];
      if (wheel_) wheel_->touch(id, now);
    }
    counters_.tracked += n - static_cast<std::size_t>(std::count(ids_.begin(), ids_.begin() + n, kNoFlow));
    t0 = charge(Stage::account, t0);

    if (wheel_) {
      counters_.expired_flows += wheel_->advance(now, aging_.budget, [&](FlowId id) {
        const FlowRecord& record = records_[id];
        table_.erase(record.key, record.hash);
      });
    }
    if constexpr (kHasReaderSlot) table_.quiescent(reader_slot_);
    charge(Stage::expiry, t0);
  }

 private:
  void insert_miss(std::size_t i, Nanos now) {
    const InsertResult result = table_.insert(keys_[i], hashes_[i]);
    if (!result.ok()) {
      ++counters_.runtime_drops[static_cast<std::size_t>(RuntimeDrop::table_full)];
      ids_[i] = kNoFlow;
      return;
    }
    ids_[i] = result.id;
    if (!result.is_new()) return;  // a duplicate of a key inserted earlier in this burst
    records_[result.id] = FlowRecord{.key = keys_[i], .hash = hashes_[i], .first_seen = now};
    ++counters_.new_flows;
    if (wheel_) wheel_->arm(result.id, now, aging_.timeout);
  }

  std::uint64_t charge(Stage stage, std::uint64_t since) {
    const std::uint64_t t = __rdtsc();
    counters_.stage_cycles[static_cast<std::size_t>(stage)] += t - since;
    return t;
  }

  Table& table_;
  std::span<FlowRecord> records_;
  AgingOptions aging_;
  WorkerCounters& counters_;
  std::optional<TimerWheel> wheel_;
  unsigned reader_slot_ = 0;
  std::array<FlowKeyV4, kBurst> keys_;
  std::array<std::uint32_t, kBurst> hashes_;
  std::array<std::uint32_t, kBurst> lengths_;
  std::array<FlowId, kBurst> ids_;
};

}  // namespace flowtrack
