// Where the flow table of a scaling strategy lives: one per worker, or one that every worker shares.
#pragma once

#include <cstdint>

namespace flowtrack {

enum class Placement : std::uint8_t { sharded, shared };

}  // namespace flowtrack
