#!/usr/bin/env bash
# Wire check of the Connection Configuration Protocol (RFC 5666 §6; ctest
# label wire). Runs `test_xprt_ccp wire` (our client asks CONF_RDMA as it
# connects, then sends one CONF_RDMA with its arguments cut, then one echo)
# on a free port, captures lo with tcpdump and decodes the capture with
# tshark. Asserts:
#   - no malformed frame in any layer;
#   - tshark decodes 2 ONC RPC calls of program 100417 version 1 procedure
#     1 (CONF_RDMA) inside rpcordma RDMA_MSG messages, and a reply to each
#     (same RPC XID): the first accepted SUCCESS with 12 bytes of results
#     (config_rdma_reply), the second GARBAGE_ARGS (accept_stat 4);
#   - the first CONF_RDMA is the first RPC call of the connection.
# Usage: ccp_wire.sh TEST_XPRT_CCP       exit 0 pass, 1 fail, 77 skip
set -uo pipefail

bin=${1:?usage: ccp_wire.sh TEST_XPRT_CCP}
# shellcheck source-path=SCRIPTDIR source=../lib/wire_capture.sh
. "$(dirname "$0")/../lib/wire_capture.sh"

wrapper=$(mktemp)
trap 'rm -f "$wrapper"' EXIT
printf '#!/bin/sh\nexec "%s" wire\n' "$bin" >"$wrapper"
chmod +x "$wrapper"
wire_init ccp "$wrapper"
wire_capture CCP_WIRE_PORT ||
	skip "tcpdump dropped packets in 5 captures (machine too loaded to capture)"

ts -Y _ws.malformed -T fields -e frame.number -e frame.protocols >"$work/malformed.txt"
[ -s "$work/malformed.txt" ] && fail "malformed frames: $(tr '\n' ' ' <"$work/malformed.txt")"

ts -Y 'rpcordma && rpc' -T fields -E separator=, -E occurrence=f -e frame.number -e rpcordma.msg_type \
	-e rpc.xid -e rpc.msgtyp -e rpc.program -e rpc.programversion -e rpc.procedure \
	-e rpc.state_accept -e frame.len >"$work/rpc.txt"
[ -s "$work/rpc.txt" ] || fail "tshark decoded no RPC message inside rpcordma"
cat "$work/rpc.txt"
# calls to 100417 v1 proc 1, in RDMA_MSG
ccp_xids=$(awk -F, '$4 == 0 && $5 == 100417 && $6 == 1 && $7 == 1 && $2 == 0 { print $3 }' \
	"$work/rpc.txt")
n=$(echo "$ccp_xids" | grep -c .)
[ "$n" -eq 2 ] || fail "expected 2 CONF_RDMA calls (program 100417 v1 proc 1), saw $n"
first=$(echo "$ccp_xids" | head -1)
second=$(echo "$ccp_xids" | tail -1)
first_call=$(awk -F, '$4 == 0 { print $3; exit }' "$work/rpc.txt")
[ "$first_call" = "$first" ] || fail "the first RPC call ($first_call) is not CONF_RDMA ($first)"
# replies: tshark matches them to their call (program shown on the reply)
st1=$(awk -F, -v x="$first" '$4 == 1 && $3 == x { print $8; exit }' "$work/rpc.txt")
st2=$(awk -F, -v x="$second" '$4 == 1 && $3 == x { print $8; exit }' "$work/rpc.txt")
[ "$st1" = 0 ] || fail "CONF_RDMA $first: reply accept_stat '$st1', want 0 (SUCCESS)"
[ "$st2" = 4 ] || fail "cut CONF_RDMA $second: reply accept_stat '$st2', want 4 (GARBAGE_ARGS)"
echo "CONF_RDMA calls $first (SUCCESS) and $second (GARBAGE_ARGS) decoded as ONC RPC program 100417"
echo "PASS"
