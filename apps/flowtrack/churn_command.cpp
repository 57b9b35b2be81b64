#include "churn_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

namespace flowtrack::cli {
namespace {

// Cheetah's churn experiment (Barbette et al., NSDI 2020): broken connections, as published; the
// design of the model that stands for each.
struct Published {
  lab::ChurnDesign design;
  const char* figure;
};
constexpr Published kPublished[] = {{lab::ChurnDesign::hash, "~997 (plain hash)"},
                                    {lab::ChurnDesign::maglev, "~715 (consistent hash)"},
                                    {lab::ChurnDesign::beamer, "~51 (Beamer)"}};

}  // namespace

void churn_command(const ChurnOptions& o) {
  std::map<lab::ChurnDesign, std::vector<std::uint64_t>> broken;
  std::size_t connections = 0, backend_events = 0, instance_events = 0;
  for (const unsigned n : o.instances) {
    lab::ChurnWorkload w = o.workload;
    w.instances = n;
    lab::ChurnScenario s = lab::churn_scenario(w);
    s.sync_delay = o.sync_delay;
    s.resilient_ecmp = o.resilient;
    connections = s.connections.size();
    instance_events = static_cast<std::size_t>(std::ranges::count_if(s.events, [](const lab::ChurnEvent& e) {
      return e.kind == lab::ChurnEvent::Kind::instance_leaves || e.kind == lab::ChurnEvent::Kind::instance_joins;
    }));
    backend_events = s.events.size() - instance_events;
    for (const lab::ChurnDesign d : lab::kChurnDesigns) broken[d].push_back(lab::broken_connections(s, d));
  }
  const lab::ChurnWorkload& w = o.workload;
  fmt::print("churn: {} connections over {} s ({}/s, {} s each on average), {} backends: one drains away or comes back every {} s "
             "({} changes); an instance stops or comes back every {} s ({} changes); ECMP {}; shared exceptions reach the other instances in {} s; seed {}\n",
             connections, w.seconds, w.arrivals_per_second, w.mean_duration, w.backends, w.backend_every, backend_events, w.instance_every, instance_events,
             o.resilient ? "by a resilient next-hop group" : "by hash-threshold (Linux's multipath route)", o.sync_delay, w.seed);
  std::string header = fmt::format("{:<14}", "broken");
  for (std::size_t i = 0; i < o.instances.size(); ++i) header += fmt::format(" {:>9}", fmt::format("N={}", o.instances[i]));
  fmt::print("{}   {}\n", header, "Cheetah's churn run (published)");
  for (const lab::ChurnDesign d : lab::kChurnDesigns) {
    std::string row = fmt::format("{:<14}", lab::churn_design_name(d));
    for (const std::uint64_t b : broken[d]) row += fmt::format(" {:>9}", b);
    std::string published;
    for (const Published& p : kPublished) {
      if (p.design == d) published = p.figure;
    }
    fmt::print("{}   {}\n", row, published);
  }
  fmt::print("{:<14}{}   0 (Cheetah: by construction, not simulated)\n", "cheetah", std::string(10 * o.instances.size(), ' '));
  // Where flowtrack's design falls, against the stateless designs of the published run, at every N.
  const auto most = [&](lab::ChurnDesign d) { return *std::max_element(broken[d].begin(), broken[d].end()); };
  const std::uint64_t flowtrack = most(lab::ChurnDesign::flowtrack);
  fmt::print("flowtrack's design: at most {} broken at any N ({:.4f} % of the connections), {} Beamer's {} and {} Cheetah's 0\n", flowtrack,
             connections == 0 ? 0.0 : 100.0 * static_cast<double>(flowtrack) / static_cast<double>(connections),
             flowtrack < broken[lab::ChurnDesign::beamer].front() ? "below" : "not below", broken[lab::ChurnDesign::beamer].front(),
             flowtrack == 0 ? "equal to" : "above");
}

}  // namespace flowtrack::cli
