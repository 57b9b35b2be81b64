// The second half of the registry's tables with IPv4 keys (see conformance_v4_test.cpp).
#include "conformance_suite.hpp"
#include "flowtrack/lab/registry.hpp"

namespace flowtrack::conformance {

using Tables = RegisteredTables<FlowKeyV4>;
using SecondHalf = TableSlice<Tables, std::tuple_size_v<Tables> / 2, std::tuple_size_v<Tables>>;
INSTANTIATE_TYPED_TEST_SUITE_P(RegistryV4Rest, Conformance, SecondHalf);

}  // namespace flowtrack::conformance
