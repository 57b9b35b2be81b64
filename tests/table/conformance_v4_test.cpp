// The conformance suite over every registered table (lab/registry.hpp) with IPv4 keys, so a table
// that the CLI can name is a table that passed. The registry is cut in two halves, instantiated here
// and in conformance_v4_rest_test.cpp, so that two compile jobs share the work.
#include "conformance_suite.hpp"
#include "flowtrack/lab/registry.hpp"

namespace flowtrack::conformance {

inline constexpr std::size_t kRegistryHalf = std::tuple_size_v<RegisteredTables<FlowKeyV4>> / 2;
using FirstHalf = TableSlice<RegisteredTables<FlowKeyV4>, 0, kRegistryHalf>;
INSTANTIATE_TYPED_TEST_SUITE_P(RegistryV4, Conformance, FirstHalf);

}  // namespace flowtrack::conformance
