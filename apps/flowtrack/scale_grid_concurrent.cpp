// The strategies whose tables bring their own concurrency.
#include "scale_grid.hpp"

namespace flowtrack::cli {
template ScaleReport run_scale_config<Strategy::striped>(std::string_view, const PacketStore&, const ScaleRunOptions&);
template ScaleReport run_scale_config<Strategy::lockfree>(std::string_view, const PacketStore&, const ScaleRunOptions&);
template ScaleReport run_scale_config<Strategy::concurrent>(std::string_view, const PacketStore&, const ScaleRunOptions&);
}  // namespace flowtrack::cli
