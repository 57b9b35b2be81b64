#include "flowtrack/compact/othello_lookup.hpp"

namespace flowtrack::compact {

std::size_t OthelloMessage::bytes() const {
  if (image) return image->cells.bytes() + sizeof(OthelloShape);
  std::size_t total = 0;
  for (const CellWrite& w : writes) total += sizeof(w.cell) + 8;
  return total;
}

OthelloLookup::OthelloLookup(const OthelloImage& image, std::size_t stripes)
    : shape_(image.shape), value_mask_((1ull << image.shape.value_bits) - 1), cells_(image.cells), stripes_(stripes) {}

void OthelloLookup::apply(const OthelloMessage& message) {
  if (message.image) {
    const OthelloImage& image = *message.image;
    if (!shape_.same_geometry(image.shape)) {
      // Another geometry: the caller guarantees no reader is inside (see the header).
      shape_ = image.shape;
      value_mask_ = (1ull << shape_.value_bits) - 1;
      cells_ = image.cells;
      return;
    }
    VersionStripes::ExclusiveSection exclusive(stripes_);
    store_relaxed(shape_.seed, image.shape.seed);
    cells_.assign_words(image.cells.words());
    return;
  }
  if (message.writes.empty()) return;
  std::vector<std::uint32_t> stripes;
  stripes.reserve(message.writes.size());
  for (const CellWrite& w : message.writes) stripes.push_back(stripes_.stripe_of(w.cell));
  VersionStripes::WriteSection section(stripes_, std::move(stripes));
  for (const CellWrite& w : message.writes) cells_.set(w.cell, w.value);
}

}  // namespace flowtrack::compact
