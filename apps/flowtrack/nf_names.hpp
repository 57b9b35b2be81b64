// The names `flowtrack run` and `flowtrack bench nf` accept for a function, its tracker's aging and its
// scaling (nf_launch.hpp turns them into types).
#pragma once

#include <string>
#include <vector>

namespace flowtrack::cli {

inline std::vector<std::string> nf_names() { return {"fwd", "slb", "lb", "nat", "concury"}; }
inline std::vector<std::string> nf_aging_names() { return {"wheel", "heap"}; }
inline std::vector<std::string> nf_scaling_names() { return {"sharded", "spinlock"}; }

}  // namespace flowtrack::cli
