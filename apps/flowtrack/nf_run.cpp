// What a run of a network function dropped, tallied once for every command that reports it.
#include "nf_launch.hpp"

namespace flowtrack::cli {

std::map<std::string, std::uint64_t> NfRun::drops_by_reason() const {
  std::map<std::string, std::uint64_t> drops;
  if (unpresentable != 0) drops["replay_unpresentable"] = unpresentable;
  for (const WorkerResult& r : workers) {
    for (std::size_t s = 0; s < kParseStatusCount; ++s) {
      if (r.parse_drops[s] != 0) drops[std::string(parse_status_name(static_cast<ParseStatus>(s)))] += r.parse_drops[s];
    }
    for (std::size_t d = 0; d < kNfDropCount; ++d) {
      if (r.counters.drops[d] != 0) drops[std::string(nf_drop_name(static_cast<NfDrop>(d)))] += r.counters.drops[d];
    }
  }
  return drops;
}

}  // namespace flowtrack::cli
