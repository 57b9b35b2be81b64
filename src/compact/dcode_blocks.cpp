#include "flowtrack/compact/internal/dcode_blocks.hpp"

#include <algorithm>

namespace flowtrack::compact {

std::size_t DcodeBlocksImage::bumped() const {
  return static_cast<std::size_t>(std::count_if(overflow.begin(), overflow.end(), [](const DcodeOverflowSlot& s) { return s.code != 0; }));
}

std::size_t DcodeBlocksImage::flagged_blocks() const {
  return static_cast<std::size_t>(
      std::count_if(lines.begin(), lines.end(), [](const DcodeLine& l) { return (l.words[0] & kDcodeBumped) != 0; }));
}

}  // namespace flowtrack::compact
