// The requests a live function takes on its control socket (`flowtrack ctl`, runtime/
// control_socket.hpp): one line of words each.
//
//   counters                                   what the data plane counted (a JSON object)
//   takeover                                   a NAT pair's standby: take over now (runtime/nat_pair.hpp)
//   add SERVICE BACKEND ADDRESS PORT WEIGHT    a new backend (PORT 0: the client's destination port)
//   drain SERVICE BACKEND                      weight 0: no new connections, the open ones stay
//   remove SERVICE BACKEND                     out of the pool; its open connections stay
//   weight SERVICE BACKEND WEIGHT              a new weight (0..1000000)
//   down SERVICE BACKEND                       out of service: no new connections, UDP flows move
//   up SERVICE BACKEND                         back in service
//   save-state                                 nat and lb with a state file: the state written to it now,
//                                              the run going on (runtime/state_store.hpp)
//   hand-over                                  nat and lb with a state file: every worker paused, the
//                                              state written, for a new process to take (runtime/
//                                              hand_over.hpp); forwarding again after a while unless:
//   hand-over-commit                           the paused run stops without forwarding again
//   hand-over-abort                            the paused run forwards again
//   drain-instance                             with [dataplane.announce]: every VIP withdrawn from the
//                                              routing speaker, the data plane serving on (what the router
//                                              still sends: the connections it moves over)
//   undrain-instance                           the VIPs announced again (those with a healthy backend)
//   stop                                       the run ends as on SIGTERM: the VIPs withdrawn first
//
// Parsing checks the form of a request only; whether a change fits the pool (the service exists, the
// backend is in it or not, the pool is not too large) is checked against the pool before anything is
// applied (check_pool_changes, pool_schedule.hpp), so a request is applied whole or not at all.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

#include "flowtrack/nf/pool_schedule.hpp"

namespace flowtrack {

// The longest request line taken, newline excluded; a longer one is refused.
inline constexpr std::size_t kMaxControlRequest = 512;

struct ControlRequest {
  enum class Kind : std::uint8_t {
    counters,
    change,
    takeover,
    save_state,
    hand_over,
    hand_over_commit,
    hand_over_abort,
    drain_instance,
    undrain_instance,
    stop
  };
  Kind kind = Kind::counters;
  PoolChange change;  // for Kind::change (its `at` unused)
};

// The request in `line` (without its newline), or a message saying what is wrong with it.
std::variant<ControlRequest, std::string> parse_control_request(std::string_view line);

}  // namespace flowtrack
