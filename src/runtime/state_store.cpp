#include "flowtrack/runtime/state_store.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "flowtrack/nf/state_config_hash.hpp"
#include "flowtrack/nf/state_file.hpp"

namespace flowtrack {
namespace {

void rename_state_file(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    throw std::runtime_error(fmt::format("state file {}: cannot rename it {}: {}", from, to, std::strerror(errno)));
  }
}

std::size_t saved_connections(const NatSnapshot& s) { return s.sessions.size(); }
std::size_t saved_connections(const LbSnapshot& s) { return s.connections.size(); }

template <class Snapshot, class Decode>
StartingState<Snapshot> load_state(const StateFileOptions& o, std::uint64_t config_hash, std::int64_t unix_now, Decode&& decode) {
  StartingState<Snapshot> start;
  if (o.path.empty()) return start;
  std::string refusal;
  if (!std::filesystem::exists(o.path)) {
    refusal = fmt::format("no state file {} (a first start, or the last run did not stop cleanly)", o.path);
  } else {
    try {
      SavedState<Snapshot> saved = decode(read_state_file(o.path), config_hash);
      const Nanos down = unix_now > saved.saved_unix_ns ? static_cast<Nanos>(unix_now - saved.saved_unix_ns) : 0;
      std::size_t connections = 0;
      for (Snapshot& s : saved.workers) {
        age_snapshot(s, down);
        connections += saved_connections(s);
      }
      rename_state_file(o.path, o.path + ".restored");
      start.workers = std::move(saved.workers);
      start.note = fmt::format("state file {}: {} connections restored, saved {:.1f} s ago (the file is now {}.restored)", o.path,
                               connections, static_cast<double>(down) / 1e9, o.path);
      return start;
    } catch (const StateFileError& e) {
      refusal = fmt::format("state file {} refused: {}", o.path, e.what());
    }
  }
  if (!o.start_empty) throw StateRefused(refusal + "; --start-empty starts without state");
  if (std::filesystem::exists(o.path)) {
    rename_state_file(o.path, o.path + ".refused");
    start.note = fmt::format("{}; starting empty as --start-empty asks (the file is kept as {}.refused)", refusal, o.path);
  } else {
    start.note = refusal + "; starting empty as --start-empty asks";
  }
  return start;
}

}  // namespace

StartingState<NatSnapshot> load_nat_state(const StateFileOptions& o, const NatConfig& config, unsigned workers, std::int64_t unix_now) {
  return load_state<NatSnapshot>(o, nat_state_hash(config, workers), unix_now, [](std::span<const std::uint8_t> file, std::uint64_t hash) {
    return decode_nat_state(file, hash);
  });
}

StartingState<LbSnapshot> load_lb_state(const StateFileOptions& o, const StatefulLbConfig& config, unsigned workers,
                                        std::int64_t unix_now) {
  return load_state<LbSnapshot>(o, lb_state_hash(config, workers), unix_now, [](std::span<const std::uint8_t> file, std::uint64_t hash) {
    return decode_lb_state(file, hash);
  });
}

void save_nat_state(const std::string& path, std::span<const NatSnapshot> workers, const NatConfig& config, std::int64_t unix_now) {
  write_state_file(path, encode_nat_state(workers, nat_state_hash(config, static_cast<unsigned>(workers.size())), unix_now));
}

void save_lb_state(const std::string& path, std::span<const LbSnapshot> workers, const StatefulLbConfig& config, std::int64_t unix_now) {
  write_state_file(path, encode_lb_state(workers, lb_state_hash(config, static_cast<unsigned>(workers.size())), unix_now));
}

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace flowtrack
