#include "flowtrack/nf/internal/fragment_cache.hpp"

#include <algorithm>

#include "flowtrack/hash/crc32c.hpp"

namespace flowtrack {

FragmentCache::FragmentCache(std::size_t capacity, Nanos lifetime) : slots_(std::max<std::size_t>(capacity, 1)), lifetime_(lifetime) {}

std::size_t FragmentCache::home(const FragmentKey& key) const {
  const FlowKeyV4 as_flow{.src_addr = key.src_addr, .dst_addr = key.dst_addr, .src_port = static_cast<std::uint16_t>(key.ip_id),
                          .protocol = key.protocol};
  return flow_hash(as_flow) % slots_.size();
}

bool FragmentCache::remember(const FragmentKey& key, const FragmentTranslation& translation, Nanos now) {
  const std::size_t probes = std::min(kProbes, slots_.size());
  Slot* target = nullptr;  // the datagram's own live slot if it has one, else the first free slot
  for (std::size_t i = 0, s = home(key); i < probes; ++i, s = (s + 1) % slots_.size()) {
    Slot& slot = slots_[s];
    const bool live = now < slot.expires;
    if (live && slot.key == key) {  // the first fragment again (a retransmission): renewed
      target = &slot;
      break;
    }
    if (!live && target == nullptr) target = &slot;
  }
  if (target == nullptr) return false;
  *target = {key, translation, now + lifetime_};
  return true;
}

const FragmentTranslation* FragmentCache::find(const FragmentKey& key, Nanos now) const {
  const std::size_t probes = std::min(kProbes, slots_.size());
  for (std::size_t i = 0, s = home(key); i < probes; ++i, s = (s + 1) % slots_.size()) {
    const Slot& slot = slots_[s];
    if (now < slot.expires && slot.key == key) return &slot.translation;
  }
  return nullptr;
}

}  // namespace flowtrack
