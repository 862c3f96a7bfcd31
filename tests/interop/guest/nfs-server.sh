# shellcheck shell=bash
# Guest side of the interop suite (runs as /peer/test.sh in the guest, see
# ../harness/run-guest.sh): the kernel is the server, the host runs our
# client.
#
#   1. siw device on eth0, nfsd with the RDMA listener on 20049 (svcrdma),
#      rpc.mountd on the FIXED port 20048 (forwarded to the host through
#      HOSTFWD_EXTRA, so MOUNT needs no rpcbind on the host side);
#   2. /export/interop holds files with random content; their POSIX cksum
#      goes to /peer/out/export.cksum (the host compares what it READs);
#      and dir2000/ with 2,000 empty files f1..f2000 (READDIRPLUS);
#   3. tcpdump on eth0 captures tcp port 20049 (the host's RDMA traffic
#      arrives from slirp's 10.0.2.2) into /peer/out/interop.pcap;
#   4. touch /peer/out/ready-host, wait for /peer/host-done (run-guest.sh
#      creates it when the host hook ends), then record the cksum of every
#      file the host wrote (/peer/out/after.cksum), dmesg and the svcrdma
#      trace.
# env (GUEST_ENV): INTEROP_WAIT=600 seconds to wait for the host.
set -u
OUT=/peer/out
WAIT=${INTEROP_WAIT:-600}
step() { echo; echo "=== $* (uptime $(cut -d' ' -f1 /proc/uptime)s)"; }
run() { echo "+ $*"; "$@"; }

step "siw on eth0, rpcrdma"
modprobe ib_uverbs; modprobe rdma_ucm
modprobe siw && run rdma link add siw0 type siw netdev eth0
modprobe rpcrdma
run rdma link show

step "nfsd (rdma 20049) and mountd (tcp 20048)"
mount -t nfsd nfsd /proc/fs/nfsd
mkdir -p /run/rpcbind /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs
rpcbind -w
mkdir -p /export/interop
head -c 1048576 /dev/urandom > /export/interop/read-1m
head -c 1000003 /dev/urandom > /export/interop/read-odd
head -c 4097 /dev/urandom > /export/interop/read-4097
printf 'interop hello\n' > /export/interop/hello.txt
# Empty files the host WRITEs into (found by LOOKUP, so no CREATE needed).
for f in write-1m write-odd write-clnt; do : > /export/interop/$f; done
chmod 0666 /export/interop/*
# A directory of 2,000 entries: READDIRPLUS replies longer than the inline
# threshold, which nfsd sends through the client's Reply chunk.
mkdir -p /export/interop/dir2000
for i in $(seq 1 2000); do : >"/export/interop/dir2000/f$i"; done
# sec=sys only: every client of the suite sends AUTH_SYS as root (uid 0,
# gid 0; no_root_squash), the raw ones and the client API alike
# (iop_clnt_auth_root, RPCRDMA_CLNT_OPT_AUTH). nfsd answers AUTH_NONE
# with NFS3ERR_ACCES beyond GETATTR/FSINFO of the export root.
echo '/export *(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0,sec=sys)' >/etc/exports
run exportfs -ra
run rpc.mountd -p 20048
# 1 MiB READ/WRITE in one call (nfsd sizes it from RAM otherwise: 256 KiB
# in this 2 GiB guest); must be set before the first nfsd thread starts.
echo 1048576 > /proc/fs/nfsd/max_block_size
echo "max_block_size: $(cat /proc/fs/nfsd/max_block_size)"
# nfsd grants no NFSv4 delegation while a lock manager is in its grace
# period (lockd: 50 s by default, NFSv4: 90 s); nothing here reclaims
# state, so both take the kernel's minimum, 10 s (tests/interop/nfs41).
[ -w /proc/sys/fs/nfs/nlm_grace_period ] || modprobe lockd
echo 10 > /proc/sys/fs/nfs/nlm_grace_period
echo 10 > /proc/fs/nfsd/nfsv4gracetime
echo "grace: nlm $(cat /proc/sys/fs/nfs/nlm_grace_period) s, nfsv4 $(cat /proc/fs/nfsd/nfsv4gracetime) s"
run rpc.nfsd 8
grep -q rdma /proc/fs/nfsd/portlist || echo "rdma 20049" > /proc/fs/nfsd/portlist
echo "portlist: $(tr '\n' ' ' < /proc/fs/nfsd/portlist)"
echo "versions: $(cat /proc/fs/nfsd/versions)"
run ss -tlnp
(cd /export/interop && cksum read-1m read-odd read-4097 hello.txt) > $OUT/export.cksum
cat $OUT/export.cksum

# svcrdma trace points: when the kernel drops or refuses one of our
# messages, the trace says why (copied to the host as svcrdma-trace.txt).
T=/sys/kernel/debug/tracing
for e in rpcrdma/svcrdma_cm_event rpcrdma/svcrdma_qp_error rpcrdma/svcrdma_post_send \
	rpcrdma/svcrdma_decode_rqst rpcrdma/svcrdma_decode_badvers rpcrdma/svcrdma_decode_drop \
	rpcrdma/svcrdma_decode_short_err rpcrdma/svcrdma_decode_badproc \
	rpcrdma/svcrdma_decode_parse rpcrdma/svcrdma_wc_read rpcrdma/svcrdma_wc_write \
	rpcrdma/svcrdma_wc_send rpcrdma/svcrdma_send_err rpcrdma/svcrdma_encode_wseg \
	sunrpc/svc_xprt_accept sunrpc/svc_xprt_close sunrpc/svc_xprt_detach sunrpc/svc_xprt_free \
	rpcrdma/svcrdma_cm_event rpcrdma/svcrdma_disconnect; do
	[ -e $T/events/$e/enable ] && echo 1 > $T/events/$e/enable
done
dmesg -C

step "capture tcp port 20049 on eth0, wait for the host (up to ${WAIT}s)"
# A 32 MiB capture buffer and no per-packet flush (-U): the NFS bulk tests
# move MiBs in 64 KB segments, and tcpdump dropped some with the defaults
# (the check skips what follows a lost segment; capture-check.sh).
# (not the kernel client's own traffic to rpcrdma-nfs3d on the host,
# 10.0.2.100: test_interop_nfs3d captures its part of that itself)
tcpdump -i eth0 -s 0 -B 32768 -Z root -w /tmp/interop.pcap tcp port 20049 and not host 10.0.2.100 > /tmp/tcpdump.log 2>&1 &
CAPPID=$!
sleep 1.5
# Commands from host tests that disturb the server: /peer/cmd-<name>
# (created on the host in the share) runs once and is answered by
# /peer/out/<name>.done. The loop writes to its own log, not to this
# script's output, so a command stuck in the kernel cannot keep the guest
# from finishing; a command still running after 60 s is answered with
# TIMEOUT and the kernel stacks of blocked tasks (sysrq w) go to dmesg.
guest_cmd() { # name command...
	local name=$1 i=0
	shift
	"$@" &
	local pid=$!
	echo "$(cut -d' ' -f1 /proc/uptime)s: started '$*' (pid $pid)"
	while kill -0 $pid 2>/dev/null && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
	if kill -0 $pid 2>/dev/null; then
		echo "$(cut -d' ' -f1 /proc/uptime)s: '$*' still running after 60 s"
		cat /proc/$pid/stack 2>/dev/null
		echo w >/proc/sysrq-trigger
		echo "TIMEOUT: '$*' still running after 60 s (blocked-task stacks in dmesg)" >"$OUT/$name.done"
		return 1
	fi
	return 0
}
(
	while [ ! -e /peer/host-done ]; do
		if [ -e /peer/cmd-nfsd-stop ]; then
			rm -f /peer/cmd-nfsd-stop
			echo "$(cut -d' ' -f1 /proc/uptime)s: nfsd-stop"
			guest_cmd nfsd-stop rpc.nfsd 0 &&
				echo "nfsd stopped at $(cut -d' ' -f1 /proc/uptime)s" >"$OUT/nfsd-stop.done"
		fi
		if [ -e /peer/cmd-nfsd-start ]; then
			rm -f /peer/cmd-nfsd-start
			echo "$(cut -d' ' -f1 /proc/uptime)s: nfsd-start"
			if guest_cmd nfsd-start rpc.nfsd 8; then
				grep -q rdma /proc/fs/nfsd/portlist || echo "rdma 20049" >/proc/fs/nfsd/portlist
				tr '\n' ' ' </proc/fs/nfsd/portlist >"$OUT/nfsd-start.done"
			fi
		fi
		# /peer/cmd-sh-<name> holds one shell command line (for tests that
		# change the export from inside the guest, e.g. to break an NFSv4
		# delegation); /peer/out/sh-<name>.done answers "rc=<exit status>
		# <first output line>" (or TIMEOUT after 60 s).
		for c in /peer/cmd-sh-*; do
			[ -e "$c" ] || continue
			name=${c#/peer/cmd-}
			line=$(cat "$c")
			rm -f "$c"
			echo "$(cut -d' ' -f1 /proc/uptime)s: $name: $line"
			if guest_cmd "$name" bash -c "{ $line; } >/tmp/$name.out 2>&1; echo \$? >/tmp/$name.rc"; then
				echo "rc=$(cat "/tmp/$name.rc") $(head -1 "/tmp/$name.out")" >"$OUT/$name.done"
			fi
		done
		sleep 0.2
	done
) >"$OUT/guest-cmd.log" 2>&1 </dev/null &
touch $OUT/ready-host
i=0; while [ ! -e /peer/host-done ] && [ $i -lt "$WAIT" ]; do sleep 1; i=$((i+1)); done
[ -e /peer/host-done ] || echo "host did not finish within ${WAIT}s"
sleep 1
kill -INT $CAPPID; wait $CAPPID 2>/dev/null
cat /tmp/tcpdump.log
cp /tmp/interop.pcap $OUT/interop.pcap

step "after the host"
# Figures for comparison with our client (test_interop_clnt writes its
# own to the state dir; guest-stop.sh prints both side by side in
# perf-summary.txt): the kernel's NFS client over RDMA to the same export,
# 1 MiB READs and WRITEs (O_DIRECT: one RPC per 1 MiB dd block, one at a
# time), through siw on this guest's own address (not on eth0, so not in
# the capture). The RPC counts come from the mount's own statistics.
# kernel-perf.txt: "kernel OP mb=N seconds=S rpcs=R commits=C".
if mount -t nfs -o vers=3,proto=rdma,port=20049,rsize=1048576,wsize=1048576,nolock \
	10.0.2.15:/export /mnt/nfs; then
	n=${INTEROP_PERF_MB:-8}
	t=$(date +%s.%N)
	dd if=/dev/zero of=/mnt/nfs/interop/kperf bs=1M count="$n" oflag=direct conv=fsync 2>/dev/null
	w=$(awk "BEGIN{print $(date +%s.%N)-$t}")
	t=$(date +%s.%N)
	dd if=/mnt/nfs/interop/kperf of=/dev/null bs=1M count="$n" iflag=direct 2>/dev/null
	r=$(awk "BEGIN{print $(date +%s.%N)-$t}")
	# per-op lines of this mount: "OP: ops transmissions timeouts ..."
	ops() { awk -v op="$1:" '/device 10.0.2.15:\/export mounted on \/mnt\/nfs/{m=1} m && $1 == op {print $2; exit}' /proc/self/mountstats; }
	{
		echo "kernel WRITE mb=$n seconds=$w rpcs=$(ops WRITE) commits=$(ops COMMIT)"
		echo "kernel READ mb=$n seconds=$r rpcs=$(ops READ) commits=0"
	} | tee "$OUT/kernel-perf.txt"
	grep -E '^[[:space:]]*(READ|WRITE|COMMIT):' /proc/self/mountstats
	rm -f /mnt/nfs/interop/kperf
	umount /mnt/nfs
else
	echo "kernel NFS client mount over RDMA failed: no comparison figures"
fi
(cd /export/interop && cksum write-1m write-odd write-clnt) > $OUT/after.cksum
cat $OUT/after.cksum
ls -l /export/interop
nfsstat -s 2>/dev/null | head -20
dmesg > $OUT/dmesg-after.txt
grep -v '^#' $T/trace > $OUT/svcrdma-trace.txt 2>/dev/null
echo "trace lines: $(wc -l < $OUT/svcrdma-trace.txt)"
step "done"
