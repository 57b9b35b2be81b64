// The conformance suite with IPv6 keys: one table of each design and mode family (the IPv4 runs cover
// every registered table; here the point is the 40-byte key: its compares, hashing and padding).
#include "conformance_suite.hpp"
#include "flowtrack/lab/map_adapter.hpp"
#include "flowtrack/table/chained.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/cuckoo_pp.hpp"
#include "flowtrack/table/robin_hood.hpp"
#ifdef FLOWTRACK_WITH_DPDK
#include "flowtrack/lab/dpdk_table.hpp"
#endif

namespace flowtrack::conformance {

using TablesV6 = ::testing::Types<ChainedTable<FlowKeyV6>, StdMapTable<FlowKeyV6>, SwissTable<FlowKeyV6>,
                                  HopscotchTable<FlowKeyV6>, CuckooTable<FlowKeyV6>,
                                  CuckooTable<FlowKeyV6, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>,
                                  CuckooPPTable<FlowKeyV6>,
#ifdef FLOWTRACK_WITH_DPDK
                                  DpdkTable<FlowKeyV6>,
#endif
                                  RobinHoodTable<FlowKeyV6>>;
INSTANTIATE_TYPED_TEST_SUITE_P(V6, Conformance, TablesV6);

}  // namespace flowtrack::conformance
