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
# shellcheck source-path=SCRIPTDIR source=../lib/wire_capture.sh
. "$(dirname "$0")/../lib/wire_capture.sh"

wire_init bidi "$bin"
wire_capture BIDI_PORT 32768 || fail "tcpdump dropped packets in 5 captures: capture incomplete"

# Our programs are unknown to Wireshark: ts has rpc decode them anyway.
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
