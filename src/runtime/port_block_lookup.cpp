#include "flowtrack/runtime/port_block_lookup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace flowtrack {

std::optional<PortBlockHolding> who_held(std::span<const PortBlockEntry> entries, std::uint32_t public_addr, std::uint16_t port,
                                         std::int64_t unix_ns) {
  std::vector<const PortBlockEntry*> covering;
  for (const PortBlockEntry& e : entries) {
    if (e.public_addr == public_addr && e.first_port <= port && port <= e.last_port) covering.push_back(&e);
  }
  // By time; at one time, an allocation after a release (a block given back and taken at once).
  std::stable_sort(covering.begin(), covering.end(), [](const PortBlockEntry* a, const PortBlockEntry* b) {
    if (a->unix_ns != b->unix_ns) return a->unix_ns < b->unix_ns;
    return a->event == PortBlockRecord::Event::released && b->event == PortBlockRecord::Event::allocated;
  });
  std::optional<PortBlockHolding> holding;
  const auto releases = [&](const PortBlockEntry& e) {
    return holding && e.event == PortBlockRecord::Event::released && e.inside_addr == holding->inside_addr &&
           e.first_port == holding->first_port && e.last_port == holding->last_port;
  };
  auto it = covering.begin();
  for (; it != covering.end() && (*it)->unix_ns <= unix_ns; ++it) {
    const PortBlockEntry& e = **it;
    if (e.event == PortBlockRecord::Event::allocated) {
      holding = PortBlockHolding{e.inside_addr, e.public_addr, e.first_port, e.last_port, e.unix_ns, std::nullopt};
    } else if (releases(e)) {
      holding.reset();
    }
  }
  for (; holding && it != covering.end(); ++it) {
    if (releases(**it)) {
      holding->until_ns = (*it)->unix_ns;
      break;
    }
  }
  return holding;
}

PortBlockJournal read_port_block_journal(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: {}", path, std::strerror(errno)));
  PortBlockJournal journal;
  std::string line, error;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    if (auto entry = parse_port_block_journal_line(line, error)) {
      journal.entries.push_back(*entry);
    } else {
      journal.problems.push_back(fmt::format("{}: {}", number, error));
    }
  }
  if (in.bad()) throw std::runtime_error(fmt::format("{}: read error", path));
  return journal;
}

}  // namespace flowtrack
