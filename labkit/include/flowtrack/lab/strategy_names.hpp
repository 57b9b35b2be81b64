// The scaling strategies' names (their meaning: lab/strategy.hpp), apart from the table types so that the
// command line can list them without compiling any table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flowtrack {

enum class Strategy : std::uint8_t { sharded, spinlock, spinlock_packet, rwlock, striped, lockfree, concurrent };

inline constexpr std::array<std::string_view, 7> kStrategyNames{"sharded", "spinlock", "spinlock-packet", "rwlock",
                                                                "striped", "lockfree", "concurrent"};

inline std::vector<std::string> strategy_names() { return {kStrategyNames.begin(), kStrategyNames.end()}; }

constexpr std::optional<Strategy> strategy_of(std::string_view name) {
  for (std::size_t i = 0; i < kStrategyNames.size(); ++i) {
    if (kStrategyNames[i] == name) return static_cast<Strategy>(i);
  }
  return std::nullopt;
}

}  // namespace flowtrack
