"""One sentence per figure: the seed's finding, what the measured means say about it, and a verdict.

Every number in a sentence is computed here from NPF's results (the mean over the runs of a point, as
NPF's graphs plot it), and the verdict comes from stated checks on those numbers, so the sentence is
true of the figure beside it whatever the run measured. A grid too small for a check (the test grid)
gives the verdict "not tested".
"""
from dataclasses import dataclass

import pandas as pd

REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_TESTED = (
    "reproduced", "partly reproduced", "not reproduced", "not tested")


@dataclass(frozen=True)
class Finding:
    verdict: str
    sentence: str


def verdict(checks):
    """All checks hold: reproduced; some: partly; none: not reproduced; no check: not tested."""
    if not checks:
        return NOT_TESTED
    held = sum(bool(c) for c in checks)
    return REPRODUCED if held == len(checks) else PARTLY if held else NOT_REPRODUCED


def means(df, metric, *by):
    """Mean of RESULT-<metric> over the runs of each point, indexed by the variables `by`."""
    return df.groupby(list(by))[f"y_{metric}"].mean()


def num(x):
    """A measured number: three significant digits, whole numbers from 1000 up."""
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def pct(x):
    """A signed percentage."""
    return f"{x * 100:+.0f} %"


def present(df, column, wanted):
    """The values of `wanted` that the grid has in `column`, in `wanted`'s order."""
    have = set(df[column])
    return [w for w in wanted if w in have]


def not_tested(why):
    return Finding(NOT_TESTED, f"This grid cannot test the seed's finding: {why}.")


def _join(words):
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _verb(subjects, one, many):
    return one if len(subjects) == 1 else many


def _ends(values):
    """The lowest and the highest values of a sweep: two of each when it has four or more."""
    values = sorted(set(values))
    k = 2 if len(values) >= 4 else 1
    return values[:k], values[-k:]


def _span(values):
    return "-".join(str(v) for v in values)


def table_cycles(df):
    hit = means(df, "HIT_CYCLES", "TABLE", "LOAD")
    low, high = _ends(df.LOAD)
    flat = present(df, "TABLE", ["cuckoo", "cuckoopp"])
    steep = present(df, "TABLE", ["robinhood", "hopscotch"])
    if not flat or not steep or low == high:
        return not_tested("it needs a cuckoo table, robin hood or hopscotch, and two load factors")
    growth = {t: hit[t][high].mean() / hit[t][low].mean() for t in flat + steep}
    worst_flat = max(growth[t] for t in flat)
    degrades = [t for t in steep if growth[t] >= 1.2 * worst_flat]
    holds = [t for t in steep if t not in degrades]
    factors = ", ".join(f"{num(growth[t])} ({t})" for t in flat + steep)
    outcome = (f"{_join(degrades)} {_verb(degrades, 'degrades', 'degrade')} more than the cuckoo "
               f"tables (a factor at least 1.2 times theirs)" if degrades
               else "neither degrades more than the cuckoo tables (by a factor 1.2 times theirs)")
    if degrades and holds:
        outcome += f", {_join(holds)} {_verb(holds, 'does', 'do')} not"
    return Finding(verdict([t in degrades for t in steep]),
                   f"[conntrack-study] finds cuckoo lookups nearly flat as the table fills while robin hood's and "
                   f"hopscotch's degrade; here from load {_span(low)} to {_span(high)} the mean cycles of "
                   f"a hit are multiplied by {factors}: {outcome}.")


def table_throughput(df):
    mpps = means(df, "MPPS", "TABLE", "LOAD")
    loads = sorted(set(df.LOAD))
    ref = min(loads, key=lambda x: abs(x - 0.75))
    order = sorted(set(df.TABLE), key=lambda t: -mpps[t, ref])
    ranking = " > ".join(f"{t} {num(mpps[t, ref])}" for t in order)
    checks, clauses = [], []
    if "cuckoopp" in order:
        checks.append(order[0] == "cuckoopp")
        clauses.append(f"Cuckoo++ ranks {order.index('cuckoopp') + 1} of {len(order)}")
    if "stdmap" in order:
        checks.append(order[-1] == "stdmap")
        clauses.append(f"std::unordered_map {order.index('stdmap') + 1}")
    if {"hopscotch", "cuckoo"} <= set(order) and len(loads) > 1:
        lo, hi = loads[0], loads[-1]
        ahead = {x: mpps["hopscotch", x] > mpps["cuckoo", x] for x in (lo, hi)}
        checks.append(ahead[lo] and not ahead[hi])
        clauses.append("hopscotch is " + " and ".join(
            f"{'ahead of' if ahead[x] else 'behind'} cuckoo at load {x}" for x in (lo, hi)))
    if not checks:
        return not_tested("it needs Cuckoo++, std::unordered_map, or hopscotch and cuckoo")
    return Finding(verdict(checks),
                   f"[conntrack-study] puts Cuckoo++ first and std::unordered_map last on one core, and [lb-flowtables] "
                   f"sees hopscotch lead until about 70 % load and then fall behind cuckoo; here at load "
                   f"{ref} the order is {ranking} Mpps: {'; '.join(clauses)}.")


def scale_workers(df):
    mpps = means(df, "MPPS", "STRATEGY", "WORKERS")
    strategies = present(df, "STRATEGY", ["sharded", "lockfree", "striped", "spinlock",
                                          "spinlock-packet", "rwlock", "concurrent"])
    if "sharded" not in strategies or not {1, 2} <= set(df.WORKERS):
        return not_tested("it needs the sharded strategy at 1 and 2 workers")
    gain = {s: mpps[s, 2] / mpps[s, 1] for s in strategies}
    locked = present(df, "STRATEGY", ["spinlock-packet", "rwlock"])
    behind = [s for s in locked if gain[s] < gain["sharded"] - 0.2]
    level = [s for s in locked if s not in behind]
    checks = [gain["sharded"] >= 1.7] + [s in behind for s in locked]
    gains = ", ".join(f"{num(gain[s])}x ({s})" for s in strategies)
    outcome = "sharding scales" if checks[0] else "sharding does not scale (under 1.7x)"
    if behind:
        outcome += f", {_join(behind)} {_verb(behind, 'falls', 'fall')} behind it"
    if level:
        outcome += f", {_join(level)} {_verb(level, 'keeps', 'keep')} up with it"
    sentence = (f"[conntrack-study] finds core sharding scaling almost linearly while the lock-based tables "
                f"stall; here from one worker to two the throughput is multiplied by {gains}: {outcome}")
    if "spinlock" in strategies:
        share = mpps["spinlock", 2] / mpps["sharded", 2]
        checks.append(share <= 0.75)
        sentence += (f", and two workers sharing one table under a spinlock reach {num(share)}x the "
                     f"throughput of two sharded ones, where [mt-nat] saw about half")
    return Finding(verdict(checks), sentence + ".")


def aging_frequency(df):
    cycles = means(df, "CYCLES", "METHOD", "FREQUENCY")
    methods = present(df, "METHOD", ["wheel", "lazy", "scan", "heap"])
    if not {"wheel", "lazy"} <= set(methods):
        return not_tested("it needs the timer wheel and lazy deletion")
    top = max(df.FREQUENCY)
    gap = cycles["wheel", top] / cycles["lazy", top] - 1
    checks = [abs(gap) <= 0.15]
    costs = ", ".join(f"{t} {num(cycles[t, top])}" for t in methods)
    sentence = (f"[conntrack-study] finds the timer wheel as cheap as lazy deletion at high collection "
                f"frequencies and scanning the costliest; here at {num(top)} Hz the cycles per packet "
                f"are {costs} (wheel {pct(gap)} against lazy)")
    if "scan" in methods:
        costliest = max(methods, key=lambda t: cycles[t, top])
        checks.append(costliest == "scan")
        sentence += f", and the costliest method is {costliest}"
    return Finding(verdict(checks), sentence + ".")


def nf_connections(df):
    lo, hi = min(df.CONNECTIONS), max(df.CONNECTIONS)
    if lo == hi:
        return not_tested("it needs two connection counts")
    tables = sorted(set(df.TABLE))
    change, speedup, fastest = {}, {}, {}
    for nf in ("LB", "NAT"):
        burst = means(df, f"{nf}_B32_MPPS", "TABLE", "CONNECTIONS")
        single = means(df, f"{nf}_B1_MPPS", "TABLE", "CONNECTIONS")
        change[nf] = pd.Series({t: burst[t, hi] / burst[t, lo] - 1 for t in tables})
        speedup[nf] = burst / single
        fastest[nf] = max(tables, key=lambda t: burst[t, hi])

    def span(nf):
        c = change[nf]
        return f"{pct(c.min())} ({c.idxmin()}) to {pct(c.max())} ({c.idxmax()})"

    return Finding(verdict([change["NAT"].median() <= -0.10]),
                   f"[mt-nat] sees a one-core NAT lose throughput as its flows grow from 10 K to 100 K; "
                   f"here, in bursts of 32, from {lo} to {hi} live connections the NAT's throughput "
                   f"changes by {span('NAT')} and the stateful LB's by {span('LB')}, bursts of 32 run "
                   f"the LB {num(speedup['LB'].min())}-{num(speedup['LB'].max())}x and the NAT "
                   f"{num(speedup['NAT'].min())}-{num(speedup['NAT'].max())}x as fast as one packet at "
                   f"a time, and at {hi} the fastest table is {fastest['LB']} for the LB and "
                   f"{fastest['NAT']} for the NAT.")


def table_memory(df):
    size = means(df, "BYTES_PER_FLOW", "TABLE", "LOAD")
    load = max(df.LOAD)
    at = size.xs(load, level="LOAD")
    if not {"stdmap", "chained"} <= set(at.index):
        return not_tested("it needs std::unordered_map and the chained table")
    return Finding(verdict([at["stdmap"] > at["chained"]]),
                   f"[conntrack-study] puts std::unordered_map's slower lookups down to heavier memory "
                   f"management than FastClick's chained table; here at load {load} std::unordered_map "
                   f"takes {num(at['stdmap'])} bytes per flow against {num(at['chained'])} for chained, "
                   f"the most compact table being {at.idxmin()} ({num(at.min())} B) and the largest "
                   f"{at.idxmax()} ({num(at.max())} B).")


def compact_lookups(df):
    if len(present(df, "STRUCTURE", ["concury", "maglev-digest"])) < 2:
        return not_tested("it needs Concury and the Maglev-style table")
    hi = max(df.CONNECTIONS)
    if hi < 1_000_000:
        return not_tested("the seed's figures are at 1M connections and more")
    bulk = means(df, "BULK_MQPS", "STRUCTURE", "CONNECTIONS")
    bits = means(df, "BITS_PER_CONNECTION", "STRUCTURE", "CONNECTIONS")
    ratio = {n: bulk["concury", n] / bulk["maglev-digest", n] for n in sorted(set(df.CONNECTIONS))}
    memory = bits["concury", hi] / bits["maglev-digest", hi]
    return Finding(verdict([ratio[hi] >= 4, memory <= 0.3]),
                   f"[concury-thesis] (Table 5.1) measures Concury's lookups at 4.5x a Maglev-style table's at 1M "
                   f"connections, in 20-30 % of its memory; here at {hi} connections Concury's bulk "
                   f"lookups run {num(ratio[hi])}x the Maglev-style table's ({num(bulk['concury', hi])} "
                   f"against {num(bulk['maglev-digest', hi])} Mqps) in {num(memory)}x its bits per "
                   f"connection, and {num(min(ratio.values()))}-{num(max(ratio.values()))}x across the grid "
                   f"({min(ratio)} to {hi} connections).")
