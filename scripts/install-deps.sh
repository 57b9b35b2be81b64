#!/usr/bin/env bash
# Installs what flowtrack needs on Debian 12, idempotently: nothing is fetched when every package is
# already present, so `make demo` and `make test` can call it every time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  dpdk-dev libdpdk-dev libabsl-dev libtsl-hopscotch-map-dev libcuckoo-dev
  libpcap-dev libcli11-dev libfmt-dev nlohmann-json3-dev libtoml11-dev
  python3 python3-matplotlib python3-pandas valgrind
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages (${missing[*]}); run as root or install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
