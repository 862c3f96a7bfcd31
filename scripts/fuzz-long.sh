#!/usr/bin/env bash
# Long libFuzzer runs, one target at a time, and the table of what they did.
#
#   scripts/fuzz-long.sh [--execs N] [--seconds S] [--cpu C] [--out DIR]
#                        [--build DIR] [--update-corpus] [--llvm-cov]
#                        [--cov-only] [--timeout T] [TARGET...]
#
# Each target (default: all of fuzz/fuzz_*.c, the fastest first) runs until N
# executions (default 10,000,000) or S seconds (default 3600), whichever
# comes first, as one process (one core) under nice -n 19, pinned to CPU C
# (default 1) when taskset exists: the machine may be shared. It starts from
# a copy of fuzz/corpus/<target>/ (the repository's corpus is only read) with
# the options of fuzz/<target>.flags. Then the run's corpus is minimised
# (libFuzzer -merge=1): the named seeds of fuzz/corpus/<target>/ (real
# captures, hand-made cases, regression inputs: any file whose name is not a
# 40-digit SHA-1) are kept, and what the run found is added only where it
# covers something they do not. --update-corpus replaces the SHA-1-named
# files of fuzz/corpus/<target>/ with that result.
#
# An input that runs longer than T seconds (default 30) is a finding
# (libFuzzer -timeout, wall-clock time; the run stops there). Under nice 19
# on a busy machine a process can be kept off the CPU that long, so each
# timeout input is run again alone: if it then passes within T, the table
# says "timeout not reproduced" and the row is not a failure.
#
# --llvm-cov also builds the replay binaries with clang source coverage
# (-fprofile-instr-generate -fcoverage-mapping, in DIR-cov beside --build),
# replays each minimised corpus and reports the line coverage of the
# target's decoder files. --cov-only runs no fuzzer: the coverage of the
# repository's corpora as they are.
#
# The table (stdout, also DIR/table.md): executions, seconds, executions a
# second, libFuzzer's cov (edges) and ft (features) at the end, corpus
# files and KiB after minimising, line coverage, findings (crash, leak,
# timeout, out-of-memory artifacts in DIR/<target>/). Exit status 1 if any
# target had a finding or failed to run.
#
# The fuzz build (CC=clang -DRPCRDMA_FUZZ=ON) is made in --build (default
# build-tests/fuzz-long) when it is missing and brought up to date.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

execs=10000000
seconds=3600
cpu=1
out=""
build=build-tests/fuzz-long
update=0
llvmcov=0
covonly=0
timeout=30
targets=()
while [ $# -gt 0 ]; do
	case "$1" in
	--execs) execs=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--cpu) cpu=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--update-corpus) update=1; shift ;;
	--llvm-cov) llvmcov=1; shift ;;
	--cov-only) covonly=1; llvmcov=1; shift ;;
	--timeout) timeout=$2; shift 2 ;;
	-h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "fuzz-long: unknown option $1" >&2; exit 2 ;;
	*) targets+=("$1"); shift ;;
	esac
done
[ -n "$out" ] || out=$build/runs-$(date -u +%Y%m%dT%H%M%SZ)

# fastest first (measured 2026-11-27), then any target not listed
order=(xdr rpcrdma1_hdr rpcrdma2_hdr connect_private short bidi rpc iwarp_rx iwarp_conn)
if [ ${#targets[@]} -eq 0 ]; then
	targets=("${order[@]}")
	for src in fuzz/fuzz_*.c; do
		t=$(basename "$src" .c)
		t=${t#fuzz_}
		case " ${order[*]} " in *" $t "*) ;; *) targets+=("$t") ;; esac
	done
fi
for t in "${targets[@]}"; do
	[ -f "fuzz/fuzz_$t.c" ] || { echo "fuzz-long: no target fuzz/fuzz_$t.c" >&2; exit 2; }
done

# the decoder files whose line coverage --llvm-cov reports
decoders() {
	case "$1" in
	xdr) echo src/xdr/xdr.c ;;
	rpc) echo src/rpc/rpc_msg.c src/rpc/rpc_auth.c ;;
	rpcrdma1_hdr) echo src/transport/rpcrdma1_hdr.c ;;
	rpcrdma2_hdr) echo src/transport/rpcrdma2_hdr.c src/transport/rpcrdma2_opt.c ;;
	connect_private) echo src/transport/connect_private.c ;;
	short) echo src/transport/short.c ;;
	bidi) echo src/transport/backchannel.c src/transport/splice.c ;;
	iwarp_rx | iwarp_conn) echo src/softiwarp/qp_rx.c src/softiwarp/qp_rx_read.c src/softiwarp/cm.c ;;
	esac
}

pin=(nice -n 19)
command -v taskset >/dev/null && pin+=(taskset -c "$cpu")

bins=()
for t in "${targets[@]}"; do bins+=("fuzz_$t"); done
mkdir -p "$build" "$out"
[ "$covonly" -eq 1 ] && echo "=== no fuzzing: coverage of fuzz/corpus/"
[ "$covonly" -eq 0 ] && echo "=== fuzz build ($build)"
if [ "$covonly" -eq 0 ] && [ ! -f "$build/CMakeCache.txt" ]; then
	CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRPCRDMA_FUZZ=ON \
		-DRPCRDMA_BUILD_BENCH=OFF >"$out/configure.log" 2>&1 || {
		cat "$out/configure.log"
		exit 1
	}
fi
[ "$covonly" -eq 1 ] || "${pin[@]}" cmake --build "$build" -j 2 --target "${bins[@]}" >"$out/build.log" 2>&1 || {
	grep -E 'error|warning' "$out/build.log" | head -30
	exit 1
}

is_sha1() { [[ $1 =~ ^[0-9a-f]{40}$ ]]; }

flags_of() {
	[ -f "fuzz/$1.flags" ] && grep -E '^-' "fuzz/$1.flags"
}

status=0
rows=()
for t in "${targets[@]}"; do
	d=$out/$t
	if [ "$covonly" -eq 1 ]; then
		mkdir -p "$d"
		rm -rf "$d/min"
		cp -r fuzz/corpus/"$t" "$d/min"
		rows+=("$t|-|-|-|-|-|$(find "$d/min" -type f | wc -l) / $(($(du -sb "$d/min" | cut -f1) / 1024))|-")
		continue
	fi
	rm -rf "$d"
	mkdir -p "$d/work" "$d/min" "$d/artifacts"
	cp fuzz/corpus/"$t"/* "$d/work/" 2>/dev/null
	mapfile -t extra < <(flags_of "$t")
	echo "=== $t: up to $execs executions or $seconds s ${extra[*]}"
	start=$(date +%s)
	ASAN_OPTIONS=detect_leaks=1 "${pin[@]}" "$build/fuzz/fuzz_$t" -runs="$execs" \
		-max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$d/artifacts/" "${extra[@]}" "$d/work" >"$d/log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$d/log" | tail -1)
	last=$(grep -E '^#[0-9]+.*cov: ' "$d/log" | tail -1)
	cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
	finds=$(find "$d/artifacts" -type f -not -name '*.rerun' | wc -l)
	# minimise: named seeds first, then what adds coverage to them
	for f in fuzz/corpus/"$t"/*; do
		[ -f "$f" ] && ! is_sha1 "$(basename "$f")" && cp "$f" "$d/min/"
	done
	"${pin[@]}" "$build/fuzz/fuzz_$t" -merge=1 "${extra[@]}" "$d/min" "$d/work" >"$d/merge.log" 2>&1 ||
		echo "fuzz-long: $t: merge failed (see $d/merge.log)" >&2
	files=$(find "$d/min" -type f | wc -l)
	kib=$(($(du -sb "$d/min" | cut -f1) / 1024))
	if [ "$update" -eq 1 ] && [ "$files" -gt 0 ]; then
		for f in fuzz/corpus/"$t"/*; do
			is_sha1 "$(basename "$f")" && rm -f "$f"
		done
		for f in "$d/min"/*; do
			is_sha1 "$(basename "$f")" && cp "$f" fuzz/corpus/"$t"/
		done
	fi
	note=""
	real=0
	for a in "$d"/artifacts/*; do
		[ -f "$a" ] || continue
		if [[ $(basename "$a") == timeout-* ]] &&
			"$build/fuzz/fuzz_$t" -timeout="$timeout" -runs=1 "${extra[@]}" "$a" >"$a.rerun" 2>&1; then
			note+="$(basename "$a") (timeout not reproduced: passes alone) "
			continue
		fi
		note+="$(basename "$a") "
		real=1
	done
	[ "$rc" -ne 0 ] && [ "$finds" -eq 0 ] && note="exit $rc (see $d/log)" && real=1
	[ "$real" -eq 1 ] && status=1
	rows+=("$t|${n:-0}|$secs|${rate:-0}|${cov:-?}|${ft:-?}|$files / $kib|${note:-none}")
	echo "    ${n:-0} executions in $secs s, cov ${cov:-?} ft ${ft:-?}, corpus $files files $kib KiB, findings: ${note:-none}"
done

# line coverage of the decoders by the minimised corpora
declare -A lines
if [ "$llvmcov" -eq 1 ]; then
	cb=$build-cov
	echo "=== coverage build ($cb)"
	if [ ! -f "$cb/CMakeCache.txt" ]; then
		CC=clang cmake -S "$root" -B "$cb" -DCMAKE_BUILD_TYPE=Debug -DRPCRDMA_BUILD_BENCH=OFF \
			-DRPCRDMA_LTO=OFF -DCMAKE_C_FLAGS="-fprofile-instr-generate -fcoverage-mapping" \
			-DCMAKE_EXE_LINKER_FLAGS="-fprofile-instr-generate" >"$out/cov-configure.log" 2>&1
	fi
	if "${pin[@]}" cmake --build "$cb" -j 2 --target "${bins[@]}" >"$out/cov-build.log" 2>&1; then
		for t in "${targets[@]}"; do
			rm -f "$out/$t/cov-"*.profraw
			LLVM_PROFILE_FILE="$out/$t/cov-%p.profraw" "${pin[@]}" "$cb/fuzz/fuzz_$t" \
				"$out/$t/min" >"$out/$t/cov-replay.log" 2>&1
			llvm-profdata merge -sparse "$out/$t/cov-"*.profraw -o "$out/$t/cov.profdata" 2>/dev/null || continue
			mapfile -t files < <(decoders "$t" | tr ' ' '\n')
			pct=$(llvm-cov report "$cb/fuzz/fuzz_$t" -instr-profile="$out/$t/cov.profdata" \
				"${files[@]}" 2>/dev/null | awk '$1 == "TOTAL" { print $(NF-3) }')
			lines[$t]="$pct"
		done
	else
		echo "fuzz-long: coverage build failed (see $out/cov-build.log)" >&2
	fi
fi

{
	echo "| target | executions | seconds | exec/s | cov | ft | corpus (files / KiB) | decoder lines | findings |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
	for r in "${rows[@]}"; do
		IFS='|' read -r t n s rate cov ft corp note <<<"$r"
		echo "| $t | $n | $s | $rate | $cov | $ft | $corp | ${lines[$t]:-n/a} | $note |"
	done
} | tee "$out/table.md"
echo "(runs, logs and minimised corpora in $out)"
exit $status
