// A replayed trace as a NIC's receive ring would hand it over: every packet already in a writable buffer
// of a per-worker arena, laid out before the clock starts, so that the timed loop copies nothing and a
// function rewrites each packet where it lies (runtime/burst_loop.hpp).
//
// Each buffer is laid out as a NIC driver lays out a DPDK mbuf: headroom (a cache line, kHeadroom), then
// the frame on the next cache line, with room from there for at least kMinRoom bytes and for the packet,
// rounded up to a cache line. So a function may put a tunnel's headers before a packet (nf/tunnel.hpp:
// at most 28 bytes) by starting its frame earlier, and regrow a packet in place into any ICMP error
// that answers it (the link header, 28 bytes, a quoted IP header of at most 60 bytes and 8 bytes of it:
// less than 128).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/nf_packet.hpp"
#include "flowtrack/nf/tunnel.hpp"
#include "flowtrack/table/huge_page_allocator.hpp"

namespace flowtrack {

class ReplaySource {
 public:
  static constexpr std::size_t kMinRoom = 128;
  static constexpr std::uint16_t kHeadroom = 64;
  static_assert(kHeadroom >= kMaxTunnelOverhead);

  // Packets trace[i] for i in `indices`, in that order.
  ReplaySource(const PacketStore& trace, std::span<const std::uint32_t> indices) : link_(trace.link_type()) {
    std::size_t offset = 0;
    slots_.reserve(indices.size());
    for (const std::uint32_t i : indices) {
      const PacketView p = trace[i];
      const std::size_t room = std::max(kMinRoom, (p.bytes.size() + 63) / 64 * 64);
      offset += kHeadroom;
      slots_.push_back({offset, static_cast<std::uint32_t>(p.bytes.size()), static_cast<std::uint32_t>(room),
                        p.wire_length, p.timestamp_ns});
      offset += room;
    }
    // Allocated and written here, before any clock: page faults are the kernel's time, not the run's.
    arena_.resize(offset + 64);
    base_ = arena_.data() + (64 - reinterpret_cast<std::uintptr_t>(arena_.data()) % 64) % 64;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      std::memcpy(base_ + slots_[k].offset, trace[indices[k]].bytes.data(), slots_[k].length);
    }
  }

  LinkType link_type() const { return link_; }
  std::size_t size() const { return slots_.size(); }
  bool done() const { return next_ == slots_.size(); }
  Nanos first_time() const { return slots_.empty() ? 0 : slots_.front().time; }

  // The next packets, up to burst.size(): frame, capacity, headroom, wire length, time and slot of each
  // are set (parsed and hash are the runtime's). Returns how many; 0 once the trace is done. Inlined into
  // the burst loop, as a port's receive is: GCC otherwise leaves it out of line once the loop grows (+4
  // instructions a packet, callgrind of bench nf lb at 1M connections).
  [[gnu::always_inline]] std::size_t next(std::span<NfPacket> burst) {
    std::size_t n = 0;
    for (; n < burst.size() && next_ < slots_.size(); ++n, ++next_) fill(static_cast<std::uint32_t>(next_), burst[n]);
    // The next burst's headers start their way from memory while this burst is processed, as a NIC's
    // driver prefetches the buffers it is about to hand out.
    for (std::size_t k = next_; k < next_ + n && k < slots_.size(); ++k) __builtin_prefetch(base_ + slots_[k].offset, 1);
    return n;
  }

  // Sets frame, capacity, headroom, wire length, time and slot of `packet` to the buffer of `slot`. Reads
  // only the layout fixed at construction: threads that share a source (a dispatched run,
  // dispatched_run.hpp) may each fill packets of slots of their own at once.
  void fill(std::uint32_t slot, NfPacket& packet) {
    const Slot& s = slots_[slot];
    packet.frame = {base_ + s.offset, s.length};
    packet.capacity = s.room;
    packet.headroom = kHeadroom;
    packet.wire_length = s.wire_length;
    packet.time = s.time;
    packet.slot = slot;
  }

  // Starts the replay over from the first packet (the buffers as the functions left them).
  void rewind() { next_ = 0; }

  // The frame of `slot` as a function left it: `length` bytes from where it starts now, `headroom` bytes
  // into the buffer (NfPacket::headroom as the function left it: a tunnel's headers start it earlier).
  std::span<const std::uint8_t> bytes(std::uint32_t slot, std::size_t headroom, std::size_t length) const {
    return {base_ + slots_[slot].offset - (kHeadroom - headroom), length};
  }
  // The buffer of `slot` from where its frame was placed, at the length its packet was captured with.
  std::span<const std::uint8_t> frame(std::uint32_t slot) const { return {base_ + slots_[slot].offset, slots_[slot].length}; }
  Nanos time_of(std::uint32_t slot) const { return slots_[slot].time; }
  // The time of the packet next() hands out next, or kNever once the replay is done.
  Nanos next_time() const { return next_ < slots_.size() ? slots_[next_].time : kNever; }

 private:
  struct Slot {
    std::size_t offset;  // of the frame: its headroom is the kHeadroom bytes before
    std::uint32_t length, room, wire_length;
    Nanos time;
  };

  LinkType link_;
  HugePageVector<Slot> slots_;
  HugePageVector<std::uint8_t> arena_;  // in huge pages, as a NIC's buffers are in DPDK's
  std::uint8_t* base_ = nullptr;  // arena_, cache-line aligned
  std::size_t next_ = 0;
};

}  // namespace flowtrack
