#!/usr/bin/env bash
# Wire check of the RPC-over-RDMA Version One transport (ctest label wire).
# Runs test_xprt_wire_traffic (one call of every message type: Short, Read
# chunk, Write chunk filled and partly written, Long Call, Long Reply,
# RDMA_ERROR) on a free port with MPA CRC on, captures lo with tcpdump and
# decodes the capture with tshark in two passes (-2). Asserts:
#   - tcpdump dropped nothing; no FPDU with a bad CRC32c, and CRCs were
#     checked at all;
#   - every RDMA_MSG / RDMA_NOMSG message decodes as rpcordma, and its RPC
#     message decodes as rpc (in the same frame when inline, in the frame
#     where Wireshark reassembled the Read / Reply chunk otherwise);
#   - the message mix is the one the program sent: 6 RPC calls, 5 RPC
#     replies, 1 RDMA_ERROR ERR_CHUNK, 3 RDMA_NOMSG, a Read list in a
#     call, Write lists in 2 replies;
#   - no malformed iwarp_mpa / iwarp_ddp_rdmap / rpcordma layer. Wireshark
#     4.0 mis-reassembles a reply whose Write chunk offered more bytes than
#     were written and may then flag the RPC payload Malformed: a malformed
#     rpc layer in a reply carrying a Write list is reported and counted
#     separately as that known Wireshark issue, not as a failure; any other
#     malformed frame fails.
# Usage: xprt_wire.sh TRAFFIC_BINARY     exit 0 pass, 1 fail, 77 skip
set -uo pipefail

bin=${1:?usage: xprt_wire.sh TRAFFIC_BINARY}
# shellcheck source-path=SCRIPTDIR source=../lib/wire_capture.sh
. "$(dirname "$0")/../lib/wire_capture.sh"

wire_init xprt "$bin"
wire_capture XPRT_WIRE_PORT ||
	skip "tcpdump dropped packets in 5 captures (machine too loaded to capture)"

# CRC: every FPDU checked, none bad.
ts -V >"$work/verbose.txt"
bad_crc=$(grep -ci "bad crc" "$work/verbose.txt")
good_crc=$(grep -ci "good crc" "$work/verbose.txt")
[ "$bad_crc" -eq 0 ] || fail "$bad_crc FPDUs with a bad CRC32c"
[ "$good_crc" -gt 0 ] || fail "no FPDU with a checked CRC (CRC not negotiated?)"

# Malformed frames, by the layer that was malformed.
known=0
ts -Y _ws.malformed -T fields -E separator=' ' -e frame.number -e frame.protocols \
	-e rpc.msgtyp -e rpcordma.writes_count >"$work/malformed.txt"
while read -r num protos msgtyp writes; do
	[ -n "$num" ] || continue
	# the layer before the malformed marker threw
	layer=$(echo "$protos" | sed 's/:_ws\.malformed.*//; s/.*://')
	if [ "$layer" = data ]; then
		layer=$(echo "$protos" | sed 's/:data:_ws\.malformed.*//; s/.*://')
	fi
	if [ "$layer" = rpc ] && [ "${msgtyp:-}" = 1 ] && [ "${writes:-0}" != 0 ]; then
		echo "KNOWN Wireshark 4.0 issue: frame $num, an RPC reply with a Write list" \
			"(Write chunk offered more than written, mis-reassembled): rpc payload" \
			"flagged Malformed"
		known=$((known + 1))
		continue
	fi
	fail "frame $num malformed in layer '$layer' ($protos)"
done <"$work/malformed.txt"

# Every RDMA_MSG / RDMA_NOMSG carries an RPC message tshark decodes.
ts -Y rpcordma -T fields -E separator=, -e frame.number -e tcp.srcport -e rpcordma.msg_type \
	-e rpcordma.xid -e rpcordma.reads_count -e rpcordma.writes_count -e rpcordma.errcode \
	>"$work/rdma.txt"
ts -Y rpc -T fields -E separator=, -e frame.number -e tcp.srcport -e rpc.xid -e rpc.msgtyp \
	>"$work/rpc.txt"
[ -s "$work/rdma.txt" ] || fail "tshark decoded no rpcordma message"
undecoded=$(awk -F, 'NR==FNR { have[$2 " " $3] = 1; next }
	($3 == 0 || $3 == 1) && !(($2 " " $4) in have) { print $1; n++ }
	END { exit n > 0 }' "$work/rpc.txt" "$work/rdma.txt") ||
	fail "rpcordma messages without a decoded rpc message: frames $undecoded"
cnt() { awk -F, "$1" "$2" | wc -l; }
calls=$(cnt '$4 == 0' "$work/rpc.txt")
replies=$(cnt '$4 == 1' "$work/rpc.txt")
errs=$(cnt '$3 == 4 && $7 == 2' "$work/rdma.txt")
nomsg=$(cnt '$3 == 1' "$work/rdma.txt")
readl=$(cnt '$3 == 0 && $5 > 0' "$work/rdma.txt")
writel=$(cnt '$3 != 4 && $6 > 0' "$work/rdma.txt")
echo "rpc calls $calls, replies $replies; RDMA_ERROR ERR_CHUNK $errs; RDMA_NOMSG $nomsg;" \
	"RDMA_MSG with a Read list $readl; messages with a Write list $writel;" \
	"FPDUs with good CRC $good_crc; known Wireshark Write-chunk issue $known"
[ "$calls" -eq 6 ] || fail "expected 6 rpc calls, saw $calls"
[ "$replies" -eq 5 ] || fail "expected 5 rpc replies, saw $replies"
[ "$errs" -eq 1 ] || fail "expected 1 RDMA_ERROR ERR_CHUNK, saw $errs"
[ "$nomsg" -eq 3 ] || fail "expected 3 RDMA_NOMSG, saw $nomsg"
[ "$readl" -ge 1 ] || fail "no RDMA_MSG with a Read list"
# the 3 calls offering a Write chunk (2 READs) and their 2 replies
[ "$writel" -ge 4 ] || fail "expected Write lists in 2 calls and 2 replies, saw $writel"
echo "PASS"
