// The names `flowtrack run` and `flowtrack bench nf` accept for a function, its tracker's aging and its
// scaling (nf_launch.hpp turns them into types).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flowtrack/nf/nf_kind.hpp"

namespace flowtrack::cli {

inline std::vector<std::string> nf_names() {
  std::vector<std::string> names;
  for (const NfKind kind : kAllNfKinds) names.emplace_back(nf_kind_name(kind));
  return names;
}
// Name -> kind, for the command line's transformer.
inline std::map<std::string, NfKind> nf_kinds_by_name() {
  std::map<std::string, NfKind> kinds;
  for (const NfKind kind : kAllNfKinds) kinds.emplace(nf_kind_name(kind), kind);
  return kinds;
}
inline std::vector<std::string> nf_aging_names() { return {"wheel", "heap"}; }
inline std::vector<std::string> nf_scaling_names() { return {"sharded", "spinlock"}; }
// Where Concury's control plane learns its reports (ControlPlanePlace): on the worker, or a thread of its own.
inline std::vector<std::string> control_plane_names() { return {"worker", "thread"}; }

}  // namespace flowtrack::cli
