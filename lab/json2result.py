#!/usr/bin/env python3
"""Turns the JSON lines of `flowtrack bench ... --json` into NPF result lines.

Usage: json2result.py NAME=FIELD[?KEY=VALUE] [...] < bench-output

Every JSON object on stdin yields one `RESULT-NAME value` line per NAME=FIELD pair, the value being
the object's FIELD. NAME may hold `{field}` placeholders, filled from the same object and upper-cased,
so that a bench printing one line per operation gives one result per operation:

    ... bench table --ops insert hit --json | json2result.py '{op}_CYCLES=cycles'
    RESULT-INSERT_CYCLES 31.9
    RESULT-HIT_CYCLES 12.5

The bench's first line, its context record (`{"context": {...}}`: date, commit, CPU, compiler...), is
no result: it is skipped here and kept, with every other line, in NPF's log of the run (bench.sh).

A spec may end in `?KEY=VALUE`: it reads only the lines whose KEY is VALUE (a bench printing one
line per mode, whose other fields repeat on each: `BITS=bits_per_key?mode=bulk`).

Anything unexpected (no line at all, a line that is not a JSON object, a missing field, a value that
is not a number, two lines giving the same result name) stops the conversion with a message that starts with ERROR_MARK and names the field,
and exit status 2: the lab's runner watches for that mark and stops the whole experiment.
"""
import json
import math
import re
import string
import sys

ERROR_MARK = "lab error:"


class BenchOutputError(Exception):
    """The bench's output is not what the experiment reads."""


def parse_specs(args):
    """['NAME=field', 'NAME=field?key=value', ...] -> [(name_template, field, (key, value) or None), ...]"""
    specs = []
    for arg in args:
        spec, qmark, condition = arg.partition("?")
        name, sep, field = spec.partition("=")
        if not sep or not name or not field:
            raise ValueError(f"result spec '{arg}' is not NAME=FIELD")
        only = None
        if qmark:
            key, eq, value = condition.partition("=")
            if not eq or not key:
                raise ValueError(f"result spec '{arg}': the condition '{condition}' is not KEY=VALUE")
            only = (key, value)
        specs.append((name, field, only))
    if not specs:
        raise ValueError("no NAME=FIELD result spec given")
    return specs


def _field(obj, field, lineno, wanted_for):
    if field not in obj:
        present = ", ".join(sorted(obj)) or "none"
        raise BenchOutputError(
            f"bench output line {lineno} lacks field '{field}' (needed for {wanted_for}); "
            f"fields present: {present}")
    return obj[field]


def _result_name(template, obj, lineno):
    placeholders = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    values = {f: str(_field(obj, f, lineno, f"the result name '{template}'")) for f in placeholders}
    name = template.format(**values).upper()
    return re.sub(r"[^A-Z0-9_]", "_", name)


def _number(value, field, lineno):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BenchOutputError(
            f"bench output line {lineno}: field '{field}' is {json.dumps(value)}, not a finite number")
    return value


def is_context_record(obj):
    """The record that opens every bench's --json output: one key, "context"."""
    return list(obj) == ["context"]


def convert(lines, specs):
    """Yields the RESULT lines for the bench output `lines`; raises BenchOutputError."""
    seen, named = 0, {}
    for lineno, line in enumerate(lines, start=1):
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise BenchOutputError(f"bench output line {lineno} is not JSON ({err}): {line[:120]}")
        if not isinstance(obj, dict):
            raise BenchOutputError(f"bench output line {lineno} is not a JSON object: {line[:120]}")
        if is_context_record(obj):
            continue
        seen += 1
        for template, field, only in specs:
            if only is not None and str(_field(obj, only[0], lineno, f"the condition of '{template}'")) != only[1]:
                continue
            name = _result_name(template, obj, lineno)
            value = _number(_field(obj, field, lineno, f"RESULT-{name}"), field, lineno)
            if name in named:
                raise BenchOutputError(
                    f"bench output lines {named[name]} and {lineno} both give RESULT-{name}: the name "
                    f"'{template}' needs a {{field}} that tells them apart")
            named[name] = lineno
            yield f"RESULT-{name} {value!r}"
    if seen == 0:
        raise BenchOutputError("the bench printed no JSON result line")


def main(argv):
    try:
        specs = parse_specs(argv[1:])
    except ValueError as err:
        print(f"{ERROR_MARK} json2result: {err}", file=sys.stderr)
        return 2
    try:
        for result in convert(sys.stdin, specs):
            print(result, flush=True)
    except BenchOutputError as err:
        print(f"{ERROR_MARK} {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
