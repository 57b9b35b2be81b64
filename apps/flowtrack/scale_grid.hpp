// bench scale's part of the instantiation grid: the runtime over every (strategy, table) pair of this
// build's function grid (lab/registry.hpp). run_scale_config<S> is explicitly instantiated in
// translation units of their own (scale_grid_*.cpp, by strategy family), so a build compiles each pair
// once and its jobs share the work.
#pragma once

#include <string_view>

#include "flowtrack/lab/strategy.hpp"
#include "flowtrack/lab/scale_run.hpp"

namespace flowtrack::cli {

// One run of strategy S on the named table; the table must be one S applies to (strategy_applies).
template <Strategy S>
ScaleReport run_scale_config(std::string_view table, const PacketStore& trace, const ScaleRunOptions& options) {
  ScaleReport report;
  with_strategy<FlowKeyV4, S>(table, [&]<class T, Placement P>(std::type_identity<T>, std::integral_constant<Placement, P>) {
    report = scale_run<P, T>(trace, options);
  });
  return report;
}

// Instantiated in the scale_grid_*.cpp files, nowhere else.
extern template ScaleReport run_scale_config<Strategy::sharded>(std::string_view, const PacketStore&, const ScaleRunOptions&);
extern template ScaleReport run_scale_config<Strategy::spinlock>(std::string_view, const PacketStore&, const ScaleRunOptions&);
extern template ScaleReport run_scale_config<Strategy::spinlock_packet>(std::string_view, const PacketStore&, const ScaleRunOptions&);
extern template ScaleReport run_scale_config<Strategy::rwlock>(std::string_view, const PacketStore&, const ScaleRunOptions&);
extern template ScaleReport run_scale_config<Strategy::striped>(std::string_view, const PacketStore&, const ScaleRunOptions&);
extern template ScaleReport run_scale_config<Strategy::lockfree>(std::string_view, const PacketStore&, const ScaleRunOptions&);
extern template ScaleReport run_scale_config<Strategy::concurrent>(std::string_view, const PacketStore&, const ScaleRunOptions&);

}  // namespace flowtrack::cli
