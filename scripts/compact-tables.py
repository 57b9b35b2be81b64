#!/usr/bin/env python3
"""Markdown tables from `flowtrack bench compact --json` output (one JSON object per line), as in
docs/performance/compact.md: memory against the formulas, lookups single and bulk, updates and builds, and
the Concury / baseline ratios of each size (both sides measured in the same run)."""
import json
import sys


def load(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.startswith("{")]
    return [r for r in rows if list(r) != ["context"]]  # each output's context record is no result


def name(r):
    return f"ludo ({r['seed_bits']}-bit seeds)" if r["structure"] == "ludo" else r["structure"]


def main(paths):
    rows = load(paths)
    bulk = {(name(r), r["keys"]): r for r in rows if r["mode"] == "bulk"}
    single = {(name(r), r["keys"]): r for r in rows if r["mode"] == "single"}
    print("| structure | keys | bits/key | formula | single Mqps | bulk Mqps | update Mops | build s | extra |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for (structure, keys), b in sorted(bulk.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        s = single[(structure, keys)]
        extra = []
        for field, fmt in (("overflow_rate", "overflow {:.2%}"), ("formula_measured_overflow", "formula at measured overflow {:.2f}"),
                           ("level2_fraction", "level 2 {:.2%}"), ("dip_change_ms_per_vip", "DIP change {:.2f} ms/VIP"),
                           ("refused_inserts", "refused {}")):
            if field in b:
                extra.append(fmt.format(b[field]))
        if b["wrong_answers"]:
            extra.append(f"WRONG {b['wrong_answers']}")
        print(f"| {structure} | {keys} | {b['bits_per_key']:.2f} | {b['formula_bits_per_key']:.2f} | {s['lookup_mqps']:.1f} | "
              f"{b['lookup_mqps']:.1f} | {b['update_mops']:.2f} | {b['build_seconds']:.3f} | {', '.join(extra)} |")
    print()
    print("| connections | concury / maglev-digest bytes | bulk Mqps ratio | single Mqps ratio | concury / silkroad bytes | bulk Mqps ratio |")
    print("|---:|---:|---:|---:|---:|---:|")
    for (structure, keys), c in sorted(bulk.items(), key=lambda kv: kv[0][1]):
        if structure != "concury" or ("maglev-digest", keys) not in bulk:
            continue
        m, sr = bulk[("maglev-digest", keys)], bulk.get(("silkroad", keys))
        line = (f"| {keys} | {c['bytes'] / m['bytes']:.2f} | {c['lookup_mqps'] / m['lookup_mqps']:.2f}x | "
                f"{single[('concury', keys)]['lookup_mqps'] / single[('maglev-digest', keys)]['lookup_mqps']:.2f}x |")
        line += f" {c['bytes'] / sr['bytes']:.2f} | {c['lookup_mqps'] / sr['lookup_mqps']:.2f}x |" if sr else " - | - |"
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
