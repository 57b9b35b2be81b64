// The connection tracker: a flow table, a connection array and a timer wheel, so that both directions
// of a connection resolve to one connection with its protocol state and idle timeout.
//
// Each connection has two tuples: `original` (as its first packet carried it) and `reply` (what the
// answers will carry: original.reversed() for a plain tracker, the translated tuple behind a NAT or a
// load balancer, which the network function computes). Both are entries of the one table, so a
// lookup finds a connection from either direction in one probe. The table therefore holds two entries
// per connection: it is created with capacity 2 * max_connections. A tuple equal to its own reply
// (same address and port on both ends) is stored once. A connection is named by its ConnId, dense in
// [0, max_connections) and handed out by the tracker's own id pool, so callers index their own
// per-connection arrays by it. A table that takes its caller's ids (NamedIdTable, e.g. cuckoo) stores
// each tuple under 2 * connection + direction, so a hit names its connection at once; for any other
// table links_ maps every entry's FlowId to (connection, direction), one more cache line per packet.
// Sizing the per-connection arrays (records, timers) by connections rather than by table slots keeps
// them 2-3x smaller than the table's id space, which is what decides how much of them stays in cache.
//
// Per packet the tracker touches the table, the link (tables of their own ids only), the connection
// record and the aging policy's record of the connection. The record keeps what every packet reads or
// writes (the caller's payload,
// protocol state, counters) in its first cache line and what only creation and removal need (the
// tuples and their hashes) after it; records are cache-line aligned, so a packet touches one line of
// its record. The caller may keep its own per-connection state inside the record (the Payload type,
// reached through payload(conn)): state kept there costs no further cache miss, where a separate
// array indexed by ConnId would.
//
// Per packet, update() counts it, advances the TCP state machine (tcp_state.hpp) or the UDP
// replied flag, and refreshes the connection's idle timer: a touch when the state did not change (one
// store for the wheel, a sift for the heap), a new timeout when it did. expire() runs the aging policy
// and destroys the connections it reports, after handing each to the caller (a NAT returns its port).
// The policy is any AgingPolicy that leaves table removal to its caller (aging_policy.hpp): the timer
// wheel by default, or the binary heap (FastClick's, [mt-nat]'s baseline). Scan and lazy aging erase
// table entries themselves, one per entry, which cannot keep a connection's two entries together; they
// are measured on bare tables (`bench aging`). Nothing allocates after construction.
// Concurrency: single thread, one tracker per core (the sharded strategy).
#pragma once

#include <algorithm>
#include <array>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "flowtrack/aging/heap_aging.hpp"
#include "flowtrack/aging/timer_wheel.hpp"
#include "flowtrack/conntrack/saved_connection.hpp"
#include "flowtrack/conntrack/tcp_state.hpp"
#include "flowtrack/conntrack/timeouts.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/table/flow_table.hpp"
#include "flowtrack/table/huge_page_allocator.hpp"
#include "flowtrack/table/id_pool.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack {

using ConnId = FlowId;
inline constexpr ConnId kNoConn = kNoFlow;

struct ConnMatch {
  ConnId conn = kNoConn;
  Direction direction = Direction::original;

  explicit operator bool() const { return conn != kNoConn; }
};

enum class CreateStatus : std::uint8_t {
  created,      // both tuples inserted
  exists,       // the original tuple already belongs to a connection (returned)
  reply_taken,  // the reply tuple already belongs to another connection; nothing changed
  full,         // no room for one of the tuples; nothing changed
};

struct CreateResult {
  ConnMatch match;
  CreateStatus status = CreateStatus::full;
};

struct NoPayload {};

// The timer wheel a tracker ages its connections on unless told otherwise (the functions' trackers
// all do): ticks of 100 ms, against timeouts of seconds, so a connection leaves less than a tick after
// its timeout; four levels reach 256^4 ticks (13.6 years) ahead. `start`: the clock when it starts.
constexpr TimerWheelConfig connection_wheel(Nanos start = 0) { return {.tick = 100 * kNanosPerMilli, .levels = 4, .start = start}; }

// ConnTracker::update's default: nothing to do when a TCP state moves.
struct IgnoreTcpChange {
  void operator()(TcpState, TcpState) const {}
};

template <FlowTable Table, class Payload = NoPayload, AgingPolicy Aging = TimerWheel>
  requires(!Aging::kRemovesFromTable)
class ConnTracker {
 public:
  using Key = typename Table::key_type;
  using AgingType = Aging;
  static constexpr bool kNamedEntries = NamedIdTable<Table>;

  struct alignas(64) Connection {
    // Read or written by every packet: the first cache line.
    Payload payload{};
    std::uint8_t protocol = 0;
    bool replied = false;  // a packet was seen in the reply direction (a one-way connection: set at once)
    bool one_way = false;  // its answers never pass the tracker (create_one_way)
    TcpTracking tcp;
    std::array<std::uint64_t, 2> packets{};  // by Direction
    std::array<std::uint64_t, 2> bytes{};
    // Read at creation and removal only.
    Key original;
    Key reply;
    std::uint32_t original_hash = 0;
    std::uint32_t reply_hash = 0;
    Nanos created = 0;
  };

  // Room for max_connections connections (2 * max_connections table entries; below 2^31, so that a
  // link packs a connection id with a direction bit). `wheel` configures the timer wheel; other
  // policies need no configuration. Throws std::invalid_argument for 2^31 connections or more.
  explicit ConnTracker(std::size_t max_connections, const ConntrackTimeouts& timeouts = {},
                       TimerWheelConfig wheel = connection_wheel())
      : table_(2 * checked_capacity(max_connections)),
        links_(kNamedEntries ? 0 : table_.capacity()),
        conn_ids_(max_connections),
        connections_(max_connections),
        wheel_(make_aging(max_connections, wheel)),
        timeouts_(timeouts),
        max_connections_(max_connections) {}

  ConnMatch find(const Key& key, std::uint32_t hash) const { return match_of(table_.find(key, hash)); }

  // keys.size() <= kMaxBulk. The table's bulk lookup, then on_match(i, match of keys[i]) for each key in
  // order; for a table of its own ids every hit's link is prefetched before any is read, so that their
  // cache misses overlap.
  template <class OnMatch>
  void find_bulk(std::span<const Key> keys, std::span<const std::uint32_t> hashes, OnMatch&& on_match) const {
    std::array<FlowId, kMaxBulk> ids;
    table_.find_bulk(keys, hashes, std::span(ids).first(keys.size()));
    if constexpr (!kNamedEntries) {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (ids[i] != kNoFlow) __builtin_prefetch(&links_[ids[i]]);
      }
    }
    for (std::size_t i = 0; i < keys.size(); ++i) on_match(i, match_of(ids[i]));
  }

  // Brings what update() and payload() of a connection touch towards the cache, ahead of them: its
  // record's first cache line and its aging policy's record.
  void prefetch(ConnId conn) const {
    __builtin_prefetch(&connections_[conn], 1);
    wheel_.prefetch(conn);
  }

  // Brings towards the cache what the nth create() from now (0: the next) will write, if no connection
  // ends before it: the record and aging entry of the id it will take; when the table can name the ids
  // its next inserts take, their links and entries (a creation inserts two tuples); and, when the table
  // can say where a key goes, the buckets of its reply tuple (the bulk lookup brought the original's). A
  // hint: nothing changes, and a wrong guess costs a wasted prefetch.
  void prefetch_create(std::size_t nth) const {
    const ConnId conn = conn_ids_.peek(nth);
    if constexpr (kNamedEntries) {
      if (conn == kNoConn) return;
      table_.prefetch_entry(entry_id(conn, Direction::original));
      table_.prefetch_entry(entry_id(conn, Direction::reply));
    } else if constexpr (requires { table_.next_id(nth); }) {
      for (const std::size_t insert : {2 * nth, 2 * nth + 1}) {
        const FlowId id = table_.next_id(insert);
        if (id == kNoFlow) break;
        __builtin_prefetch(&links_[id], 1);
        table_.prefetch_entry(id);
      }
    }
    if (conn == kNoConn) return;
    const auto* record = reinterpret_cast<const char*>(&connections_[conn]);
    for (std::size_t line = 0; line < sizeof(Connection); line += 64) __builtin_prefetch(record + line, 1);
    wheel_.prefetch(conn);
  }
  void prefetch_create(std::size_t nth, std::uint32_t reply_hash) const {
    if constexpr (requires { table_.prefetch(reply_hash); }) table_.prefetch(reply_hash);
    prefetch_create(nth);
  }

  // Connections created and removed so far. Matches found before stay right while neither moved: a
  // creation can only turn a miss into a hit (ids never move), a removal a hit into a miss.
  std::uint64_t creations() const { return creations_; }
  std::uint64_t removals() const { return removals_; }

  // Starts tracking a connection; its idle timer starts from `now` with the protocol's initial timeout
  // (update() with the first packet then sets the state it implies).
  CreateResult create(const Key& original, std::uint32_t original_hash, const Key& reply, std::uint32_t reply_hash,
                      std::uint8_t protocol, Nanos now) {
    if (size_ == max_connections_) {
      const ConnMatch existing = find(original, original_hash);
      return {existing, existing ? CreateStatus::exists : CreateStatus::full};
    }
    // The id the connection will take: a table of its caller's ids stores its tuples under it.
    const ConnId conn = conn_ids_.peek(0);
    FLOWTRACK_ASSERT(conn != kNoConn, "size_ < max_connections here, so the pool has an id");
    const InsertResult first = insert_entry(original, original_hash, conn, Direction::original);
    if (!first.ok()) return {{}, CreateStatus::full};
    if (!first.is_new()) return {match_of(first.id), CreateStatus::exists};
    FlowId reply_id = kNoFlow;  // stays kNoFlow for a tuple that is its own reply (stored once)
    if (!(reply == original)) {
      const InsertResult second = insert_entry(reply, reply_hash, conn, Direction::reply);
      if (!second.is_new()) {
        erase_entry(original, original_hash);  // leave the table as it was
        return {{}, second.ok() ? CreateStatus::reply_taken : CreateStatus::full};
      }
      reply_id = second.id;
    }
    [[maybe_unused]] const ConnId taken = conn_ids_.allocate();
    FLOWTRACK_ASSERT(taken == conn, "allocate() hands out the id peek(0) named");
    if constexpr (!kNamedEntries) {
      links_[first.id] = {conn, Direction::original};
      if (reply_id != kNoFlow) links_[reply_id] = {conn, Direction::reply};
    }
    Connection& c = connections_[conn];
    c = Connection{};
    c.original = original;
    c.reply = reply;
    c.original_hash = original_hash;
    c.reply_hash = reply_hash;
    c.protocol = protocol;
    c.created = now;
    wheel_.arm(conn, now, timeout_of(c));
    ++size_;
    ++creations_;
    peak_size_ = std::max(peak_size_, size_);
    return {{conn, Direction::original}, CreateStatus::created};
  }

  // A connection whose answers never pass this tracker (a load balancer's in tunnel mode: the backends
  // answer the clients directly), tracked by its one tuple: one table entry, every packet in the
  // original direction, TCP's handshake completed by the client's ACK (tcp_transition_one_way), UDP and
  // the other protocols on their answered timeouts from the start.
  CreateResult create_one_way(const Key& original, std::uint32_t original_hash, std::uint8_t protocol, Nanos now) {
    const CreateResult created = create(original, original_hash, original, original_hash, protocol, now);
    if (created.status == CreateStatus::created) {
      Connection& c = connections_[created.match.conn];
      c.one_way = true;
      c.replied = true;
      wheel_.set_timeout(created.match.conn, now, timeout_of(c));
    }
    return created;
  }

  using Saved = SavedConnection<Key>;
  // A live connection as a saved state keeps it (saved_connection.hpp), at `now`.
  Saved save(ConnId conn, Nanos now) const {
    const Connection& c = connections_[conn];
    const Nanos deadline = wheel_.deadline(conn);
    return {c.original, c.reply, c.protocol, c.replied, c.tcp, deadline > now ? deadline - now : 0, c.one_way};
  }
  // A connection carried over from a saved state (a restart, a peer's copy): created as create() does
  // (create_one_way for a one-way one), with the saved protocol state, and an idle timer that ends
  // `remaining` after `now` (at most the state's timeout); its next packet restarts the timer with the
  // state's full timeout.
  CreateResult restore(const Saved& saved, std::uint32_t original_hash, std::uint32_t reply_hash, Nanos now) {
    const CreateResult created = saved.one_way ? create_one_way(saved.original, original_hash, saved.protocol, now)
                                               : create(saved.original, original_hash, saved.reply, reply_hash, saved.protocol, now);
    if (created.status != CreateStatus::created) return created;
    Connection& c = connections_[created.match.conn];
    c.tcp = saved.tcp;
    c.replied = saved.replied;
    const Nanos timeout = timeout_of(c);
    wheel_.arm_until(created.match.conn, now + std::min(saved.remaining, timeout), timeout);
    return created;
  }

  // One packet of a tracked connection: counters, protocol state, idle timer. Every packet's work, so
  // inlined into the caller's loop. on_tcp_change(from, to) is told when the packet moves a TCP
  // connection's state (a few times a connection: on the path that resets the timer anyway).
  template <class OnTcpChange = IgnoreTcpChange>
  [[gnu::always_inline]] void update(ConnMatch match, const ParsedPacket& packet, std::uint32_t wire_length, Nanos now,
                                     OnTcpChange&& on_tcp_change = {}) {
    Connection& c = connections_[match.conn];
    const auto d = static_cast<std::size_t>(match.direction);
    ++c.packets[d];
    c.bytes[d] += wire_length;
    bool state_changed = false;
    if (c.protocol == ipproto::kTcp && packet.l4_offset != 0) {
      const TcpTracking next =
          c.one_way ? next_tcp_state_one_way(c.tcp, packet.tcp_flags) : next_tcp_state(c.tcp, match.direction, packet.tcp_flags);
      state_changed = next.state != c.tcp.state;
      if (state_changed) on_tcp_change(c.tcp.state, next.state);
      c.tcp = next;
    }
    if (match.direction == Direction::reply && !c.replied) {
      c.replied = true;
      state_changed |= c.protocol == ipproto::kUdp;
    }
    if (state_changed) {
      wheel_.set_timeout(match.conn, now, timeout_of(c));
    } else {
      wheel_.touch(match.conn, now);
    }
  }

  // Stops tracking a connection at once (both tuples leave the table, its timer is cancelled). Does
  // nothing for a connection that is not live.
  void destroy(ConnId conn) {
    if (!live(conn)) return;
    wheel_.cancel(conn);
    remove(conn);
  }

  // A live connection's timer is always armed (the wheel re-arms rather than drops a touched timer).
  bool live(ConnId conn) const { return conn < connections_.size() && wheel_.armed(conn); }
  // Visits every live connection: visit(conn, connection) (a snapshot of the state, nat_snapshot.hpp).
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (std::size_t id = 0; id < connections_.size(); ++id) {
      if (live(static_cast<ConnId>(id))) visit(static_cast<ConnId>(id), connections_[id]);
    }
  }

  // Destroys the connections idle past their timeout, calling on_expire(conn, connection) for each
  // just before; at most `budget` timers are handled. Returns the number expired.
  template <class OnExpire>
  std::size_t expire(Nanos now, std::size_t budget, OnExpire&& on_expire) {
    return wheel_.advance(now, budget, [&](FlowId conn) {
      on_expire(conn, std::as_const(connections_[conn]));
      remove(conn);
    });
  }

  const Connection& connection(ConnId conn) const { return connections_[conn]; }
  // A connection's phase for the gauges (tcp_state.hpp): a TCP one's by its state, any other established.
  static ConnectionPhase phase(const Connection& c) {
    return c.protocol == ipproto::kTcp ? tcp_phase(c.tcp.state) : ConnectionPhase::established;
  }
  Payload& payload(ConnId conn) { return connections_[conn].payload; }
  const Payload& payload(ConnId conn) const { return connections_[conn].payload; }
  Nanos deadline(ConnId conn) const { return wheel_.deadline(conn); }
  Nanos timeout_of(const Connection& c) const {
    switch (c.protocol) {
      case ipproto::kTcp: return timeouts_.tcp_timeout(c.tcp.state);
      case ipproto::kUdp: return c.replied ? timeouts_.udp_replied : timeouts_.udp_unreplied;
      case ipproto::kIcmp:
      case ipproto::kIcmpV6: return timeouts_.icmp;
      default: return timeouts_.other;
    }
  }

  std::size_t size() const { return size_; }
  std::size_t peak_size() const { return peak_size_; }  // the most connections alive at once
  std::size_t capacity() const { return max_connections_; }
  const Table& table() const { return table_; }
  std::size_t memory_bytes() const {
    return table_.memory_bytes() + links_.capacity() * sizeof(Link) + conn_ids_.memory_bytes() +
           connections_.capacity() * sizeof(Connection) + wheel_.memory_bytes();
  }

 private:
  // A table entry's connection and direction in one 32-bit word (the id shifted left, the direction in
  // the low bit): at a million connections the links are 8 MB, where a two-field struct took 16.
  class Link {
   public:
    Link() = default;
    Link(ConnId conn, Direction direction) : word_(entry_id(conn, direction)) {}
    ConnMatch match() const { return {word_ >> 1, static_cast<Direction>(word_ & 1u)}; }

   private:
    std::uint32_t word_ = ~std::uint32_t{0};
  };

  static std::size_t checked_capacity(std::size_t max_connections) {
    if (max_connections >= (std::size_t{1} << 31)) throw std::invalid_argument("conntrack: at most 2^31 - 1 connections");
    return max_connections;
  }

  // A caller-named entry's id: the connection shifted left, the direction in the low bit (the same
  // packing as Link, so that match_of reads both alike).
  static FlowId entry_id(ConnId conn, Direction direction) {
    return (conn << 1) | static_cast<std::uint32_t>(direction);
  }

  ConnMatch match_of(FlowId id) const {
    if (id == kNoFlow) return {};
    if constexpr (kNamedEntries) {
      return {id >> 1, static_cast<Direction>(id & 1u)};
    } else {
      return links_[id].match();
    }
  }

  InsertResult insert_entry(const Key& key, std::uint32_t hash, ConnId conn, Direction direction) {
    if constexpr (kNamedEntries) {
      return table_.insert_named(key, hash, entry_id(conn, direction));
    } else {
      return table_.insert(key, hash);
    }
  }
  void erase_entry(const Key& key, std::uint32_t hash) {
    if constexpr (kNamedEntries) {
      table_.erase_named(key, hash);
    } else {
      table_.erase(key, hash);
    }
  }

  void remove(ConnId conn) {
    const Connection& c = connections_[conn];
    erase_entry(c.original, c.original_hash);
    if (!(c.reply == c.original)) erase_entry(c.reply, c.reply_hash);
    conn_ids_.release(conn);
    --size_;
    ++removals_;
  }

  static Aging make_aging(std::size_t capacity, const TimerWheelConfig& wheel) {
    if constexpr (std::is_constructible_v<Aging, std::size_t, TimerWheelConfig>) {
      return Aging(capacity, wheel);
    } else {
      return Aging(capacity);
    }
  }

  Table table_;
  HugePageVector<Link> links_;            // by FlowId of either entry; empty for a NamedIdTable
  IdPool conn_ids_;                       // hands out ConnIds: live exactly while the connection is
  HugePageVector<Connection> connections_;  // by ConnId
  Aging wheel_;                           // by ConnId: armed exactly while the connection lives
  ConntrackTimeouts timeouts_;
  std::size_t max_connections_;
  std::size_t size_ = 0;
  std::size_t peak_size_ = 0;
  std::uint64_t creations_ = 0, removals_ = 0;
};

}  // namespace flowtrack
