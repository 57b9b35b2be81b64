# Sourced by the live scenarios (tests/live/*_end_to_end.sh): namespaces, veth pairs, nginx and
# flowtrack on DPDK af_packet ports, all named after the scenario's PID and removed on exit, failure
# included (LIVE_KEEP=1 keeps the run's files, logs and reports, and says where). Exit status 77
# (ctest's SKIP) where a scenario cannot run.
#
#   live_init TOOL...          root, network namespaces and the tools, or skip; sets $work, the trap
#   live_ns NAME...            namespaces "$tag-NAME" (IPv4 only, loopback up)
#   live_veth NS1 IF1 NS2 IF2  a veth pair, up, checksum offload off
#   live_nat_network           the NAT's network: namespace client (10.20.1.2 on c0, gateway 10.20.1.1)
#                              and namespace server (10.20.2.2 on s0), on either side of namespace nf
#                              (f0 towards the client, f1 towards the server)
#   live_nat_ports             the [[dataplane.port]] tables of that network, for a configuration:
#                              net_af_packet0 10.20.1.1/24 (inside), net_af_packet1 10.20.2.1/24 (outside)
#   live_lb_network            the load balancer's network: namespace client (10.10.1.2 on c0) on f0 of
#                              namespace nf, whose f1 is on bridge br0 of namespace lan with the
#                              backends b1, b2, b3 (10.10.2.11, .12, .13 on their e0)
#   live_lb_ports              the [[dataplane.port]] tables of that network, for a configuration:
#                              net_af_packet0 10.10.1.1/24 (clients), net_af_packet1 10.10.2.1/24 (backends)
#   live_lb_dataplane          the [dataplane] table of that network: the control socket $work/ctl.sock,
#                              Prometheus text at 127.0.0.1:9469 (live_counters_agree reads both), the ports
#   live_lb_backends PREFIX    the [[service.backend]] tables of b1, b2, b3, named PREFIX1..3, weights 1:2:3
#   live_udp_servers PORT [ADDRESS]   on each backend b1, b2, b3 a UDP server on ADDRESS:PORT (default:
#                              the backend's own address, 10.10.2.1N) answering each datagram with its
#                              name (bN) padded to half the datagram's length, and counting the
#                              datagrams and wire bytes it received and sent in $work/udp-bN.json
#   live_udp_exchange VIP PORT FLOWS   from the client, FLOWS source ports (40000 up), each exchanging 10
#                              datagrams of 20 to 1400 bytes with VIP:PORT one at a time (a datagram without
#                              an answer within 0.3 s is sent again, and counted again); what it sent and
#                              what each backend answered, in wire bytes, in $work/udp-client.json
#   live_udp_counted COUNTERS VIP BACKEND_PREFIX DIRECT   the counters (JSON: a report or `ctl counters`)
#                              of virtual service VIP ("10.10.1.100:7/udp") and of its backends
#                              BACKEND_PREFIX1..3 agree exactly with what the client and the servers
#                              counted: packets, bytes and flows to each backend, and the answers through
#                              the balancer (DIRECT=1, tunnel mode: none, the answers go to the client directly)
#   live_nginx NS NAME ADDRESS BODY   nginx on ADDRESS:80 answering BODY (and header X-Backend: BODY),
#                              $work/NAME/big at /big if it is there; log in $work/NAME/access.log
#   live_spawn NS COMMAND...   COMMAND in the background in namespace NS, killed at exit
#   live_echo_server NS ADDRESS PORT   a TCP server on ADDRESS:PORT in NS answering each line of a
#                              connection with the connection's peer ("10.20.2.100:40001") as it sees it
#   live_iperf3_server NS ADDRESS [ARG...]   an iperf3 server for one test on ADDRESS:5201 in NS (more
#                              iperf3 arguments: ARG), once it listens
#   live_start_flowtrack NS NF CONFIG IF0 IF1   flowtrack run --json on af_packet ports IF0, IF1
#                              (under $live_flowtrack_prefix, such as "taskset -c 1", if set; with the
#                              further options of the array live_flowtrack_args, such as --state), with
#                              $live_workers workers (LIVE_WORKERS, default 1), each its own queue
#                              pair of both ports (af_packet qpairs: the kernel's fanout spreads
#                              frames over them by flow, so replies often land on another worker)
#   live_stop_flowtrack        SIGINT, wait; $flowtrack_status, report in $work/report.json
#   live_take_over NS NF CONFIG IF0 IF1   a new flowtrack, as live_start_flowtrack but with an EAL file
#                              prefix of its own and --take-over (live_flowtrack_args must give --state, the
#                              configuration its control socket), that takes the running one's state as soon
#                              as it is ready; returns once it serves and the running one has exited (its
#                              status in $handed_status, its report and stderr moved to
#                              $work/report.handed.json and $work/flowtrack.handed.err)
#   live_gap_probe NS ADDRESS PORT NAME   from namespace NS, a UDP datagram every 10 ms to ADDRESS:PORT (an
#                              echo service), timing the answers, until live_gap NAME
#   live_gap NAME              stops probe NAME and prints the longest silence between two answers, in s
#   live_counters_agree NS     the running flowtrack's counters read three ways agree: `flowtrack ctl
#                              counters` ($work/ctl.sock), DPDK telemetry (dpdk-telemetry.py) and
#                              Prometheus text ([dataplane] metrics = "127.0.0.1:9469", in namespace NS)
#   live_capture NS IF NAME FROM   counts in the background, until live_captured NAME, the probes
#                              (live_probe's packets) from address FROM that interface IF of namespace NS
#                              receives (a raw socket: no capture tool needed); returns once it listens
#   live_captured NAME         stops capture NAME and prints its count
#   live_probe NS TO [FROM]    from namespace NS, 5 pings, 5 TCP SYNs (ports 1000-1004) and 5 UDP
#                              datagrams (ports 2000-2004) at address TO, not waiting for answers; with
#                              FROM, 3 UDP datagrams from that forged source instead
#   live_handoff_summary JSON  prints iperf3's TCP result (its -J output JSON) beside what the report
#                              says of the hand-offs between workers: handed over, back-offs, handoff_full
#   live_fail MESSAGE          prints flowtrack's stderr and exits 1

tag=ftl$$
work=
flowtrack_pid=
flowtrack_status=
handed_status=
live_file_prefix=$tag
live_namespaces=()
live_nginx_names=()
live_pids=()
live_flowtrack_prefix=
live_flowtrack_args=()
live_workers=${LIVE_WORKERS:-1}

live_skip() {
  echo "SKIP: $*"
  exit 77
}

# What live_probe sends and live_capture counts: pings (ICMP echo requests), TCP SYNs to ports
# 1000-1004, UDP datagrams to ports 2000-2004.
live_probe() {
  ip netns exec "$tag-$1" python3 - "$2" "${3:-}" << 'PY' || live_fail "live_probe from $1 failed"
import socket, struct, sys, time
to, forged = sys.argv[1], sys.argv[2]
def checksum(data):
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF
if forged:  # IPPROTO_RAW: the header as given, source included (the kernel fills in the checksum)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for i in range(3):
        udp = struct.pack("!HHHH", 5555, 2000 + i, 13, 0) + b"probe"
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, socket.IPPROTO_UDP, 0,
                         socket.inet_aton(forged), socket.inet_aton(to))
        raw.sendto(ip + udp, (to, 0))
    sys.exit(0)
icmp = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
for i in range(5):
    echo = struct.pack("!BBHHH", 8, 0, 0, 0x4242, i) + b"probe!"
    icmp.sendto(echo[:2] + struct.pack("!H", checksum(echo)) + echo[4:], (to, 0))
syns = []
for i in range(5):  # a non-blocking connect sends one SYN; the sockets close before any retransmission
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect((to, 1000 + i))
    except BlockingIOError:
        pass
    syns.append(s)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    udp.sendto(b"probe", (to, 2000 + i))
time.sleep(0.3)  # every probe on the wire (the first waited for ARP), none retransmitted yet
PY
}

live_handoff_summary() {
  python3 - "$1" "$work/report.json" << 'PY'
import json, sys
try:
    tcp = json.load(open(sys.argv[1]))["end"]["sum_received"]
    transfer = f"{tcp['bytes'] / 1e6:.0f} MB at {tcp['bits_per_second'] / 1e6:.0f} Mbit/s"
    tcp_seconds = f"{tcp['seconds']:.0f} s"
except (OSError, KeyError, ValueError):
    transfer, tcp_seconds = "no result", "run"
r = json.load(open(sys.argv[2]))
print(f"  iperf3 TCP {tcp_seconds}, {r['workers']} workers: {transfer}; handed over {r['handed_off']}, "
      f"waited for room {r['handoff_backoffs']} times, handoff_full {r['drops'].get('handoff_full', 0)}")
PY
}

live_capture() {
  local ns=$1 interface=$2 name=$3 from=$4
  rm -f "$work/capture.$name".*
  ip netns exec "$tag-$ns" python3 - "$interface" "$from" "$work/capture.$name" << 'PY' &
import signal, socket, struct, sys
interface, source, out = sys.argv[1], socket.inet_aton(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.bind((interface, 0))
count = 0
def done(*_):
    open(out + ".count", "w").write(f"{count}\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
open(out + ".ready", "w").close()
while True:
    frame, address = s.recvfrom(65535)
    if address[2] == socket.PACKET_OUTGOING or len(frame) < 34 or frame[26:30] != source:
        continue
    l4 = 14 + (frame[14] & 0x0F) * 4
    protocol = frame[23]
    if protocol == socket.IPPROTO_ICMP and frame[l4] == 8:
        count += 1
    elif protocol in (socket.IPPROTO_TCP, socket.IPPROTO_UDP) and len(frame) >= l4 + 4:
        port = struct.unpack_from("!H", frame, l4 + 2)[0]
        count += (protocol == socket.IPPROTO_TCP and 1000 <= port < 1005) or (protocol == socket.IPPROTO_UDP and 2000 <= port < 2005)
PY
  local pid=$! _
  live_pids+=("$pid")
  eval "live_capture_$name=$pid"
  for _ in $(seq 50); do
    [[ -e $work/capture.$name.ready ]] && return 0
    sleep 0.1
  done
  live_fail "capture $name did not start"
}

live_captured() {
  local pid_name="live_capture_$1" _
  kill -TERM "${!pid_name}" 2> /dev/null
  for _ in $(seq 50); do
    [[ -s $work/capture.$1.count ]] && break
    sleep 0.1
  done
  cat "$work/capture.$1.count" 2> /dev/null || echo "none"
}

live_cleanup() {
  if [[ -n $flowtrack_pid ]]; then
    kill "$flowtrack_pid" 2> /dev/null
    wait "$flowtrack_pid" 2> /dev/null
  fi
  local name ns pid
  for pid in "${live_pids[@]}"; do kill "$pid" 2> /dev/null; done
  for name in "${live_nginx_names[@]}"; do
    [[ -s $work/$name/nginx.pid ]] && kill "$(cat "$work/$name/nginx.pid")" 2> /dev/null
  done
  for ns in "${live_namespaces[@]}"; do ip netns del "$ns" 2> /dev/null; done
  rm -rf "/var/run/dpdk/$tag" "/var/run/dpdk/${tag}h"  # EAL's runtime directories (--file-prefix): the telemetry socket
  if [[ -n ${LIVE_KEEP:-} ]]; then
    echo "kept: $work"
  elif [[ -n $work ]]; then
    rm -rf "$work"
  fi
}

live_fail() {
  echo "FAIL: $*"
  [[ -f $work/flowtrack.err ]] && sed 's/^/  flowtrack: /' "$work/flowtrack.err"
  exit 1
}

live_init() {
  [[ $(id -u) -eq 0 ]] || live_skip "needs root (network namespaces, veth pairs)"
  local tool
  for tool in ip ethtool python3 "$@"; do
    command -v "$tool" > /dev/null || live_skip "$tool is not installed (scripts/install-deps.sh installs it)"
  done
  ip netns add "$tag-probe" 2> /dev/null || live_skip "cannot create network namespaces here"
  ip netns del "$tag-probe"
  work=$(mktemp -d)
  chmod 711 "$work"  # nginx's workers (nobody) read the files served from under it
  trap live_cleanup EXIT
}

live_ns() {
  local name
  for name in "$@"; do
    ip netns add "$tag-$name" || live_fail "cannot create namespace $tag-$name"
    live_namespaces+=("$tag-$name")
    # IPv4 only: no IPv6 autoconfiguration chatter on the ports.
    ip netns exec "$tag-$name" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$tag-$name" link set lo up
  done
}

# Checksum offload off on both ends: a veth otherwise hands over TCP and UDP packets whose checksums the
# sender left for a NIC to finish, which no software rewrite (flowtrack's incremental updates) can fix.
live_veth() {
  ip link add "$2" netns "$tag-$1" type veth peer name "$4" netns "$tag-$3" || live_fail "cannot create veth $2-$4"
  local end
  for end in "$1 $2" "$3 $4"; do
    set -- $end
    ip netns exec "$tag-$1" ethtool -K "$2" tx off rx off > /dev/null
    ip -n "$tag-$1" link set "$2" up
  done
}

live_nat_network() {
  live_ns client nf server
  live_veth client c0 nf f0
  live_veth nf f1 server s0
  ip -n "$tag-client" addr add 10.20.1.2/24 dev c0
  ip -n "$tag-client" route add default via 10.20.1.1
  ip -n "$tag-server" addr add 10.20.2.2/24 dev s0
}

live_lb_network() {
  live_ns client nf lan b1 b2 b3
  live_veth client c0 nf f0
  live_veth nf f1 lan l0
  ip -n "$tag-client" addr add 10.10.1.2/24 dev c0
  ip -n "$tag-lan" link add br0 type bridge
  ip -n "$tag-lan" link set br0 up
  ip -n "$tag-lan" link set l0 master br0
  local b
  for b in 1 2 3; do
    live_veth b$b e0 lan l$b
    ip -n "$tag-lan" link set l$b master br0
    ip -n "$tag-b$b" addr add 10.10.2.1$b/24 dev e0
  done
}

live_nat_ports() {
  printf '[[dataplane.port]]\ndevice = "net_af_packet0"\naddress = "10.20.1.1/24"\nrole = "inside"\n'
  printf '[[dataplane.port]]\ndevice = "net_af_packet1"\naddress = "10.20.2.1/24"\nrole = "outside"\n'
}

live_lb_ports() {
  printf '[[dataplane.port]]\ndevice = "net_af_packet0"\naddress = "10.10.1.1/24"\nrole = "clients"\n'
  printf '[[dataplane.port]]\ndevice = "net_af_packet1"\naddress = "10.10.2.1/24"\nrole = "backends"\n'
}

live_lb_dataplane() {
  printf '[dataplane]\ncontrol_socket = "%s"\nmetrics = "127.0.0.1:9469"\n' "$work/ctl.sock"
  live_lb_ports
}

live_lb_backends() {
  local b
  for b in 1 2 3; do printf '  [[service.backend]]\n  name = "%s%s"\n  address = "10.10.2.1%s"\n  weight = %s\n' "$1" $b $b $b; done
}

live_udp_servers() {
  local port=$1 address=${2:-} b server
  # Given by -c: a command put in the background reads no here-document.
  IFS= read -r -d '' server << 'PY'
import json, os, socket, sys
address, port, name, out = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((address, port))
counts = {"received": 0, "received_bytes": 0, "sent": 0, "sent_bytes": 0}
WIRE = 14 + 20 + 8  # Ethernet, IPv4 and UDP headers around a payload
while True:
    data, peer = s.recvfrom(65536)
    answer = name.ljust(len(data) // 2, b".")
    counts["received"] += 1
    counts["received_bytes"] += len(data) + WIRE
    counts["sent"] += 1
    counts["sent_bytes"] += len(answer) + WIRE
    # Written before the answer goes: once the client has its last answer, the counts are all here.
    with open(out + ".new", "w") as f:  # whole, then renamed: a reader never sees half of it
        json.dump(counts, f)
    os.replace(out + ".new", out)
    s.sendto(answer, peer)
PY
  for b in 1 2 3; do
    live_spawn b$b python3 -c "$server" "${address:-10.10.2.1$b}" "$port" "b$b" "$work/udp-b$b.json"
  done
}

live_udp_exchange() {
  ip netns exec "$tag-client" python3 - "$1" "$2" "$3" "$work/udp-client.json" << 'PY' || live_fail "the UDP exchange failed"
import json, socket, sys
vip, port, flows, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
WIRE = 14 + 20 + 8
sent = sent_bytes = 0
answers, flow_of = {}, {}  # backend: [datagrams, wire bytes]; client port: the backend that answered it
def take(answer, client_port):
    backend = answer.rstrip(b".").decode()
    count = answers.setdefault(backend, [0, 0])
    count[0] += 1
    count[1] += len(answer) + WIRE
    flow_of.setdefault(client_port, set()).add(backend)
for f in range(flows):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 40000 + f))
    s.connect((vip, port))
    s.settimeout(0.3)
    resent = 0
    for d in range(10):
        size = 20 + (f * 10 + d) * 97 % 1381
        for attempt in range(10):
            s.send(bytes(size))
            sent += 1
            sent_bytes += size + WIRE
            try:
                take(s.recv(65536), 40000 + f)
                break
            except socket.timeout:
                resent += 1
        else:
            sys.exit(f"no answer from {vip}:{port} to client port {40000 + f} after 10 tries")
    # A datagram sent again after 0.3 s without an answer may have been answered late, not lost (a busy
    # machine): each late answer is the client's too, so it is read before the socket closes.
    s.settimeout(1.0)
    for _ in range(resent):
        try:
            take(s.recv(65536), 40000 + f)
        except socket.timeout:
            break
    s.close()
json.dump({"sent": sent, "sent_bytes": sent_bytes, "answers": answers,
           "flows": {port: sorted(b) for port, b in flow_of.items()}}, open(out, "w"))
PY
}

live_udp_counted() {
  python3 - "$work" "$@" << 'PY' || live_fail "the UDP exchange's counters disagree with the client's and the servers' counts"
import json, sys
work, counters, vip, prefix, direct = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5] == "1"
client = json.load(open(f"{work}/udp-client.json"))
servers = {b: json.load(open(f"{work}/udp-b{b}.json")) for b in (1, 2, 3)}
problems = []
def same(what, counted, expected):
    if counted != expected:
        problems.append(f"{what}: flowtrack {counted}, expected {expected}")
v = counters["vips"][vip]
same(f"{vip} packets", v["packets"], client["sent"])
same(f"{vip} bytes", v["bytes"], client["sent_bytes"])
same(f"{vip} connections", v["connections"], len(client["flows"]))
for b, server in servers.items():
    t = counters["backend_traffic"][f"{prefix}{b}"]
    answered = client["answers"].get(f"b{b}", [0, 0])
    same(f"{prefix}{b} packets", t["packets"], server["received"])
    same(f"{prefix}{b} bytes", t["bytes"], server["received_bytes"])
    same(f"{prefix}{b} reply packets", t["reply_packets"], 0 if direct else server["sent"])
    same(f"{prefix}{b} reply bytes", t["reply_bytes"], 0 if direct else server["sent_bytes"])
    same(f"b{b}'s answers the client received", answered, [server["sent"], server["sent_bytes"]])
    same(f"{prefix}{b} connections", t["connections"], sum(1 for answered_by in client["flows"].values() if answered_by == [f"b{b}"]))
if any(len(answered_by) != 1 for answered_by in client["flows"].values()):
    problems.append(f"a flow was answered by several backends: {client['flows']}")
print(f"  UDP to {vip}: the client sent {client['sent']} datagrams ({client['sent_bytes']} bytes) in {len(client['flows'])} flows; "
      f"flowtrack counted {v['packets']} ({v['bytes']} bytes), {v['connections']} connections, answers through it "
      f"{v['reply_packets']}; each backend's as its server counted" + ("" if problems else ", exactly"))
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY
}

live_nginx() {
  local ns=$1 name=$2 address=$3 body=$4
  mkdir -p "$work/$name"
  cat > "$work/$name/nginx.conf" << CONF
worker_processes 1;
pid $work/$name/nginx.pid;
error_log $work/$name/error.log;
events { worker_connections 256; }
http {
  log_format peer '\$remote_addr';
  access_log $work/$name/access.log peer;
  server {
    listen $address:80;
    add_header X-Backend $body always;
    location / { return 200 "$body\n"; }
    location = /big { alias $work/$name/big; }
  }
}
CONF
  live_nginx_names+=("$name")
  ip netns exec "$tag-$ns" nginx -p "$work/$name" -e "$work/$name/error.log" -c "$work/$name/nginx.conf" ||
    live_fail "nginx did not start in $ns"
}

live_spawn() {
  local ns=$1
  shift
  ip netns exec "$tag-$ns" "$@" &
  live_pids+=($!)
}

live_echo_server() {
  # One thread a connection.
  live_spawn "$1" python3 -c '
import socket, sys, threading
def serve(c, peer):
    with c:
        for line in c.makefile("rb"):
            c.sendall(f"{peer[0]}:{peer[1]}\n".encode())
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(64)
while True:
    c, peer = s.accept()
    threading.Thread(target=serve, args=(c, peer), daemon=True).start()
' "$2" "$3"
}

live_iperf3_server() {
  local ns=$1 address=$2 _
  shift 2
  live_spawn "$ns" iperf3 -s -1 -B "$address" "$@" > /dev/null  # the client reports
  for _ in $(seq 50); do  # until it listens on port 5201 (0x1451)
    ip netns exec "$tag-$ns" grep -q ':1451 00000000:0000 0A' /proc/net/tcp && return 0
    sleep 0.1
  done
  live_fail "iperf3 did not listen in $ns"
}

live_start_flowtrack() {
  local ns=$1 nf=$2 config=$3
  # The run's own file prefix: its telemetry socket is /var/run/dpdk/$tag/dpdk_telemetry.v2.
  # A lcore a worker (-l): the engine pins worker w to the w-th lcore's CPU.
  local eal="--no-huge --no-pci --no-shconf --file-prefix=$live_file_prefix -l 0-$((live_workers - 1)) -m 256 --log-level=error"
  eal+=" --vdev=net_af_packet0,iface=$4,qpairs=$live_workers --vdev=net_af_packet1,iface=$5,qpairs=$live_workers"
  ip netns exec "$tag-$ns" $live_flowtrack_prefix "$bin" run --nf "$nf" --config "$config" --workers "$live_workers" \
    --json --dpdk "$eal" "${live_flowtrack_args[@]}" \
    > "$work/report.json" 2> "$work/flowtrack.err" &
  flowtrack_pid=$!
  local _
  for _ in $(seq 100); do  # up once it has printed its ports (on stderr, with --json)
    grep -q "port 1" "$work/flowtrack.err" 2> /dev/null && return 0
    kill -0 "$flowtrack_pid" 2> /dev/null || live_fail "flowtrack exited at start"
    sleep 0.1
  done
  live_fail "flowtrack did not start its ports within 10 s"
}

live_stop_flowtrack() {
  kill -INT "$flowtrack_pid"
  wait "$flowtrack_pid"
  flowtrack_status=$?
  flowtrack_pid=
  sed -n 's/^flowtrack live: \(.*\)/  flowtrack: \1/p' "$work/flowtrack.err" | tail -2
  echo "  report: $(cat "$work/report.json")"
  [[ $flowtrack_status -eq 0 ]] || live_fail "flowtrack exited with status $flowtrack_status"
}

live_take_over() {
  local running=$flowtrack_pid _
  mv "$work/report.json" "$work/report.handed.json"
  mv "$work/flowtrack.err" "$work/flowtrack.handed.err"
  # Two EAL instances at once: each its own runtime directory (telemetry socket).
  if [[ $live_file_prefix == "$tag" ]]; then live_file_prefix=${tag}h; else live_file_prefix=$tag; fi
  live_flowtrack_args+=(--take-over)
  live_start_flowtrack "$@"
  for _ in $(seq 100); do
    grep -q "taken over from the running process" "$work/flowtrack.err" && break
    kill -0 "$flowtrack_pid" 2> /dev/null || live_fail "the new flowtrack exited without taking over"
    sleep 0.1
  done
  grep -q "taken over from the running process" "$work/flowtrack.err" || live_fail "the new flowtrack did not take over within 10 s"
  for _ in $(seq 100); do
    kill -0 "$running" 2> /dev/null || break
    sleep 0.1
  done
  kill -0 "$running" 2> /dev/null && live_fail "the running flowtrack did not stop after handing over"
  wait "$running"
  handed_status=$?
  sed -n 's/^flowtrack live: \(hand-over.*\)/  handed over: \1/p' "$work/flowtrack.handed.err"
  [[ $handed_status -eq 0 ]] || live_fail "the flowtrack that handed over exited with status $handed_status"
}

live_gap_probe() {
  local ns=$1 address=$2 port=$3 name=$4
  rm -f "$work/gap.$name".*
  ip netns exec "$tag-$ns" python3 - "$address" "$port" "$work/gap.$name" << 'PY' &
import os, select, socket, sys, time
address, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((address, port))
last = None
longest = 0.0
ended = 0.0  # when the longest silence ended (Unix time): $work/gap.NAME.ended, for a timeline
next_send = time.monotonic()
while not os.path.exists(out + ".stop"):
    if time.monotonic() >= next_send:
        try:
            s.send(b"probe")
        except OSError:  # an ICMP error while the function restarts: the probe is lost, as its answer
            pass
        next_send += 0.01
    if select.select([s], [], [], max(0.0, next_send - time.monotonic()))[0]:
        try:
            s.recv(2048)
        except OSError:
            continue
        now = time.monotonic()
        if last is not None and now - last > longest:
            longest, ended = now - last, time.time()
        last = now
open(out + ".ended", "w").write(f"{ended:.3f}\n")
open(out + ".new", "w").write(f"{longest:.3f}\n" if last is not None else "none\n")
os.replace(out + ".new", out + ".longest")
PY
  live_pids+=($!)
}

live_gap() {
  local _
  touch "$work/gap.$1.stop"
  for _ in $(seq 50); do  # polled, not waited for: a command substitution's subshell has no children
    [[ -s $work/gap.$1.longest ]] && break
    sleep 0.1
  done
  cat "$work/gap.$1.longest" 2> /dev/null || echo "none"
}

# live_report_check PYTHON_EXPRESSION...: each must hold of `r`, flowtrack's JSON report.
live_report_check() {
  python3 - "$work/report.json" "$@" << 'PY' || live_fail "flowtrack's report disagrees"
import json, sys
r = json.load(open(sys.argv[1]))
failed = [check for check in sys.argv[2:] if not eval(check)]
for check in failed: print("  report: not " + check)
sys.exit(1 if failed else 0)
PY
}

live_counters_agree() {
  local ns=$1 _
  for _ in 1 2 3 4 5; do
    "$bin" ctl --socket "$work/ctl.sock" counters > "$work/agree.ctl1" || live_fail "ctl counters was refused"
    printf '/flowtrack/counters\n/flowtrack/drops\n/flowtrack/backends\n/flowtrack/backend_connections\n/flowtrack/vips\n/flowtrack/backend_traffic\n' |
      dpdk-telemetry.py -f "$tag" > "$work/agree.telemetry"
    ip netns exec "$tag-$ns" curl -s --max-time 2 http://127.0.0.1:9469/metrics > "$work/agree.prometheus"
    "$bin" ctl --socket "$work/ctl.sock" counters > "$work/agree.ctl2" || live_fail "ctl counters was refused"
    python3 - "$work" << 'PY' && return 0
import json, re, sys
work = sys.argv[1]
ctl, again = json.load(open(f"{work}/agree.ctl1")), json.load(open(f"{work}/agree.ctl2"))
# The health checks' counts move with their probes whatever the traffic does: not among those held here.
for read in (ctl, again):
    read.pop("backend_health", None)
if ctl != again:
    sys.exit(1)  # traffic moved the counters while they were read: again
telemetry = {}
for line in open(f"{work}/agree.telemetry"):
    telemetry.update(json.loads(line))
prometheus = {}  # (name, first label's value, second label's value or None): value
for line in open(f"{work}/agree.prometheus"):
    m = re.fullmatch(r'([a-z_]+)(?:\{[a-z]+="([^"]*)"(?:,[a-z]+="([^"]*)")?\})? ([0-9]+)', line.strip())
    if m:
        prometheus[(m[1], m[2], m[3])] = int(m[4])
fields = ["packets_in", "packets_to_function", "packets_out", "connections", "connections_live", "arp_answered", "arp_asked",
          "handed_off", "handoff_backoffs"]
names = ["flowtrack_packets_received_total", "flowtrack_packets_to_function_total", "flowtrack_packets_sent_total",
         "flowtrack_connections_total", "flowtrack_connections", "flowtrack_arp_replies_sent_total",
         "flowtrack_arp_requests_sent_total", "flowtrack_packets_handed_off_total", "flowtrack_handoff_backoffs_total"]
counters = telemetry.get("/flowtrack/counters", {})
wrong = [f"telemetry {f}" for f in fields if counters.get(f) != ctl[f]]
wrong += [f"prometheus {n}" for f, n in zip(fields, names) if prometheus.get((n, None, None)) != ctl[f]]
if telemetry.get("/flowtrack/drops") != ctl["drops"] or counters.get("drops") != sum(ctl["drops"].values()):
    wrong.append("telemetry drops")
if {r: n for (name, r, _), n in prometheus.items() if name == "flowtrack_drops_total"} != ctl["drops"]:
    wrong.append("prometheus drops")
def telemetry_key(name):  # DPDK telemetry's dictionary keys take letters, digits, '_' and '/' only
    return re.sub(r"[^A-Za-z0-9_/]", "_", name)
def by_telemetry_key(figures):
    return {telemetry_key(name): f for name, f in figures.items()}
if telemetry.get("/flowtrack/backends") != by_telemetry_key(ctl.get("backends", {})):
    wrong.append("telemetry backends")
if {b: n for (name, b, _), n in prometheus.items() if name == "flowtrack_backend_connections_total"} != ctl.get("backends", {}):
    wrong.append("prometheus backends")
if telemetry.get("/flowtrack/backend_connections") != by_telemetry_key(ctl.get("backend_connections", {})):
    wrong.append("telemetry backend_connections")
phases = {}
for (name, b, phase), n in prometheus.items():
    if name == "flowtrack_backend_connections":
        phases.setdefault(b, {})[phase] = n
if phases != ctl.get("backend_connections", {}):
    wrong.append("prometheus backend_connections")
# Per VIP and per backend (the load balancers'): every figure three ways, and the VIPs' sums the backends'.
for what, label in (("vips", "vip"), ("backend_traffic", "backend")):
    series = [("packets", "packets_total"), ("bytes", "bytes_total"), ("reply_packets", "reply_packets_total"),
              ("reply_bytes", "reply_bytes_total"), ("connections_per_second", "new_connections_per_second")]
    if label == "vip":
        series += [("connections", "connections_total"), ("connections_live", "connections")]
    figures = ctl.get(what, {})
    by_key = telemetry.get(f"/flowtrack/{what}", {})
    for name, f in figures.items():
        if by_key.get(telemetry_key(name)) != f:
            wrong.append(f"telemetry {what} {name}")
        wrong += [f"prometheus {label} {name} {field}" for field, s in series
                  if prometheus.get((f"flowtrack_{label}_{s}", name, None)) != f[field]]
for field in ("packets", "bytes", "reply_packets", "reply_bytes", "connections", "connections_live"):
    if sum(f[field] for f in ctl.get("vips", {}).values()) != sum(f[field] for f in ctl.get("backend_traffic", {}).values()):
        wrong.append(f"the VIPs' {field} are not their backends'")
if prometheus.get(("flowtrack_info", ctl["nf"], None)) != 1:
    wrong.append("prometheus flowtrack_info")
if wrong:
    print("  counters disagree with ctl counters: " + ", ".join(wrong))
    sys.exit(1)
print(f"  counters agree (ctl, telemetry, prometheus): packets in {ctl['packets_in']}, out {ctl['packets_out']}, "
      f"connections {ctl['connections']}, drops {json.dumps(ctl['drops'])}")
PY
    sleep 0.3
  done
  echo "  ctl: $(cat "$work/agree.ctl1")"
  echo "  telemetry: $(cat "$work/agree.telemetry")"
  sed 's/^/  prometheus: /' "$work/agree.prometheus"
  live_fail "the counters read through ctl, telemetry and Prometheus disagree"
}
