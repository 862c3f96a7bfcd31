#!/bin/bash
# bench/quiet.sh CMD...: run a benchmark with every other busy process of
# this machine stopped (SIGSTOP) around it, continued afterwards (also on
# an interrupt). For figures taken while builds, fuzzers or tests of other
# work share the machine: even a nice-19 process takes CFS slices of
# milliseconds from a pinned benchmark process. Refuses while a QEMU guest
# runs (a guest stopped for long may time out its own tests). Root, or the
# owner of those processes.
#   bench/quiet.sh bench/rpc/v2.sh --build build-rel --reps 3
if pgrep -f qemu-system >/dev/null; then
	echo "quiet.sh: a QEMU guest runs: not stopping it"
	exit 3
fi
me=$$
busy=$(ps -eo pid,comm --no-headers | awk '$2 ~ /^(cc1|lto1|lto-wrapper|ld|collect2|clang|clang-tidy|fuzz_|ctest|make|gmake|cmake|test_|rpcrdma-perf|rpcrdma-ping|bench_|as)/ {print $1}')
busy="$busy $(ps -eo pid,pcpu,comm --no-headers | awk '$2 > 5.0 && $3 !~ /^(bash|ps|awk|quiet.sh|process_api|kdamond)/ {print $1}')"
pids=$(echo "$busy" | tr ' ' '\n' | sort -u | grep -v -x -e "$me" -e '')
# shellcheck disable=SC2086 # a list of pids
trap 'kill -CONT $pids 2>/dev/null' EXIT INT TERM
# shellcheck disable=SC2086
kill -STOP $pids 2>/dev/null
sleep 0.5
"$@"
