#!/bin/bash
# test_interop_nfs3d (issue 17): the guest's Linux kernel NFS client
# (xprtrdma over siw) mounts rpcrdma-nfs3d running here on the host, and
# uses it with ordinary commands (guest/nfs3d-client.sh, one phase at a
# time through the guest's /peer/cmd-sh-* hook). Asserts:
#   - mount over RDMA with MOUNT v3 over TCP; metadata commands (ls of a
#     2,000-entry directory, chmod, chown, truncate, touch, ln, ln -s, mv,
#     rm, rmdir, mkdir) give the expected results in the guest and in the
#     export on the host;
#   - permissions for a non-root guest user (uid 4242): it cannot write
#     or chmod root's 0644 file, writes its own, cannot give it away, and a
#     WRITE after its file became root's is refused (NFS3ERR_ACCES, EACCES
#     from fsync); mkfifo, a socket and (root only) mknod c 1 3 make those
#     objects in the export;
#   - a tree of NFS3D_FILES (default 500, as issue 17 asks) files of mixed
#     sizes (0 B .. 8 MiB) copied in matches the guest's checksums on the
#     host, and copied back out (after a remount) matches again; tar and
#     find see every file;
#   - dd of NFS3D_DD_MB (default 64) MiB each way (figures in
#     nfs3d/perf.txt, next to the same dd against the guest's own nfsd);
#   - the server killed (SIGKILL) and restarted in the middle of a 16 MiB
#     copy: the client reconnects and the file is intact;
#   - the client's RPC-over-RDMA counters and both server instances'
#     (the killed one's saved by SIGUSR1 to --stats-file just before the
#     kill) show Read, Write and Reply chunks used;
#   - the capture of the mount/metadata/chunk phases (whole frames) decodes
#     with no Bad CRC32 and no RDMA_ERROR; the headers (snaplen 256) of the
#     bulk phases show Read, Write and Reply chunks and no RDMA_ERROR.
# scripts/test.sh runs the reduced size (200 files, 16 MiB) in its
# sanitizer suite: the full size once per CI run.
# usage: nfs3d-test.sh STATE_DIR RPCRDMA_NFS3D GUEST_SCRIPT
set -uo pipefail
state=${1:?usage}
bin=${2:?usage}
gscript=${3:?usage}
res=$state/nfs3d
files=${NFS3D_FILES:-500}
ddmb=${NFS3D_DD_MB:-64}
gname=nfs3d genv="NFS3D_FILES=$files NFS3D_DD_MB=$ddmb" gtail=40
# shellcheck source=tests/interop/nfsd-test-lib.sh
. "$(dirname "$0")/nfsd-test-lib.sh"
guest_env
exp=$res/export
mkdir -p "$exp/dir2000"
for i in $(seq 1 2000); do : >"$exp/dir2000/f$i"; done

start_server() {
	# --no-root-squash: the guest's root runs the metadata commands (chown)
	start_nfsd rpcrdma-nfs3d --export "$exp" --port "$NFS3D_PORT" \
		--mount-port "$NFS3D_MOUNT_PORT" --bind 127.0.0.1 --no-root-squash
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
phase perm 180
p=$exp/perm
[ "$(cat "$p/rootfile")" = root ] && [ "$(stat -c %u:%g "$p/own")" = 4242:4242 ] ||
	fail "host: perm/rootfile or perm/own"
[ "$(cat "$p/held")" = first ] && [ "$(stat -c %u "$p/held")" = 0 ] || fail "host: perm/held"
[ -p "$p/fifo" ] && [ "$(stat -c %u "$p/fifo")" = 4242 ] && [ -S "$p/sock" ] || fail "host: fifo, socket"
[ "$(stat -c %F:%t:%T "$p/null")" = "character special file:1:3" ] && [ ! -e "$p/udev" ] ||
	fail "host: device node"
echo "host: permission results as expected"
phase chunks 120
(cd "$exp" && sha256sum -c --quiet "$gout/nfs3d-c2m.sha") || fail "host: c2m checksum"
phase tree 900
(cd "$exp/tree" && sha256sum -c --quiet "$gout/nfs3d-src.sha") || fail "host: tree checksums"
echo "host: $(wc -l <"$gout/nfs3d-src.sha") files of the tree match the guest's checksums"
phase back 900
phase dd 900
cp "$gout/nfs3d-perf.txt" "$res/perf.txt"
[ "$(stat -c %s "$exp/dd.bin")" = $((ddmb * 1048576)) ] || fail "host: dd.bin size"
cmp -n $((ddmb * 1048576)) "$exp/dd.bin" /dev/zero || fail "host: dd.bin content"

# kill the server in the middle of a copy, restart it on the same ports
phase restart-start 60
for _ in $(seq 1 300); do
	[ "$(stat -c %s "$exp/r16" 2>/dev/null || echo 0)" -ge 2097152 ] && break
	sleep 0.1
done
# SIGKILL prints nothing: the counters of this instance go to its
# --stats-file on SIGUSR1 first
killed_stats=$(counters | grep '^stats ') || fail "no counters from SIGUSR1"
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
echo "server (before the kill, by SIGUSR1): $killed_stats"
# both instances used every chunk type: the killed one for the tree, dd
# and the copy it was killed in, the restarted one for the restart check
# and the stats phase
for who in killed restarted; do
	s=$stats
	[ $who = killed ] && s=$killed_stats
	for c in read_chunks write_chunks reply_chunks; do
		[ "$(val $c "$s")" -gt 0 ] || fail "server ($who): $c = 0"
	done
	[ "$(val err_chunk_tx "$s")" = 0 ] && [ "$(val err_vers_tx "$s")" = 0 ] ||
		fail "server ($who) sent RDMA_ERROR"
done
[ -s "$res/server-$starts.stats" ] || fail "no counters file from the restarted server"
# xprt: rdma srcport bind connect connect_time idle sends recvs bad_xids req_u bklog_u
#       read_chunks write_chunks reply_chunks ...
x=$(grep -m1 'xprt:[[:space:]]*rdma' "$res/mountstats.txt")
echo "client: $x"
read -r -a f <<<"${x#*rdma}"
[ "${#f[@]}" -ge 13 ] || fail "no rdma xprt line in mountstats"
echo "client chunks: read ${f[10]} write ${f[11]} reply ${f[12]}"
[ "${f[10]}" -gt 0 ] && [ "${f[11]}" -gt 0 ] && [ "${f[12]}" -gt 0 ] ||
	fail "the client did not use Read, Write and Reply chunks"

# capture of the mount, metadata and chunk phases, whole frames
if command -v tshark >/dev/null && [ -s "$gout/nfs3d.pcap" ]; then
	capture_counts nfs3d.pcap
	echo "capture: $nrpc rpcordma frames, $good good / $bad bad CRC32, $nerr RDMA_ERROR"
	[ "$bad" = 0 ] || fail "capture: $bad FPDUs with a bad CRC32"
	[ "$nerr" = 0 ] || fail "capture: $nerr RDMA_ERROR messages"
	[ "$nrpc" -gt 0 ] || fail "capture: no rpcordma frame decoded"
else
	echo "capture: tshark or the capture missing: not checked"
fi
# capture of the bulk phases, 256 bytes of each frame: Read and Write
# chunks and no RDMA_ERROR in the RPC-over-RDMA headers. No CRC check
# here: a cut FPDU's CRC cannot be computed, and after a cut segment tshark
# loses the FPDU boundaries of that direction (it then reports "Bad CRC32"
# on whole frames too, and misses later headers, so the Reply chunks of
# the later phases are counted but not required; the whole-frame capture
# above checks the CRCs, a 2 MiB copy each way by chunks included).
if command -v tshark >/dev/null && [ -s "$gout/nfs3d-bulk.pcap" ]; then
	cp "$gout/nfs3d-bulk.pcap" "$res/nfs3d-bulk.pcap"
	ts=(tshark -n -2 -r "$res/nfs3d-bulk.pcap")
	"${ts[@]}" -Y rpcordma -T fields -e rpcordma.msg_type -e rpcordma.reads_count \
		-e rpcordma.writes_count -e rpcordma.reply_count >"$res/capture-bulk-rpcordma.txt" 2>/dev/null
	read -r nframes nerr nread nwrite nreply < <(awk -F'\t' '
		{ n++ } $1 ~ /(^|,)4(,|$)/ { e++ } $2 ~ /[1-9]/ { r++ } $3 ~ /[1-9]/ { w++ } $4 ~ /[1-9]/ { p++ }
		END { print n + 0, e + 0, r + 0, w + 0, p + 0 }' "$res/capture-bulk-rpcordma.txt")
	echo "bulk capture ($(stat -c %s "$res/nfs3d-bulk.pcap") bytes): $nframes rpcordma frames," \
		"$nread with a Read list, $nwrite with a Write list, $nreply with a Reply chunk;" \
		"$nerr RDMA_ERROR"
	[ "$nerr" = 0 ] || fail "bulk capture: $nerr RDMA_ERROR messages"
	[ "$nread" -gt 0 ] && [ "$nwrite" -gt 0 ] || fail "bulk capture: no Read or no Write chunk seen"
else
	echo "bulk capture: tshark or the capture missing: not checked"
fi
print_figures
echo "PASS"
