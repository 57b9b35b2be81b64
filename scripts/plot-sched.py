#!/usr/bin/python3
"""Turns the JSON lines of scripts/sched-experiments.sh into CSV files, PNG plots and the markdown tables
of docs/performance/scheduling.md (printed on stdout).

Usage: scripts/plot-sched.py [DIR]   (Debian's python3 with python3-matplotlib; DIR: sched-out)

Each experiment is read from DIR/<name>.jsonl, as sched-experiments.sh writes it, or else from the file
of DIR named after it as the measurements kept in docs/performance/data are,
sim-<command>-<name>-<date>-<commit>.jsonl; the CSV files and plots are written into DIR.
"""
import csv
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

POLICIES = ["ideal", "laps", "afs", "fcfs", "rss"]
COLORS = {"ideal": "0.6", "laps": "tab:green", "afs": "tab:orange", "fcfs": "tab:red", "rss": "tab:blue"}


def read(out, name):
    """The runs of experiment `name` in `out`, without the context records that open each command's output."""
    path = out / f"{name}.jsonl"
    if not path.exists():
        dated = sorted(out.glob(f"sim-*-{name}-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-*.jsonl"))
        if not dated:
            return []
        path = dated[-1]
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]
    return [r for r in rows if list(r) != ["context"]]


def write_csv(path, rows, fields):
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def finish(fig, axes, path, ncol=1):
    """Grid and legend on every panel, then the file."""
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(ncol=ncol, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def reduction(laps, other):
    return "n/a" if other == 0 else f"{100 * (laps - other) / other:+.0f} %"


def scenarios(out, name="scenarios"):
    rows = read(out, name)
    if not rows:
        return
    print(f"### {name}\n")
    write_csv(out / f"{name}.csv", rows, ["scenario", "policy", "offered_mpps", "throughput_mpps", "packets", "drops",
                                             "drop_pct", "out_of_order", "out_of_order_pct", "migrations", "core_moves",
                                             "cold_cache_pct", "flow_moves"])
    names = sorted({r["scenario"] for r in rows})
    by = {(r["scenario"], r["policy"]): r for r in rows}
    policies = [p for p in POLICIES if any(r["policy"] == p for r in rows)]
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    width = 0.8 / len(policies)
    for ax, field, label in zip(axes, ["drop_pct", "out_of_order_pct", "cold_cache_pct"],
                                ["dropped (% of offered)", "out of order (% of delivered)", "cold I-cache (% of delivered)"]):
        for k, policy in enumerate(policies):
            xs = [i + (k - len(policies) / 2 + 0.5) * width for i in range(len(names))]
            ys = [by[(n, policy)][field] if (n, policy) in by else 0 for n in names]
            ax.bar(xs, ys, width, label=policy, color=COLORS[policy])
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(ncol=len(policies))
    axes[-1].set_xticks(range(len(names)), names)
    axes[-1].set_xlabel("scenario (T1-T4 rate set 1, underload; T5-T8 set 2, overload)")
    fig.tight_layout()
    fig.savefig(out / f"sched-{name}.png", dpi=110)

    print("| scenario | offered Mpps | policy | output Mpps | drops % | out of order % | cold cache % | migrations | core moves |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in names:
        for policy in policies:
            r = by.get((n, policy))
            if r:
                print(f"| {n} | {r['offered_mpps']:.2f} | {policy} | {r['throughput_mpps']:.2f} | {r['drop_pct']:.1f} | "
                      f"{r['out_of_order_pct']:.2f} | {r['cold_cache_pct']:.1f} | {r['migrations']} | {r['core_moves']} |")
    print()
    baselines = [p for p in ("afs", "fcfs") if p in policies]
    if "laps" not in policies or not baselines:
        return
    print("| scenario | " + " | ".join(f"drops LAPS vs {b.upper()} | ooo count LAPS vs {b.upper()} | "
                                      f"ooo % LAPS vs {b.upper()} | output LAPS/{b.upper()}" for b in baselines) + " |")
    print("|---|" + "---|---|---|---|" * len(baselines))
    for n in names:
        laps = by[(n, "laps")]
        cells = []
        for b in baselines:
            other = by[(n, b)]
            cells += [reduction(laps["drops"], other["drops"]), reduction(laps["out_of_order"], other["out_of_order"]),
                      reduction(laps["out_of_order_pct"], other["out_of_order_pct"]),
                      f"{laps['throughput_mpps'] / other['throughput_mpps']:.2f}"]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print()


def throughput(out):
    rows = read(out, "throughput")
    if not rows:
        return
    write_csv(out / "throughput.csv", rows, ["policy", "offered_mpps", "throughput_mpps", "drop_pct", "out_of_order_pct",
                                              "cold_cache_pct", "migrations", "core_moves"])
    fig, ax = plt.subplots(figsize=(7, 5))
    top = max(r["offered_mpps"] for r in rows)
    ax.plot([0, top], [0, top], ":", color="0.7", label="output = offered")
    saturation, sustained = {}, {}
    for policy in POLICIES:
        mine = sorted((r for r in rows if r["policy"] == policy), key=lambda r: r["offered_mpps"])
        if mine:
            ax.plot([r["offered_mpps"] for r in mine], [r["throughput_mpps"] for r in mine], "o-", label=policy,
                    color=COLORS[policy], markersize=3)
            saturation[policy] = max(r["throughput_mpps"] for r in mine)
            # The largest offered load carried with under 1 % of drops.
            sustained[policy] = max([r["throughput_mpps"] for r in mine if r["drop_pct"] < 1] or [0])
    ax.set_xlabel("offered Mpps (split equally among the 4 services)")
    ax.set_ylabel("output Mpps")
    finish(fig, [ax], out / "sched-throughput.png")
    print("| policy | highest output Mpps | LAPS / policy | carried with < 1 % drops, Mpps | LAPS / policy |")
    print("|---|---|---|---|---|")
    for policy, mpps in saturation.items():
        kept = sustained[policy]
        ratio = f"{sustained['laps'] / kept:.2f}" if kept else "n/a"
        print(f"| {policy} | {mpps:.2f} | {saturation['laps'] / mpps:.2f} | {kept:.2f} | {ratio} |")
    print()


def afd(out):
    rows = read(out, "afd-accuracy")
    if not rows:
        return
    write_csv(out / "afd-accuracy.csv", rows, ["trace", "packets", "flows", "cache", "annex", "sampling", "top_found",
                                       "false_positives", "false_positive_rate"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    annexes = sorted({r["annex"] for r in rows if r["sampling"] == 1})
    for trace in sorted({r["trace"] for r in rows}):
        label = trace.split(":")[0]
        full = dict(sorted((r["annex"], r["false_positive_rate"]) for r in rows if r["trace"] == trace and r["sampling"] == 1))
        left.plot([annexes.index(a) for a in full], [100 * f for f in full.values()], "o-", label=label)
        # Under heavy sampling the cache is not even full: plot the top flows found, not only the errors.
        sampled = sorted({(r["sampling"], r["false_positive_rate"], r["top_found"] / r["cache"]) for r in rows
                          if r["trace"] == trace and r["annex"] == 512})
        line = right.plot([s for s, _, _ in sampled], [100 * f for _, f, _ in sampled], "o-", label=f"{label}: false positives")
        right.plot([s for s, _, _ in sampled], [100 * a for _, _, a in sampled], "s--", color=line[0].get_color(),
                   label=f"{label}: top-16 found")
    left.set_xticks(range(len(annexes)), [str(a) for a in annexes])
    left.set_xlabel("annex entries (AFC 16)")
    left.set_ylabel("false positive rate (%)")
    right.set_xscale("log")
    right.set_xlabel("sampling probability (annex 512)")
    right.set_ylabel("% of the 16 AFC entries")
    finish(fig, [left, right], out / "sched-afd.png")
    print("| trace | annex | sampling | top-16 found | false positives |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['trace'].split(':')[0]} ({r['flows']} flows) | {r['annex']} | {r['sampling']} | {r['top_found']} | "
              f"{r['false_positives']} |")
    print()


def afd_windows(out):
    rows = read(out, "afd-windows")
    if not rows:
        return
    write_csv(out / "afd-windows.csv", rows, ["trace", "packets", "flows", "cache", "annex", "sampling", "window", "checks",
                                               "accuracy_mean", "accuracy_min"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for trace in sorted({r["trace"] for r in rows}):
        for sampling in sorted({r["sampling"] for r in rows}, reverse=True):
            mine = sorted((r for r in rows if r["trace"] == trace and r["sampling"] == sampling), key=lambda r: r["window"])
            ax.plot([r["window"] for r in mine], [100 * r["accuracy_mean"] for r in mine], "o-" if sampling == 1 else "s--",
                    label=f"{trace.split(':')[0]}, sampling {sampling:g}")
    ax.axhline(90, color="0.6", linestyle=":", label="paper: > 90 %")
    ax.set_xscale("log")
    ax.set_xlabel("packets between checks (window)")
    ax.set_ylabel("mean accuracy: AFC entries top-16 in the window (%)")
    finish(fig, [ax], out / "sched-afd-windows.png")
    print("| trace | sampling | window (packets) | checks | mean accuracy % | lowest % |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['trace'].split(':')[0]} | {r['sampling']:g} | {r['window']} | {r['checks']} | "
              f"{100 * r['accuracy_mean']:.1f} | {100 * r['accuracy_min']:.1f} |")
    print()


def census(out):
    rows = read(out, "census")
    if not rows:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    print("| scenario | policy | migrations | distinct flows on the core left: median (10th-90th percentile) | "
          "aggressive flows there: median (10th-90th) |")
    print("|---|---|---|---|---|")

    def quantile(hist, q):
        total, seen = sum(hist), 0
        for n, count in enumerate(hist):
            seen += count
            if seen >= q * total:
                return n
        return len(hist) - 1

    for r in rows:
        label = f"{r['scenario']} {r['policy']}"
        flows, aggressive = r["flows_at_migration"], r["aggressive_at_migration"]
        total = max(sum(flows), 1)
        left.plot(range(len(flows)), [100 * c / total for c in flows], "o-", markersize=3, label=label)
        right.plot(range(len(aggressive)), [100 * c / total for c in aggressive], "o-", markersize=3, label=label)
        print(f"| {r['scenario']} | {r['policy']} | {r['migrations']} | {quantile(flows, 0.5)} "
              f"({quantile(flows, 0.1)}-{quantile(flows, 0.9)}) | {quantile(aggressive, 0.5)} "
              f"({quantile(aggressive, 0.1)}-{quantile(aggressive, 0.9)}) |")
    left.set_xlabel("distinct flows on the overloaded core (queued + in service)")
    right.set_xlabel("aggressive flows (in the AFC) among them")
    for ax in (left, right):
        ax.set_ylabel("% of migrations")
    finish(fig, [left, right], out / "sched-census.png")
    print()


def timeline(out, rates):
    rows = read(out, f"timeline-{rates}")
    if not rows or "timeline" not in rows[0]:
        return
    points = rows[0]["timeline"]
    # Core-equivalents of demand: rate x processing time at the 700-byte packets of the Zipf traces.
    cost_us = [3.7 + 700 / 64 * 0.23, 0.5, 3.53, 5.8 + 700 / 64 * 0.21]
    with (out / f"timeline-{rates}.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["t_s"] + [f"offered_mpps_s{s + 1}" for s in range(4)] + [f"cores_s{s + 1}" for s in range(4)])
        for p in points:
            writer.writerow([p["t"]] + p["offered_mpps"] + p["cores"])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    ts = [p["t"] for p in points]
    for s in range(4):
        line = top.plot(ts, [p["offered_mpps"][s] * cost_us[s] for p in points], label=f"S{s + 1} demand", linewidth=0.8)
        bottom.plot(ts, [p["cores"][s] for p in points], label=f"S{s + 1}", color=line[0].get_color(), linewidth=0.8)
    top.set_ylabel("demand (cores: Mpps x us)")
    bottom.set_ylabel("cores held (LAPS)")
    bottom.set_xlabel("time (s)")
    top.set_title(f"LAPS, rate set {1 if rates == 'underload' else 2} ({rates})")
    finish(fig, [top, bottom], out / f"sched-timeline-{rates}.png", ncol=4)


def speed(out):
    rows = read(out, "speed")
    if not rows:
        return
    print("| policy | detector sampling | packets | wall s (median of 5) | simulated Mpps (wall) | simulated Mpps (thread CPU) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        sampling = f"{r.get('sampling', 1):g}" if r["policy"] in ("laps", "ideal") else "-"
        print(f"| {r['policy']} | {sampling} | {r['packets']} | {r['wall_s']:.2f} | {r['sim_mpps']:.1f} | "
              f"{r['sim_mpps_cpu']:.1f} |")
    print()


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "sched-out")
    scenarios(out)
    scenarios(out, "scenarios-any-lighter")
    scenarios(out, "scenarios-unsampled")
    throughput(out)
    afd(out)
    afd_windows(out)
    census(out)
    for rates in ("underload", "overload"):
        timeline(out, rates)
    speed(out)


if __name__ == "__main__":
    main()
