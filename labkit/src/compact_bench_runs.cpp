// Each structure's repetition, measured alike: TSC time of construction, of setup.queries lookups of
// stored keys drawn uniformly (single, then in bursts of kDefaultBurst through the bulk path, which hashes and
// prefetches the whole burst before reading; the queries warm in the cache, see time_lookups), and of
// an update mix (equal thirds: delete, insert, value
// change; the lookup structure applies every message, so update = control plane + message + data plane).
// Wrong answers are counted on every stored key outside the timed loops.
#include "flowtrack/lab/compact_bench_runs.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <iterator>
#include <mutex>
#include <span>
#include <thread>
#include <utility>

#include "flowtrack/compact/concury_control.hpp"
#include "flowtrack/compact/cuckoo_filtable_builder.hpp"
#include "flowtrack/compact/dcode_blocks_builder.hpp"
#include "flowtrack/compact/ludo_builder.hpp"
#include "flowtrack/compact/maglev_digest_lb.hpp"
#include "flowtrack/compact/othello_builder.hpp"
#include "flowtrack/compact/silkroad_table.hpp"
#include "flowtrack/compact/weighted_codes.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/util/random.hpp"
#include "flowtrack/util/statistics.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {
namespace {

using namespace compact;

constexpr std::size_t kSegment = kCompactQuerySegment;  // queries timed at a stretch
constexpr std::size_t kPairedRounds = 4;  // rounds of run_concury_against_maglev
constexpr std::size_t kMaxUpdates = std::size_t{1} << 18;

volatile std::uint64_t g_sink;  // what the timed loops compute goes here, so it is not optimised away

struct Workload {
  std::vector<std::uint64_t> keys, values, fresh;
  std::vector<std::uint32_t> queries;  // indices into keys
  std::vector<std::uint64_t> query_keys;
};

Workload make_workload(const CompactBenchSetup& s) {
  Random rng(s.seed * 1000003 + s.keys);
  Workload w;
  const std::uint64_t mask = (1ull << s.value_bits) - 1;
  w.keys.resize(s.keys);
  w.values.resize(s.keys);
  for (std::size_t i = 0; i < s.keys; ++i) {
    w.keys[i] = rng.next();
    w.values[i] = rng.next() & mask;
  }
  w.fresh.resize(std::min(s.keys, kMaxUpdates));
  for (auto& k : w.fresh) k = rng.next();
  w.queries.resize(s.queries);
  w.query_keys.resize(s.queries);
  for (std::size_t q = 0; q < s.queries; ++q) {
    w.queries[q] = static_cast<std::uint32_t>(rng.below(s.keys));
    w.query_keys[q] = w.keys[w.queries[q]];
  }
  return w;
}

template <class Work>
std::uint64_t ticks_of(Work&& work) {
  const std::uint64_t start = tsc_begin();
  work();
  return tsc_end() - start;
}

template <class Work>
double seconds_of(Work&& work) {
  return static_cast<double>(ticks_of(work)) / tsc_hz();
}

// `lookups` lookups in `ticks` TSC ticks.
double mqps_of(std::size_t lookups, std::uint64_t ticks) {
  return static_cast<double>(lookups) / (static_cast<double>(ticks) / tsc_hz()) / 1e6;
}

// Reads one word of every cache line of `queries`, so that they are in the cache.
template <class Query>
void warm(std::span<const Query> queries) {
  std::uint64_t sum = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(queries.data());
  for (std::size_t b = 0; b < queries.size_bytes(); b += 64) sum += bytes[b];
  g_sink = sum;
}

// The Mqps of answer_segment(from), which answers queries from .. from + kSegment - 1, over queries
// 0 .. queries - 1; warm_queries(from, n) brings the inputs of queries from .. from + n - 1 into the
// cache (warm() on each array they read). Only answer_segment is timed, each segment's inputs read just
// before, untimed: a NIC's DMA leaves packet headers in the last-level cache, and the thesis draws its
// queries from an LFSR in registers. Streamed from DRAM, the 32 MiB of queries would be measured
// beside the structure and cap the fastest one (Concury at 1K: 100 Mqps with the stream, 155 without).
template <class WarmQueries, class AnswerSegment>
double segmented_mqps(std::size_t queries, WarmQueries&& warm_queries, AnswerSegment&& answer_segment) {
  std::uint64_t ticks = 0;
  for (std::size_t from = 0; from < queries; from += kSegment) {
    warm_queries(from, kSegment);
    ticks += ticks_of([&] { answer_segment(from); });
  }
  return mqps_of(queries, ticks);
}

// Queries 0 .. queries - 1, timed by segments (segmented_mqps): single(q) answers query q; bulk(q)
// answers queries q .. q + kDefaultBurst - 1.
template <class WarmQueries, class Single, class Bulk>
void time_lookups(CompactRep& r, std::size_t queries, WarmQueries&& warm_queries, Single&& single, Bulk&& bulk) {
  std::uint64_t acc = 0;
  r.single_mqps = segmented_mqps(queries, warm_queries, [&](std::size_t from) {
    for (std::size_t q = from; q < from + kSegment; ++q) acc += single(q);
  });
  r.bulk_mqps = segmented_mqps(queries, warm_queries, [&](std::size_t from) {
    for (std::size_t q = from; q < from + kSegment; q += kDefaultBurst) acc += bulk(q);
  });
  g_sink = acc;
}

// The update mix over a structure holding w.keys: deletes take stored keys from the front, inserts add
// fresh keys, value changes touch stored keys from the back; the size stays within one of where it was.
template <class Builder, class Lookup>
double time_updates(Builder& builder, Lookup& lookup, const Workload& w, std::uint64_t mask) {
  const std::size_t ops = w.fresh.size() * 3 / 2;
  return static_cast<double>(ops) / seconds_of([&] {
           for (std::size_t i = 0, erased = 0, added = 0, changed = 0; i < ops; ++i) {
             switch (i % 3) {
               case 0: lookup.apply(builder.erase(w.keys[erased++])); break;
               case 1: lookup.apply(builder.insert(w.fresh[added], added & mask)); ++added; break;
               default: lookup.apply(builder.insert(w.keys[w.keys.size() - 1 - changed++], 1)); break;
             }
           }
         }) / 1e6;
}

template <class Read>
std::uint64_t count_wrong(const Workload& w, Read&& read) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < w.keys.size(); ++i) wrong += read(i) != w.values[i];
  return wrong;
}

double bits_per_key(std::size_t bytes, std::size_t keys) { return static_cast<double>(bytes) * 8 / static_cast<double>(keys); }

// A structure's configuration sized for the setup's keys (the fields every compact config has).
template <class Config>
Config sized_config(const CompactBenchSetup& s) {
  Config c;
  c.capacity = static_cast<std::uint32_t>(s.keys);
  c.value_bits = s.value_bits;
  c.seed = s.seed;
  return c;
}

template <class Lookup>
void record_memory(CompactRep& r, const Lookup& lookup, std::size_t keys) {
  r.bytes = lookup.array_bytes();
  r.bits_per_key = bits_per_key(r.bytes, keys);
}

// Construction by inserting every key in turn (the control plane's serial construction).
template <class Builder>
double insert_all(Builder& builder, const Workload& w) {
  return seconds_of([&] {
    for (std::size_t i = 0; i < w.keys.size(); ++i) builder.insert(w.keys[i], w.values[i]);
  });
}

// Lookups and wrong answers of a structure answering lookup(key) -> value (Othello, Ludo).
template <class Lookup>
void measure_value_lookups(CompactRep& r, const Lookup& lookup, const Workload& w) {
  time_lookups(
      r, w.query_keys.size(), [&](std::size_t from, std::size_t n) { warm(std::span(w.query_keys).subspan(from, n)); },
      [&](std::size_t q) { return lookup.lookup(w.query_keys[q]); },
      [&](std::size_t q) {
        std::array<std::uint64_t, kDefaultBurst> out;
        lookup.lookup_bulk(std::span(w.query_keys).subspan(q, kDefaultBurst), out);
        return out[0];
      });
  r.wrong_answers = count_wrong(w, [&](std::size_t i) { return lookup.lookup(w.keys[i]); });
}

CompactRep run_othello(const CompactBenchSetup& s, const Workload& w) {
  CompactRep r;
  OthelloConfig c = sized_config<OthelloConfig>(s);
  OthelloBuilder<std::uint64_t> builder(c);
  r.build_seconds = seconds_of([&] { builder.assign(w.keys, w.values); });
  OthelloLookup lookup(builder.export_image());
  record_memory(r, lookup, s.keys);
  r.formula_bits_per_key = 2.33 * s.value_bits;
  measure_value_lookups(r, lookup, w);
  const std::size_t rebuilds = builder.rebuilds();
  r.update_mops = time_updates(builder, lookup, w, (1ull << s.value_bits) - 1);
  r.extra["rebuilds_during_updates"] = builder.rebuilds() - rebuilds;
  return r;
}

CompactRep run_ludo(const CompactBenchSetup& s, const Workload& w) {
  CompactRep r;
  LudoConfig c = sized_config<LudoConfig>(s);
  c.seed_bits = s.seed_bits;
  LudoBuilder<std::uint64_t> builder(c);
  r.build_seconds = insert_all(builder, w);
  LudoLookup<std::uint64_t> lookup(builder.export_image());
  record_memory(r, lookup, s.keys);
  r.formula_bits_per_key = 3.76 + 1.05 * s.value_bits;
  const double n = static_cast<double>(s.keys), buckets = builder.buckets();
  const double overflow_rate = static_cast<double>(builder.overflowing_buckets()) / buckets;
  // The thesis's formula with this table's load and overflow rate: locator (sized for every slot, as in
  // the reference), seeds, 37-bit overflow entries, values.
  const double slots = buckets * kLudoSlots;
  r.extra["overflow_rate"] = overflow_rate;
  r.extra["load"] = builder.load();
  r.extra["fallback_keys"] = builder.fallback_size();
  r.extra["formula_measured_overflow"] = (2.33 * slots + s.seed_bits * buckets + 37 * overflow_rate * buckets + s.value_bits * slots) / n;
  r.extra["cuckoo_moves_per_insert"] = static_cast<double>(builder.moves()) / n;
  measure_value_lookups(r, lookup, w);
  r.update_mops = time_updates(builder, lookup, w, (1ull << s.value_bits) - 1);
  return r;
}

CompactRep run_filtable(const CompactBenchSetup& s, const Workload& w) {
  CompactRep r;
  FiltableConfig c = sized_config<FiltableConfig>(s);
  c.fingerprint_bits = s.fingerprint_bits;
  FiltableBuilder<std::uint64_t> builder(c);
  r.build_seconds = insert_all(builder, w);
  FiltableLookup<std::uint64_t> lookup(builder.export_image());
  record_memory(r, lookup, s.keys);
  // Eq. A.2 of the thesis with the measured share E of keys in level 1 (full keys of 64 bits in level 2).
  const double n = static_cast<double>(s.keys);
  const double e_l = static_cast<double>(builder.shape().buckets) * kFiltableSlots / n;
  const double in_level1 = 1 - static_cast<double>(builder.level2_size()) / n;
  r.formula_bits_per_key = e_l * (in_level1 * (s.fingerprint_bits + s.value_bits) + (1 - in_level1) * (64 + s.value_bits));
  r.extra["level2_fraction"] = 1 - in_level1;
  r.extra["fingerprint_bits"] = s.fingerprint_bits;
  time_lookups(
      r, w.query_keys.size(), [&](std::size_t from, std::size_t n) { warm(std::span(w.query_keys).subspan(from, n)); },
      [&](std::size_t q) { return lookup.find(w.query_keys[q]).value_or(0); },
      [&](std::size_t q) {
        std::array<std::optional<std::uint64_t>, kDefaultBurst> out;
        lookup.find_bulk(std::span(w.query_keys).subspan(q, kDefaultBurst), out);
        return out[0].value_or(0);
      });
  r.wrong_answers = count_wrong(w, [&](std::size_t i) { return lookup.find(w.keys[i]).value_or(~0ull); });
  r.update_mops = time_updates(builder, lookup, w, (1ull << s.value_bits) - 1);
  return r;
}

// ---- the load-balancer structures: connection i belongs to VIP i % vips; VIP v's DIPs are
// v * dips_per_vip .. + dips_per_vip - 1, equal weights.

constexpr unsigned kDcodeBits = 12;

ConcuryLayout layout_of(const CompactBenchSetup& s) { return s.concury_layout.value_or(layout_for(s.keys, kDcodeBits)); }
constexpr std::size_t kLearnBatch = 32;  // reports the control plane takes at once (same core: at least)

std::vector<std::uint16_t> dips_of(const CompactBenchSetup& s, unsigned vip) {
  std::vector<std::uint16_t> dips(s.dips_per_vip);
  for (unsigned d = 0; d < s.dips_per_vip; ++d) dips[d] = static_cast<std::uint16_t>(vip * s.dips_per_vip + d);
  return dips;
}

std::vector<std::vector<std::uint16_t>> new_connection_rows(const CompactBenchSetup& s) {
  std::vector<std::vector<std::uint16_t>> rows;
  const std::vector<double> weights(s.dips_per_vip, 1.0);
  for (unsigned v = 0; v < s.vips; ++v) rows.push_back(weighted_code_table(dips_of(s, v), weights, kDcodeBits));
  return rows;
}

std::uint32_t per_vip_capacity(const CompactBenchSetup& s) {
  return static_cast<std::uint32_t>((s.keys + s.vips - 1) / s.vips + 1);
}

// The timed lookups' queries: query q asks for connection w.queries[q], of VIP (its index) % vips.
std::vector<LbQuery> lb_queries(const CompactBenchSetup& s, const Workload& w) {
  std::vector<LbQuery> queries(s.queries);
  for (std::size_t q = 0; q < s.queries; ++q) queries[q] = {w.queries[q] % s.vips, w.query_keys[q]};
  return queries;
}

// Lookups of a load-balancer structure answering lookup(vip, key) and lookup_bulk(queries, dips).
template <class Lb>
void measure_lb_lookups(CompactRep& r, const Lb& lb, std::span<const LbQuery> queries) {
  time_lookups(
      r, queries.size(), [&](std::size_t from, std::size_t n) { warm(queries.subspan(from, n)); },
      [&](std::size_t q) { return lb.lookup(queries[q].vip, queries[q].key); },
      [&](std::size_t q) {
        std::array<std::uint16_t, kDefaultBurst> out;
        lb.lookup_bulk(queries.subspan(q, kDefaultBurst), out);
        return out[0];
      });
}

double row_bytes(const CompactBenchSetup& s) { return static_cast<double>(s.vips) * (1u << kDcodeBits) * sizeof(std::uint16_t); }

// The connections the control plane holds, per VIP, oldest first from `oldest` (a ring). Connection i
// of the workload is VIP i % vips's, and so is arrival i of a window.
class Population {
 public:
  Population(const CompactBenchSetup& s, const Workload& w) : keys_(s.vips), oldest_(s.vips, 0) {
    for (std::size_t i = 0; i < w.keys.size(); ++i) keys_[i % s.vips].push_back(w.keys[i]);
  }
  // A batch of connections arriving: with departures each takes the place of its VIP's oldest, which
  // departs (the control plane forgets the batch's departures together), else each is one more.
  void arrived(ConcuryControl& control, std::span<const ConcuryControl::Report> batch, bool departures) {
    departed_.clear();
    for (const ConcuryControl::Report& r : batch) {
      std::vector<std::uint64_t>& ring = keys_[r.vip];
      if (!departures || ring.empty()) {
        ring.push_back(r.key);
        continue;
      }
      std::size_t& oldest = oldest_[r.vip];
      departed_.push_back({r.vip, std::exchange(ring[oldest], r.key)});
      oldest = (oldest + 1) % ring.size();
    }
    control.forget_all(departed_);
  }
  // Every connection held, as (vip, key).
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (std::uint32_t v = 0; v < keys_.size(); ++v) {
      for (const std::uint64_t key : keys_[v]) visit(v, key);
    }
  }

 private:
  std::vector<std::vector<std::uint64_t>> keys_;
  std::vector<std::size_t> oldest_;
  std::vector<ConcuryControl::Departure> departed_;  // arrived()'s scratch
};

// Concury under load: the data plane does bulk lookups of stored connections for s.dynamic_seconds of
// TSC time while new connections arrive at `rate` per second; each arrival is met as the Concury
// function's cold path meets it (its Dcode from the data plane) and learnt by the control plane, which,
// every s.dip_change_every seconds from half a period on, changes one VIP's pool (in turn: its last
// DIP leaves, or comes back) and gives the data plane the VIP's new arrays, installed between two
// bursts. The control plane runs either on a thread of its own, fed reports (as the thesis runs it),
// or on the data plane's core between bursts (as `flowtrack run --nf concury` does). Arrivals due,
// reports and hand-overs are taken every 32 bursts (about 30 us of lookups); on the same core the
// control plane learns the reports kLearnBatch at a time. With s.departures each connection learnt
// departs its VIP's oldest (`population`), so the control plane also forgets one connection a report.
// The lookups keep asking for the workload's connections, departed or not: a lookup reads the same
// two cells and row entry whether its key is a member or not. The control plane computes each VIP's new
// arrays from those it handed over last (a copy it keeps, `handed`), as the network function computes
// them from those in use, so that a connection it does not know yet keeps its Dcode where it can. Each
// report carries how many new arrays of its VIP the data plane had installed when it answered, and the
// DIP they gave. A report the control plane learns after it handed its VIP newer arrays is late: those
// arrays were computed without the connection. When they, or the row the control plane now holds, give
// it another DIP, it is repaired as the network function repairs a connection (ConcuryLb's answer
// path): the control plane keeps it on the DIP it was given, if the pool still lists it, and hands the
// VIP's arrays over again. Until they are installed the connection may be sent elsewhere: that window
// is the race the thesis leaves open, and only a control plane on its own thread has it. Returns the
// data plane's lookup Mqps over the whole time; `point` gets the counts.
double concury_under_load(ConcuryControl& control, ConcuryLookup& lookup, Population& population, std::span<const LbQuery> queries,
                          const CompactBenchSetup& s, double rate, DynamicPoint* point = nullptr) {
  using Report = ConcuryControl::Report;
  using Handover = std::pair<std::uint32_t, ConcuryVipImage>;
  // What the data plane knew when it answered a report: its VIP's arrays installed by then, and the DIP
  // they gave the connection.
  struct Answered {
    std::uint32_t installed;
    std::uint16_t dip;
  };
  struct Mailbox {
    std::mutex lock;
    std::vector<Report> reports;
    std::vector<Answered> answered;  // one per report
    std::vector<Handover> images;
    std::atomic<bool> images_waiting{false}, done{false};
  } box;
  std::atomic<std::uint64_t> learnt{0};
  std::uint64_t changes = 0;       // the control plane's; read after join() when it has a thread
  std::uint64_t control_ticks = 0;  // likewise
  std::uint64_t late = 0, repaired = 0;  // likewise
  ConcuryLookup handed(kDcodeBits, layout_of(s));    // the control plane's: the arrays it handed over last
  for (std::uint32_t v = 0; v < s.vips; ++v) handed.add_vip(lookup.image(v));
  std::vector<std::uint32_t> hand_overs(s.vips, 0);  // per VIP: new arrays handed over (the control plane's)
  std::vector<std::uint32_t> installed(s.vips, 0);   // per VIP: new arrays installed (the data plane's)
  std::vector<std::uint32_t> stale;  // the control plane's scratch: VIPs whose handed arrays a late report corrects
  const double hz = tsc_hz();
  const std::uint64_t start = tsc_begin();
  const auto seconds = [&] { return static_cast<double>(tsc_end() - start) / hz; };
  // The control plane's work: hand a VIP's arrays over; learn a batch of reports, repair the late ones;
  // the pool change due, if one is.
  const auto hand_over = [&](std::uint32_t v, std::vector<Handover>& to) {
    const ConcuryVipImage in_use = handed.image(v);
    ConcuryVipImage next = control.image(v, &in_use);
    handed.apply(v, next);
    to.emplace_back(v, std::move(next));
    ++hand_overs[v];
  };
  const auto learn = [&](std::span<const Report> batch, std::span<const Answered> answered, std::vector<Handover>& to) {
    const std::uint64_t from = tsc_begin();
    // The departures first: a steady population never holds more than it started with (learning the
    // batch first would grow every VIP past the capacity it was built for, and its index doubles).
    population.arrived(control, batch, s.departures);
    control.learn_all(batch);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const std::uint32_t v = batch[i].vip;
      const std::uint64_t key = batch[i].key;
      if (hand_overs[v] == answered[i].installed) continue;
      ++late;
      const std::uint16_t given = answered[i].dip, now = handed.lookup(v, key);
      const std::optional<std::uint16_t> held = control.dip_of(v, key);
      if (now == given && held == given) continue;
      if (control.lists(v, given)) {
        control.keep(v, key, given);
        ++repaired;
      } else if (held == now) {
        continue;  // its DIP left the pool and it lost it, as a known connection does; both planes agree
      }
      if (std::find(stale.begin(), stale.end(), v) == stale.end()) stale.push_back(v);
    }
    for (const std::uint32_t v : stale) hand_over(v, to);
    stale.clear();
    learnt.fetch_add(batch.size(), std::memory_order_relaxed);
    control_ticks += tsc_end() - from;
  };
  const auto change_is_due = [&] { return rate > 0 && seconds() >= (static_cast<double>(changes) + 0.5) * s.dip_change_every; };
  const auto change = [&](std::vector<Handover>& to) {
    const std::uint64_t from = tsc_begin();
    const auto v = static_cast<std::uint32_t>(changes % s.vips);
    std::vector<std::uint16_t> dips = dips_of(s, v);
    if ((changes / s.vips) % 2 == 0) dips.pop_back();
    control.set_pool(v, dips, std::vector<double>(dips.size(), 1.0));
    hand_over(v, to);
    ++changes;
    control_ticks += tsc_end() - from;
  };
  std::thread control_plane;
  if (s.control_thread) {
    control_plane = std::thread([&] {
      std::vector<Report> batch;
      std::vector<Answered> batch_answered;
      std::vector<Handover> images;
      while (!box.done.load(std::memory_order_acquire)) {
        {
          std::lock_guard guard(box.lock);
          batch.swap(box.reports);
          batch_answered.swap(box.answered);
        }
        learn(batch, batch_answered, images);
        batch.clear();
        batch_answered.clear();
        if (change_is_due()) change(images);
        if (!images.empty()) {
          std::lock_guard guard(box.lock);
          std::move(images.begin(), images.end(), std::back_inserter(box.images));
          images.clear();
          box.images_waiting.store(true, std::memory_order_release);
        }
        std::this_thread::yield();
      }
    });
  }
  Random rng(s.seed ^ static_cast<std::uint64_t>(rate));
  std::array<std::uint16_t, kDefaultBurst> out;
  std::vector<Report> reports;
  std::vector<Answered> reports_answered;
  std::vector<Handover> images;
  std::uint64_t acc = 0, looked = 0, arrived = 0;
  std::size_t q = 0;
  double elapsed = 0;
  for (;;) {
    lookup.lookup_bulk(queries.subspan(q, kDefaultBurst), out);
    acc += out[0];
    looked += kDefaultBurst;
    q = (q + kDefaultBurst) % queries.size();  // setup.queries is a multiple of kDefaultBurst
    if (looked % (32 * kDefaultBurst) != 0) continue;
    elapsed = seconds();
    // The arrivals due by now, and by the end of the window at the last check: however slow a check
    // (a DIP change's rebuild on the same core), every connection of the window arrives.
    const bool last = elapsed >= s.dynamic_seconds;
    for (; static_cast<double>(arrived) < rate * std::min(elapsed, s.dynamic_seconds); ++arrived) {
      const auto v = static_cast<std::uint32_t>(arrived % s.vips);
      const std::uint64_t key = rng.next();
      const ConcuryLookup::Answer answer = lookup.answer(v, key);
      reports.push_back({.key = key, .vip = v, .dcode = answer.dcode});
      reports_answered.push_back({installed[v], answer.dip});
    }
    if (!s.control_thread) {
      // Reports are learnt kLearnBatch or more at a time (learn_all overlaps their misses), and all those
      // waiting before a pool change and at the end: no change is computed without a report made before
      // it (so the clock is read once for both: a change that fell due between two readings found
      // reports unlearnt, which then came late).
      const bool change_now = change_is_due();
      if (reports.size() >= kLearnBatch || last || change_now) {
        learn(reports, reports_answered, images);
        reports.clear();
        reports_answered.clear();
      }
      if (change_now) change(images);
    } else if (!reports.empty() || box.images_waiting.load(std::memory_order_acquire)) {
      std::lock_guard guard(box.lock);
      box.reports.insert(box.reports.end(), reports.begin(), reports.end());
      box.answered.insert(box.answered.end(), reports_answered.begin(), reports_answered.end());
      reports.clear();
      reports_answered.clear();
      images.swap(box.images);
      box.images_waiting.store(false, std::memory_order_relaxed);
    }
    for (const auto& [v, image] : images) {
      lookup.apply(v, image);
      ++installed[v];
    }
    images.clear();
    if (last) break;
  }
  const std::uint64_t behind = arrived - learnt.load(std::memory_order_relaxed);
  box.done.store(true, std::memory_order_release);
  if (control_plane.joinable()) control_plane.join();
  for (const auto& [v, image] : box.images) lookup.apply(v, image);  // handed over after the last check
  g_sink = acc;
  if (point != nullptr) {
    point->learnt = arrived - behind;
    point->departed = s.departures ? point->learnt : 0;
    point->dip_changes = changes;
    point->reports_behind = behind;
    point->late_reports = late;
    point->repaired_reports = repaired;
    point->elapsed_seconds = elapsed;
    point->control_busy_seconds = static_cast<double>(control_ticks) / hz;
  }
  return static_cast<double>(looked) / elapsed / 1e6;
}

// Concury's control plane learns every connection, then its lookup structure takes every VIP's arrays.
void build_concury(const CompactBenchSetup& s, const Workload& w, ConcuryControl& control, ConcuryLookup& lookup) {
  Random rng(s.seed);
  for (unsigned v = 0; v < s.vips; ++v) control.add_vip(dips_of(s, v), std::vector<double>(s.dips_per_vip, 1.0), per_vip_capacity(s));
  // Each connection learnt with the Dcode an unknown connection gets (uniform over the codes), from
  // reports taken in batches as the control plane takes them under load.
  std::vector<ConcuryControl::Report> batch;
  for (std::size_t i = 0; i < s.keys; ++i) {
    batch.push_back({.key = w.keys[i], .vip = static_cast<std::uint32_t>(i % s.vips),
                     .dcode = static_cast<std::uint32_t>(rng.below(1u << kDcodeBits))});
    if (batch.size() == kLearnBatch || i + 1 == s.keys) {
      control.learn_all(batch);
      batch.clear();
    }
  }
  for (unsigned v = 0; v < s.vips; ++v) lookup.add_vip(control.image(v));
}

// The Maglev-style table stores every connection with the DIP its new-connection row gives it.
void build_maglev_digest(const CompactBenchSetup& s, const Workload& w, MaglevDigestLb& lb) {
  std::uint64_t seed = s.seed;
  for (auto& row : new_connection_rows(s)) lb.add_vip(std::move(row), per_vip_capacity(s), seed++);
  for (std::size_t i = 0; i < s.keys; ++i) {
    const auto v = static_cast<std::uint32_t>(i % s.vips);
    lb.insert(v, w.keys[i], lb.new_connection_dip(v, w.keys[i]));
  }
}

CompactRep run_concury(const CompactBenchSetup& s, const Workload& w) {
  CompactRep r;
  const ConcuryLayout layout = layout_of(s);
  ConcuryControl control(kDcodeBits, s.seed, layout);
  ConcuryLookup lookup(kDcodeBits, layout);
  r.build_seconds = seconds_of([&] { build_concury(s, w, control, lookup); });
  r.bytes = lookup.bytes();
  r.bits_per_key = bits_per_key(r.bytes, s.keys);
  // Othello's 2.33 l, or a 512-bit block a block's share of keys (its cells over the builder's cells a key).
  const double code_bits = layout == ConcuryLayout::pairs
                               ? 2.33 * kDcodeBits
                               : kDcodeLineBits * kDcodeCellsPerKey / DcodeGeometry(kDcodeBits).cells();
  r.formula_bits_per_key = code_bits + (64 + (1u << kDcodeBits) * 16.0) * s.vips / static_cast<double>(s.keys);
  if (s.concury_scalar) lookup.set_bulk_path(ConcuryLookup::BulkPath::scalar);
  r.extra["bulk_path"] = lookup.bulk_path() == ConcuryLookup::BulkPath::avx2 ? "avx2" : "scalar";
  r.extra["layout"] = std::string(layout_name(layout));
  const std::vector<LbQuery> queries = lb_queries(s, w);
  measure_lb_lookups(r, lookup, queries);
  for (std::size_t i = 0; i < s.keys; ++i) {
    const auto v = static_cast<std::uint32_t>(i % s.vips);
    r.wrong_answers += lookup.lookup(v, w.keys[i]) != control.dip_of(v, w.keys[i]);
  }
  if (!s.arrivals.empty()) {
    Population population(s, w);
    const double static_mqps = concury_under_load(control, lookup, population, queries, s, 0);
    for (const double rate : s.arrivals) {
      DynamicPoint point{.arrivals_per_second = rate, .static_mqps = static_mqps};
      point.mqps = concury_under_load(control, lookup, population, queries, s, rate, &point);
      r.dynamic.push_back(point);
    }
    // Every connection held after the windows (those built, less the departed, and those learnt under
    // load) still gets its DIP, and the control plane holds no other.
    std::size_t held = 0, known = 0;
    population.for_each([&](std::uint32_t v, std::uint64_t key) {
      r.wrong_answers += lookup.lookup(v, key) != control.dip_of(v, key);
      ++held;
    });
    for (unsigned v = 0; v < s.vips; ++v) known += control.connections(v);
    r.wrong_answers += held > known ? held - known : known - held;
  }
  // A DIP change of one VIP: the control plane's response (new row, Dcodes moved, refill) and the copy.
  std::vector<double> rewrite_ms;
  for (unsigned v = 0; v < std::min(3u, s.vips); ++v) {
    std::vector<std::uint16_t> dips = dips_of(s, v);
    dips.pop_back();
    rewrite_ms.push_back(1e3 * seconds_of([&] {
                           control.set_pool(v, dips, std::vector<double>(dips.size(), 1.0));
                           lookup.apply(v, control.image(v));
                         }));
  }
  r.extra["dip_change_ms_per_vip"] = median(rewrite_ms);
  r.update_mops = static_cast<double>(w.fresh.size()) / seconds_of([&] {
                    for (std::size_t i = 0; i < w.fresh.size(); ++i) control.learn(static_cast<std::uint32_t>(i % s.vips), w.fresh[i], 1);
                  }) / 1e6;
  r.extra["update"] = "connection learnt (control plane only: no data-plane write)";
  return r;
}

CompactRep run_maglev_digest(const CompactBenchSetup& s, const Workload& w) {
  CompactRep r;
  MaglevDigestLb lb;
  r.build_seconds = seconds_of([&] { build_maglev_digest(s, w, lb); });
  r.bytes = lb.bytes();
  r.bits_per_key = bits_per_key(r.bytes, s.keys);
  r.formula_bits_per_key = (16 + 16 + 64) / 0.9 + row_bytes(s) * 8 / static_cast<double>(s.keys);
  measure_lb_lookups(r, lb, lb_queries(s, w));
  for (std::size_t i = 0; i < s.keys; ++i) {
    const auto v = static_cast<std::uint32_t>(i % s.vips);
    r.wrong_answers += lb.lookup(v, w.keys[i]) != lb.new_connection_dip(v, w.keys[i]);
  }
  r.update_mops = static_cast<double>(w.fresh.size()) / seconds_of([&] {
                    for (std::size_t i = 0; i < w.fresh.size(); ++i) lb.insert(static_cast<std::uint32_t>(i % s.vips), w.fresh[i], 1);
                  }) / 1e6;
  r.extra["update"] = "connection inserted";
  return r;
}

CompactRep run_silkroad(const CompactBenchSetup& s, const Workload& w) {
  CompactRep r;
  // Per VIP, the DIP pool of each version (a pool change adds a version); this run has version 0 only.
  std::vector<std::vector<std::vector<std::uint16_t>>> pools;
  const auto rows = new_connection_rows(s);
  for (const auto& row : rows) pools.push_back({row});
  std::vector<SilkRoadTable> tables;
  std::size_t refused = 0;
  r.build_seconds = seconds_of([&] {
    for (unsigned v = 0; v < s.vips; ++v) tables.emplace_back(per_vip_capacity(s), 4, s.seed + v);
    for (std::size_t i = 0; i < s.keys; ++i) refused += !tables[i % s.vips].insert(w.keys[i], 0);
  });
  for (const auto& t : tables) r.bytes += t.bytes();
  r.bytes += static_cast<std::size_t>(row_bytes(s));
  r.bits_per_key = bits_per_key(r.bytes, s.keys);
  r.formula_bits_per_key = 32 / 0.9 + row_bytes(s) * 8 / static_cast<double>(s.keys);
  auto dip = [&](std::uint32_t v, std::uint64_t key) {
    const std::uint8_t version = tables[v].find(key).value_or(0);  // a new connection: the current version
    return hashed_pick(pools[v][version < pools[v].size() ? version : 0], key);
  };
  time_lookups(
      r, w.queries.size(),
      [&](std::size_t from, std::size_t n) {
        warm(std::span(w.queries).subspan(from, n));
        warm(std::span(w.query_keys).subspan(from, n));
      },
      [&](std::size_t q) { return dip(w.queries[q] % s.vips, w.query_keys[q]); },
      [&](std::size_t q) {
        std::uint64_t acc = 0;
        for (std::size_t i = q; i < q + kDefaultBurst; ++i) tables[w.queries[i] % s.vips].prefetch(w.query_keys[i]);
        for (std::size_t i = q; i < q + kDefaultBurst; ++i) acc += dip(w.queries[i] % s.vips, w.query_keys[i]);
        return acc;
      });
  for (std::size_t i = 0; i < s.keys; ++i) {
    r.wrong_answers += dip(static_cast<std::uint32_t>(i % s.vips), w.keys[i]) != hashed_pick(rows[i % s.vips], w.keys[i]);
  }
  r.extra["refused_inserts"] = refused;
  r.update_mops = static_cast<double>(w.fresh.size()) / seconds_of([&] {
                    for (std::size_t i = 0; i < w.fresh.size(); ++i) tables[i % s.vips].insert(w.fresh[i], 0);
                  }) / 1e6;
  r.extra["update"] = "connection inserted";
  return r;
}

}  // namespace

const std::vector<std::string>& compact_structures() {
  static const std::vector<std::string> names{"othello", "ludo", "filtable", "concury", "maglev-digest", "silkroad"};
  return names;
}

PairedLookups run_concury_against_maglev(const CompactBenchSetup& setup) {
  const Workload w = make_workload(setup);
  PairedLookups paired;
  paired.layout = layout_of(setup);
  ConcuryControl control(kDcodeBits, setup.seed, paired.layout);
  ConcuryLookup concury(kDcodeBits, paired.layout);
  if (setup.concury_scalar) concury.set_bulk_path(ConcuryLookup::BulkPath::scalar);
  build_concury(setup, w, control, concury);
  MaglevDigestLb maglev;
  build_maglev_digest(setup, w, maglev);
  const std::vector<LbQuery> queries = lb_queries(setup, w);
  std::uint64_t acc = 0;
  auto bulk_from = [&](std::size_t which, std::size_t from, std::size_t to) {
    for (std::size_t q = from; q < to; q += kDefaultBurst) {
      std::array<std::uint16_t, kDefaultBurst> out;
      const auto burst = std::span(queries).subspan(q, kDefaultBurst);
      which == 0 ? concury.lookup_bulk(burst, out) : maglev.lookup_bulk(burst, out);
      acc += out[0];
    }
  };
  // One structure's pass: untimed lookups first, so that it finds its own lines in the cache and not
  // the other's (each would own the cache in a load balancer); then every query, timed by segments as
  // time_lookups times them.
  auto pass_mqps = [&](std::size_t which) {
    bulk_from(which, 0, queries.size() / 8);
    return segmented_mqps(
        queries.size(), [&](std::size_t from, std::size_t n) { warm(std::span(queries).subspan(from, n)); },
        [&](std::size_t from) { bulk_from(which, from, from + kSegment); });
  };
  // Rounds of one pass each, which one goes first alternating: a round's two passes see nearly the same
  // moment of a shared machine, so its ratio is steadier than that of two separate runs.
  for (std::size_t round = 0; round < kPairedRounds; ++round) {
    double mqps[2];
    for (std::size_t turn = 0; turn < 2; ++turn) {
      const std::size_t which = (round + turn) % 2;
      mqps[which] = pass_mqps(which);
    }
    paired.concury_mqps.push_back(mqps[0]);
    paired.maglev_mqps.push_back(mqps[1]);
  }
  g_sink = acc;
  return paired;
}

CompactRep run_compact_once(const std::string& structure, const CompactBenchSetup& setup) {
  const Workload w = make_workload(setup);
  if (structure == "othello") return run_othello(setup, w);
  if (structure == "ludo") return run_ludo(setup, w);
  if (structure == "filtable") return run_filtable(setup, w);
  if (structure == "concury") return run_concury(setup, w);
  if (structure == "maglev-digest") return run_maglev_digest(setup, w);
  return run_silkroad(setup, w);
}

}  // namespace flowtrack
