"""The lab's experiments, in the report's order: each an NPF test file, the seed figure it answers, and
the function that reads the seed's finding in its results (labkit.findings)."""
from dataclasses import dataclass
from pathlib import Path

from labkit import findings
from labkit.paths import LAB_DIR


@dataclass(frozen=True)
class Experiment:
    name: str                    # the test file is lab/<name>.npf
    title: str
    answers: str                 # the seed figure(s) it answers
    finding: callable            # results DataFrame -> findings.Finding
    graph_size: tuple = (11, 4.5)
    model: bool = False          # also draw labkit.scale_model's figure

    @property
    def npf_file(self) -> Path:
        return LAB_DIR / f"{self.name}.npf"


EXPERIMENTS = [
    Experiment("table-cycles", "Cycles per operation against the load factor, per table",
               "[conntrack-study], Fig. 2", findings.table_cycles, graph_size=(13, 4.5)),
    Experiment("table-throughput", "Throughput on one core against the load factor, per table",
               "[conntrack-study], Fig. 1; [lb-flowtables], Fig. 5.4", findings.table_throughput),
    Experiment("scale-workers", "Throughput against the number of workers, per scaling strategy",
               "[conntrack-study], Fig. 3-4; [lb-flowtables], Fig. 5.1; [mt-nat] (1 core, 2 cores, spinlock)",
               findings.scale_workers, model=True),
    Experiment("aging-frequency", "Expiry cost against the collection frequency, per aging method",
               "[conntrack-study], Fig. 5", findings.aging_frequency),
    Experiment("nf-connections",
               "Stateful LB and NAT throughput against the live connections, per table, in bursts and "
               "per packet", "this project's own figure; [mt-nat], Fig. 5.5-5.6 for the NAT",
               findings.nf_connections, graph_size=(11, 8)),
    Experiment("table-memory", "Bytes per flow, per table", "[conntrack-study], Sec. III-B (the STL table's memory management)",
               findings.table_memory, graph_size=(13, 4.5)),
    Experiment("compact-lookups",
               "Load-balancer lookup structures: lookups and bits per connection against the connections held",
               "[concury-thesis], Table 5.1 and the lookup and memory figures of chapter 5", findings.compact_lookups,
               graph_size=(13, 4.5)),
]


def by_name(names):
    """The experiments named (all when `names` is empty), in the report's order."""
    known = {e.name for e in EXPERIMENTS}
    unknown = set(names) - known
    if unknown:
        raise ValueError(f"unknown experiments {sorted(unknown)} (known: {sorted(known)})")
    return [e for e in EXPERIMENTS if not names or e.name in names]
