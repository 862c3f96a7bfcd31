#!/usr/bin/env bash
# The main job: installs dependencies, builds rpcrdma (Release), then runs the
# demo/benchmark over the default software provider (soft-iWARP) on loopback
# and prints the comparison table.
#
#   scripts/demo.sh [extra args for the benchmark]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
echo "== rpcrdma $(git describe --always --dirty 2>/dev/null || echo) — XDR/RPC round trip"
build/examples/example_xdr_roundtrip
if [ -x bench/provider/run.sh ]; then
	echo "== provider benchmark: soft-iWARP vs libfabric tcp vs plain TCP (loopback)"
	exec bench/provider/run.sh --build build "$@"
fi
