// The live data plane's part of a function's TOML configuration (`flowtrack run --dpdk`): which DPDK
// ports the function runs on, their IPv4 addresses, where packets go, and how often the run reports.
//
//   [dataplane]
//   stats_interval = 2                   # seconds between stats lines
//   control_socket = "/run/flowtrack.sock"  # optional: the control socket (`flowtrack ctl`)
//   control_group = "netadmin"           # optional: a group that may use it too (else owner only)
//   metrics = "127.0.0.1:9469"           # optional: Prometheus text at http://127.0.0.1:9469/metrics
//   rx_queues = 1                        # optional: RX queues a port gives the workers (default: one each)
//   mbufs = 4000000                      # optional: the mbuf pool's size (default: what the ports need)
//   mbuf_size = 256                      # optional: frame bytes an mbuf holds (default 2048)
//   [[dataplane.port]]                   # one or two (nat and lb: two, one per role)
//   device = "net_af_packet0"            # the DPDK port's name: a --vdev name or a PCI address
//   address = "10.10.1.1/24"             # the port's address and its directly attached network
//   gateway = "10.10.1.254"              # optional: next hop for destinations on no port's network
//   role = "inside"                      # the side it faces (port_role.hpp): nat "inside" | "outside",
//                                        # lb "clients" | "backends"; fwd and slb take none
//   [[dataplane.neighbor]]               # optional: a next hop's MAC, when it cannot be resolved by ARP
//   address = "10.10.1.254"
//   mac = "02:00:00:00:00:01"
//   [dataplane.pair]                     # optional, nat only: one of an active/standby pair
//   role = "active"                      # "active" | "standby": the role it starts towards
//   local = "192.0.2.1:7400"             # the sync link's UDP address on a management interface
//   peer = "192.0.2.2:7400"              # the other NAT's
//   key_file = "/etc/flowtrack/pair.key" # the shared key (16..1024 bytes, owner-only)
//   dead_interval_ms = 400               # the active's silence after which it is taken for gone
//   sync = true                          # false: heartbeats and takeover only, no state sent
//   [dataplane.announce]                 # optional, slb, lb and concury: the VIPs for a routing speaker
//   file = "/run/flowtrack/vips.conf"    # the VIPs to announce, as BIRD static routes (route_announcer.hpp)
//   command = ["birdc", "configure"]     # optional: run after each change of the file (no shell)
//   linger_ms = 300                      # at a stop, how long the data plane serves after the withdrawal
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flowtrack/nf/config_text.hpp"
#include "flowtrack/nf/port_role.hpp"
#include "flowtrack/packet/mac_address.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

// DPDK's default frame room (RTE_MBUF_DEFAULT_DATAROOM): an Ethernet frame of up to 2048 bytes.
inline constexpr std::uint16_t kDefaultMbufSize = 2048;

struct DataplanePortConfig {
  std::string device;
  std::uint32_t address = 0;  // network order
  std::uint8_t prefix_length = 24;
  std::uint32_t gateway = 0;  // network order; 0: none
  PortRole role = PortRole::unknown;
};

struct DataplaneNeighbor {
  std::uint32_t address = 0;  // network order
  MacAddress mac{};
};

struct DataplaneListen {
  std::uint32_t address = 0;  // network order
  std::uint16_t port = 0;     // host order
};

// One NAT of an active/standby pair (runtime/nat_pair.hpp): its sync link, a kernel UDP socket on a
// management interface (never a DPDK port), and when it takes over.
struct PairConfig {
  enum class Role : std::uint8_t { active, standby };
  Role role = Role::standby;
  DataplaneListen local, peer;
  std::string key_file;
  Nanos dead_interval = 400 * kNanosPerMilli;
  bool sync = true;  // false: the standby keeps no state (its takeover breaks every connection)
};

// Where an instance tells its routing speaker which VIPs to announce (runtime/route_announcer.hpp).
struct AnnounceConfig {
  std::string file;
  std::vector<std::string> command;  // empty: none (the speaker reads the file by itself)
  Nanos linger = 300 * kNanosPerMilli;
};

// One stateful LB instance among several behind ECMP (runtime/lb_peers.hpp): the link on which it
// shares its connections off today's choice with its peers (nf/lb_peer_link.hpp), a kernel UDP socket
// on a management interface, one to each peer, all bound to `local`.
struct LbPeersConfig {
  DataplaneListen local;
  std::vector<DataplaneListen> peers;  // at most kMaxLbPeers (lb_exceptions.hpp)
  std::string key_file;                        // the link's key, as the pair's (16 to 1024 bytes, owner-only)
  Nanos dead_interval = 400 * kNanosPerMilli;  // a peer unheard this long is not queued for until it asks
  std::size_t max_exceptions = 1'000'000;      // the peers' exceptions held at most (more: refused, counted)
};

struct DataplaneConfig {
  std::vector<DataplanePortConfig> ports;
  std::vector<DataplaneNeighbor> neighbors;
  Nanos stats_interval = 2 * kNanosPerSecond;
  std::string control_socket;  // empty: none
  std::string control_group;   // empty: owner only
  std::optional<DataplaneListen> metrics;  // none: no metrics listener
  // The workers that poll a port's RX queues: at most this many (0: every worker, as far as the PMD has
  // queues); the others take in only what these hand them (the software dispatcher).
  unsigned rx_queues = 0;
  // The mbuf pool holds at least this many (0: what the ports' queues, the hand-off rings and the
  // workers' bursts need, dpdk_port_group.cpp). A PMD that keeps frames of its own in mbufs needs more:
  // net_pcap's infinite_rx holds its whole trace, an mbuf a frame.
  std::size_t mbufs = 0;
  // Frame bytes each mbuf holds after its headroom: a longer frame takes several (dropped: segmented).
  std::uint16_t mbuf_size = kDefaultMbufSize;
  std::optional<PairConfig> pair;  // none: a NAT on its own
  std::optional<AnnounceConfig> announce;  // none: the VIPs are announced (or not) without the instance's word
  std::optional<LbPeersConfig> peers;  // none: an LB that shares nothing (alone, or behind ECMP without it)
};

// The roles the ports of function `nf` take: the NAT's two ports face the inside and the outside, the
// stateful LB's the clients and the backends (each port one role, each role one port: the function
// draws its boundary between them); none for the others.
std::vector<PortRole> port_roles_of(std::string_view nf);

// Reads [dataplane] of the file for function `nf` (ConfigError, nf_config.hpp, naming file, line and
// key, if it is missing or wrong: a role the function does not take, or one it needs and is not given;
// ports that overlap or a gateway on no port's network, nf_config.hpp).
DataplaneConfig load_dataplane_config(const ConfigText& text, std::string_view nf);
DataplaneConfig load_dataplane_config(const std::string& path, std::string_view nf);

}  // namespace flowtrack
