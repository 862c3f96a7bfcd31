#!/usr/bin/env bash
# Wire check of reliable replies in Version One, RFC 5666 mode (ctest label
# wire): test_rr's wire mode (one 100000-byte reply of unknown size, one
# small one) captured on lo and decoded by tshark in two passes (-2).
# Asserts, in the server-to-client direction, an RDMA_NOMSG reply with a
# Read list; the client's RDMA Read Request and the server's Read
# Response; then the client's RDMA_DONE with the reply's XID; and no
# malformed frame.
# Usage: rr_wire.sh TEST_RR_BINARY     exit 0 pass, 1 fail, 77 skip
set -uo pipefail

bin=${1:?usage: rr_wire.sh TEST_RR_BINARY}
# shellcheck source-path=SCRIPTDIR source=../lib/wire_capture.sh
. "$(dirname "$0")/../lib/wire_capture.sh"

wire_init rr "$bin"
wire_capture RR_WIRE_PORT ||
	skip "tcpdump dropped packets in 5 captures (machine too loaded to capture)"

malformed=$(ts -Y _ws.malformed -T fields -e frame.number | wc -l)
[ "$malformed" -eq 0 ] || fail "$malformed malformed frames"
ts -Y rpcordma -T fields -E separator=, -e frame.number -e tcp.srcport -e rpcordma.msg_type \
	-e rpcordma.xid -e rpcordma.reads_count >"$work/rdma.txt"
ts -Y iwarp_rdma -T fields -E separator=, -e frame.number -e tcp.srcport -e iwarp_rdma.opcode \
	>"$work/rdmap.txt"
# the server's replies come from $port
nomsg=$(awk -F, -v p="$port" '$2 == p && $3 == 1 && $5 > 0 { print $1 "," $4; exit }' "$work/rdma.txt")
[ -n "$nomsg" ] || fail "no RDMA_NOMSG reply with a Read list from the server"
nframe=${nomsg%%,*} xid=${nomsg#*,}
rreq=$(awk -F, -v p="$port" -v f="$nframe" '$1 > f && $2 != p && $3 == 1 { print $1; exit }' \
	"$work/rdmap.txt")
[ -n "$rreq" ] || fail "no RDMA Read Request from the client after frame $nframe"
rresp=$(awk -F, -v p="$port" -v f="$rreq" '$1 > f && $2 == p && $3 == 2 { print $1; exit }' \
	"$work/rdmap.txt")
[ -n "$rresp" ] || fail "no RDMA Read Response from the server after frame $rreq"
done_f=$(awk -F, -v p="$port" -v f="$rresp" -v x="$xid" \
	'$1 > f && $2 != p && $3 == 3 && $4 == x { print $1; exit }' "$work/rdma.txt")
[ -n "$done_f" ] || fail "no RDMA_DONE for xid $xid after the Read Response (frame $rresp)"
echo "RDMA_NOMSG + Read list frame $nframe (xid $xid), Read Request $rreq," \
	"Read Response $rresp, RDMA_DONE $done_f"
echo "ok"
