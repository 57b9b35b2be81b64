// run_concury: the Concury load balancer replaying a client-side capture (replay_rehearsal.hpp), one
// instance per worker.
#include <absl/container/flat_hash_map.h>

#include <optional>
#include <utility>

#include "flowtrack/nf/concury_lb.hpp"
#include "nf_grid.hpp"
#include "replay_rehearsal.hpp"

namespace flowtrack::cli {
namespace {

// How a client-side capture's answers reached Concury: an answer from a VIP came from the backend its
// connection's client packets were last sent to, read from their destination as Concury rewrote it (so
// that an answer after a rewrite of the arrays comes from the backend that has the connection, as it
// would, and Concury's repairs are rehearsed); for a connection whose client has sent nothing through
// Concury yet, from the backend the arrays give its client now (the control plane's, when it knows it).
class ConcuryAnswers {
 public:
  explicit ConcuryAnswers(LinkType link) : link_(link) {}

  Presented operator()(NfPacket& packet, const ConcuryLb& nf) {
    const ParsedPacket& p = packet.parsed;
    client_packet_.reset();
    if (p.ip_version != 4 || !p.has_ports || p.icmp_is_error) return Presented::as_captured;
    if (const std::uint32_t to = nf.service_of(p.key4.dst_addr, p.key4.dst_port, p.key4.protocol); to != ConcuryLb::kNoService) {
      client_packet_ = Connection{to, p.key4.src_addr, p.key4.src_port};  // where it goes is read once it has gone
      return Presented::as_captured;
    }
    const std::uint32_t service = nf.service_of(p.key4.src_addr, p.key4.src_port, p.key4.protocol);
    if (service == ConcuryLb::kNoService) return Presented::as_captured;
    const auto sent = sent_to_.find(Connection{service, p.key4.dst_addr, p.key4.dst_port});
    const std::uint16_t backend = sent != sent_to_.end() ? sent->second : nf.backend_for(service, p.key4.dst_addr, p.key4.dst_port);
    if (backend >= nf.services()[service].backends().size()) return Presented::as_captured;
    const BackendConfig& b = nf.services()[service].backends()[backend].config;
    rewrite_ipv4_src(packet.frame, p, b.address);
    if (b.port != 0) rewrite_src_port(packet.frame, p, b.port);
    return parse_frame(packet.frame, link_, packet.parsed) == ParseStatus::ok ? Presented::rewritten : Presented::unpresentable;
  }

  // A client packet's backend, from the destination Concury gave it (none when it was dropped).
  void processed(const NfPacket& packet, const ConcuryLb& nf) {
    if (!client_packet_) return;
    ParsedPacket out;
    if (parse_frame(packet.frame, link_, out) != ParseStatus::ok) return;
    const Service& service = nf.services()[client_packet_->service];
    const std::vector<Backend>& pool = service.backends();
    for (std::size_t b = 0; b < pool.size(); ++b) {
      const std::uint16_t port = pool[b].config.port != 0 ? pool[b].config.port : service.config().port;
      if (pool[b].config.address == out.key4.dst_addr && port == out.key4.dst_port) {
        sent_to_[*client_packet_] = static_cast<std::uint16_t>(b);
        return;
      }
    }
  }

 private:
  struct Connection {
    std::uint32_t service, client_addr;
    std::uint16_t client_port;
    friend bool operator==(const Connection&, const Connection&) = default;
    template <class H>
    friend H AbslHashValue(H h, const Connection& c) {
      return H::combine(std::move(h), c.service, c.client_addr, c.client_port);
    }
  };
  LinkType link_;
  std::optional<Connection> client_packet_;  // the packet being presented, when a client's
  absl::flat_hash_map<Connection, std::uint16_t> sent_to_;
};

}  // namespace

NfRun run_concury(const NfChoice& choice, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
                  const NfRunOptions& options) {
  NfRun run;
  std::tie(run.workers, run.unpresentable) = run_rehearsed(
      trace, partition, choice.workers, NfScaling::sharded, options,
      [&](unsigned, unsigned, Nanos) {
        auto nf = std::make_unique<ConcuryLb>(
            configs.lb, choice.control_plane == "thread" ? ControlPlanePlace::own_thread : ControlPlanePlace::worker);
        if (choice.audit) nf->enable_audit();
        return nf;
      },
      ConcuryAnswers(trace.link_type()),
      [](const ConcuryLb& nf, WorkerResult& r) {
        // The control plane forgets a connection only after the longest timeout: at the end of any
        // shorter run it holds the most it ever held.
        r.live_connections = r.peak_connections = nf.known_connections();
        for (std::uint32_t s = 0; s < nf.services().size(); ++s) {
          const std::vector<Backend>& pool = nf.services()[s].backends();
          for (std::size_t b = 0; b < pool.size(); ++b) {
            r.backends[pool[b].config.name] += nf.new_connections(s, static_cast<std::uint16_t>(b));
          }
        }
        r.lb_stats += lb_stats(nf.services(), [&](std::uint32_t s, std::uint32_t b) {
          return nf.new_connections(s, static_cast<std::uint16_t>(b));
        });
        const ConcuryStats& st = nf.stats();
        r.function_counts = {{"rewrites", st.rewrites},     {"repairs", st.repairs},       {"rehomed", st.rehomed}, {"syncs", st.syncs},
                             {"violations", st.violations}, {"false_hits", st.false_hits}};
      });
  return run;
}

}  // namespace flowtrack::cli
