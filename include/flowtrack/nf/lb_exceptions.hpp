// The connections off today's choice, for several balancer instances behind ECMP (docs/design/
// network-functions.md, "Connections off today's choice").
//
// Every instance with the same pool and deployment key gives a connection the same consistent (Maglev)
// choice, so any instance can carry any connection's next packet, except a connection whose backend is
// no longer today's choice: one opened before a drain, a weight change, a backend going down or its
// removal, which stays on its backend on the instance that tracks it. Those *exceptions* are the only
// state another instance needs. An instance marks them (LbExceptionMarks, by connection), tells of
// each one that becomes or stops being one (an LbExceptionEvent into an LbExceptionSink: a pool change
// that makes it one or undoes that, its end), and holds the ones its peers told it of
// (LbPeerExceptions), which a packet that finds no state consults before the consistent choice.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

// The most peers an instance shares its exceptions with.
inline constexpr std::size_t kMaxLbPeers = 64;

// The longest backend name that can be shared (a name is a connection's backend on the wire).
inline constexpr std::size_t kMaxSharedBackendName = 64;

// A backend name of the configuration (its services, its schedule's additions) too long to be shared,
// if any (`flowtrack ctl` takes no longer one).
std::optional<std::string> unshareable_backend_name(const StatefulLbConfig& config);

// One connection that became an exception (with its backend's name) or stopped being one (it ended,
// or a pool change made its backend today's choice again). Plain data of a fixed size: it goes through
// a ring between a worker and the link's thread.
struct LbExceptionEvent {
  enum class Kind : std::uint8_t { became, ceased };
  Kind kind = Kind::became;
  FlowKeyV4 original;  // the connection's tuple as its client sends it
  std::uint8_t backend_length = 0;
  std::array<char, kMaxSharedBackendName> backend_name{};

  static LbExceptionEvent became(const FlowKeyV4& original, std::string_view backend);
  static LbExceptionEvent ceased(const FlowKeyV4& original) { return {Kind::ceased, original, 0, {}}; }
  std::string_view backend() const { return {backend_name.data(), backend_length}; }
};

// Where a balancer's exception events go: called on its worker's thread, between or within bursts, so
// it must be a few stores (a ring's push), never a system call.
class LbExceptionSink {
 public:
  virtual ~LbExceptionSink() = default;
  virtual void emit(const LbExceptionEvent& event) = 0;
};

// Which of a balancer's connections are exceptions, by connection id: one bit each.
class LbExceptionMarks {
 public:
  // For connection ids below `connections`.
  void size_for(std::size_t connections) { bits_.assign((connections + 63) / 64, 0); }
  bool marked(std::uint32_t conn) const { return (bits_[conn / 64] >> (conn % 64) & 1) != 0; }
  // Marks or unmarks; whether that changed the mark.
  bool set(std::uint32_t conn, bool exception) {
    if (marked(conn) == exception) return false;
    bits_[conn / 64] ^= std::uint64_t{1} << (conn % 64);
    count_ = exception ? count_ + 1 : count_ - 1;
    return true;
  }
  std::size_t count() const { return count_; }

 private:
  std::vector<std::uint64_t> bits_;
  std::size_t count_ = 0;
};

// The exceptions the peers told of: a connection's tuple -> its backend's name, each with the peer
// that told it (a peer's removal or resynchronisation takes only its own). Bounded: past `bound` an
// entry is refused and counted. The link's thread writes it; the workers read it for packets that find
// no state (a shared lock: rare, and never on an established connection's path).
class LbPeerExceptions {
 public:
  explicit LbPeerExceptions(std::size_t bound) : bound_(bound) {}

  // Installs (or replaces) a tuple's backend, told by `peer`; false when the bound is reached.
  bool install(std::uint8_t peer, const FlowKeyV4& original, std::string_view backend);
  // A tuple `peer` told of is no exception any more; one another peer told of since stays.
  void remove(std::uint8_t peer, const FlowKeyV4& original);
  // Everything `peer` told of (it sends its whole set again).
  void forget(std::uint8_t peer);

  // The backend's name for a tuple, if a peer told of it.
  std::optional<std::string> find(const FlowKeyV4& original) const;
  bool empty() const { return size() == 0; }
  std::size_t size() const { return size_.load(std::memory_order_relaxed); }
  std::uint64_t refused_full() const { return refused_full_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::string backend;
    std::uint8_t peer = 0;
  };
  std::size_t bound_;
  mutable std::shared_mutex mutex_;
  absl::flat_hash_map<FlowKeyV4, Entry, FlowKeyHasher> entries_;
  std::atomic<std::size_t> size_{0};
  std::atomic<std::uint64_t> refused_full_{0};
};

}  // namespace flowtrack
