# Sourced by the live scenarios (tests/live/*_end_to_end.sh): namespaces, veth pairs, nginx and
# flowtrack on DPDK af_packet ports, all named after the scenario's PID and removed on exit, failure
# included (LIVE_KEEP=1 keeps the run's files, logs and reports, and says where). Exit status 77
# (ctest's SKIP) where a scenario cannot run.
#
#   live_init TOOL...          root, network namespaces and the tools, or skip; sets $work, the trap
#   live_ns NAME...            namespaces "$tag-NAME" (IPv4 only, loopback up)
#   live_veth NS1 IF1 NS2 IF2  a veth pair, up, checksum offload off
#   live_nginx NS NAME ADDRESS BODY   nginx on ADDRESS:80 answering BODY (and header X-Backend: BODY),
#                              $work/NAME/big at /big if it is there; log in $work/NAME/access.log
#   live_spawn NS COMMAND...   COMMAND in the background in namespace NS, killed at exit
#   live_start_flowtrack NS NF CONFIG IF0 IF1   flowtrack run --json on af_packet ports IF0, IF1
#                              (under $live_flowtrack_prefix, such as "taskset -c 1", if set), with
#                              $live_workers workers (LIVE_WORKERS, default 1), each its own queue
#                              pair of both ports (af_packet qpairs: the kernel's fanout spreads
#                              frames over them by flow, so replies often land on another worker)
#   live_stop_flowtrack        SIGINT, wait; $flowtrack_status, report in $work/report.json
#   live_counters_agree NS     the running flowtrack's counters read three ways agree: `flowtrack ctl
#                              counters` ($work/ctl.sock), DPDK telemetry (dpdk-telemetry.py) and
#                              Prometheus text ([dataplane] metrics = "127.0.0.1:9469", in namespace NS)
#   live_fail MESSAGE          prints flowtrack's stderr and exits 1

tag=ftl$$
work=
flowtrack_pid=
flowtrack_status=
live_namespaces=()
live_nginx_names=()
live_pids=()
live_flowtrack_prefix=
live_workers=${LIVE_WORKERS:-1}

live_skip() {
  echo "SKIP: $*"
  exit 77
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
  rm -rf "/var/run/dpdk/$tag"  # EAL's runtime directory (--file-prefix): the telemetry socket
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

live_start_flowtrack() {
  local ns=$1 nf=$2 config=$3
  # The run's own file prefix: its telemetry socket is /var/run/dpdk/$tag/dpdk_telemetry.v2.
  local eal="--no-huge --no-pci --no-shconf --file-prefix=$tag -l 0 -m 256 --log-level=error"
  eal+=" --vdev=net_af_packet0,iface=$4,qpairs=$live_workers --vdev=net_af_packet1,iface=$5,qpairs=$live_workers"
  ip netns exec "$tag-$ns" $live_flowtrack_prefix "$bin" run --nf "$nf" --config "$config" --workers "$live_workers" \
    --json --dpdk "$eal" \
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
    printf '/flowtrack/counters\n/flowtrack/drops\n/flowtrack/backends\n' | dpdk-telemetry.py -f "$tag" > "$work/agree.telemetry"
    ip netns exec "$tag-$ns" curl -s --max-time 2 http://127.0.0.1:9469/metrics > "$work/agree.prometheus"
    "$bin" ctl --socket "$work/ctl.sock" counters > "$work/agree.ctl2" || live_fail "ctl counters was refused"
    python3 - "$work" << 'PY' && return 0
import json, re, sys
work = sys.argv[1]
ctl = json.load(open(f"{work}/agree.ctl1"))
if ctl != json.load(open(f"{work}/agree.ctl2")):
    sys.exit(1)  # traffic moved the counters while they were read: again
telemetry = {}
for line in open(f"{work}/agree.telemetry"):
    telemetry.update(json.loads(line))
prometheus = {}
for line in open(f"{work}/agree.prometheus"):
    m = re.fullmatch(r'([a-z_]+)(?:\{[a-z]+="(.*)"\})? ([0-9]+)', line.strip())
    if m:
        prometheus[(m[1], m[2])] = int(m[3])
fields = ["packets_in", "packets_to_function", "packets_out", "connections", "connections_live", "arp_answered", "arp_asked",
          "handed_off"]
names = ["flowtrack_packets_received_total", "flowtrack_packets_to_function_total", "flowtrack_packets_sent_total",
         "flowtrack_connections_total", "flowtrack_connections", "flowtrack_arp_replies_sent_total",
         "flowtrack_arp_requests_sent_total", "flowtrack_packets_handed_off_total"]
counters = telemetry.get("/flowtrack/counters", {})
wrong = [f"telemetry {f}" for f in fields if counters.get(f) != ctl[f]]
wrong += [f"prometheus {n}" for f, n in zip(fields, names) if prometheus.get((n, None)) != ctl[f]]
if telemetry.get("/flowtrack/drops") != ctl["drops"] or counters.get("drops") != sum(ctl["drops"].values()):
    wrong.append("telemetry drops")
if {r: n for (name, r), n in prometheus.items() if name == "flowtrack_drops_total"} != ctl["drops"]:
    wrong.append("prometheus drops")
if telemetry.get("/flowtrack/backends") != ctl.get("backends", {}):
    wrong.append("telemetry backends")
if {b: n for (name, b), n in prometheus.items() if name == "flowtrack_backend_connections_total"} != ctl.get("backends", {}):
    wrong.append("prometheus backends")
if prometheus.get(("flowtrack_info", ctl["nf"])) != 1:
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
