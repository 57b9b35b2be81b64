// Every flow table the conformance suite runs against, for both key types. A new table is one line in
// each list.
#pragma once

#include <gtest/gtest.h>

#include "flowtrack/table/chained.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/cuckoo_pp.hpp"
#include "flowtrack/table/dpdk_table.hpp"
#include "flowtrack/table/libcuckoo_table.hpp"
#include "flowtrack/table/map_adapter.hpp"
#include "flowtrack/table/robin_hood.hpp"

namespace flowtrack::testing {

using AllTables = ::testing::Types<
    ChainedTable<FlowKeyV4>, StdMapTable<FlowKeyV4>, SwissTable<FlowKeyV4>, HopscotchTable<FlowKeyV4>,
    CuckooTable<FlowKeyV4>, CuckooTable<FlowKeyV4, CuckooPrefetch::both_buckets>,
    CuckooTable<FlowKeyV4, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>, CuckooPPTable<FlowKeyV4>,
    RobinHoodTable<FlowKeyV4>,
    DpdkTable<FlowKeyV4>, DpdkTable<FlowKeyV4, DpdkMode::rwlock>, DpdkTable<FlowKeyV4, DpdkMode::lock_free>,
    LibcuckooTable<FlowKeyV4>,
    ChainedTable<FlowKeyV6>, StdMapTable<FlowKeyV6>, SwissTable<FlowKeyV6>, HopscotchTable<FlowKeyV6>,
    CuckooTable<FlowKeyV6>, CuckooTable<FlowKeyV6, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>,
    CuckooPPTable<FlowKeyV6>, RobinHoodTable<FlowKeyV6>, DpdkTable<FlowKeyV6>>;

}  // namespace flowtrack::testing
