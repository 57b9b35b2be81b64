#!/usr/bin/env python3
"""Checks that flowtrack's includes follow its layering; ctest runs it (tests/CMakeLists.txt).

    check-layering.py --layers "packet;hash;...;runtime" ROOT
    check-layering.py --self-test

The layers come in their order from CMakeLists.txt (FLOWTRACK_LAYERS), the one place that names it.
The rules, for every #include "flowtrack/..." (or <flowtrack/...>) of a file:
  1. A file of the library (ROOT/include/flowtrack/<layer>/, ROOT/src/<layer>/) includes headers of its
     own layer and of layers before it only. util/ comes before every layer and includes none;
     flowtrack/version.hpp (generated) may be included anywhere.
  2. The library includes nothing of the lab (flowtrack/lab/, labkit/).
  3. A layer's internal/ headers are the library's details: only the library includes them (under
     rule 1), never the lab or the programs (labkit/, apps/). Tests may.
  4. Every folder of include/flowtrack and src/ is a layer of the list, or util.
Prints one line per broken rule (file:line: what) and exits 1 if there is any, else 0.
"""
import argparse
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]flowtrack/([^">]+)[">]')
UTIL = 'util'


def layer_of_header(path):
    """'nf/internal/x.hpp' -> ('nf', True); 'version.hpp' -> (None, False)."""
    parts = path.split('/')
    if len(parts) == 1:
        return None, False
    return parts[0], len(parts) > 2 and parts[1] == 'internal'


def library_files(root):
    """(path, its layer) for every file of the library."""
    for top in ('include/flowtrack', 'src'):
        base = os.path.join(root, top)
        for folder, _, files in os.walk(base):
            rel = os.path.relpath(folder, base)
            for name in sorted(files):
                yield os.path.join(folder, name), None if rel == '.' else rel.split(os.sep)[0]


def user_files(root):
    """Files outside the library that must use its public headers only: the lab and the programs."""
    for top in ('labkit', 'apps'):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(('.hpp', '.cpp')):
                    yield os.path.join(folder, name)


def includes(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        for number, line in enumerate(f, 1):
            match = INCLUDE.match(line)
            if match:
                yield number, match.group(1)


def check(root, layers):
    rank = {UTIL: -1}
    rank.update({layer: i for i, layer in enumerate(layers)})
    problems = []
    for path, layer in library_files(root):
        where = os.path.relpath(path, root)
        if layer is None or layer not in rank:
            problems.append(f'{where}: folder {layer!r} is not a layer of FLOWTRACK_LAYERS (CMakeLists.txt) nor util')
            continue
        for number, header in includes(path):
            target, internal = layer_of_header(header)
            if target is None:
                continue
            if target == 'lab':
                problems.append(f'{where}:{number}: the library includes the lab (flowtrack/{header})')
            elif target not in rank:
                problems.append(f'{where}:{number}: flowtrack/{header} is in no layer')
            elif rank[target] > rank[layer]:
                problems.append(f'{where}:{number}: layer {layer} includes flowtrack/{header} of layer {target}, '
                                f'which comes after it')
    for path in user_files(root):
        where = os.path.relpath(path, root)
        for number, header in includes(path):
            if layer_of_header(header)[1]:
                problems.append(f'{where}:{number}: flowtrack/{header} is internal to the library')
    return problems


def self_test():
    """Plants one breach of each rule in a tree of its own and checks that each is reported, and that
    a tree without breaches passes."""
    layers = ['packet', 'table', 'nf']
    files = {
        'include/flowtrack/util/a.hpp': '#include <vector>\n',
        'include/flowtrack/packet/p.hpp': '#include "flowtrack/util/a.hpp"\n#include "flowtrack/version.hpp"\n',
        'include/flowtrack/table/t.hpp': '#include "flowtrack/packet/p.hpp"\n#include "flowtrack/table/internal/d.hpp"\n',
        'include/flowtrack/table/internal/d.hpp': '#include "flowtrack/packet/p.hpp"\n',
        'src/nf/n.cpp': '#include "flowtrack/table/internal/d.hpp"\n',
        'labkit/include/flowtrack/lab/l.hpp': '#include "flowtrack/table/t.hpp"\n',
        'apps/main.cpp': '#include "flowtrack/lab/l.hpp"\n',
    }
    breaches = {
        'include/flowtrack/packet/up.hpp': ('#include "flowtrack/table/t.hpp"\n', 'layer packet includes'),
        'include/flowtrack/util/up.hpp': ('#include <flowtrack/packet/p.hpp>\n', 'layer util includes'),
        'src/table/lab.cpp': ('#include "flowtrack/lab/l.hpp"\n', 'the library includes the lab'),
        'labkit/src/x.cpp': ('#include "flowtrack/table/internal/d.hpp"\n', 'is internal to the library'),
        'apps/x.cpp': ('#include "flowtrack/table/internal/d.hpp"\n', 'is internal to the library'),
        'include/flowtrack/extra/e.hpp': ('\n', "folder 'extra' is not a layer"),
    }
    failures = []

    def run(tree):
        with tempfile.TemporaryDirectory() as root:
            for rel, text in tree.items():
                os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(root, rel), 'w') as f:
                    f.write(text)
            return check(root, layers)

    if run(files):
        failures.append(f'a clean tree was reported: {run(files)}')
    for rel, (text, expected) in breaches.items():
        problems = run({**files, rel: text})
        if len(problems) != 1 or expected not in problems[0] or not problems[0].startswith(rel):
            failures.append(f'{rel}: expected one report containing {expected!r}, got {problems}')
    for failure in failures:
        print(f'self-test: {failure}')
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--layers', help='the layers in order, separated by ; (CMake list) or spaces')
    parser.add_argument('--self-test', action='store_true', help="check this script's own rules")
    parser.add_argument('root', nargs='?', help='the repository')
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if not args.layers or not args.root:
        parser.error('--layers and ROOT are needed')
    problems = check(args.root, re.split(r'[;\s]+', args.layers.strip()))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
