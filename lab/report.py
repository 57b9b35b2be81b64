#!/usr/bin/env python3
"""Runs the lab's experiments with NPF and writes the report (index.html and its Markdown twin).

    .venv/bin/python lab/report.py                   # quick mode, into docs/report (make report)
    .venv/bin/python lab/report.py --mode full       # publication-grade grids and repetitions
    .venv/bin/python lab/report.py --only aging-frequency --cache   # one experiment, NPF's cache

NPF's own working files (results database, logs, CSV, graphs) stay in lab/out/<mode>/.
"""
import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd  # noqa: E402

from labkit import LabError, npf_run, report_doc, scale_model  # noqa: E402
from labkit.experiments import by_name  # noqa: E402
from labkit.paths import LAB_DIR, ROOT, flowtrack_bin  # noqa: E402

MAKE_TARGET = {"quick": "make report", "full": "make report MODE=full"}  # tiny: `make test-lab`


def point_command(npf_file):
    """The body of a test file's %script: what NPF runs for each point, $VARIABLES and all."""
    text = npf_file.read_text()
    script = re.search(r"^%script[^\n]*\n(.*?)(?=^%|\Z)", text, re.S | re.M)
    if not script or "bench.sh" not in script.group(1):
        raise LabError(f"{npf_file}: no %script running bench.sh")
    return script.group(1).strip().replace("$NPF_SCRIPT_PATH/", "lab/")


def rel(path):
    return str(Path(path).resolve().relative_to(ROOT))


def run_experiment(exp, args, work, out):
    """Runs one experiment, copies its figures into `out`; returns its report section."""
    start = time.monotonic()
    result = npf_run.run(exp.npf_file, args.mode, work, graph_size=exp.graph_size, cache=args.cache,
                         label=exp.name, binary=work / "flowtrack")
    df = pd.read_csv(result.csv)
    if len(result.graphs) != 1:
        raise LabError(f"{exp.name}: NPF drew {len(result.graphs)} graphs, the report takes one "
                       "(graph_subplot_results puts every result in one figure)")
    graph = result.graphs[0]
    shutil.copy(graph, out / graph.name)
    figures = [report_doc.Figure(graph.name, exp.finding(df))]
    if exp.model:
        png = f"{exp.name}-model.png"
        figures.append(report_doc.Figure(png, scale_model.draw(df, out / png)))
    return report_doc.Section(
        title=exp.title, answers=exp.answers, figures=figures, npf_file=rel(exp.npf_file),
        npf_command=result.command, point_command=point_command(exp.npf_file),
        seconds=time.monotonic() - start)


def _git_commit():
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _cpu():
    try:
        m = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text())
        return f"{m.group(1) if m else platform.processor()}, {os.cpu_count()} cores"
    except OSError:
        return f"{os.cpu_count()} cores"


def new_report(mode, binary):
    by_hand = f".venv/bin/python lab/report.py --mode {mode}"
    how = [MAKE_TARGET[mode], "# or, without building:", by_hand] if mode in MAKE_TARGET else [by_hand]
    facts = [("mode", f"{mode} (the grid and runs each test file sets for NPF's --tags {mode})"),
             ("made", datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
             ("repository commit", _git_commit()),
             ("flowtrack binary", binary),
             ("machine", _cpu()),
             ("points", "means over NPF's runs; error bars one standard deviation (NPF's graphs)")]
    return report_doc.Report(title=f"flowtrack lab report ({mode} mode)", facts=facts, how=how)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--mode", default="quick", choices=["quick", "full", "tiny"])
    parser.add_argument("--out", default=None, help="report folder (default docs/report)")
    parser.add_argument("--cache", action="store_true", help="reuse NPF's results of earlier runs")
    parser.add_argument("--only", default="", help="comma-separated experiment names")
    args = parser.parse_args(argv)
    try:
        experiments = by_name([n for n in args.only.split(",") if n])
        binary = flowtrack_bin()
    except (ValueError, LabError) as err:
        print(f"report: {err}", file=sys.stderr)
        return 2
    out = Path(args.out or ROOT / "docs" / "report").resolve()
    work = LAB_DIR / "out" / args.mode
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    # The experiments measure a copy: a rebuild of the tree during the run cannot swap or remove it.
    shutil.copy2(binary, work / "flowtrack")
    for old in out.glob("*.png"):
        old.unlink()
    built = datetime.fromtimestamp(binary.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    shown = rel(binary) if ROOT in binary.resolve().parents else binary
    report = new_report(args.mode, f"{shown} (built {built})")
    start, load_before = time.monotonic(), os.getloadavg()[0]
    try:
        for i, exp in enumerate(experiments, 1):
            print(f"[{i}/{len(experiments)}] {exp.name}: {exp.title} ({args.mode})", flush=True)
            report.sections.append(run_experiment(exp, args, work, out))
            print(f"[{i}/{len(experiments)}] {exp.name}: done in {report.sections[-1].seconds:.0f} s",
                  flush=True)
    except LabError as err:
        print(f"report: {err}", file=sys.stderr)
        return 1
    minutes = (time.monotonic() - start) / 60
    cached = f" (with --cache: only points missing from {rel(work)}/npf-results ran)" if args.cache else ""
    report.facts.append(("wall time", f"{minutes:.1f} min{cached}"))
    report.facts.append(("load average (1 min) before and after", f"{load_before:.1f}, "
                         f"{os.getloadavg()[0]:.1f} (the lab's own bench adds about 1; more is other work)"))
    if load_before >= 1:
        report.facts.append(("caution", "other work was running when the lab started: timings are "
                             "noisier than on an idle machine, and two workers may not have had two "
                             "free cores"))
    (out / "index.html").write_text(report_doc.html_page(report))
    (out / "README.md").write_text(report_doc.markdown(report))
    print(f"report: {out / 'index.html'} and {out / 'README.md'} ({minutes:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
