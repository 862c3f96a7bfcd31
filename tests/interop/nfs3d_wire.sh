#!/usr/bin/env bash
# Wire check of rpcrdma-nfs3d's replies (issue 37, ctest label wire):
# nfs3d_wire_traffic sends FSINFO, GETATTR, LOOKUP (found and not found),
# WRITE, READ, ACCESS, PATHCONF, READDIR and READDIRPLUS over
# RPC-over-RDMA on loopback and prints each reply as decoded by rpcgen's
# routines of xdr/nfs3.x; the capture is decoded by tshark's NFS dissector
# (under rpcordma). Asserts, reply by reply and in order, that both
# decoders see the same procedure, status, attributes (type, size,
# fileid of every fattr3), file handles, directory entries (names and
# fileids, eof), READ/WRITE counts, READ data, ACCESS rights and PATHCONF
# name_max, and that tshark found no malformed frame. READDIRPLUS's reply
# is longer than the inline threshold: the server sends it in the Reply
# chunk (its counters, printed at exit, must show one).
# Usage: nfs3d_wire.sh TRAFFIC_BINARY NFS3D_BINARY   exit 0 pass, 1 fail, 77 skip
set -uo pipefail

bin=${1:?usage: nfs3d_wire.sh TRAFFIC_BINARY NFS3D_BINARY}
export NFS3D_BIN=${2:?usage: nfs3d_wire.sh TRAFFIC_BINARY NFS3D_BINARY}
[ -x "$NFS3D_BIN" ] || { echo "FAIL: $NFS3D_BIN not found"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/wire_capture.sh
. "$(dirname "$0")/../lib/wire_capture.sh"

wire_init nfs3d "$bin"
wire_capture NFS3D_WIRE_PORT ||
	skip "tcpdump dropped packets in 5 captures (machine too loaded to capture)"

malformed=$(ts -Y _ws.malformed -T fields -e frame.number | tr '\n' ' ')
[ -z "$malformed" ] || fail "malformed frames: $malformed"

# tshark's view of every NFS reply, in the traffic program's format
# (READDIR's and READDIRPLUS's entry fields merged into one column each).
ts -Y 'nfs && rpc.msgtyp == 1' -T fields -E separator='|' -E occurrence=a -E aggregator=, \
	-e nfs.procedure_v3 -e nfs.status3 -e nfs.fattr3.type -e nfs.fattr3.size \
	-e nfs.fattr3.fileid -e nfs.fhandle -e nfs.readdir.entry3.name \
	-e nfs.readdirplus.entry.name -e nfs.readdir.entry3.fileid -e nfs.readdirplus.entry.fileid \
	-e nfs.count3 -e nfs.data -e nfs.access_rights -e nfs.pathconf.name_max -e nfs.readdir.eof |
	awk -F'|' -v OFS='|' '{ print "REPLY", $1, $2, $3, $4, $5, $6, $7 $8, $9 $10, $11, $12, $13, $14, $15 }' \
		>"$work/tshark.txt"
grep '^REPLY|' "$work/traffic.out" >"$work/rpcgen.txt"
n=$(wc -l <"$work/rpcgen.txt")
[ "$n" -eq 10 ] || fail "the traffic program printed $n replies, not 10"
if ! diff -u "$work/rpcgen.txt" "$work/tshark.txt"; then
	fail "rpcgen's decoding (-) and tshark's (+) of the server's replies differ"
fi
grep -q 'reply_chunks=1 ' "$work/traffic.out" || fail "READDIRPLUS did not come in a Reply chunk"
echo "PASS: $n replies, every field equal in rpcgen's and tshark's decoding"
exit 0
