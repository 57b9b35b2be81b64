#include "scale_grid.hpp"

namespace flowtrack::cli {
template RunReport run_scale_config<Strategy::sharded>(std::string_view, const PacketStore&, const RunOptions&);
}  // namespace flowtrack::cli
