// Fragments without reassembly (RFC 4787 REQ-14): only a datagram's first fragment carries its ports,
// so a NAT translates the first fragment like any packet and remembers how it rewrote the addresses;
// the later fragments, which carry no transport header, find that translation by the datagram's
// identity (source, destination, protocol, IP identification: RFC 791's reassembly key) and get the same
// addresses.
//
// Bounded: a fixed number of slots, allocated once. An entry lives `lifetime` from its first fragment,
// then its slot is free again (nothing is erased: an expired slot is simply reused). A datagram looks at
// kProbes consecutive slots from its hash, so a lookup or an insertion costs at most kProbes compares;
// when all of them hold live datagrams the insertion fails and the caller counts a drop.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/packet/parser.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

// A datagram's identity; addresses as the fragments carry them on arrival (network order).
struct FragmentKey {
  std::uint32_t src_addr = 0, dst_addr = 0;
  std::uint32_t ip_id = 0;
  std::uint8_t protocol = 0;

  static FragmentKey of(const ParsedPacket& p) { return {p.key4.src_addr, p.key4.dst_addr, p.ip_id, p.key4.protocol}; }
  bool operator==(const FragmentKey&) const = default;
};

// The addresses the datagram's first fragment left with (network order).
struct FragmentTranslation {
  std::uint32_t src_addr = 0, dst_addr = 0;
};

class FragmentCache {
 public:
  static constexpr std::size_t kProbes = 8;

  // Room for `capacity` datagrams (at least 1).
  FragmentCache(std::size_t capacity, Nanos lifetime);

  // Remembers (or renews) a datagram's translation at `now`; false when no probed slot is free.
  bool remember(const FragmentKey& key, const FragmentTranslation& translation, Nanos now);
  // The live translation of a datagram, or nullptr.
  const FragmentTranslation* find(const FragmentKey& key, Nanos now) const;

 private:
  struct Slot {
    FragmentKey key;
    FragmentTranslation translation;
    Nanos expires = 0;  // free once now >= expires (0: never used)
  };
  std::size_t home(const FragmentKey& key) const;

  std::vector<Slot> slots_;
  Nanos lifetime_;
};

}  // namespace flowtrack
