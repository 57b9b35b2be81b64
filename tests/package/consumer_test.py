#!/usr/bin/env python3
"""The installed package, used as a user would (ctest runs it in the release tree):

  1. installs the build tree into a temporary prefix (cmake --install);
  2. builds examples/consumer against it twice: with CMake (find_package(flowtrack)) and with plain
     c++ and `pkg-config --cflags --libs flowtrack`;
  3. runs both on a campus trace's client packets (those to the servers), and checks that each writes
     byte for byte what `flowtrack run --nf lb --workers 2` writes with the same balancer in TOML
     (web_balancer.toml), and that the backend the balancer's pool change adds took connections.
It builds nothing of flowtrack (the tree is built before ctest runs): its cost is the consumer's two
compiles and links, and the three short runs.

    consumer_test.py --source REPO --build BUILD_DIR --cli FLOWTRACK --cmake CMAKE --cxx CXX
"""
import argparse
import filecmp
import glob
import ipaddress
import os
import shutil
import struct
import subprocess
import sys
import tempfile

# The campus profile's servers (198.18.0.1 to .4, flowtrack trace gen) are examples/lb.toml's VIPs.
SERVERS = ipaddress.ip_network('198.18.0.0/16')


def run(command, **kwargs):
    print('+', ' '.join(command), flush=True)
    return subprocess.run(command, check=True, **kwargs)


def pcap_records(data):
    """(header, frame) of each record of a classic pcap (either timestamp resolution, this machine's
    byte order, as flowtrack writes them), after the 24-byte file header."""
    if struct.unpack_from('<I', data)[0] not in (0xa1b2c3d4, 0xa1b23c4d):
        raise ValueError('not a little-endian classic pcap')
    offset = 24
    while offset < len(data):
        header = data[offset:offset + 16]
        captured = struct.unpack_from('<I', header, 8)[0]
        yield header, data[offset + 16:offset + 16 + captured]
        offset += 16 + captured


def keep_client_packets(source, destination):
    """Writes the Ethernet/IPv4 packets of `source` addressed to the servers: a capture with no answer
    in it, which a balancer sees the same whether it is replayed by `flowtrack run` (which presents a
    capture's answers as they came from the backends) or by the consumer (which replays it as it is)."""
    with open(source, 'rb') as f:
        data = f.read()
    kept = 0
    with open(destination, 'wb') as out:
        out.write(data[:24])
        for header, frame in pcap_records(data):
            if len(frame) >= 34 and frame[12:14] == b'\x08\x00' and ipaddress.ip_address(frame[30:34]) in SERVERS:
                out.write(header + frame)
                kept += 1
    return kept


def check_consumer(program, clients, expected, out, what):
    """Runs the consumer and checks its capture against the CLI's and its report for the added backend."""
    report = run([program, clients, out], capture_output=True, text=True).stdout
    print(report, end='')
    if not filecmp.cmp(expected, out, shallow=False):
        sys.exit(f'FAIL: {what} wrote {out}, which differs from {expected}')
    added = [int(line.split()[1]) for line in report.splitlines() if line.strip().startswith('web-4:')]
    if not added or sum(added) == 0:
        sys.exit(f'FAIL: {what} reports no connection on web-4, the backend its pool change adds')
    print(f'ok: {what} wrote what flowtrack run --nf lb wrote, and web-4 took {sum(added)} connections')


def main():
    parser = argparse.ArgumentParser()
    for name in ('--source', '--build', '--cli', '--cmake', '--cxx'):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    config = os.path.join(args.source, 'tests', 'package', 'web_balancer.toml')
    consumer = os.path.join(args.source, 'examples', 'consumer')
    with tempfile.TemporaryDirectory(prefix='flowtrack-package-') as tmp:
        prefix = os.path.join(tmp, 'prefix')
        run([args.cmake, '--install', args.build, '--prefix', prefix], stdout=subprocess.DEVNULL)

        campus, clients, expected = (os.path.join(tmp, name) for name in ('campus.pcap', 'clients.pcap', 'cli.pcap'))
        run([args.cli, 'trace', 'gen', '--profile', 'campus', '--flows', '400', '--duration', '1', '--seed', '7', '-o', campus],
            stdout=subprocess.DEVNULL)
        if keep_client_packets(campus, clients) < 400:
            sys.exit('FAIL: the campus trace has fewer client packets than connections')
        run([args.cli, 'run', '--nf', 'lb', '--config', config, '--workers', '2', '--in', clients, '--out', expected],
            stdout=subprocess.DEVNULL)
        with open(clients, 'rb') as a, open(expected, 'rb') as b:
            if a.read() == b.read():
                sys.exit('FAIL: flowtrack run --nf lb forwarded the trace unchanged: the comparison would prove nothing')

        # With CMake: find_package(flowtrack) in the installed prefix.
        build = os.path.join(tmp, 'consumer-cmake')
        generator = ['-G', 'Ninja'] if shutil.which('ninja') else []
        run([args.cmake, '-S', consumer, '-B', build, *generator, f'-DCMAKE_PREFIX_PATH={prefix}',
             f'-DCMAKE_CXX_COMPILER={args.cxx}'], stdout=subprocess.DEVNULL)
        run([args.cmake, '--build', build], stdout=subprocess.DEVNULL)
        check_consumer(os.path.join(build, 'lb_over_pcap'), clients, expected, os.path.join(tmp, 'cmake.pcap'),
                       'the consumer built with CMake')

        # With pkg-config and the compiler alone.
        pc = glob.glob(os.path.join(prefix, '**', 'pkgconfig', 'flowtrack.pc'), recursive=True)
        if len(pc) != 1:
            sys.exit(f'FAIL: expected one flowtrack.pc under {prefix}, found {pc}')
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pc[0]))
        flags = run(['pkg-config', '--cflags', '--libs', 'flowtrack'], env=env, capture_output=True, text=True).stdout.split()
        program = os.path.join(tmp, 'lb_over_pcap')
        # With the warnings a user's build is likely to turn on: the installed headers must pass them.
        run([args.cxx, '-std=c++20', '-Wall', '-Wextra', '-Werror', os.path.join(consumer, 'lb_over_pcap.cpp'), *flags, '-o', program])
        check_consumer(program, clients, expected, os.path.join(tmp, 'pkg-config.pcap'), 'the consumer built with pkg-config')


if __name__ == '__main__':
    main()
