#!/usr/bin/env bash
# The main job: installs dependencies, builds rpcrdma (Release), then runs
# rpcrdma-perf server and client on loopback over the default software
# provider (soft-iWARP) next to ONC RPC over TCP (libtirpc) and prints the
# comparison table (bench/rpc/run.sh; its README explains every figure):
# the NULL p50 next to the raw loopback TCP 64 B round trip on the same
# CPUs, and user-space instructions per NULL call, client and server, the
# work of a call without the waiting (bench/rpc/instr.sh).
#
#   scripts/demo.sh [--quick] [--provider] [bench/rpc/run.sh options]
#     --quick      ~30 s instead of ~3 min
#     --provider   also run the provider benchmark (soft-iWARP vs libfabric
#                  tcp vs plain TCP, bench/provider/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
provider=0
args=()
for a in "$@"; do
	if [ "$a" = --provider ]; then provider=1; else args+=("$a"); fi
done
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
echo "== rpcrdma $(git describe --always --dirty 2>/dev/null || true): XDR/RPC round trip"
build/examples/example_xdr_roundtrip >/dev/null && echo "ok"
if [ $provider -eq 1 ]; then
	echo "== provider benchmark: soft-iWARP vs libfabric tcp vs plain TCP (loopback)"
	BUILD=build bench/provider/run.sh
fi
echo "== RPC benchmark: RPC-over-RDMA (soft-iWARP) vs ONC RPC over TCP (libtirpc), loopback"
exec bench/rpc/run.sh --build build "${args[@]}"
