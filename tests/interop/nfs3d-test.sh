#!/bin/bash
# test_interop_nfs3d (issue 17): the guest's Linux kernel NFS client
# (xprtrdma over siw) mounts rpcrdma-nfs3d running here on the host, and
# uses it with ordinary commands (guest/nfs3d-client.sh, one phase at a
# time through the guest's /peer/cmd-sh-* hook). Asserts:
#   - mount over RDMA with MOUNT v3 over TCP; metadata commands (ls of a
#     2,000-entry directory, chmod, chown, truncate, touch, ln, ln -s, mv,
#     rm, rmdir, mkdir) give the expected results in the guest and in the
#     export on the host;
#   - a tree of NFS3D_FILES (default 200; issue 17 asks 500, which passes
#     but takes minutes under emulation) files of mixed sizes (0 B .. 8 MiB)
#     copied in matches the guest's checksums on the host, and copied back
#     out (after a remount) matches again; tar and find see every file;
#   - dd of NFS3D_DD_MB (default 16; 64 in the issue) MiB each way
#     (figures in nfs3d/perf.txt, next to the same dd against the guest's
#     own nfsd);
#   - the server killed (SIGKILL) and restarted in the middle of a 16 MiB
#     copy: the client reconnects and the file is intact;
#   - the client's RPC-over-RDMA counters and the server's show Read,
#     Write and Reply chunks used; the capture of the mount/metadata/chunk
#     phases decodes with no Bad CRC32 and no RDMA_ERROR.
# usage: nfs3d-test.sh STATE_DIR RPCRDMA_NFS3D GUEST_SCRIPT
set -uo pipefail
state=${1:?usage}
bin=${2:?usage}
gscript=${3:?usage}
res=$state/nfs3d
fail() {
	echo "FAIL: $*"
	[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
	exit 1
}
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
mkdir -p "$res"
exp=$res/export
mkdir -p "$exp/dir2000"
for i in $(seq 1 2000); do : >"$exp/dir2000/f$i"; done
cp "$gscript" "$share/nfs3d-client.sh"

spid=""
starts=0
start_server() {
	starts=$((starts + 1))
	"$bin" --export "$exp" --port "$NFS3D_PORT" --mount-port "$NFS3D_MOUNT_PORT" \
		--bind 127.0.0.1 >"$res/server-$starts.out" 2>"$res/server-$starts.err" &
	spid=$!
	for _ in $(seq 1 100); do
		grep -q '^ready nfs=' "$res/server-$starts.out" && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$res/server-$starts.err"
	fail "rpcrdma-nfs3d did not start"
}

# Run guest phase $1 (bounded by $2 seconds) and show its log.
n=0
phase() {
	local p=$1 limit=$2 t0
	n=$((n + 1))
	rm -f "$gout/nfs3d-$p.rc"
	t0=$(date +%s.%N)
	printf '(NFS3D_FILES=%s NFS3D_DD_MB=%s setsid bash /peer/nfs3d-client.sh %s </dev/null >/dev/null 2>&1 &)' \
		"${NFS3D_FILES:-200}" "${NFS3D_DD_MB:-16}" "$p" >"$share/cmd-sh-nfs3d-$n"
	for _ in $(seq 1 $((limit * 5))); do
		[ -s "$gout/nfs3d-$p.rc" ] && break
		sleep 0.2
	done
	echo "--- phase $p ($(echo "$(date +%s.%N) - $t0" | bc) s)"
	tail -40 "$gout/nfs3d-$p.log" 2>/dev/null
	[ -s "$gout/nfs3d-$p.rc" ] || fail "phase $p: no answer within ${limit}s"
	[ "$(cat "$gout/nfs3d-$p.rc")" = 0 ] || fail "phase $p: exit $(cat "$gout/nfs3d-$p.rc")"
}

start_server
cat "$res/server-1.out"
phase mount 60
phase meta 120
# the export as the host sees it after the metadata phase
m=$exp/meta
[ "$(stat -c %a "$m/a")" = 600 ] || fail "host: mode of meta/a"
[ "$(stat -c %u:%g "$m/t")" = 1234:5678 ] || fail "host: owner of meta/t"
[ "$(stat -c %s "$m/t")" = 12345 ] || fail "host: size of meta/t"
[ "$(stat -c %i "$m/a")" = "$(stat -c %i "$m/hard")" ] || fail "host: hard link"
[ "$(readlink "$m/sym")" = a ] || fail "host: symlink"
[ "$(cat "$m/moved/y")" = x ] && [ ! -e "$m/sub" ] && [ ! -e "$m/moved/x" ] || fail "host: rename"
[ ! -e "$m/rmme" ] && [ ! -e "$m/gone" ] || fail "host: remove/rmdir"
echo "host: metadata results as expected"
phase chunks 120
(cd "$exp" && sha256sum -c --quiet "$gout/nfs3d-c2m.sha") || fail "host: c2m checksum"
phase tree 300
(cd "$exp/tree" && sha256sum -c --quiet "$gout/nfs3d-src.sha") || fail "host: tree checksums"
echo "host: $(wc -l <"$gout/nfs3d-src.sha") files of the tree match the guest's checksums"
phase back 300
phase dd 300
cp "$gout/nfs3d-perf.txt" "$res/perf.txt"
[ "$(stat -c %s "$exp/dd.bin")" = $((${NFS3D_DD_MB:-16} * 1048576)) ] || fail "host: dd.bin size"
cmp -n $((${NFS3D_DD_MB:-16} * 1048576)) "$exp/dd.bin" /dev/zero || fail "host: dd.bin content"

# kill the server in the middle of a copy, restart it on the same ports
phase restart-start 60
for _ in $(seq 1 300); do
	[ "$(stat -c %s "$exp/r16" 2>/dev/null || echo 0)" -ge 2097152 ] && break
	sleep 0.1
done
echo "restart: killing the server with $(stat -c %s "$exp/r16" 2>/dev/null) bytes of r16 written"
kill -KILL "$spid"
wait "$spid" 2>/dev/null
sleep 1
start_server
for _ in $(seq 1 900); do
	[ -s "$gout/nfs3d-restart-copy.rc" ] && break
	sleep 0.2
done
[ "$(cat "$gout/nfs3d-restart-copy.rc" 2>/dev/null)" = 0 ] || fail "copy across the restart did not complete"
(cd "$exp" && sha256sum -c --quiet "$gout/nfs3d-r16.sha") || fail "host: r16 checksum after the restart"
phase restart-check 120
echo "restart: the copy completed across the restart, checksums equal"

phase stats 60
cp "$gout/nfs3d-mountstats.txt" "$res/mountstats.txt"
kill -TERM "$spid"
wait "$spid"
src=$?
spid=""
[ "$src" = 0 ] || fail "rpcrdma-nfs3d exit $src after SIGTERM"
stats=$(grep '^stats ' "$res/server-$starts.err")
echo "server (since its restart): $stats"
echo "server (before the kill): killed, no counters"
val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$stats"; }
# the restarted server's counters: the restart check and the stats phase
# used every chunk type on its connection
for c in read_chunks write_chunks reply_chunks; do
	[ "$(val $c)" -gt 0 ] || fail "server: $c = 0"
done
[ "$(val err_chunk_tx)" = 0 ] && [ "$(val err_vers_tx)" = 0 ] || fail "server sent RDMA_ERROR"
# xprt: rdma srcport bind connect connect_time idle sends recvs bad_xids req_u bklog_u
#       read_chunks write_chunks reply_chunks ...
x=$(grep -m1 'xprt:[[:space:]]*rdma' "$res/mountstats.txt")
echo "client: $x"
read -r -a f <<<"${x#*rdma}"
[ "${#f[@]}" -ge 13 ] || fail "no rdma xprt line in mountstats"
echo "client chunks: read ${f[10]} write ${f[11]} reply ${f[12]}"
[ "${f[10]}" -gt 0 ] && [ "${f[11]}" -gt 0 ] && [ "${f[12]}" -gt 0 ] ||
	fail "the client did not use Read, Write and Reply chunks"

# capture of the mount, metadata and chunk phases
if command -v tshark >/dev/null && [ -s "$gout/nfs3d.pcap" ]; then
	cp "$gout/nfs3d.pcap" "$res/nfs3d.pcap"
	ts=(tshark -n -2 -r "$res/nfs3d.pcap")
	"${ts[@]}" -Y iwarp_mpa.crc_check -O iwarp_mpa >"$res/capture-crc.txt" 2>/dev/null
	bad=$(grep -c 'Bad CRC32' "$res/capture-crc.txt")
	good=$(grep -c 'Good CRC32' "$res/capture-crc.txt")
	nerr=$("${ts[@]}" -Y 'rpcordma.msg_type == 4' 2>/dev/null | wc -l)
	ncall=$("${ts[@]}" -Y 'rpcordma' 2>/dev/null | wc -l)
	echo "capture: $ncall rpcordma frames, $good good / $bad bad CRC32, $nerr RDMA_ERROR"
	[ "$bad" = 0 ] || fail "capture: $bad FPDUs with a bad CRC32"
	[ "$nerr" = 0 ] || fail "capture: $nerr RDMA_ERROR messages"
	[ "$ncall" -gt 0 ] || fail "capture: no rpcordma frame decoded"
else
	echo "capture: tshark or the capture missing: not checked"
fi
echo "figures (MB = 10^6 bytes):"
awk '{ split($3, a, "="); split($4, b, "="); printf "  %-7s %-5s %3d MiB %8.3f s %7.2f MB/s\n", $1, $2, a[2], b[2], a[2] * 1.048576 / b[2] }' \
	"$res/perf.txt" | tee "$res/perf-summary.txt"
echo "PASS"
