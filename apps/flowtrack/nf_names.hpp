// The names `flowtrack run` and `flowtrack bench nf` accept for a function, its tracker's aging and its
// scaling (nf_launch.hpp turns them into types).
#pragma once

#include <string>
#include <vector>

namespace flowtrack::cli {

inline std::vector<std::string> nf_names() { return {"fwd", "slb", "lb", "nat", "concury"}; }
inline std::vector<std::string> nf_aging_names() { return {"wheel", "heap"}; }
inline std::vector<std::string> nf_scaling_names() { return {"sharded", "spinlock"}; }
// Where Concury's control plane learns its reports (ControlPlanePlace): on the worker, or a thread of its own.
inline std::vector<std::string> control_plane_names() { return {"worker", "thread"}; }

}  // namespace flowtrack::cli
