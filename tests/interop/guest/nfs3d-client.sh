# shellcheck shell=bash
# Guest side of test_interop_nfs3d: the Linux kernel NFS client mounts
# rpcrdma-nfs3d (on the host, reached through QEMU guestfwd rules as
# 10.0.2.100: NFS/RDMA on 20049, MOUNT over TCP on 20048) and uses it with
# ordinary commands. The host test copies this script into the share and
# starts one phase at a time:
#     bash /peer/nfs3d-client.sh PHASE
# Each phase logs to /peer/out/nfs3d-PHASE.log and ends by writing its exit
# status to /peer/out/nfs3d-PHASE.rc (the host waits for that file).
set -u
NAME=nfs3d
M=/mnt/n3
OPTS=vers=3,proto=rdma,port=20049,mountport=20048,mountproto=tcp,nolock,rsize=1048576,wsize=1048576
# shellcheck source=tests/interop/guest/nfs-client-lib.sh
. "$(dirname "$0")/nfs-client-lib.sh"
# the unprivileged user of the perm phase (numeric ids: no login needed)
U=4242
as_user() { setpriv --reuid=$U --regid=$U --clear-groups "$@"; }

case $phase in
mount)
	# capture this connection's traffic (for the tshark check): whole
	# frames during the mount, metadata and chunk phases; the bulk phases
	# after them are captured too, headers only (start_bulk_capture)
	start_capture /tmp/nfs3d.pcap 0 8192 /tmp/nfs3d-tcpdump.pid
	fresh_mount
	stat -f $M
	df $M
	;;
meta)
	d=$M/meta
	rm -rf $d
	mkdir $d
	n=$(ls -f $M/dir2000 | grep -c '^f')
	[ "$n" = 2000 ] || fail "ls dir2000: $n entries"
	n=$(ls -l $M/dir2000 | grep -c ' f[0-9]')
	[ "$n" = 2000 ] || fail "ls -l dir2000: $n entries"
	echo "dir2000: 2000 entries (ls, ls -l)"
	echo hello >$d/a
	touch $d/t
	chmod 0600 $d/a
	chown 1234:5678 $d/t
	truncate -s 12345 $d/t
	ln $d/a $d/hard
	ln -s a $d/sym
	[ "$(readlink $d/sym)" = a ] || fail readlink
	[ "$(cat $d/sym)" = hello ] || fail "read through symlink"
	mkdir $d/sub $d/gone
	echo x >$d/sub/x
	mv $d/sub $d/moved
	mv $d/moved/x $d/moved/y
	echo rm >$d/rmme
	rm $d/rmme
	rmdir $d/gone
	[ "$(cat $d/moved/y)" = x ] || fail "read after rename"
	[ "$(stat -c %s $d/t)" = 12345 ] || fail "truncate size"
	[ "$(stat -c %u:%g $d/t)" = 1234:5678 ] || fail chown
	[ "$(stat -c %a $d/a)" = 600 ] || fail chmod
	[ "$(stat -c %h $d/a)" = 2 ] || fail "link count"
	touch -d '2001-02-03 04:05:06' $d/a
	[ "$(stat -c %Y $d/a)" = "$(date -d '2001-02-03 04:05:06' +%s)" ] || fail "touch -d"
	! rmdir $d/moved 2>/dev/null || fail "rmdir of a non-empty directory"
	! mkdir $d/moved 2>/dev/null || fail "mkdir of an existing name"
	! cat $d/nothere 2>/dev/null || fail "cat of a missing file"
	find $d | sort
	du -s $d
	df $M
	;;
perm)
	# a non-root user (uid 4242) on the export (the server runs with
	# --no-root-squash, so root here is root there)
	id n3user >/dev/null 2>&1 || useradd -M -u $U -U n3user || echo "useradd failed: numeric ids only"
	d=$M/perm
	rm -rf $d
	mkdir $d
	chmod 0777 $d
	echo root >$d/rootfile
	chmod 0644 $d/rootfile
	! as_user sh -c "echo user >>$d/rootfile" 2>/dev/null || fail "user wrote root's 0644 file"
	[ "$(cat $d/rootfile)" = root ] || fail "rootfile changed"
	[ "$(as_user cat $d/rootfile)" = root ] || fail "user cannot read root's 0644 file"
	as_user sh -c "echo mine >$d/own" || fail "user cannot write its own file"
	[ "$(stat -c %u:%g $d/own)" = $U:$U ] || fail "owner of the user's file"
	# not checked by the client: the server refuses it
	! as_user chown 0 $d/own 2>/dev/null || fail "user gave its file to root"
	! as_user chmod 0666 $d/rootfile 2>/dev/null || fail "user changed root's file mode"
	[ "$(stat -c %u:%a $d/own):$(stat -c %a $d/rootfile)" = $U:644:644 ] ||
		fail "owner or mode changed"
	# NFS3ERR_ACCES from the server: the user holds its file open while root
	# gives it to root (0644); the user's next WRITE is refused and fsync
	# reports EACCES
	as_user python3 -c '
import os, sys, time
p = sys.argv[1]
fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"first\n")
os.fsync(fd)
open(p + ".ready", "w").close()
while not os.path.exists(p + ".go"):
    time.sleep(0.1)
os.write(fd, b"second\n")
try:
    os.fsync(fd)
except OSError as e:
    print("fsync after the owner changed:", os.strerror(e.errno))
    sys.exit(0 if e.errno == 13 else 2)
print("fsync after the owner changed: no error")
sys.exit(1)' $d/held &
	pypid=$!
	for _ in $(seq 1 300); do [ -e $d/held.ready ] && break; sleep 0.1; done
	chown 0:0 $d/held
	chmod 0644 $d/held
	touch $d/held.go
	wait $pypid || fail "the user's WRITE after the chown was not refused with EACCES"
	# MKNOD: a FIFO and a socket by the user, a device node by root only
	as_user mkfifo $d/fifo
	as_user python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' $d/sock
	! as_user mknod $d/udev c 1 3 2>/dev/null || fail "user made a device node"
	mknod $d/null c 1 3
	[ -p $d/fifo ] && [ -S $d/sock ] && [ -c $d/null ] && [ ! -e $d/udev ] || fail "mknod types"
	[ "$(stat -c %u $d/fifo)" = $U ] || fail "owner of the FIFO"
	ls -l $d
	;;
chunks)
	# one 2 MiB file in and out (Read and Write chunks) inside the capture
	head -c 2097152 /dev/urandom >/tmp/c2m
	cp /tmp/c2m $M/c2m
	sync
	remount
	cmp /tmp/c2m $M/c2m
	sha256sum /tmp/c2m | sed 's| /tmp/| |' >$OUT/nfs3d-c2m.sha
	ls -l $M/dir2000 >/dev/null
	sleep 1
	stop_capture /tmp/nfs3d-tcpdump.pid
	cp /tmp/nfs3d.pcap $OUT/nfs3d.pcap
	# the bulk phases (tree, back, dd, restart, stats): 256 bytes of each
	# frame hold the TCP, MPA, DDP and RPC-over-RDMA headers and keep the
	# capture small; a 32 MiB buffer so that tcpdump keeps up
	start_capture /tmp/nfs3d-bulk.pcap 256 32768 /tmp/nfs3d-bulk.pid
	# READDIRPLUS by Reply chunk first, while tshark still finds the FPDUs
	remount
	ls -l $M/dir2000 >/dev/null
	;;
tree)
	# NFS3D_FILES files of mixed sizes in 10 directories: one of 8 MiB,
	# four of 1 MiB, a tenth between 20 and 300 KiB, the rest up to 16 KiB
	# (every 50th empty); their content cut from one random pool
	src=/tmp/n3src
	rm -rf $src
	mkdir -p $src
	head -c 8388608 /dev/urandom >/tmp/pool
	# one perl process (perl-base is in every Debian system): a process
	# per file costs seconds under emulation
	perl -e '
		my ($n, $src) = @ARGV;
		open(my $p, "<", "/tmp/pool") or die; binmode $p; local $/; my $pool = <$p>;
		srand(17);
		for my $i (0 .. $n - 1) {
			my $s = $i == 0 ? 8388608 : $i < 5 ? 1048576 :
				$i < 5 + int($n / 10) ? 20480 + int(rand(286720)) : $i % 50 == 0 ? 0 : int(rand(16384));
			my $off = int(rand(8388608 - $s));
			my $d = "$src/d" . ($i % 10);
			-d $d or mkdir $d or die;
			open(my $f, ">", "$d/f$i") or die; binmode $f;
			print $f substr($pool, $off, $s); close $f or die;
		}' "${NFS3D_FILES:-500}" $src
	sums $src $OUT/nfs3d-src.sha
	echo "files: $(wc -l <$OUT/nfs3d-src.sha), bytes: $(du -sb $src | cut -f1)"
	t=$(now)
	cp -a $src $M/tree
	sync
	echo "copy in: $(secs "$t" "$(now)") s"
	;;
back)
	remount
	rm -rf /tmp/n3back
	t=$(now)
	cp -a $M/tree /tmp/n3back
	echo "copy out: $(secs "$t" "$(now)") s"
	(cd /tmp/n3back && sha256sum -c --quiet $OUT/nfs3d-src.sha)
	n=$(tar cf - -C $M tree | tar tf - | grep -vc '/$')
	[ "$n" = "$(wc -l <$OUT/nfs3d-src.sha)" ] || fail "tar saw $n files"
	find $M/tree -type f | wc -l
	du -sb $M/tree
	;;
dd)
	# 64 MiB each way through rpcrdma-nfs3d, then the same dd against the
	# guest's own nfsd over siw; "WHO OP mb=64 seconds=S"
	mb=${NFS3D_DD_MB:-64}
	ddpair() { # who mountpoint
		local t w r
		t=$(now)
		dd if=/dev/zero of="$2/dd.bin" bs=1M count="$mb" conv=fsync status=none
		w=$(secs "$t" "$(now)")
		umount "$2"
		if [ "$1" = nfs3d ]; then do_mount; else
			mount -t nfs -o vers=3,proto=rdma,port=20049,nolock 10.0.2.15:/export "$2"; fi
		t=$(now)
		dd if="$2/dd.bin" of=/dev/null bs=1M status=none
		r=$(secs "$t" "$(now)")
		echo "$1 WRITE mb=$mb seconds=$w"
		echo "$1 READ mb=$mb seconds=$r"
	}
	ddpair nfs3d $M | tee $OUT/nfs3d-perf.txt
	mkdir -p /mnt/k3
	mount -t nfs -o vers=3,proto=rdma,port=20049,nolock 10.0.2.15:/export /mnt/k3
	ddpair kernel /mnt/k3 | tee -a $OUT/nfs3d-perf.txt
	rm -f /mnt/k3/dd.bin
	umount /mnt/k3
	awk "/device 10.0.2.100:\/ mounted on \/mnt\/n3/{m=1} m && /xprt:/{print; exit}" \
		/proc/self/mountstats
	;;
restart-start)
	# a 16 MiB copy the host interrupts by killing the server
	head -c 16777216 /dev/urandom >/tmp/r16
	sha256sum /tmp/r16 | sed 's| /tmp/| |' >$OUT/nfs3d-r16.sha
	rm -f $OUT/nfs3d-restart-copy.rc
	(cp /tmp/r16 $M/r16 && sync; echo $? >$OUT/nfs3d-restart-copy.rc) >/tmp/r16.log 2>&1 &
	;;
restart-check)
	remount
	cmp /tmp/r16 $M/r16
	;;
stats)
	# on this mount (the restarted server's): a WRITE by Read chunk, a
	# READDIRPLUS by Reply chunk, a READ by Write chunk; then the mount's
	# statistics: per-op counts and the RPC-over-RDMA line
	cp /tmp/c2m $M/s2m
	sync
	ls -l $M/dir2000 >/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	cmp /tmp/c2m $M/s2m
	awk "/device 10.0.2.100:\/ mounted on \/mnt\/n3/{m=1} m && /^device/ && !/\/mnt\/n3/{m=0} m" \
		/proc/self/mountstats >$OUT/nfs3d-mountstats.txt
	cat $OUT/nfs3d-mountstats.txt
	umount $M
	stop_capture /tmp/nfs3d-bulk.pid
	cp /tmp/nfs3d-bulk.pcap $OUT/nfs3d-bulk.pcap
	ls -l $OUT/nfs3d-bulk.pcap
	;;
*)
	fail "unknown phase $phase"
	;;
esac
echo "phase $phase: ok"
