#include "flowtrack/sched/lfu_cache.hpp"

#include <bit>
#include <stdexcept>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace flowtrack {
namespace {

constexpr std::size_t kGroupWays = 8;

// Bit w set when tags[w] == tag, for the eight ways of one group.
unsigned match_group(const std::uint64_t* tags, std::uint64_t tag) {
#if defined(__AVX2__)
  const __m256i needle = _mm256_set1_epi64x(static_cast<long long>(tag));
  const __m256i low = _mm256_cmpeq_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags)), needle);
  const __m256i high = _mm256_cmpeq_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags + 4)), needle);
  return static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(low))) |
         static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(high))) << 4;
#else
  unsigned match = 0;
  for (unsigned w = 0; w < kGroupWays; ++w) match |= static_cast<unsigned>(tags[w] == tag) << w;
  return match;
#endif
}

// The position of the least of `count` keys (a multiple of eight, every key below 2^63; keys are
// distinct but for empty ways, and the first of equal keys wins).
std::size_t least_key(const std::uint64_t* keys, std::size_t count) {
#if defined(__AVX2__)
  const auto load = [keys](std::size_t i) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys + i)); };
  const auto min = [](__m256i a, __m256i b) { return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b)); };
  __m256i least = min(load(0), load(4));
  for (std::size_t i = kGroupWays; i < count; i += 4) least = min(least, load(i));
  least = min(least, _mm256_permute4x64_epi64(least, 0x4e));  // lanes 2, 3, 0, 1
  least = min(least, _mm256_shuffle_epi32(least, 0x4e));      // within each half, the other lane
  for (std::size_t i = 0;; i += 4) {
    const auto equal = static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(load(i), least))));
    if (equal != 0) return i + static_cast<unsigned>(std::countr_zero(equal));
  }
#else
  std::size_t best = 0;
  for (std::size_t i = 1; i < count; ++i) best = keys[i] < keys[best] ? i : best;
  return best;
#endif
}

}  // namespace

LfuCache::LfuCache(std::size_t entries, bool fully_associative)
    : capacity_(entries),
      sets_(fully_associative || entries <= kAnnexWays ? 1 : entries / kAnnexWays),
      ways_(sets_ == 1 ? entries : kAnnexWays),
      stride_((ways_ + kGroupWays - 1) / kGroupWays * kGroupWays) {
  if (sets_ > 1 && entries % kAnnexWays != 0) {
    throw std::invalid_argument("a set-associative cache needs a multiple of 8 entries");
  }
  tags_.assign(sets_ * stride_, kNoTag);
  keys_.assign(sets_ * stride_, kDisabled);
  victims_.resize(sets_);
  for (std::size_t set = 0; set < sets_; ++set) {
    for (std::size_t way = 0; way < ways_; ++way) keys_[set * stride_ + way] = 0;
    victims_[set] = set * stride_;
  }
}

std::ptrdiff_t LfuCache::find(std::size_t first, std::uint64_t tag) const {
  for (std::size_t group = first; group < first + stride_; group += kGroupWays) {
    if (const unsigned match = match_group(&tags_[group], tag); match != 0) {
      return static_cast<std::ptrdiff_t>(group + static_cast<unsigned>(std::countr_zero(match)));
    }
  }
  return -1;
}

std::size_t LfuCache::victim(std::size_t first) const { return first + least_key(&keys_[first], stride_); }

std::uint64_t LfuCache::hit(std::uint64_t tag) {
  const std::size_t set = set_of(tag);
  const std::size_t first = set * stride_;
  const std::ptrdiff_t found = find(first, tag);
  if (found < 0) return 0;
  const auto way = static_cast<std::size_t>(found);
  const std::uint64_t count = bump(way);
  std::size_t& least = victims_[set];
  if (least == way) least = victim(first);
  return count;
}

std::optional<LfuCache::Entry> LfuCache::insert(std::uint64_t tag, std::uint64_t count) {
  if (capacity_ == 0) throw std::logic_error("LfuCache::insert on a zero-capacity cache");
  if (count == 0) throw std::logic_error("LfuCache::insert with a zero count");
  const std::size_t set = set_of(tag);
  const std::size_t first = set * stride_;
  std::size_t& least = victims_[set];
  const std::size_t way = least;
  std::optional<Entry> evicted;
  if (keys_[way] != 0) evicted = Entry{tags_[way], keys_[way] >> kStampBits};
  fill(way, tag, count);
  least = victim(first);
  return evicted;
}

std::uint64_t LfuCache::remove(std::uint64_t tag) {
  const std::size_t set = set_of(tag);
  const std::size_t first = set * stride_;
  const std::ptrdiff_t found = find(first, tag);
  if (found < 0) return 0;
  const auto way = static_cast<std::size_t>(found);
  const std::uint64_t count = keys_[way] >> kStampBits;
  tags_[way] = kNoTag;
  keys_[way] = 0;
  victims_[set] = victim(first);  // the first empty way: the same choice a search makes
  return count;
}

std::vector<LfuCache::Entry> LfuCache::entries() const {
  std::vector<Entry> out;
  for (std::size_t way = 0; way < keys_.size(); ++way) {
    if (keys_[way] != 0 && keys_[way] != kDisabled) out.push_back({tags_[way], keys_[way] >> kStampBits});
  }
  return out;
}

}  // namespace flowtrack
