// run_concury: the Concury load balancer replaying a client-side capture (replay_rehearsal.hpp), one
// instance per worker.
#include "flowtrack/nf/concury_lb.hpp"
#include "nf_grid.hpp"
#include "replay_rehearsal.hpp"

namespace flowtrack::cli {
namespace {

// How a client-side capture's answers reached Concury: an answer from a VIP came from the backend its
// connection has (the control plane's when it knows the connection, else the one the arrays give its
// client now), so its source becomes that backend's address and port.
class ConcuryAnswers {
 public:
  explicit ConcuryAnswers(LinkType link) : link_(link) {}

  Presented operator()(NfPacket& packet, const ConcuryLb& nf) const {
    const ParsedPacket& p = packet.parsed;
    if (p.ip_version != 4 || !p.has_ports || p.icmp_is_error) return Presented::as_captured;
    const std::uint32_t service = nf.service_of(p.key4.src_addr, p.key4.src_port, p.key4.protocol);
    if (service == ConcuryLb::kNoService) return Presented::as_captured;
    const std::uint16_t backend = nf.backend_for(service, p.key4.dst_addr, p.key4.dst_port);
    if (backend >= nf.services()[service].backends().size()) return Presented::as_captured;
    const BackendConfig& b = nf.services()[service].backends()[backend].config;
    rewrite_ipv4_src(packet.frame, p, b.address);
    if (b.port != 0) rewrite_src_port(packet.frame, p, b.port);
    return parse_frame(packet.frame, link_, packet.parsed) == ParseStatus::ok ? Presented::rewritten : Presented::unpresentable;
  }

 private:
  LinkType link_;
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
        const ConcuryStats& st = nf.stats();
        r.function_counts = {{"rewrites", st.rewrites},     {"repairs", st.repairs},       {"rehomed", st.rehomed}, {"syncs", st.syncs},
                             {"violations", st.violations}, {"false_hits", st.false_hits}};
      });
  return run;
}

}  // namespace flowtrack::cli
