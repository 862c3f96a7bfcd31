#!/usr/bin/env bash
# Wire check of bidirectional RPC-over-RDMA (RFC 8167), ctest label "wire".
# Runs the traffic program (test_bidi_traffic: forward calls, reverse calls
# whose XIDs equal live forward XIDs) on a port we pick, captures loopback
# with tcpdump (MPA CRC on, the library default), and has tshark decode the
# capture in two passes (-2) down to rpc. Asserts:
#   - the capture is complete (tcpdump dropped nothing) and nothing is
#     malformed; every FPDU's CRC32c is good;
#   - the 7 reverse calls (callback program 0x40000b1d: 3 NULL, 4 ECHO) are
#     rpc Calls (rpc.msgtyp 0) sent from the server's port, and 7 rpc
#     Replies (rpc.msgtyp 1) with their XIDs come from the client's side;
#   - the forward calls (program 0x20000b1d, and the BC_ENABLE gate
#     program 0x2b1d1001) are Calls from the client, their replies Replies
#     from the server;
#   - at least one XID value is a Call in both directions.
# Usage: bidi_wire.sh TRAFFIC_BINARY     exit 0 pass, 1 fail, 77 skip
set -uo pipefail

bin=${1:?usage: bidi_wire.sh TRAFFIC_BINARY}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

command -v tcpdump >/dev/null || skip "tcpdump not installed"
command -v tshark >/dev/null || skip "tshark not installed"
[ -x "$bin" ] || fail "traffic binary $bin not found"

work=$(mktemp -d /tmp/bidi-wire.XXXXXX)
chmod 777 "$work" # tcpdump may drop privileges to write
# (--immediate-mode: without it libpcap's TPACKET_V3 blocks on this kernel
# delivered nothing before tcpdump was stopped)
tdpid=
cleanup() {
	[ -n "$tdpid" ] && kill "$tdpid" 2>/dev/null
	if [ "${KEEP_WIRE:-0}" = 1 ]; then echo "capture kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# A port below the ephemeral range that nothing uses now (a new one for
# every capture).
pick_port() {
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
pcap=$work/bidi.pcap
# One capture of one run of the traffic program; returns 2 when tcpdump
# dropped packets (a loaded machine: the run is repeated, up to 3 times).
capture() {
	pick_port
	rm -f "$pcap"
	tcpdump -i lo -s 0 --immediate-mode -U -B 32768 -w "$pcap" "tcp port $port" \
		2>"$work/tcpdump.err" &
	tdpid=$!
	for _ in $(seq 1 100); do
		grep -q "listening on" "$work/tcpdump.err" 2>/dev/null && break
		kill -0 "$tdpid" 2>/dev/null || break
		sleep 0.05
	done
	grep -q "listening on" "$work/tcpdump.err" ||
		skip "tcpdump cannot capture on lo: $(head -1 "$work/tcpdump.err")"
	BIDI_PORT=$port "$bin" >"$work/traffic.out" 2>&1
	rc=$?
	cat "$work/traffic.out"
	[ $rc -eq 0 ] || fail "traffic program failed ($rc)"
	# Let tcpdump write out what it has, then stop it.
	last=-1
	for _ in $(seq 1 40); do
		size=$(stat -c %s "$pcap" 2>/dev/null || echo 0)
		[ "$size" = "$last" ] && break
		last=$size
		sleep 0.1
	done
	kill -INT "$tdpid"
	wait "$tdpid" 2>/dev/null
	tdpid=
	dropped=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$work/tcpdump.err")
	[ "${dropped:-x}" = 0 ] && return 0
	echo "tcpdump dropped ${dropped:-?} packets"
	return 2
}
ok=
for attempt in 1 2 3; do
	if capture; then
		ok=1
		break
	fi
	sleep 1
done
[ -n "$ok" ] || fail "tcpdump dropped packets in 3 captures: capture incomplete"

# Our programs are unknown to Wireshark: have rpc decode them anyway.
ts() { tshark -n -2 -r "$pcap" -o rpc.dissect_unknown_programs:TRUE "$@" 2>/dev/null; }
malformed=$(ts -Y "_ws.malformed" | wc -l)
[ "$malformed" -eq 0 ] || fail "$malformed malformed frames"
bad_crc=$(ts -V | grep -ci "bad crc")
good_crc=$(ts -V | grep -ci "good crc")
[ "$bad_crc" -eq 0 ] || fail "$bad_crc FPDUs with a bad CRC"
[ "$good_crc" -gt 0 ] || fail "no FPDU with a checked CRC (CRC not negotiated?)"

# One line per RPC message: srcport dstport xid msgtyp program
ts -Y rpc -T fields -E separator=' ' -e tcp.srcport -e tcp.dstport -e rpc.xid -e rpc.msgtyp \
	-e rpc.program >"$work/rpc.txt"
[ -s "$work/rpc.txt" ] || fail "tshark decoded no rpc message"
CB=1073744669  # 0x40000b1d
BT=536873757   # 0x20000b1d
GATE=723324929 # 0x2b1d1001
count() { awk "$1" "$work/rpc.txt" | wc -l; }
# Direction is judged by who sent the message. (Wireshark pairs replies
# with calls by XID alone, so with the same XID live both ways it may name
# the wrong program on a reply: programs are checked on calls only.)
rev_calls=$(count "\$1==$port && \$4==0 && \$5==$CB")
rev_replies=$(count "\$2==$port && \$4==1")
fwd_calls=$(count "\$2==$port && \$4==0 && (\$5==$BT || \$5==$GATE)")
fwd_replies=$(count "\$1==$port && \$4==1")
wrong=$(count "\$4==0 && ((\$1==$port && \$5!=$CB) || (\$2==$port && \$5==$CB))")
gate=$(count "\$2==$port && \$4==0 && \$5==$GATE")
# every reverse reply answers a reverse call (same XID), every forward one a forward call
unpaired=$(awk -v p="$port" '$4==0 { if ($1==p) rc[$3]=1; else fc[$3]=1 }
	$4==1 { if ($2==p) rr[$3]=1; else fr[$3]=1 }
	END { n=0; for (x in rr) if (!(x in rc)) n++; for (x in fr) if (!(x in fc)) n++; print n }' "$work/rpc.txt")
both=$(awk -v p="$port" '$4==0 { if ($1==p) r[$3]=1; else f[$3]=1 } END { n=0; for (x in r) if (x in f) n++; print n }' "$work/rpc.txt")
echo "reverse calls $rev_calls, reverse replies $rev_replies; forward calls $fwd_calls (gate $gate), forward replies $fwd_replies; XIDs called both ways $both; FPDUs with good CRC $good_crc"
[ "$rev_calls" -eq 7 ] || fail "expected 7 reverse calls from the server, saw $rev_calls"
[ "$rev_replies" -eq 7 ] || fail "expected 7 reverse replies from the client, saw $rev_replies"
[ "$wrong" -eq 0 ] || fail "$wrong calls of a program in the wrong direction"
[ "$unpaired" -eq 0 ] || fail "$unpaired replies whose XID was not called in their direction"
[ "$gate" -ge 1 ] || fail "no BC_ENABLE call seen"
[ "$fwd_calls" -ge 5 ] || fail "too few forward calls ($fwd_calls)"
[ "$fwd_replies" -eq "$fwd_calls" ] || fail "forward replies $fwd_replies != calls $fwd_calls"
[ "$both" -ge 4 ] || fail "expected >= 4 XIDs used by calls in both directions, saw $both"
echo "PASS"
