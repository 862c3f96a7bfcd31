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
OUT=/peer/out
M=/mnt/n3
phase=${1:?phase}
exec >"$OUT/nfs3d-$phase.log" 2>&1
trap 'echo $? >"$OUT/nfs3d-$phase.rc"' EXIT
set -e
OPTS=vers=3,proto=rdma,port=20049,mountport=20048,mountproto=tcp,nolock,rsize=1048576,wsize=1048576
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
do_mount() { mkdir -p $M && mount -t nfs -o $OPTS 10.0.2.100:/ $M; }
remount() { umount $M && do_mount; }
fail() { echo "FAIL: $*"; exit 1; }

case $phase in
mount)
	# capture this connection's traffic (for the tshark check) during the
	# mount, metadata and chunk phases only: the bulk phases would make
	# the capture large
	tcpdump -i eth0 -s 0 -B 8192 -w /tmp/nfs3d.pcap host 10.0.2.100 and tcp port 20049 \
		>/tmp/nfs3d-tcpdump.log 2>&1 &
	echo $! >/tmp/nfs3d-tcpdump.pid
	sleep 1.5
	# a mount left by an interrupted run (its server is gone)
	umount -f -l $M 2>/dev/null || true
	do_mount
	grep " $M " /proc/mounts
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
	kill -INT "$(cat /tmp/nfs3d-tcpdump.pid)"
	sleep 1
	cat /tmp/nfs3d-tcpdump.log
	cp /tmp/nfs3d.pcap $OUT/nfs3d.pcap
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
		}' "${NFS3D_FILES:-200}" $src
	(cd $src && find . -type f | sort | xargs sha256sum) >$OUT/nfs3d-src.sha
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
	mb=${NFS3D_DD_MB:-16}
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
	;;
*)
	fail "unknown phase $phase"
	;;
esac
echo "phase $phase: ok"
