# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: the variables are the sourcing script's)
# What the host sides of test_interop_nfs3d and test_interop_nfs41d share
# (nfs3d-test.sh, nfs41d-test.sh source it after setting state, bin,
# gscript and res): the guest's environment, the server started and its
# counters, one guest phase at a time, the capture's counts, the dd
# figures. Each script sets before its first phase:
#   gname  the guest script's name and log prefix (nfs3d, nfs41d)
#   genv   the variables each guest phase runs with ("NFS3D_FILES=500 ...")
#   gtail  the lines of each phase's log shown here

spid=""
starts=0

fail() {
	echo "FAIL: $*"
	[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
	[ -n "${hcap:-}" ] && kill "$hcap" 2>/dev/null # a capture the script runs
	exit 1
}

# The guest started by interop_guest_start (skip, exit 77, without one
# that can reach the host): its variables (GUEST_OUT, NFS3D_PORT, ...),
# gout (its output folder) and share (the folder it sees as /peer); the
# guest script and the guest library copied there; $res made anew.
guest_env() {
	[ -f "$state/skip" ] && { echo "SKIP: $(cat "$state/skip")"; exit 77; }
	[ -f "$state/guest-ready" ] || fail "no guest (interop_guest_start failed)"
	[ -f "$state/nfs3d-ports" ] || { echo "SKIP: socat not installed (guestfwd to the host)"; exit 77; }
	# shellcheck disable=SC1091
	. "$state/guest-ready"
	# shellcheck disable=SC1091
	. "$state/nfs3d-ports"
	gout=${GUEST_OUT:?}
	share=$(dirname "$gout")
	rm -rf "$res"
	mkdir -p "$res/export"
	cp "$gscript" "$share/$gname-client.sh"
	cp "$(dirname "$gscript")/nfs-client-lib.sh" "$share/nfs-client-lib.sh"
}

# start_nfsd NAME ARGS...: start $bin ARGS... --stats-file (instance
# $starts: server-N.out, .err, .stats in $res) until its ready line.
start_nfsd() {
	local name=$1
	shift
	starts=$((starts + 1))
	"$bin" "$@" --stats-file "$res/server-$starts.stats" \
		>"$res/server-$starts.out" 2>"$res/server-$starts.err" &
	spid=$!
	for _ in $(seq 1 100); do
		grep -q '^ready nfs=' "$res/server-$starts.out" && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$res/server-$starts.err"
	fail "$name did not start"
}

# the server's counters now (SIGUSR1 -> --stats-file)
counters() {
	rm -f "$res/server-$starts.stats"
	kill -USR1 "$spid"
	for _ in $(seq 1 50); do
		[ -s "$res/server-$starts.stats" ] && break
		sleep 0.1
	done
	cat "$res/server-$starts.stats"
}
# val NAME LINES: the number after " NAME=" (the first)
val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2" | head -1; }

# Run guest phase $1 (bounded by $2 seconds) and show its log.
n=0
phase() {
	local p=$1 limit=$2 t0
	n=$((n + 1))
	rm -f "$gout/$gname-$p.rc"
	t0=$(date +%s.%N)
	printf '(%s setsid bash /peer/%s-client.sh %s </dev/null >/dev/null 2>&1 &)' \
		"$genv" "$gname" "$p" >"$share/cmd-sh-$gname-$n"
	for _ in $(seq 1 $((limit * 5))); do
		[ -s "$gout/$gname-$p.rc" ] && break
		sleep 0.2
	done
	echo "--- phase $p ($(echo "$(date +%s.%N) - $t0" | bc) s)"
	tail -"$gtail" "$gout/$gname-$p.log" 2>/dev/null
	[ -s "$gout/$gname-$p.rc" ] || fail "phase $p: no answer within ${limit}s"
	[ "$(cat "$gout/$gname-$p.rc")" = 0 ] || fail "phase $p: exit $(cat "$gout/$gname-$p.rc")"
}

# capture_counts PCAP: the guest's capture $gout/PCAP copied to $res and
# counted with tshark (ts, the command): bad and good MPA CRC32s
# (fpdu-crc.py; the first bad ones in $res/capture-crc-bad.txt), nerr
# RDMA_ERROR messages, nrpc rpcordma frames.
capture_counts() {
	cp "$gout/$1" "$res/$1"
	ts=(tshark -n -2 -r "$res/$1")
	"${ts[@]}" -Y iwarp_mpa.crc_check -O iwarp_mpa >"$res/capture-crc.txt" 2>/dev/null
	# the CRCs are checked by walking the TCP bytes (fpdu-crc.py): tshark's
	# MPA dissector loses the FPDU boundaries of some streams of 64 KiB
	# FPDUs and then reports payload as FPDUs with bad CRCs
	# (capture-crc.txt keeps its view)
	local _g _b _u
	read -r _g good _b bad _u unchecked < <(python3 "$(dirname "${BASH_SOURCE[0]}")/fpdu-crc.py" \
		"$res/$1" 20049 2>"$res/capture-crc-bad.txt")
	[ -n "${good:-}" ] || fail "fpdu-crc.py could not read $1"
	[ "$good" -gt 0 ] || fail "capture: no FPDU with a CRC32 in $1"
	[ "${unchecked:-0}" = 0 ] || echo "capture: $unchecked TCP directions not walked to their end (a hole in the capture, or no CRC)"
	nerr=$("${ts[@]}" -Y 'rpcordma.msg_type == 4' 2>/dev/null | wc -l)
	nrpc=$("${ts[@]}" -Y 'rpcordma' 2>/dev/null | wc -l)
}

# The dd figures of $res/perf.txt ("WHO OP mb=N seconds=S" lines) as a
# table, also in $res/perf-summary.txt.
print_figures() {
	echo "figures (MB = 10^6 bytes):"
	awk '{ split($3, a, "="); split($4, b, "="); printf "  %-7s %-5s %3d MiB %8.3f s %7.2f MB/s\n", $1, $2, a[2], b[2], a[2] * 1.048576 / b[2] }' \
		"$res/perf.txt" | tee "$res/perf-summary.txt"
}
