// The strategies that put one lock around a single-thread table.
#include "scale_grid.hpp"

namespace flowtrack::cli {
template ScaleReport run_scale_config<Strategy::spinlock>(std::string_view, const PacketStore&, const ScaleRunOptions&);
template ScaleReport run_scale_config<Strategy::spinlock_packet>(std::string_view, const PacketStore&, const ScaleRunOptions&);
template ScaleReport run_scale_config<Strategy::rwlock>(std::string_view, const PacketStore&, const ScaleRunOptions&);
}  // namespace flowtrack::cli
