#include "flowtrack/lab/churn_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>

#include "flowtrack/nf/maglev.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack::lab {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kEcmpBuckets = 512;  // the resilient next-hop group's buckets
constexpr double kAlways = -std::numeric_limits<double>::infinity();

// Where packets go between two events.
struct Epoch {
  double start = kAlways;
  std::vector<std::uint32_t> backends;     // the live ones, in their numbering
  std::vector<std::uint32_t> maglev;       // Maglev's backend (number) per entry
  std::vector<std::uint32_t> previous;     // beamer: each entry's backend before its last change (kNone: none)
  std::vector<std::uint32_t> instances;    // the live ones, in their numbering (hash-threshold)
  std::vector<std::uint32_t> buckets;      // the resilient group's instance per bucket
  std::vector<std::uint32_t> incarnation;  // per instance: how many times it has joined
  std::vector<double> joined;              // per instance: when its incarnation joined (kAlways: at the start)
};

void fill_maglev(Epoch& e, std::uint32_t size) {
  std::vector<MaglevTable::Backend> named;
  for (const std::uint32_t b : e.backends) named.push_back({fmt::format("b{}", b), 1});
  MaglevTable table(size);
  table.populate(named);
  e.maglev.resize(size);
  for (std::uint32_t i = 0; i < size; ++i) e.maglev[i] = e.backends[table.entries()[i]];
}

// The live instance with the fewest (ties: the lowest number) or the most buckets.
std::uint32_t by_load(const Epoch& e, const std::vector<std::uint32_t>& load, bool fewest) {
  std::uint32_t pick = e.instances.front();
  for (const std::uint32_t i : e.instances) {
    if (fewest ? load[i] < load[pick] : load[i] > load[pick]) pick = i;
  }
  return pick;
}

// Instance `changed` has just left or joined `e` (its `instances` already updated): the group's buckets
// follow, the leaving one's to the emptiest, the joining one's from the fullest.
void move_buckets(Epoch& e, std::uint32_t changed, bool joined, unsigned instances) {
  std::vector<std::uint32_t> load(instances, 0);
  for (const std::uint32_t i : e.buckets) ++load[i];
  if (!joined) {
    load[changed] = kNone;  // never the emptiest
    for (std::uint32_t& owner : e.buckets) {
      if (owner != changed) continue;
      owner = by_load(e, load, true);
      ++load[owner];
    }
    return;
  }
  while (load[changed] < kEcmpBuckets / e.instances.size()) {
    const std::uint32_t from = by_load(e, load, false);
    *std::ranges::find(e.buckets, from) = changed;
    --load[from];
    ++load[changed];
  }
}

std::vector<Epoch> epochs_of(const ChurnScenario& s) {
  std::vector<Epoch> epochs(1);
  Epoch& first = epochs[0];
  for (std::uint32_t b = 0; b < s.backends; ++b) first.backends.push_back(b);
  for (std::uint32_t i = 0; i < s.instances; ++i) first.instances.push_back(i);
  for (std::uint32_t j = 0; j < kEcmpBuckets; ++j) first.buckets.push_back(j % s.instances);
  first.incarnation.assign(s.instances, 0);
  first.joined.assign(s.instances, kAlways);
  fill_maglev(first, s.maglev_size);
  first.previous.assign(s.maglev_size, kNone);
  for (const ChurnEvent& event : s.events) {
    Epoch next = epochs.back();
    next.start = event.at;
    const bool joins = event.kind == ChurnEvent::Kind::backend_joins || event.kind == ChurnEvent::Kind::instance_joins;
    const bool backend = event.kind == ChurnEvent::Kind::backend_leaves || event.kind == ChurnEvent::Kind::backend_joins;
    std::vector<std::uint32_t>& live = backend ? next.backends : next.instances;
    const auto at = std::ranges::find(live, event.which);
    if ((backend ? event.which >= s.backends : event.which >= s.instances) || joins == (at != live.end()) ||
        (!joins && live.size() == 1) || event.at < epochs.back().start) {
      throw std::invalid_argument(fmt::format("churn event at {} s: {} {} cannot {} then", event.at, backend ? "backend" : "instance",
                                              event.which, joins ? "join" : "leave"));
    }
    if (joins) {
      live.insert(std::ranges::upper_bound(live, event.which), event.which);
    } else {
      live.erase(at);
    }
    if (backend) {
      fill_maglev(next, s.maglev_size);
      for (std::uint32_t i = 0; i < s.maglev_size; ++i) {
        if (next.maglev[i] != epochs.back().maglev[i]) next.previous[i] = epochs.back().maglev[i];
      }
    } else {
      move_buckets(next, event.which, joins, s.instances);
      if (joins) {
        ++next.incarnation[event.which];
        next.joined[event.which] = event.at;
      }
    }
    epochs.push_back(std::move(next));
  }
  return epochs;
}

std::uint32_t instance_of(const Epoch& e, std::uint32_t router_hash, bool resilient) {
  if (resilient) return e.buckets[router_hash % kEcmpBuckets];
  return e.instances[(static_cast<std::uint64_t>(router_hash) * e.instances.size()) >> 32];
}

std::uint32_t backend_of(const Epoch& e, ChurnDesign design, std::uint32_t flow_hash) {
  if (design == ChurnDesign::hash) return e.backends[flow_hash % e.backends.size()];
  return e.maglev[flow_hash % e.maglev.size()];
}

// Whether `design` breaks connection `c`, which opens in epochs[first].
bool breaks(const ChurnScenario& s, const std::vector<Epoch>& epochs, std::size_t first, const ChurnConnection& c, ChurnDesign design) {
  const std::uint32_t entry = c.flow_hash % s.maglev_size;
  const std::uint32_t backend = backend_of(epochs[first], design, c.flow_hash);
  const bool stateful = design == ChurnDesign::maglev_local || design == ChurnDesign::flowtrack;
  // The instances (number, incarnation) that know the connection.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> knowers;
  if (stateful) {
    const std::uint32_t i = instance_of(epochs[first], c.router_hash, s.resilient_ecmp);
    knowers.emplace_back(i, epochs[first].incarnation[i]);
  }
  double differs_since = kAlways;  // flowtrack: since when today's Maglev choice is not its backend
  bool differs = false;
  for (std::size_t k = first + 1; k < epochs.size() && epochs[k].start < c.end; ++k) {
    const Epoch& e = epochs[k];
    const std::uint32_t choice = backend_of(e, design, c.flow_hash);
    if (design == ChurnDesign::hash || design == ChurnDesign::maglev) {
      if (choice != backend) return true;
      continue;
    }
    if (design == ChurnDesign::beamer) {
      if (choice != backend && e.previous[entry] != backend) return true;
      continue;
    }
    if (choice != backend && !differs) differs_since = e.start;
    differs = choice != backend;
    const std::uint32_t i = instance_of(e, c.router_hash, s.resilient_ecmp);
    const std::pair<std::uint32_t, std::uint32_t> here(i, e.incarnation[i]);
    if (std::ranges::find(knowers, here) != knowers.end()) continue;
    if (differs) {
      if (design == ChurnDesign::maglev_local) return true;
      // An exception made before the instance joined came in the table it was sent whole before it was
      // announced; a later one reached it `sync_delay` after it was made.
      if (differs_since >= e.joined[i] && e.start < differs_since + s.sync_delay) return true;
    }
    knowers.push_back(here);
  }
  return false;
}

}  // namespace

std::string_view churn_design_name(ChurnDesign design) {
  switch (design) {
    case ChurnDesign::hash: return "hash";
    case ChurnDesign::maglev: return "maglev";
    case ChurnDesign::beamer: return "beamer";
    case ChurnDesign::maglev_local: return "maglev-local";
    case ChurnDesign::flowtrack: return "flowtrack";
  }
  return "?";
}

std::uint64_t broken_connections(const ChurnScenario& s, ChurnDesign design) {
  if (s.instances == 0 || s.backends == 0) throw std::invalid_argument("churn: at least one instance and one backend");
  if (!is_prime(s.maglev_size) || s.maglev_size < 100 * s.backends) {
    throw std::invalid_argument(fmt::format("churn: the Maglev table's size must be a prime of at least 100 a backend ({})", 100 * s.backends));
  }
  const std::vector<Epoch> epochs = epochs_of(s);
  std::uint64_t broken = 0;
  for (const ChurnConnection& c : s.connections) {
    const auto after = std::ranges::upper_bound(epochs, c.start, {}, &Epoch::start);
    broken += breaks(s, epochs, static_cast<std::size_t>(after - epochs.begin()) - 1, c, design) ? 1 : 0;
  }
  return broken;
}

namespace {

// Every `every` seconds on average (exponential gaps: changes of the pool and of the instances are
// independent, and coincide only by chance) until `seconds`, one of `count` leaves (a random live one)
// or, every other time, the one gone longest joins; never the last one leaving.
void add_churn(std::vector<ChurnEvent>& events, unsigned count, double every, double seconds, bool backends, Random& rng) {
  std::vector<unsigned> live;
  for (unsigned i = 0; i < count; ++i) live.push_back(i);
  std::deque<unsigned> gone;
  bool leave = true;
  for (double at = rng.exponential(every); at < seconds; at += rng.exponential(every), leave = !leave) {
    using Kind = ChurnEvent::Kind;
    if ((leave || gone.empty()) && live.size() > 1) {
      const auto pick = live.begin() + static_cast<std::ptrdiff_t>(rng.below(live.size()));
      events.push_back({at, backends ? Kind::backend_leaves : Kind::instance_leaves, *pick});
      gone.push_back(*pick);
      live.erase(pick);
    } else if (!gone.empty()) {
      events.push_back({at, backends ? Kind::backend_joins : Kind::instance_joins, gone.front()});
      live.push_back(gone.front());
      gone.pop_front();
    }
  }
}

}  // namespace

ChurnScenario churn_scenario(const ChurnWorkload& w) {
  ChurnScenario s;
  s.instances = w.instances;
  s.backends = w.backends;
  // The smallest prime with 100 entries a backend, or more (Maglev's evenness, nf/maglev.hpp).
  s.maglev_size = std::max<std::uint32_t>(s.maglev_size, 100 * w.backends);
  while (!is_prime(s.maglev_size)) ++s.maglev_size;
  // Three streams: the connections and the backends' churn are the same whatever the number of instances.
  Random connections(w.seed), backends(w.seed + 1), instances(w.seed + 2);
  for (double at = connections.exponential(1 / w.arrivals_per_second); at < w.seconds;
       at += connections.exponential(1 / w.arrivals_per_second)) {
    const double duration = connections.exponential(w.mean_duration);
    const auto flow = static_cast<std::uint32_t>(connections.next() >> 32);
    s.connections.push_back({at, at + duration, flow, static_cast<std::uint32_t>(connections.next() >> 32)});
  }
  add_churn(s.events, w.backends, w.backend_every, w.seconds, true, backends);
  add_churn(s.events, w.instances, w.instance_every, w.seconds, false, instances);
  std::ranges::stable_sort(s.events, {}, &ChurnEvent::at);
  return s;
}

}  // namespace flowtrack::lab
