#!/usr/bin/env bash
# Installs the Debian 12 packages rpcrdma needs to build, test and benchmark.
# README.md says why each one is here. Runs as root (or through sudo).
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang libclang-rt-14-dev
      libtirpc-dev rpcsvc-proto libisal-dev
      libfabric-dev libibverbs-dev librdmacm-dev
      tshark tcpdump gnuplot-nox rpcbind python3 socat mandoc valgrind
      systemtap-sdt-dev gdb)
# systemtap-sdt-dev: <sys/sdt.h> for the USDT probes (src/util/probe.h),
# header only; gdb: tests/probe stops at each probe and reads its arguments.
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
