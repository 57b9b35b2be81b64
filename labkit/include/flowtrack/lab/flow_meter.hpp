// The bare-table benchmark's network function (`bench scale`): it tracks every IPv4 flow in a flow
// table and counts its packets and bytes, nothing else, so that what a scaling strategy costs shows
// undiluted. It runs in the one burst loop (runtime/burst_loop.hpp) like every function: per burst, one bulk
// lookup (lookup), then the misses' inserts and the per-flow accounting (state); every packet passes.
//
// The meter sees its table through the FlowTable concept only, so the same code runs on a table of
// its own (sharded) or on one shared by all workers (locked, striped, lock-free, concurrent); a
// LockFreeTable additionally gets a reader slot, announced quiescent after every burst, when the meter
// holds no id from the table any more.
//
// Per-flow state is a FlowRecord in a caller-owned array indexed by FlowId (the table's contract).
// With a shared table the array is shared too, but a flow's record is written only by the worker its
// packets are steered to (RSS sends a connection's packets to one worker), so there is no shared write.
// Aging, when on, is a timer wheel per meter over the table's id space: a meter arms the flows it
// inserted and erases them from the table when they expire.
#pragma once

#include <array>
#include <optional>
#include <span>

#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/table/flow_table.hpp"

namespace flowtrack {

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
  std::size_t budget = 4096;  // timers handled per expire() at most; the rest waits for the next call
};

template <FlowTable Table>
  requires std::same_as<typename Table::key_type, FlowKeyV4>
class FlowMeter {
  static constexpr bool kHasReaderSlot = requires(Table& t, unsigned slot) { t.quiescent(slot); };

 public:
  FlowMeter(Table& table, std::span<FlowRecord> records, const AgingOptions& aging, Nanos start)
      : table_(table), records_(records), aging_(aging) {
    if (aging.timeout > 0) wheel_.emplace(table.capacity(), TimerWheelConfig{.tick = aging.tick, .levels = 4, .start = start});
    if constexpr (kHasReaderSlot) reader_slot_ = table.register_reader();
  }
  ~FlowMeter() {
    if constexpr (kHasReaderSlot) table_.unregister_reader(reader_slot_);
  }
  FlowMeter(const FlowMeter&) = delete;
  FlowMeter& operator=(const FlowMeter&) = delete;

  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < burst.size(); ++i) {
      if (burst[i].parsed.ip_version != 4) continue;
      keys_[n] = burst[i].parsed.key4;
      hashes_[n] = burst[i].hash;
      packet_of_[n++] = static_cast<std::uint8_t>(i);
    }
    const std::uint64_t hits = table_.find_bulk(std::span(keys_).first(n), std::span(hashes_).first(n), std::span(ids_).first(n));
    out.stage_done(NfStage::lookup);
    for (std::size_t k = 0; k < n; ++k) {
      if (((hits >> k) & 1) == 0) insert_miss(k, burst[packet_of_[k]].time);
    }
    for (std::size_t k = 0; k < n; ++k) account(k, burst[packet_of_[k]]);
    std::size_t next = 0;  // verdicts in packet order: the metered packets pass, the others are counted drops
    for (std::size_t i = 0; i < burst.size(); ++i) {
      const bool ipv4 = next < n && packet_of_[next] == i;
      Verdict verdict = Verdict::forward;
      if (!ipv4) {
        verdict = counters_.drop(NfDrop::not_ipv4);
      } else if (ids_[next++] == kNoFlow) {
        verdict = counters_.drop(NfDrop::table_full);
      } else {
        ++counters_.forwarded;
      }
      out.verdict(burst[i], verdict);
    }
    if constexpr (kHasReaderSlot) table_.quiescent(reader_slot_);
    out.stage_done(NfStage::state);
  }

  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget) {
    if (!wheel_) return 0;
    const std::size_t n = wheel_->advance(now, std::min(budget, aging_.budget), [&](FlowId id) {
      const FlowRecord& record = records_[id];
      table_.erase(record.key, record.hash);
    });
    counters_.connections_expired += n;
    return n;
  }

  // forwarded: packets metered; connections: flows inserted and expired; drops: not_ipv4, table_full.
  const NfCounters& counters() const { return counters_; }

 private:
  void insert_miss(std::size_t k, Nanos now) {
    const InsertResult result = table_.insert(keys_[k], hashes_[k]);
    if (!result.ok()) {
      ids_[k] = kNoFlow;
      return;
    }
    ids_[k] = result.id;
    if (!result.is_new()) return;  // a duplicate of a key inserted earlier in this burst
    records_[result.id] = FlowRecord{.key = keys_[k], .hash = hashes_[k], .first_seen = now};
    ++counters_.connections_created;
    if (wheel_) wheel_->arm(result.id, now, aging_.timeout);
  }

  void account(std::size_t k, const NfPacket& packet) {
    const FlowId id = ids_[k];
    if (id == kNoFlow) return;
    FlowRecord& record = records_[id];
    ++record.packets;
    record.bytes += packet.wire_length;
    if (wheel_) wheel_->touch(id, packet.time);
  }

  Table& table_;
  std::span<FlowRecord> records_;
  AgingOptions aging_;
  NfCounters counters_;
  std::optional<TimerWheel> wheel_;
  unsigned reader_slot_ = 0;
  std::array<FlowKeyV4, kMaxBurst> keys_;
  std::array<std::uint32_t, kMaxBurst> hashes_;
  std::array<std::uint8_t, kMaxBurst> packet_of_;  // the burst index of each key
  std::array<FlowId, kMaxBurst> ids_;
};

}  // namespace flowtrack
