#!/usr/bin/env bash
# Installs what flowtrack needs on Debian 12, idempotently: nothing is fetched when every package is
# already present, so `make demo` and `make test` can call it every time.
#   install-deps.sh          the Debian packages
#   install-deps.sh --lab    the lab's NPF (pinned) in the project's virtualenv, .venv: skipped when that
#                            version is already there. Under a lock (.venv.lock), so that `make test`
#                            can start it in the background while the release tree builds, and the lab
#                            tests' own call waits for it instead of installing beside it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  dpdk-dev libdpdk-dev libabsl-dev libtsl-hopscotch-map-dev libcuckoo-dev
  libpcap-dev libcli11-dev libfmt-dev nlohmann-json3-dev libtoml11-dev
  # OpenSSL's libcrypto: SHA-256 of a state file's configuration, HMAC-SHA256 of a NAT pair's sync link.
  libssl-dev
  # libsodium: SipHash and BLAKE2b, the stateful LB's deployment key (instances that choose alike).
  libsodium-dev
  python3 python3-matplotlib python3-pandas valgrind
  python3-venv python3-numpy python3-scipy git
  # The live end-to-end tests (tests/live/*.sh): backends in network namespaces, a client, veth
  # offloads. They start their own nginx instances; the package's own service plays no part.
  # (dpdk-testpmd, the anchor of scripts/live-throughput.sh, comes with dpdk-dev above.)
  nginx-light curl iperf3 ethtool iproute2 iputils-ping
  # The load balancer's live scenarios: tcpdump captures a tunnel's packets on a backend's link, hping3
  # floods with spoofed SYNs, BIRD 2 is the BGP speaker of the router and of each instance behind it
  # (tests/live/lb_ecmp.sh starts its own, one a namespace).
  tcpdump hping3 bird2
)

# Packages whose installation would start a daemon in the machine's own namespace, which no test wants:
# installed behind a policy-rc.d that forbids starting any (invoke-rc.d's rule, exit status 101).
daemons=(bird2)

install_packages() {
  missing=()
  for pkg in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done

  if ((${#missing[@]} > 0)); then
    if [[ $(id -u) -ne 0 ]]; then
      echo "install-deps: missing packages (${missing[*]}); run as root or install them" >&2
      exit 1
    fi
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    forbid_daemon_starts
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
    allow_daemon_starts
  fi
}

# A policy-rc.d of our own while the packages install, unless one is there already (a container's, which
# usually forbids the same); removed afterwards, on failure too.
policy_rc=/usr/sbin/policy-rc.d
forbid_daemon_starts() {
  local pkg
  for pkg in "${missing[@]}"; do
    if [[ " ${daemons[*]} " == *" $pkg "* && ! -e $policy_rc ]]; then
      printf '#!/bin/sh\n# install-deps.sh: no daemon starts while it installs packages\nexit 101\n' > "$policy_rc"
      chmod 755 "$policy_rc"
      trap allow_daemon_starts EXIT
      own_policy_rc=1
      return
    fi
  done
}
allow_daemon_starts() {
  if [[ -n ${own_policy_rc:-} ]]; then
    rm -f "$policy_rc"
    own_policy_rc=
  fi
}

# The lab (lab/, `make report`): NPF in a virtualenv that sees Debian's numpy, pandas, matplotlib and
# scipy (--system-site-packages), which pip is told to keep as they are: a wheel built for a newer
# numpy would otherwise pull one in and break Debian's pandas.
install_lab() {
  npf_version=2.1.1
  venv=$root/.venv
  exec 9> "$root/.venv.lock"
  flock 9
  if compgen -G "$venv/lib/python3*/site-packages/npf-$npf_version.dist-info" > /dev/null &&
     [[ -x $venv/bin/npf ]]; then
    return 0
  fi
  echo "install-deps: installing npf $npf_version into $venv"
  [[ -x $venv/bin/python ]] || /usr/bin/python3 -m venv --system-site-packages "$venv"
  constraints=$(mktemp)
  trap 'rm -f "$constraints"' EXIT
  /usr/bin/python3 -c 'import importlib.metadata as m
for p in ("numpy", "pandas", "matplotlib", "scipy"): print(f"{p}=={m.version(p)}")' > "$constraints"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -c "$constraints" "npf==$npf_version"
}

case "${1:-}" in
  "") install_packages ;;
  --lab) install_lab ;;
  *) echo "install-deps: unknown option $1 (none: the Debian packages; --lab: the lab's NPF)" >&2; exit 2 ;;
esac
