# shellcheck shell=bash
# Shared by the wire tests (ctest label wire): capture one run of a traffic
# program on loopback with tcpdump, then decode the capture with tshark.
# Source it from a test script (bash, set -uo pipefail), then:
#   wire_init NAME BINARY        checks tcpdump, tshark and the binary (skip 77
#                                / fail 1), makes $work (kept with KEEP_WIRE=1)
#                                and names the capture $pcap=$work/NAME.pcap
#   wire_capture PORT_ENV [BUF_KIB]
#                                runs BINARY with PORT_ENV=$port (a free port,
#                                a new one every attempt) under tcpdump; fails
#                                the test if the program fails, skips it if
#                                tcpdump cannot capture at all; returns 0 with
#                                a complete capture, 1 when tcpdump dropped
#                                packets in 5 attempts (the caller decides)
#   ts TSHARK_ARGS...            tshark on $pcap, two passes (-2), our unknown
#                                RPC programs decoded as rpc anyway
# It also defines skip and fail (print the reason, exit 77 / 1).

# shellcheck source-path=SCRIPTDIR source=wait_log.sh
. "$(dirname "${BASH_SOURCE[0]}")/wait_log.sh"

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	exit 1
}

wire_init() {
	wire_bin=$2
	command -v tcpdump >/dev/null || skip "tcpdump not installed"
	command -v tshark >/dev/null || skip "tshark not installed"
	[ -x "$wire_bin" ] || fail "traffic binary $wire_bin not found"
	work=$(mktemp -d "/tmp/$1-wire.XXXXXX")
	chmod 777 "$work" # tcpdump may drop privileges to write
	pcap=$work/$1.pcap
	tdpid=
	trap wire_cleanup EXIT
}

wire_cleanup() {
	[ -n "$tdpid" ] && kill "$tdpid" 2>/dev/null
	if [ "${KEEP_WIRE:-0}" = 1 ]; then echo "capture kept in $work"; else rm -rf "$work"; fi
}

# A port below the ephemeral range that nothing uses now.
wire_pick_port() {
	port=
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 12000))
		if ! ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null | grep -q .; then
			port=$p
			return 0
		fi
	done
	fail "no free port found"
}

# One capture of one run; returns 2 when tcpdump dropped packets.
# (--immediate-mode: without it libpcap's TPACKET_V3 blocks on this kernel
# delivered nothing before tcpdump was stopped.)
wire_capture_once() {
	local env=$1 buf=$2 rc last size
	wire_pick_port
	rm -f "$pcap"
	# Empty the log here, not only in tcpdump's redirection: that runs in
	# the background child, maybe after the loop below has read the
	# previous attempt's "listening on" (the program then ran uncaptured).
	: >"$work/tcpdump.err"
	tcpdump -i lo -s 0 -B "$buf" --immediate-mode -U -w "$pcap" "tcp port $port" \
		2>"$work/tcpdump.err" &
	tdpid=$!
	# A loaded machine (ASan, a fuzz job) can take seconds to start it.
	wait_log tcpdump "$tdpid" "$work/tcpdump.err" "listening on" 20
	case $? in
	0) ;;
	1) skip "tcpdump cannot capture on lo: $(head -1 "$work/tcpdump.err")" ;;
	*) fail "$wait_log_error" ;;
	esac
	env "$env=$port" "$wire_bin" >"$work/traffic.out" 2>&1
	rc=$?
	cat "$work/traffic.out"
	[ $rc -eq 0 ] || fail "traffic program failed ($rc)"
	# Let tcpdump write out what it has, then stop it: after SIGINT it may
	# not read what is still in its ring, and those frames count as
	# neither captured nor dropped. So wait until the file has not grown
	# for 0.5 s (a loaded machine can hold tcpdump off the CPU for 0.1 s).
	local stable=0
	last=-1
	for _ in $(seq 1 100); do
		size=$(stat -c %s "$pcap" 2>/dev/null || echo 0)
		if [ "$size" = "$last" ]; then
			stable=$((stable + 1))
			[ $stable -ge 5 ] && break
		else
			stable=0
		fi
		last=$size
		sleep 0.1
	done
	kill -INT "$tdpid"
	wait "$tdpid" 2>/dev/null
	tdpid=
	dropped=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$work/tcpdump.err")
	[ "${dropped:-x}" = 0 ] && return 0
	return 2
}

# On a loaded machine the kernel may drop packets for tcpdump (then the
# capture cannot be judged): the run is repeated, up to 5 times (under
# load one bidi capture in 7 dropped packets, so 3 tries left ~0.3% of
# runs without a complete capture).
wire_capture() {
	local attempt
	for attempt in 1 2 3 4 5; do
		wire_capture_once "$1" "${2:-65536}" && return 0
		echo "capture attempt $attempt: tcpdump dropped ${dropped:-?} packets"
		sleep 1
	done
	return 1
}

ts() { tshark -n -2 -r "$pcap" -o rpc.dissect_unknown_programs:TRUE "$@" 2>/dev/null; }
