// run_concury: the Concury load balancer replaying a client-side capture (concury_answers.hpp), one
// instance per worker.
#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/runtime/concury_answers.hpp"
#include "flowtrack/runtime/replay_rehearsal.hpp"
#include "nf_grid.hpp"

namespace flowtrack::cli {

NfRun run_concury(const NfChoice& choice, const NfConfigs& configs, const PacketStore& trace, const PacketPartition& partition,
                  const ReplayOptions& options) {
  const ControlPlanePlace place = choice.control_plane == "thread" ? ControlPlanePlace::own_thread : ControlPlanePlace::worker;
  const RehearsedReplay r = rehearse_and_replay(
      trace, partition, false, options, [&](unsigned, unsigned, Nanos) { return std::make_unique<ConcuryLb>(configs.lb, place); },
      ConcuryAnswers(trace.link_type()), [](const ConcuryLb& nf, WorkerReport& report) {
        report.live_connections = nf.known_connections();
        report.peak_connections = nf.peak_connections();
        for (std::uint32_t s = 0; s < nf.services().size(); ++s) {
          const std::vector<Backend>& pool = nf.services()[s].backends();
          for (std::size_t b = 0; b < pool.size(); ++b) {
            report.backends[pool[b].config.name] += nf.new_connections(s, static_cast<std::uint16_t>(b));
          }
        }
        report.lb_stats += lb_stats(nf.services(), [&](std::uint32_t s, std::uint32_t b) {
          return nf.new_connections(s, static_cast<std::uint16_t>(b));
        });
        const ConcuryStats& st = nf.stats();
        report.function_counts = {{"rewrites", st.rewrites}, {"repairs", st.repairs}, {"rehomed", st.rehomed}, {"syncs", st.syncs}};
      });
  return {r.workers, r.unpresentable};
}

}  // namespace flowtrack::cli
