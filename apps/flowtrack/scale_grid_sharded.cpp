#include "scale_grid.hpp"

namespace flowtrack::cli {
template ScaleReport run_scale_config<Strategy::sharded>(std::string_view, const PacketStore&, const ScaleRunOptions&);
}  // namespace flowtrack::cli
