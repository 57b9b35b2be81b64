// One packet's question to a load balancer's lookup structure (Concury's, or a baseline's bulk path):
// which VIP (its index) and the connection's 4-tuple as one word.
#pragma once

#include <cstdint>

namespace flowtrack::compact {

struct LbQuery {
  std::uint32_t vip;
  std::uint64_t key;
};

}  // namespace flowtrack::compact
