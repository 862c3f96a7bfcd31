#!/bin/bash
# test_interop_nfs41d (issue 33): the guest's Linux kernel NFSv4.1 client
# (xprtrdma over siw, with its backchannel) mounts rpcrdma-nfs41d running
# here on the host (guest/nfs41d-client.sh, one phase at a time through the
# guest's /peer/cmd-sh-* hook). Asserts:
#   - mount vers=4.1,proto=rdma; the server's CB_NULL probe after
#     CREATE_SESSION answered by the kernel's backchannel (cb_null_ok);
#   - a read delegation held by the guest is recalled when our own client
#     (test_nfs41d_local --append) opens the file for writing: one
#     CB_SEQUENCE + CB_RECALL answered NFS4_OK, the kernel's DELEGRETURN
#     before that OPEN completes (first OPEN NFS4_OK, no NFS4ERR_DELAY),
#     and the guest then reads both writers' data;
#   - the capture of those phases decodes with tshark -2 (rpcordma, the NFS
#     callback program: the CB_COMPOUND { CB_SEQUENCE, CB_RECALL } call and
#     reply; as many reverse replies from the guest as the server counted),
#     no RDMA_ERROR and no bad MPA CRC;
#   - a tree of NFS41D_FILES (default 60, 0 B .. 2 MiB) files copied in matches the
#     guest's checksums on the host, and copied out after a remount;
#   - rename, hard links, symlinks, chmod, truncate, rm, rmdir;
#   - dd of NFS41D_DD_MB (default 64) MiB written and read (figures in
#     nfs41d/perf.txt), its data in Read and Write chunks (server counters);
#   - the connection cut under the mount while the server lives (the
#     socat that carries the guest's connection on the host, stopped while
#     the server sends a CB_RECALL into it, then killed): the kernel
#     reconnects when written to and binds its back channel to the new
#     connection (BIND_CONN_TO_SESSION, the server's binds counter, or a
#     new session); the recall, re-sent there with its XID (the server's
#     reverse retransmits; a capture on the host's lo shows the XID on both
#     connections), is answered and the delegation returned; a second
#     recall on the new connection is answered too; data written after the
#     cut is intact;
#   - the server killed and restarted under the mounted client: a file
#     written before reads back, a new one is written after.
# usage: nfs41d-test.sh STATE_DIR RPCRDMA_NFS41D GUEST_SCRIPT SECOND_CLIENT
set -uo pipefail
state=${1:?usage}
bin=${2:?usage}
gscript=${3:?usage}
client2=${4:?usage}
res=$state/nfs41d
gname=nfs41d genv="NFS41D_FILES=${NFS41D_FILES:-60} NFS41D_DD_MB=${NFS41D_DD_MB:-64}" gtail=30
# shellcheck source=tests/interop/nfsd-test-lib.sh
. "$(dirname "$0")/nfsd-test-lib.sh"
guest_env
exp=$res/export
printf 'first line\n' >"$exp/deleg.txt"
printf 'before the cut\n' >"$exp/cut.txt"
printf 'before the cut\n' >"$exp/cut2.txt"

start_server() {
	# --no-root-squash: the guest's root owns what it copies in
	# --cb-wait: a recall waits up to 30 s for the guest to reconnect
	start_nfsd rpcrdma-nfs41d --export "$exp" --port "$NFS3D_PORT" --bind 127.0.0.1 \
		--no-root-squash --cb-wait 30000
}

# The dd went by chunks (xdr/nfs41.x: READ and WRITE data are
# rpcrdma_bulk): the server pulled at least the file by RDMA Read from the
# kernel's Read chunks and pushed at least the file into its Write chunks.
dd_chunks() {
	local c b=$((${NFS41D_DD_MB:-64} * 1048576))
	c=$(counters)
	echo "after dd: $(head -1 <<<"$c")"
	[ "$(val read_bytes "$c")" -ge "$b" ] && [ "$(val write_bytes "$c")" -ge "$b" ] ||
		fail "dd: the data did not travel in Read and Write chunks"
}

# Connection cut under the mount (issue 33), see the top. The guest's
# connection reaches the server through one socat (nfs3d-fwd.sh) per
# connection; the one connected to the server's port now is the mount's.
fwd_pid() {
	ss -Htnp state established "( dport = :$NFS3D_PORT )" | grep -o 'socat",pid=[0-9]*' |
		cut -d= -f2 | sort -u
}
cut_connection() {
	local c0 c fwd apid i cs0 rt0 b0 s0
	phase cut-open 60
	c0=$(counters)
	[ "$(val delegations "$c0")" -ge 2 ] || fail "cut: no read delegation of cut.txt: $c0"
	fwd=$(fwd_pid)
	[ "$(wc -w <<<"$fwd")" = 1 ] || fail "cut: the guest's forwarding process not found ($fwd)"
	cs0=$(val calls_sent "$(grep '^bc_stats' <<<"$c0")")
	rt0=$(val retransmits "$(grep '^bc_stats' <<<"$c0")")
	b0=$(val binds "$c0")
	s0=$(val sessions "$c0")
	kill -STOP "$fwd"
	"$client2" --append-retry "$NFS3D_PORT" cut.txt "appended after the cut" \
		>"$res/cut-append.txt" 2>&1 &
	apid=$!
	# the CB_RECALL is sent (into the stopped forwarder), then the cut
	for i in $(seq 1 100); do
		c=$(counters)
		[ "$(val calls_sent "$(grep '^bc_stats' <<<"$c")")" -gt "$cs0" ] && break
		sleep 0.1
	done
	[ "$i" -lt 100 ] || { kill -KILL "$fwd"; fail "cut: no CB_RECALL sent: $c"; }
	sleep 0.5
	kill -KILL "$fwd"
	echo "cut: the guest's connection cut (forwarder $fwd killed) with the recall of cut.txt on it"
	phase cut-io 180
	wait "$apid" || { cat "$res/cut-append.txt"; fail "cut: the second client's OPEN/WRITE"; }
	cat "$res/cut-append.txt"
	c=$(counters)
	echo "after the cut: $c"
	[ "$(val binds "$c")" -gt "$b0" ] || [ "$(val sessions "$c")" -gt "$s0" ] ||
		fail "cut: the back channel was not bound again (no BIND_CONN_TO_SESSION, no new session)"
	[ "$(val retransmits "$(grep '^bc_stats' <<<"$c")")" -gt "$rt0" ] ||
		fail "cut: the recall in flight was not re-sent on the new connection"
	# a recall the kernel answered NFS4ERR_DELAY (while it bound the new
	# connection) was sent again: counted in recall_delays
	[ "$(val recalls_ok "$c")" = $(($(val recalls "$c") - $(val recall_delays "$c"))) ] &&
		[ "$(val recalls_fail "$c")" = 0 ] || fail "cut: a recall not answered NFS4_OK"
	[ "$(val delegreturns "$c")" -ge 2 ] || fail "cut: no DELEGRETURN of cut.txt"
	[ "$(printf 'before the cut\nappended after the cut')" = "$(cat "$exp/cut.txt")" ] ||
		fail "cut: host: cut.txt"
	sha256sum <"$exp/cut-new" | cmp - "$gout/nfs41d-cut.sha" || fail "cut: host: cut-new"
	phase cut-check 60
	"$client2" --append "$NFS3D_PORT" cut2.txt "appended on the new connection" \
		>"$res/cut2-append.txt" || fail "cut: the recall on the new connection"
	cat "$res/cut2-append.txt"
	phase cut-check2 60
	c=$(counters)
	[ "$(val recalls_ok "$c")" = $(($(val recalls "$c") - $(val recall_delays "$c"))) ] &&
		[ "$(val delegreturns "$c")" -ge 3 ] ||
		fail "cut: the recall on the new connection: $c"
	echo "cut: $(grep '^nfs41' <<<"$c")"
	cut_xids
}
# The host's capture of lo (server <-> forwarders): the CB_COMPOUND of the
# recall held up by the cut goes on two TCP connections with one XID.
host_capture_start() {
	command -v tcpdump >/dev/null && command -v tshark >/dev/null || return 0
	tcpdump -i lo -s 0 -U -w "$res/host-lo.pcap" "tcp port $NFS3D_PORT" \
		>"$res/host-lo.log" 2>&1 &
	hcap=$!
	sleep 1
}
cut_xids() {
	[ -n "${hcap:-}" ] || { echo "cut: tcpdump or tshark missing: XIDs not checked"; return 0; }
	sleep 1
	kill -INT "$hcap"
	wait "$hcap"
	hcap=""
	tshark -n -2 -r "$res/host-lo.pcap" -Y 'rpc.msgtyp == 0 && rpc.program == 1073741824 && nfs.cb.operation == 4' \
		-T fields -e tcp.stream -e rpc.xid >"$res/cut-xids.txt" 2>/dev/null
	local twice again
	twice=$(sort -u "$res/cut-xids.txt" | awk -F'\t' '{ n[$2]++ } END { for (x in n) if (n[x] > 1) print x }')
	echo "cut: CB_RECALL calls on the host's lo (stream, xid): $(tr "\t\n" ", " <"$res/cut-xids.txt")"
	[ "$(wc -w <<<"$twice")" = 1 ] || fail "cut: no CB_RECALL XID on two connections in the host's capture"
	echo "cut: CB_RECALL XID $twice sent on two connections"
	# the connection it went again on is the one the kernel bound to the
	# session's back channel (BIND_CONN_TO_SESSION, operation 41)
	again=$(awk -F'\t' -v x="$twice" '$2 == x { s = $1 } END { print s }' "$res/cut-xids.txt")
	tshark -n -2 -r "$res/host-lo.pcap" -Y "rpc.msgtyp == 0 && nfs.opcode == 41 && tcp.stream == $again" \
		-T fields -e frame.number -e rpc.xid >"$res/cut-bind.txt" 2>/dev/null
	[ -s "$res/cut-bind.txt" ] || fail "cut: no BIND_CONN_TO_SESSION on the connection of the re-sent recall"
	echo "cut: BIND_CONN_TO_SESSION on that connection (frame, xid): $(tr "\t\n" ", " <"$res/cut-bind.txt")"
}

hcap=""
host_capture_start
start_server
phase mount 90
c=$(counters)
echo "after mount: $c"
[ "$(val cb_null_ok "$c")" -ge 1 ] && [ "$(val cb_null_fail "$c")" = 0 ] ||
	fail "the backchannel probe (CB_NULL) was not answered"

# delegation recall by a second client
phase deleg-open 60
c=$(counters)
[ "$(val delegations "$c")" -ge 1 ] || fail "no read delegation handed to the guest: $c"
"$client2" --append "$NFS3D_PORT" deleg.txt "appended by the second client" | tee "$res/append.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail "the second client's OPEN/WRITE"
grep -q 'OPEN deleg.txt for writing: status 0 ' "$res/append.txt" || fail "second client's OPEN"
c=$(counters)
echo "after the recall: $c"
[ "$(val recalls "$c")" -ge 1 ] && [ "$(val recalls_ok "$c")" = "$(val recalls "$c")" ] &&
	[ "$(val recalls_fail "$c")" = 0 ] || fail "CB_RECALL not answered NFS4_OK by the kernel"
[ "$(val delegreturns "$c")" -ge 1 ] && [ "$(val open_delay "$c")" = 0 ] ||
	fail "the kernel did not return the delegation before the conflicting OPEN"
[ "$(printf 'first line\nappended by the second client')" = "$(cat "$exp/deleg.txt")" ] ||
	fail "host: deleg.txt"
phase deleg-check 60
cut_connection
phase capture-stop 30
c=$(counters)

if command -v tshark >/dev/null && [ -s "$gout/nfs41d.pcap" ]; then
	capture_counts nfs41d.pcap
	# reverse calls are the RPC calls the host sends, reverse replies the
	# RPC replies the guest sends (its forward traffic is calls only).
	# Wireshark 4.0 dissects one RPC-over-RDMA message per TCP segment:
	# a CB_NULL sent right behind the CREATE_SESSION reply, in the same
	# segment, is not decoded, nor a reply that shares a segment; the
	# CB_NULLs are counted by the server (cb_null_ok above), and the
	# capture cannot hold more reverse replies than the server received.
	"${ts[@]}" -Y 'rpcordma && rpc' -T fields -e frame.number -e ip.src -e rpc.msgtyp \
		-e rpc.program -e nfs.cb.operation >"$res/capture-rpc.txt" 2>/dev/null
	nrevrep=$(awk -F'\t' '$2 == "10.0.2.15" && $3 == 1' "$res/capture-rpc.txt" | wc -l)
	nrecall=$(awk -F'\t' '$2 == "10.0.2.100" && $3 == 0 && $4 == 1073741824 && $5 == "11,4"' \
		"$res/capture-rpc.txt" | wc -l)
	# (a reply to one may hold CB_SEQUENCE alone: NFS4ERR_DELAY, see the cut)
	nrecallr=$(awk -F'\t' '$2 == "10.0.2.15" && $3 == 1 && $5 ~ /^11(,4)?$/' "$res/capture-rpc.txt" | wc -l)
	bcrep=$(val replies "$(grep '^bc_stats' <<<"$c")")
	echo "capture: $nrpc rpcordma frames, $bad bad CRC32, $nerr RDMA_ERROR;" \
		"$nrevrep reverse replies (server: $bcrep), CB_COMPOUND {CB_SEQUENCE, CB_RECALL}:" \
		"$nrecall call(s), $nrecallr reply(ies)"
	[ "$bad" = 0 ] || fail "capture: $bad FPDUs with a bad CRC32"
	[ "$nerr" = 0 ] || fail "capture: $nerr RDMA_ERROR messages"
	[ "$nrevrep" -ge "$nrecallr" ] && [ "$nrevrep" -le "$bcrep" ] ||
		fail "capture: reverse replies decoded ($nrevrep) beyond the server's count"
	[ "$nrecall" -ge 1 ] && [ "$nrecallr" = "$nrecall" ] || fail "capture: no CB_RECALL call and reply decoded"
else
	echo "capture: tshark or the capture missing: not checked"
fi

phase tree 900
(cd "$exp/tree" && sha256sum -c --quiet "$gout/nfs41d-src.sha") || fail "host: tree checksums"
echo "host: $(wc -l <"$gout/nfs41d-src.sha") files of the tree match the guest's checksums"
phase meta 120
m=$exp/meta
[ "$(stat -c %i "$m/a")" = "$(stat -c %i "$m/hard2")" ] || fail "host: hard link"
[ "$(readlink "$m/sym")" = a ] || fail "host: symlink"
[ "$(cat "$m/moved/y")" = x ] && [ ! -e "$m/sub" ] && [ ! -e "$m/hard" ] || fail "host: rename"
[ "$(stat -c %a "$m/a")" = 600 ] && [ "$(stat -c %s "$m/t")" = 12345 ] || fail "host: chmod, truncate"
[ ! -e "$m/rmme" ] && [ ! -e "$m/gone" ] || fail "host: rm, rmdir"
echo "host: metadata results as expected"
phase dd 900
cp "$gout/nfs41d-perf.txt" "$res/perf.txt"
ddmb=${NFS41D_DD_MB:-64}
[ "$(stat -c %s "$exp/dd.bin")" = $((ddmb * 1048576)) ] || fail "host: dd.bin size"
cmp -n $((ddmb * 1048576)) "$exp/dd.bin" /dev/zero || fail "host: dd.bin content"
dd_chunks

# the server restarted under the mounted client
phase restart-write 120
kill -KILL "$spid"
wait "$spid" 2>/dev/null
sleep 1
start_server
phase restart-check 300
c=$(counters)
echo "restarted server: $c"
[ "$(val sessions "$c")" -ge 1 ] || fail "no new session after the restart"
phase umount 60

kill -TERM "$spid"
wait "$spid"
src=$?
spid=""
[ "$src" = 0 ] || fail "rpcrdma-nfs41d exit $src after SIGTERM"
print_figures
echo "PASS"
