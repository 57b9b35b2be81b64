// A simulation of connections through several LB instances behind a router's ECMP while instances and
// backends come and go (`flowtrack churn`): how many connections each design breaks. Not a packet
// replay: a connection is an interval of time with two hashes, and the model follows where its packets
// go at every change of the instances or the pool.
//
// The model, stated whole (docs/design/network-functions.md, "Past two instances"):
//  - A connection sends packets all its life, so it is moved at every change that moves its hashes; its
//    router hash (the router's 5-tuple hash, independent of the LBs') picks an instance among the live
//    ones, by hash-threshold (Linux's multipath route: the hash space cut into equal ranges, one a path,
//    in order) or by a resilient next-hop group (ChurnScenario::resilient_ecmp: a bucket table in which
//    only the leaving instance's buckets move, and a joining instance takes buckets from the fullest).
//  - Backends leave by draining (they stay reachable and keep serving the connections they have) and
//    come back; instances leave by a clean stop (their connection state is lost) and come back empty.
//  - A connection is broken the first time a packet of it is sent to a backend other than the one it
//    opened on.
// The designs:
//  - hash: stateless, backend = flow hash mod the number of live backends (sorted by name);
//  - maglev: stateless Maglev (nf/maglev.hpp) over the live backends (by name: every instance agrees);
//  - beamer: stateless Maglev buckets with daisy chaining: a packet whose backend does not know the
//    connection is passed to the bucket's previous backend (a connection lives through one change of
//    its bucket, not two);
//  - maglev-local: Maglev, and each instance keeps the connections it has seen (a packet of a known
//    connection goes to its backend): a connection moved to an instance that does not know it gets
//    today's Maglev choice (Katran, or flowtrack with the shared state off);
//  - flowtrack: maglev-local, and the connections whose backend differs from today's Maglev choice
//    (exceptions) are shared: an instance knows an exception `sync_delay` after the change that made it
//    (a joining instance is sent the table whole before it is announced, so it knows the exceptions made
//    before it joined), and a moved connection is broken only if it arrives before then.
// Cheetah (a cookie in every packet naming the backend) breaks none by construction: not simulated.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace flowtrack::lab {

enum class ChurnDesign : std::uint8_t { hash, maglev, beamer, maglev_local, flowtrack };
inline constexpr ChurnDesign kChurnDesigns[] = {ChurnDesign::hash, ChurnDesign::maglev, ChurnDesign::beamer, ChurnDesign::maglev_local,
                                               ChurnDesign::flowtrack};
std::string_view churn_design_name(ChurnDesign design);

struct ChurnConnection {
  double start = 0, end = 0;  // seconds
  std::uint32_t flow_hash = 0;    // the LBs' hash of its 5-tuple (every instance computes the same)
  std::uint32_t router_hash = 0;  // the router's
};

struct ChurnEvent {
  enum class Kind : std::uint8_t { backend_leaves, backend_joins, instance_leaves, instance_joins };
  double at = 0;  // seconds
  Kind kind = Kind::backend_leaves;
  unsigned which = 0;  // the backend's or instance's number
};

struct ChurnScenario {
  unsigned instances = 2;  // numbered 0..instances-1, all live at the start
  unsigned backends = 16;  // named b0..b<backends-1>, all live at the start
  std::vector<ChurnConnection> connections;
  std::vector<ChurnEvent> events;  // in time order; each names a live one leaving or a gone one joining
  double sync_delay = 0.1;         // flowtrack: an exception's time to reach every other instance
  bool resilient_ecmp = false;
  std::uint32_t maglev_size = 4099;  // prime, > 100 entries a backend
};

// The connections of `scenario` that `design` breaks. Throws std::invalid_argument when an event names
// a backend or an instance that cannot leave or join then (or the last one of either leaves).
std::uint64_t broken_connections(const ChurnScenario& scenario, ChurnDesign design);

// A synthetic workload: connections arriving at a steady rate (exponential gaps), each lasting an
// exponential time; every `backend_every` seconds on average (exponential gaps) a backend drains away
// or (every other time) the one gone longest comes back, every `instance_every` seconds likewise an
// instance; hashes uniform. A pure function of its fields, the seed included.
struct ChurnWorkload {
  unsigned instances = 2;
  unsigned backends = 16;
  double seconds = 600;
  double arrivals_per_second = 100;
  double mean_duration = 30;
  double backend_every = 30;
  double instance_every = 45;
  std::uint64_t seed = 1;
};
ChurnScenario churn_scenario(const ChurnWorkload& workload);

}  // namespace flowtrack::lab
