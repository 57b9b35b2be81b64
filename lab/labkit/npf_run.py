"""Runs one NPF test file of the lab and checks what it produced.

NPF sweeps the variables, repeats the runs, keeps its results database (so `cache` reuses earlier
points) and draws its graphs; this module only starts it with the lab's paths, shows its progress one
line per run, stops it at the first broken bench output, and checks that every run gave every result
the test file declares in `results_expect`.

NPF runs in a child forked from this process, which imports NPF once: started as a command, npf 2.1.1
spends 2-3 s importing its modules, and as much again when its forkserver imports the `npf` script
as its main module, for every test file. The command shown in the report does the same thing.
"""
import multiprocessing
import os
import re
import shlex
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from json2result import ERROR_MARK  # bench.sh prints it too
from labkit import LabError
from labkit.paths import ROOT, flowtrack_bin, npf_exe

PROGRESS = re.compile(r"\[run \d+/\d+ for test \d+/\d+\]")
NPF_FAILURES = ("Bad return code", "Could not find", "Timeout of", "Traceback (most recent call last)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class NpfOutput:
    csv: Path
    graphs: list
    log: Path
    command: str


def expected_results(npf_file):
    """The result names listed in the test file's `results_expect={A,B}` line."""
    for line in Path(npf_file).read_text().splitlines():
        m = re.match(r"\s*results_expect\s*=\s*\{(.*)\}", line)
        if m:
            return [r.strip() for r in m.group(1).split(",") if r.strip()]
    raise LabError(f"{npf_file}: no results_expect line (the lab checks every run against it)")


def command_for(npf_file, mode, work, graph_size, cache):
    """The npf command line for `npf_file` in `mode`, writing under `work`."""
    stem = Path(npf_file).stem
    cmd = [str(npf_exe()), "local", "--test", str(npf_file), "--tags", mode,
           "--result-path", str(work / "npf-results"), "--experiment-folder", str(work / "tmp"),
           "--pandas", str(work / f"{stem}.csv"),
           "--graph-filename", str(work / "graphs" / f"{stem}.png"),
           "--graph-size", *(str(x) for x in graph_size), "--graph-dpi", "110", "--no-colors"]
    if cache:
        cmd.append("--cache")
    return cmd


def shown_command(cmd):
    """The command as a person types it from the repository root."""
    def rel(arg):
        name, eq, value = arg.rpartition("=")
        p = Path(value)
        return name + eq + str(p.relative_to(ROOT)) if p.is_absolute() and ROOT in p.parents else arg
    return shlex.join(rel(a) for a in cmd)


def _npf_main():
    try:
        from npf.tests.main import main
    except ImportError:
        raise LabError(f"NPF is not importable by {sys.executable}: run scripts/install-deps.sh "
                       "(or 'make deps'), and the lab with .venv/bin/python") from None
    return main


def _fork_npf(args, cwd, env):
    """Runs NPF's main with `args` in a forked child, its output into a pipe; returns (pid, pipe)."""
    main = _npf_main()
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        return pid, os.fdopen(read_fd, errors="replace")
    status = 1
    try:  # the child: never returns
        os.setsid()
        os.close(read_fd)
        os.dup2(write_fd, 1)
        os.dup2(write_fd, 2)
        sys.stdout.reconfigure(line_buffering=True)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        multiprocessing.set_forkserver_preload([])  # NPF's forkserver: no need for our __main__
        sys.argv = ["npf", *args]
        status = main() or 0
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _stream(lines, log, label):
    """Copies npf's output to the log, prints one progress line per run; returns the error lines."""
    errors, run_lines = [], []  # run_lines: the current run's output, from its progress line on
    for raw in lines:
        line = ANSI.sub("", raw.rstrip("\n"))
        log.write(line + "\n")
        run_lines = [line] if PROGRESS.search(line) else (run_lines + [line])[-8:]
        if ERROR_MARK in line:
            errors = run_lines
            break
        if PROGRESS.search(line):
            print(f"  [{label}] {line.strip()}", flush=True)
        elif any(f in line for f in NPF_FAILURES):
            errors.append(line)
    return errors


def run(npf_file, mode, work, graph_size=(10, 4), cache=False, label=None, binary=None):
    """Runs `npf_file` in `mode` (quick, full or tiny) under `work` with the flowtrack `binary`
    (default: labkit.paths.flowtrack_bin()); returns its NpfOutput."""
    npf_file = Path(npf_file).resolve()
    label = label or npf_file.stem
    work = Path(work).resolve()
    (work / "tmp").mkdir(parents=True, exist_ok=True)
    (work / "graphs").mkdir(exist_ok=True)
    csv = work / f"{npf_file.stem}.csv"
    for old in [csv, *(work / "graphs").glob(f"{npf_file.stem}-*.png")]:
        old.unlink(missing_ok=True)
    cmd = command_for(npf_file, mode, work, graph_size, cache)
    binary = Path(binary or flowtrack_bin()).resolve()
    env = dict(os.environ, FLOWTRACK_BIN=str(binary))
    log_path = work / f"{npf_file.stem}.log"
    with open(log_path, "w") as log:
        log.write(f"$ {shown_command(cmd)}\n")
        pid, output = _fork_npf(cmd[1:], work, env)
        with output:
            errors = _stream(output, log, label)
            if errors and ERROR_MARK in errors[-1]:
                os.killpg(pid, signal.SIGTERM)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if errors:
        raise LabError(f"{label}: the experiment failed (log: {log_path}):\n  " + "\n  ".join(errors))
    if status != 0:
        raise LabError(f"{label}: npf exited with status {status} (log: {log_path})")
    check_results(csv, expected_results(npf_file), label)
    graphs = sorted((work / "graphs").glob(f"{npf_file.stem}-*.png"))
    if not graphs:
        raise LabError(f"{label}: npf drew no graph (log: {log_path})")
    return NpfOutput(csv=csv, graphs=graphs, log=log_path,
                     command=shown_command([f"FLOWTRACK_BIN={binary}", *cmd]))


def check_results(csv, expected, label):
    """Every row of NPF's dataframe has a value for every expected result."""
    if not csv.exists():
        raise LabError(f"{label}: npf wrote no results table ({csv})")
    df = pd.read_csv(csv)
    if df.empty:
        raise LabError(f"{label}: npf's results table is empty ({csv})")
    for name in expected:
        col = f"y_{name}"
        if col not in df.columns:
            raise LabError(f"{label}: no run produced RESULT-{name} ({csv})")
        missing = int(df[col].isna().sum())
        if missing:
            raise LabError(f"{label}: {missing} of {len(df)} runs lack RESULT-{name} ({csv})")

