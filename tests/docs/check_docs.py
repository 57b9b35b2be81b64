#!/usr/bin/env python3
"""Checks the repository's Markdown against what it describes (a ctest test of the release tree).

    check_docs.py links ROOT          every relative link and every file path written in code resolves
    check_docs.py cli ROOT FLOWTRACK  docs/guide/cli.md lists exactly the commands and options of the
                                      CLI's own --help, every command and subcommand

Each finding is one line naming the file and line; the exit status is 1 when there is any. The
configuration reference has its own check beside the configuration reader
(tests/nf/config_reference_test.cpp).
"""
import functools
import glob
import os
import re
import subprocess
import sys
from pathlib import Path

SKIPPED_DIRS = {".git", ".venv", "node_modules", "out"}  # out: lab/out, NPF's scratch space
TOP_DIRS = ("include", "src", "apps", "tests", "docs", "scripts", "lab", "examples", "fuzz", ".ci")
TOP_FILES = ("README.md", "DEVELOPING.md", "CHANGELOG.md", "Makefile", "CMakeLists.txt")

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
LINK_DEFINITION = re.compile(r"^\s*\[[^\]]+\]:\s+(\S+)")
# A path into the repository written in code: it starts at a top-level directory (or is a top-level
# file) and may hold shell globs and brace lists (tests/live/*_end_to_end.sh, lab/{a,b}.npf).
CODE_PATH = re.compile(r"(?<![\w./$-])((?:%s)/[\w.*{},/+-]*[\w*}]|(?:%s)(?![\w.-]))"
                       % ("|".join(re.escape(d) for d in TOP_DIRS), "|".join(re.escape(f) for f in TOP_FILES)))


def markdown_files(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith(".md"):
                yield Path(directory) / name


def lines_with_code(path):
    """(line number, prose with inline code removed, code on the line) for each line of a Markdown file."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            yield number, "", line
        else:
            code = " ".join(m.group(2) for m in INLINE_CODE.finditer(line))
            yield number, INLINE_CODE.sub("", line), code


def slug(heading):
    """The anchor a forge gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = INLINE_CODE.sub(lambda m: m.group(2), heading.strip().lstrip("#").strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@functools.lru_cache(maxsize=None)
def anchors(path):
    """The anchors of a Markdown file's headings; a repeated heading's get -1, -2, ..."""
    found, counts = set(), {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and re.match(r"^#{1,6} ", line):
            base = slug(line)
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def expand_braces(pattern):
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[:match.start()], pattern[match.end():]
    return [p for option in match.group(1).split(",") for p in expand_braces(head + option + tail)]


def check_link(root, path, target):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
        return None
    file_part, _, anchor = target.partition("#")
    resolved = (path.parent / file_part).resolve() if file_part else path.resolve()
    if not resolved.exists():
        return f"link to '{target}': no such file"
    if root.resolve() not in resolved.parents and resolved != root.resolve():
        return f"link to '{target}' leaves the repository"
    if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
        return f"link to '{target}': {resolved.name} has no heading '#{anchor}'"
    return None


def check_code_path(root, written):
    if written.startswith("lab/out") or "..." in written:
        return None
    for pattern in expand_braces(written.rstrip("/")):
        if not glob.glob(str(root / pattern)):
            return f"file reference '{written}': nothing at {pattern}"
    return None


def check_links(root):
    problems = []
    for path in markdown_files(root):
        where = path.relative_to(root)
        for number, prose, code in lines_with_code(path):
            targets = [m.group(1) for m in LINK.finditer(prose)]
            definition = LINK_DEFINITION.match(prose)
            if definition:
                targets.append(definition.group(1))
            findings = [check_link(root, path, t) for t in targets]
            findings += [check_code_path(root, m.group(1)) for m in CODE_PATH.finditer(code)]
            problems += [f"{where}:{number}: {f}" for f in findings if f]
    return problems


# The CLI: its --help, and the reference's sections.

def help_of(flowtrack, command):
    result = subprocess.run([flowtrack, *command, "--help"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"'flowtrack {' '.join(command)} --help' exited with {result.returncode}: {result.stderr}")
    return result.stdout


def parse_help(text):
    """(options and positionals, subcommands) of one --help: each named by its long name."""
    names, subcommands, section = set(), [], None
    for line in text.splitlines():
        if re.match(r"^[A-Z][a-z]+:$", line):
            section = line[:-1]
            continue
        item = re.match(r"^  (\S+)", line)
        if not item:
            continue
        if section == "Subcommands":
            subcommands.append(item.group(1))
        elif section == "Options":
            spellings = re.sub(r"\{[^}]*\}$", "", item.group(1)).split(",")
            names.add(max(spellings, key=len))
        elif section == "Positionals":
            names.add(item.group(1))
    names.discard("--help")
    return names, subcommands


def cli_from_help(flowtrack, command=()):
    """{"flowtrack bench table": {"--tables", ...}, ...} for every command and subcommand."""
    names, subcommands = parse_help(help_of(flowtrack, list(command)))
    commands = {" ".join(("flowtrack",) + command): names}
    for sub in subcommands:
        commands.update(cli_from_help(flowtrack, command + (sub,)))
    return commands


def cli_from_reference(path):
    """The same, from the reference: a heading `flowtrack ...` opens a command; every table row under it
    (until the next heading) whose first cell is in backticks names an option (its long name) or a
    positional."""
    commands, current = {}, None
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        if line.startswith("#"):
            heading = re.match(r"^#+ `(flowtrack(?: [a-z][a-z-]*)*)`", line)
            current = heading.group(1) if heading else None
            if current is not None:
                commands[current] = set()
            continue
        row = re.match(r"^\| `([^`]+)` \|", line)
        if current is not None and row:
            spellings = [w.rstrip(",") for w in row.group(1).split() if w.startswith("-")] or [row.group(1).split()[0]]
            commands[current].add(max(spellings, key=len))
    return commands


def check_cli(root, flowtrack):
    reference = root / "docs" / "guide" / "cli.md"
    documented = cli_from_reference(reference)
    actual = cli_from_help(flowtrack)
    where = reference.relative_to(root)
    problems = []
    for command, names in sorted(actual.items()):
        if command not in documented:
            problems.append(f"{where}: no section for `{command}`")
            continue
        problems += [f"{where}: `{command}` lacks {n}, which its --help lists" for n in sorted(names - documented[command])]
        problems += [f"{where}: `{command}` documents {n}, which its --help does not list"
                     for n in sorted(documented[command] - names)]
    problems += [f"{where}: a section for `{c}`, which is no command" for c in sorted(set(documented) - set(actual))]
    return problems


def main(argv):
    if len(argv) < 3 or argv[1] not in ("links", "cli") or (argv[1] == "cli" and len(argv) != 4):
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[2])
    problems = check_links(root) if argv[1] == "links" else check_cli(root, argv[3])
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
