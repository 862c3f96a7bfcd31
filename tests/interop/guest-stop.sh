#!/bin/bash
# ctest fixture cleanup of the interop suite (test interop_guest_stop): lets
# the host hook end, waits for the guest to stop its capture and power off,
# and checks the guest side ran cleanly. Results stay in STATE_DIR/out
# (test.log, interop.pcap, export.cksum, after.cksum, dmesg, svcrdma trace,
# kernel-perf.txt); STATE_DIR/perf-summary.txt has our client's 1 MiB
# READ/WRITE figures next to the kernel NFS client's.
# usage: guest-stop.sh STATE_DIR      exit 0 / 1, 77 when there was no guest
set -uo pipefail
state=${1:?usage: guest-stop.sh STATE_DIR}
if [ -f "$state/skip" ]; then
	echo "SKIP: $(cat "$state/skip")"
	exit 77
fi
[ -f "$state/pid" ] || {
	echo "FAIL: no guest was started (see interop_guest_start)"
	exit 1
}
pid=$(cat "$state/pid")
touch "$state/tests-done"
t0=$(date +%s.%N)
for _ in $(seq 1 900); do # 180 s
	[ -e "$state/run-guest.rc" ] && break
	sleep 0.2
done
if [ ! -e "$state/run-guest.rc" ]; then
	echo "FAIL: guest still running 180 s after the tests: ending it"
	kill -- -"$pid" 2>/dev/null
	exit 1
fi
echo "[stop] guest powered off $(echo "$(date +%s.%N) - $t0" | bc) s after the tests ended"
echo "[stop] total guest run $(echo "$(date +%s.%N) - $(cat "$state/t-start")" | bc) s"
cat "$state/run-guest.log"
echo "--- guest test.log (tail)"
tail -40 "$state/out/test.log" 2>/dev/null
rc=$(cat "$state/run-guest.rc")
[ "$rc" = 0 ] || {
	echo "FAIL: run-guest.sh exited $rc"
	exit 1
}
for f in interop.pcap export.cksum after.cksum; do
	[ -s "$state/out/$f" ] || {
		echo "FAIL: the guest did not produce $f"
		exit 1
	}
done
# Our client's figures (test_interop_clnt: STATE/perf-ours.txt) next to the
# kernel NFS client's (guest, after the host: out/kernel-perf.txt), same run,
# same export, 1 MiB calls one at a time; lines "WHO OP mb=N seconds=S
# rpcs=R commits=C". MB = 10^6 bytes. Also in STATE/perf-summary.txt.
cat "$state/perf-ours.txt" "$state/out/kernel-perf.txt" 2>/dev/null | awk '
	function v(k,   i) { for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	{ who[$2 " " $1] = 1; mb[$2 " " $1] = v("mb"); s[$2 " " $1] = v("seconds"); r[$2 " " $1] = v("rpcs"); c[$2 " " $1] = v("commits") }
	END {
		print "NFSv3 1 MiB calls, one at a time, same run (emulated guest: figures, not targets)"
		printf "%-6s %-28s %6s %8s %9s %9s %8s\n", "op", "client", "calls", "commits", "seconds", "calls/s", "MB/s"
		n = split("WRITE ours,WRITE kernel,READ ours,READ kernel", k, ",")
		for (i = 1; i <= n; i++) {
			split(k[i], p, " ")
			name = p[2] == "ours" ? "ours (host, client API)" : "kernel NFS client (guest)"
			if (!(k[i] in who) || s[k[i]] + 0 <= 0) { printf "%-6s %-28s %6s\n", p[1], name, "missing"; continue }
			printf "%-6s %-28s %6d %8d %9.3f %9.1f %8.2f\n", p[1], name, r[k[i]], c[k[i]], s[k[i]], mb[k[i]] / s[k[i]], mb[k[i]] * 1.048576 / s[k[i]]
		}
	}' >"$state/perf-summary.txt"
sed 's/^/[stop] figure: /' "$state/perf-summary.txt"
echo "[stop] guest results in $state/out"
