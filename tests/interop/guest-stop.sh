#!/bin/bash
# ctest fixture cleanup of the interop suite (test interop_guest_stop): lets
# the host hook end, waits for the guest to stop its capture and power off,
# and checks the guest side ran cleanly. Results stay in STATE_DIR/out
# (test.log, interop.pcap, export.cksum, after.cksum, dmesg, svcrdma trace).
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
[ -f "$state/out/kernel-perf.txt" ] && sed 's/^/[stop] figure: /' "$state/out/kernel-perf.txt"
echo "[stop] guest results in $state/out"
