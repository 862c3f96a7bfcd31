# shellcheck shell=bash
# Guest side of tests/interop/harness/record-captures.sh: the Linux kernel
# NFS client talks to the kernel NFS server of the same guest over siw
# (RPC-over-RDMA on 20049, so the traffic runs over lo), once per NFS
# version, and tcpdump records each run into /peer/out/linux-siw-nfsvV.pcap.
# Each run mounts, lists a directory of small files, writes a SIZE_MB file
# (Read chunks), remounts and reads it back (Write chunks); replies longer
# than the inline threshold come back in a Reply chunk. The file holds a repeated text
# line so that the capture compresses well; only the headers matter to
# the decoder tests.
# env (GUEST_ENV): NFS_VERS="3 4.1" SIZE_MB=3
set -u
OUT=/peer/out
vers=${NFS_VERS:-"3 4.1"}
size_mb=${SIZE_MB:-3}
step() { echo; echo "=== $* (uptime $(cut -d' ' -f1 /proc/uptime)s)"; }
run() { echo "+ $*"; "$@"; }
fail() { echo "FAIL: $*"; exit 1; }

step "siw on eth0, nfsd with the RDMA listener"
modprobe ib_uverbs; modprobe rdma_ucm
modprobe siw || fail "no siw module"
run rdma link add siw0 type siw netdev eth0 || fail "no siw device"
modprobe rpcrdma
mount -t nfsd nfsd /proc/fs/nfsd
echo 10 >/proc/fs/nfsd/nfsv4leasetime
echo 10 >/proc/fs/nfsd/nfsv4gracetime
mkdir -p /run/rpcbind /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs
rpcbind -w
run exportfs -ra
run rpc.mountd
run rpc.nfsd 8
grep -q rdma /proc/fs/nfsd/portlist || echo "rdma 20049" >/proc/fs/nfsd/portlist
echo "portlist: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
mkdir -p /export/small
for i in $(seq 1 40); do echo "file $i" >"/export/small/f$i"; done
yes 'rpcrdma capture payload: only the transport headers are checked.' |
	head -c $((size_mb * 1048576)) >/tmp/payload

ip=10.0.2.15
status=0
for v in $vers; do
	name=linux-siw-nfsv$v
	step "NFSv$v over siw, capture $name.pcap on lo"
	tcpdump -i lo -s 0 -B 16384 -w "/tmp/$name.pcap" tcp port 20049 >"/tmp/$name.log" 2>&1 &
	cap=$!
	sleep 1.5
	if [ "$v" = 3 ]; then src=$ip:/export; opts=rdma,port=20049,vers=3,nolock
	else src=$ip:/; opts=rdma,port=20049,vers=$v; fi
	ok=0
	if timeout -s KILL 120 mount -t nfs -o "$opts" "$src" /mnt/nfs; then
		stat -c '%n %s' /mnt/nfs/small/* | tail -n 2
		cp /tmp/payload "/mnt/nfs/payload-v$v" && sync
		umount /mnt/nfs
		if timeout -s KILL 120 mount -t nfs -o "$opts" "$src" /mnt/nfs; then
			cmp /tmp/payload "/mnt/nfs/payload-v$v" && ok=1
			ls -l /mnt/nfs >/dev/null
			umount /mnt/nfs
		fi
	fi
	sleep 1
	kill -INT $cap
	wait $cap
	cat "/tmp/$name.log"
	cp "/tmp/$name.pcap" "$OUT/"
	if [ $ok = 1 ]; then
		echo "RESULT NFSv$v: ${size_mb} MiB written and read back"
	else
		echo "RESULT NFSv$v: FAILED"
		status=1
	fi
done
exit $status
