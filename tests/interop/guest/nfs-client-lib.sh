# shellcheck shell=bash
# What the guest sides of test_interop_nfs3d and test_interop_nfs41d share
# (nfs3d-client.sh, nfs41d-client.sh; the host test copies this file next
# to them into the share). Sourced with the phase as $1 after the script
# sets NAME (its log prefix), M (the mount point) and OPTS (the mount
# options): the phase logs to /peer/out/NAME-PHASE.log and ends by writing
# its exit status to /peer/out/NAME-PHASE.rc (the host waits for that file).
# shellcheck disable=SC2034 # OUT and phase: the sourcing script's
OUT=/peer/out
phase=${1:?phase}
exec >"$OUT/$NAME-$phase.log" 2>&1
trap 'echo $? >"$OUT/$NAME-$phase.rc"' EXIT
set -e
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
do_mount() { mkdir -p "$M" && mount -t nfs -o "$OPTS" 10.0.2.100:/ "$M"; }
remount() { umount "$M" && do_mount; }
# mount anew: first drop a mount left by an interrupted run (its server is
# gone)
fresh_mount() {
	umount -f -l "$M" 2>/dev/null || true
	do_mount
	grep " $M " /proc/mounts
}
fail() { echo "FAIL: $*"; exit 1; }
# start_capture PCAP SNAPLEN BUFFER_KB PIDFILE: tcpdump of the connection
# to the server into PCAP, its pid in PIDFILE, its log next to it
# (PIDFILE's name with .log)
# Receive offload (GRO) off while capturing: the guest's virtio-net
# merges received segments into packets of up to 64 KiB of payload, one
# of exactly 65,536 bytes overflows the IP length field, the capture
# records it 53 bytes short, and tshark's MPA dissector, its FPDU
# boundaries lost at that gap, reports every later FPDU of the stream as
# a bad CRC32 (seen in CI under ASan: 23 "bad" FPDUs with DDP version 3).
start_capture() {
	ethtool -K eth0 gro off 2>/dev/null || echo "note: ethtool: GRO left on"
	tcpdump -i eth0 -s "$2" -B "$3" -w "$1" host 10.0.2.100 and tcp port 20049 \
		>"${4%.pid}.log" 2>&1 &
	echo $! >"$4"
	sleep 1.5
}
# stop the capture whose tcpdump pid is in $1, show its log
stop_capture() {
	kill -INT "$(cat "$1")"
	sleep 1
	ethtool -K eth0 gro on 2>/dev/null || true
	cat "${1%.pid}.log"
}
# sums DIR FILE: the sha256sum of every file below DIR (paths from DIR,
# sorted) into FILE
sums() { (cd "$1" && find . -type f | sort | xargs sha256sum) >"$2"; }
