# shellcheck shell=bash
# Guest side of test_interop_nfs41d (issue 33): the Linux kernel's NFSv4.1
# client mounts rpcrdma-nfs41d (on the host, reached through the guestfwd
# rule of test_interop_nfs3d: 10.0.2.100:20049) over RDMA and uses it with
# ordinary commands. The host test copies this script into the share and
# starts one phase at a time:
#     bash /peer/nfs41d-client.sh PHASE
# Each phase logs to /peer/out/nfs41d-PHASE.log and ends by writing its
# exit status to /peer/out/nfs41d-PHASE.rc.
set -u
NAME=nfs41d
M=/mnt/n41
OPTS=vers=4.1,proto=rdma,port=20049,rsize=1048576,wsize=1048576
# shellcheck source=tests/interop/guest/nfs-client-lib.sh
. "$(dirname "$0")/nfs-client-lib.sh"
DDMB=${NFS41D_DD_MB:-64}
FILES=${NFS41D_FILES:-60}

case $phase in
mount)
	# whole frames of this connection while the backchannel is used
	# (mount, delegation recall); stopped by the phase capture-stop
	start_capture /tmp/nfs41d.pcap 0 8192 /tmp/nfs41d-tcpdump.pid
	fresh_mount
	grep -q "vers=4.1" /proc/mounts || fail "not NFSv4.1"
	ls -la $M
	;;
deleg-open)
	# a reader holds deleg.txt open: the server hands out a read
	# delegation (the host's second client then conflicts with it)
	[ "$(cat $M/deleg.txt)" = "first line" ] || fail "deleg.txt before the recall"
	setsid bash -c "exec 3<$M/deleg.txt; cat <&3 >/dev/null; sleep 60" </dev/null >/dev/null 2>&1 &
	echo $! >/tmp/nfs41d-reader.pid
	sleep 1
	;;
deleg-check)
	# the data after the other client's append, through the same mount
	got=$(cat $M/deleg.txt)
	want=$(printf 'first line\nappended by the second client')
	[ "$got" = "$want" ] || fail "deleg.txt after the recall: '$got'"
	kill "$(cat /tmp/nfs41d-reader.pid)" 2>/dev/null || true
	echo "deleg.txt holds both writers' lines"
	;;
cut-open)
	# connection cut (issue 33): hold cut.txt open for reading, so that
	# the guest holds a read delegation when the host cuts the connection
	[ "$(cat $M/cut.txt)" = "before the cut" ] || fail "cut.txt before the cut"
	setsid bash -c "exec 3<$M/cut.txt; cat <&3 >/dev/null; sleep 120" </dev/null >/dev/null 2>&1 &
	echo $! >/tmp/nfs41d-cut-reader.pid
	sleep 1
	;;
cut-io)
	# the host cut the connection under the mount (the recall of cut.txt
	# on it unanswered): new data makes the client reconnect, then bind
	# its back channel to the new connection
	t0=$(now)
	head -c 1000000 /dev/urandom >/tmp/n41cut
	cp /tmp/n41cut $M/cut-new
	sync
	echo "1 MB written and synced after the cut in $(secs "$t0" "$(now)") s"
	sha256sum </tmp/n41cut >$OUT/nfs41d-cut.sha
	cmp /tmp/n41cut $M/cut-new || fail "cut-new read back"
	;;
cut-check)
	# the second client's append went in after the recall re-sent on the
	# new connection was answered; then a fresh delegation, of cut2.txt,
	# for a recall that starts on the new connection
	got=$(cat $M/cut.txt)
	want=$(printf 'before the cut\nappended after the cut')
	[ "$got" = "$want" ] || fail "cut.txt after the cut: '$got'"
	kill "$(cat /tmp/nfs41d-cut-reader.pid)" 2>/dev/null || true
	[ "$(cat $M/cut2.txt)" = "before the cut" ] || fail "cut2.txt"
	setsid bash -c "exec 3<$M/cut2.txt; cat <&3 >/dev/null; sleep 120" </dev/null >/dev/null 2>&1 &
	echo $! >/tmp/nfs41d-cut-reader.pid
	sleep 1
	echo "cut.txt holds both writers' lines"
	;;
cut-check2)
	got=$(cat $M/cut2.txt)
	want=$(printf 'before the cut\nappended on the new connection')
	[ "$got" = "$want" ] || fail "cut2.txt: '$got'"
	kill "$(cat /tmp/nfs41d-cut-reader.pid)" 2>/dev/null || true
	echo "cut2.txt holds both writers' lines"
	;;
capture-stop)
	stop_capture /tmp/nfs41d-tcpdump.pid
	cp /tmp/nfs41d.pcap $OUT/nfs41d.pcap
	;;
tree)
	# FILES files of mixed sizes (0 B .. 2 MiB) in 10 directories
	rm -rf /tmp/n41src /tmp/n41back $M/tree
	mkdir -p /tmp/n41src
	for i in $(seq 1 "$FILES"); do
		d=/tmp/n41src/d$((i % 10))
		mkdir -p $d
		head -c $(((i * 7919) % (2 * 1048576 + 1))) /dev/urandom >$d/f$i
	done
	sums /tmp/n41src $OUT/nfs41d-src.sha
	t0=$(now)
	cp -a /tmp/n41src $M/tree
	sync
	echo "copy in: $(secs "$t0" "$(now)") s"
	remount
	t0=$(now)
	cp -a $M/tree /tmp/n41back
	echo "copy out: $(secs "$t0" "$(now)") s"
	(cd /tmp/n41back && sha256sum -c --quiet $OUT/nfs41d-src.sha) || fail "copied out: checksums"
	[ "$(find $M/tree -type f | wc -l)" = "$FILES" ] || fail "find: file count"
	echo "$FILES files copied in and out, checksums equal"
	;;
meta)
	d=$M/meta
	rm -rf $d
	mkdir $d
	echo hello >$d/a
	ln $d/a $d/hard
	[ "$(stat -c %h $d/a)" = 2 ] || fail "link count"
	ln -s a $d/sym
	[ "$(readlink $d/sym)" = a ] && [ "$(cat $d/sym)" = hello ] || fail symlink
	mkdir $d/sub
	echo x >$d/sub/x
	mv $d/sub $d/moved
	mv $d/moved/x $d/moved/y
	mv $d/hard $d/hard2
	[ "$(cat $d/moved/y)" = x ] && [ "$(cat $d/hard2)" = hello ] || fail "read after rename"
	chmod 0600 $d/a
	[ "$(stat -c %a $d/a)" = 600 ] || fail chmod
	truncate -s 12345 $d/t
	[ "$(stat -c %s $d/t)" = 12345 ] || fail truncate
	echo rm >$d/rmme
	rm $d/rmme
	mkdir $d/gone
	rmdir $d/gone
	n=$(ls $d | wc -l)
	[ "$n" = 5 ] || fail "ls meta: $n entries"
	echo "metadata commands done"
	;;
dd)
	rm -f $M/dd.bin
	t0=$(now)
	dd if=/dev/zero of=$M/dd.bin bs=1M count="$DDMB" conv=fsync status=none
	t1=$(now)
	remount
	t2=$(now)
	dd if=$M/dd.bin of=/dev/null bs=1M status=none
	t3=$(now)
	echo "nfs41 write mb=$DDMB secs=$(secs "$t0" "$t1")" >$OUT/nfs41d-perf.txt
	echo "nfs41 read mb=$DDMB secs=$(secs "$t2" "$t3")" >>$OUT/nfs41d-perf.txt
	cat $OUT/nfs41d-perf.txt
	[ "$(stat -c %s $M/dd.bin)" = $((DDMB * 1048576)) ] || fail "dd.bin size"
	;;
restart-write)
	head -c 3000000 /dev/urandom >/tmp/n41r1
	cp /tmp/n41r1 $M/r1
	sync
	sha256sum </tmp/n41r1 >$OUT/nfs41d-r1.sha
	;;
restart-check)
	# the server was restarted under this mount: the client finds its
	# session gone, makes a new one, and goes on
	sha256sum <$M/r1 | cmp - $OUT/nfs41d-r1.sha || fail "r1 after the restart"
	head -c 2000000 /dev/urandom >/tmp/n41r2
	cp /tmp/n41r2 $M/r2
	sync
	remount
	cmp /tmp/n41r2 $M/r2 || fail "r2 written after the restart"
	echo "read and written across the server restart"
	;;
umount)
	umount $M
	;;
*)
	fail "unknown phase $phase"
	;;
esac
