#!/bin/sh
# Provider-level benchmark (issue 3): rpcrdma softiwarp vs libfabric tcp vs
# plain TCP on 127.0.0.1. Needs a normal cmake build in build/ (or BUILD=dir).
# All options are passed to bench_provider (run.sh --help lists them).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
bin=$build/bench/provider/bench_provider
if [ ! -x "$bin" ]; then
	echo "run.sh: $bin not found; build first:" >&2
	echo "  cmake -S $root -B $build && cmake --build $build -j" >&2
	exit 2
fi
exec "$bin" "$@"
