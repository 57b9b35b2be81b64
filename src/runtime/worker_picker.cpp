#include "flowtrack/runtime/worker_picker.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace flowtrack {
namespace {

SchedulerConfig live_laps_config(unsigned workers, std::size_t ring_capacity) {
  SchedulerConfig config;
  config.cores = workers;
  config.services = 1;
  // The simulator's proportions (threshold 16 and low water 8 of 32 descriptors) on the ring's size.
  config.queue_threshold = static_cast<unsigned>(std::max<std::size_t>(ring_capacity / 2, 1));
  config.overload_low_water = std::max(config.queue_threshold / 2, 1u);
  return config;
}

}  // namespace

DispatchPolicy dispatch_policy(std::string_view name) {
  if (name == "partition") return DispatchPolicy::partition;
  if (name == "rss") return DispatchPolicy::rss;
  if (name == "laps") return DispatchPolicy::laps;
  throw std::invalid_argument("unknown dispatch '" + std::string(name) + "' (partition, rss, laps)");
}

WorkerPicker::WorkerPicker(DispatchPolicy policy, unsigned workers, std::size_t ring_capacity)
    : policy_(policy), rss_(workers), loads_(workers) {
  if (policy == DispatchPolicy::laps) laps_ = std::make_unique<LapsScheduler>(live_laps_config(workers, ring_capacity), loads_);
}

unsigned WorkerPicker::pick(const PacketTag& tag, Picos now, bool& migrated) {
  migrated = false;
  if (!tag.ip) return 0;
  if (policy_ != DispatchPolicy::laps) return rss_.queue_of_hash(tag.rss_hash);
  const std::uint64_t before = laps_->counters().migrations;
  const unsigned worker = laps_->core_for(PacketRef{tag.connection, tag.rss_hash, tag.crc16, 0}, now);
  migrated = laps_->counters().migrations != before;
  return worker;
}

}  // namespace flowtrack
