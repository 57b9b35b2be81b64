// The NAT's configuration (its behaviour is described in nat44.hpp), apart from the NAT's template so
// that configuration readers and launchers need not compile it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flowtrack/conntrack/timeouts.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

enum class NatFiltering : std::uint8_t { endpoint_independent, address_dependent };

// Session timeouts at or above the RFC minimums: UDP 2 min (RFC 4787 REQ-5; 5 min once replied, its
// recommendation), TCP established 2 h 4 min and transitory 4 min (RFC 5382 REQ-5), 4 min after a RST
// (RFC 7857), ICMP queries 60 s (RFC 5508).
ConntrackTimeouts nat_timeouts();

// A NAT timeout below its RFC minimum: the [timeouts] key, the requirement ("RFC 4787 REQ-5") and
// what it asks for, the minimum and the value.
struct NatTimeoutShortfall {
  std::string key;  // "udp_unreplied", "tcp_established", ...
  std::string requirement;
  std::string subject;  // "a UDP mapping", "an established TCP session", ...
  Nanos minimum = 0;
  Nanos value = 0;
};

// The first timeout of `t` below its minimum: UDP 2 min (RFC 4787 REQ-5), TCP established 2 h 4 min
// and every other TCP state (transitory) 4 min (RFC 5382 REQ-5), ICMP queries 60 s (RFC 5508 REQ-1);
// none for `other`, which no RFC bounds. The configuration refuses such a timeout unless it says
// `below_rfc_minimums = true` in [nat] (nf_config.hpp).
std::optional<NatTimeoutShortfall> nat_timeout_below_rfc_minimum(const ConntrackTimeouts& t);

struct NatConfig {
  std::uint32_t inside_network = 0;  // network order
  std::uint8_t inside_prefix_length = 8;
  std::vector<std::uint32_t> pool;   // public addresses, network order
  std::uint16_t port_first = 1024;   // host order; the range is cut in equal slices, one per core
  std::uint16_t port_last = 65535;
  // Ports given to subscribers in blocks of this many (port_blocks.hpp: one log record per block), from
  // each worker's slice; 0: port by port, each protocol apart (port_allocator.hpp).
  std::uint16_t block_size = 0;
  // Where the control plane writes the blocks' records (port_block_journal.hpp): a file of JSON
  // lines ("" for none), and syslog too. Read by whoever runs the NAT, not by the NAT.
  std::string block_log;
  bool block_log_syslog = false;
  NatFiltering filtering = NatFiltering::endpoint_independent;
  Nanos port_quarantine = 120 * kNanosPerSecond;
  std::size_t max_sessions = 1 << 20;  // per core
  std::size_t max_mappings = 1 << 18;  // per core
  // Per-subscriber port quota (RFC 6888 REQ-4): at most this many mappings per inside address and
  // protocol (TCP, UDP, ICMP counted apart), on each core; 0: no quota. A refused mapping is a drop
  // counted as port_quota.
  std::uint32_t port_quota = 0;
  // Answer a new mapping refused for want of a port (no_port) or by the quota (port_quota) with an ICMP
  // "communication administratively prohibited" (type 3, code 13) to the inside host, from the public
  // address paired with it (icmp_answer.hpp); the drop is still counted.
  bool icmp_on_exhaustion = false;
  // Fragments (RFC 4787 REQ-14, fragment_cache.hpp, fragment_hold.hpp): how many datagrams' translations
  // are remembered from their first fragments, how many later fragments may wait for their first one,
  // and how long either lasts. Per core.
  std::size_t fragment_datagrams = 1024;
  std::size_t fragments_held = 64;
  Nanos fragment_timeout = 5 * kNanosPerSecond;
  ConntrackTimeouts timeouts = nat_timeouts();
  std::uint64_t seed = 1;
};

// The core that owns an external port (host order) when the range is cut among `cores`.
unsigned nat_owner_of_port(const NatConfig& config, unsigned cores, std::uint16_t port);

}  // namespace flowtrack
