#!/bin/bash
# Boots the interop guest (build-guest.sh) once and runs one script in it
# as root; the guest sees a host folder as /peer and powers off when the
# script ends.
#
# usage: run-guest.sh SCRIPT [OUTDIR]
#   SCRIPT   copied to the share as /peer/test.sh (run by peer-init)
#   OUTDIR   gets a copy of the guest's /peer/out and the serial log
#            (default: the share's own out/, printed at the end)
# env:
#   PEER_DIR        the guest (default /tmp/rpcrdma-guest); the share is
#                   PEER_DIR/runs/NAME
#   NAME            run name (default: SCRIPT's base name)
#   GUEST_ENV       "K=V ..." exported to the script in the guest
#   HOSTFWD_PORT    host 127.0.0.1:PORT -> guest 10.0.2.15:20049, the
#                   NFS/RDMA listener (default 24049)
#   HOSTFWD_EXTRA   more ",hostfwd=..." or ",guestfwd=..." clauses for
#                   QEMU's user network (a guestfwd "cmd:" target runs once
#                   per guest connection, which is what a server needs)
#   HOST_HOOK       a script run on the host when the guest creates
#                   /peer/out/ready-host (env: HOSTFWD_PORT, SHARE, OUT);
#                   when it ends, /peer/host-done appears in the guest
#   SHARE_FILES     a host folder whose contents are copied into the share
#                   (the guest's /peer) before the boot: host-built programs
#   ACCEL=tcg|kvm   (default tcg) MEM=2048 SMP=2 TIMEOUT=900 (seconds)
#   PEER_IP=10.0.2.15/24  eth0 address in the guest
#   CMDLINE_EXTRA   more kernel command line (e.g. no_timer_check: under
#                   TCG on a loaded host the kernel's IO-APIC timer check
#                   can fail and panic the boot)
# exit: 0 when the script exited 0 in the guest, else 1 (or QEMU's status)
set -euo pipefail
script=${1:?usage: run-guest.sh SCRIPT [OUTDIR]}
PEER_DIR=${PEER_DIR:-/tmp/rpcrdma-guest}
name=${NAME:-$(basename "$script" .sh)}
share=$PEER_DIR/runs/$name
outdir=${2:-$share/out}
port=${HOSTFWD_PORT:-24049}
accel=${ACCEL:-tcg}

for f in vmlinuz initramfs.cpio.gz guest.img; do
	[ -f "$PEER_DIR/$f" ] || { echo "[run] no $PEER_DIR/$f: run build-guest.sh"; exit 1; }
done
rm -rf "$share"
mkdir -p "$share/out"
if [ -n "${SHARE_FILES:-}" ]; then
	cp -a "$SHARE_FILES/." "$share/"
fi
{
	echo '#!/bin/bash'
	for kv in ${GUEST_ENV:-}; do printf 'export %q\n' "$kv"; done
	cat "$script"
} >"$share/test.sh"
chmod 0755 "$share/test.sh"

# shellcheck disable=SC2054 # QEMU option values contain commas
case $accel in
tcg) accel_opts=(-accel tcg,thread=multi -cpu max) ;;
kvm) accel_opts=(-accel kvm -cpu host) ;;
*) echo "[run] ACCEL is tcg or kvm"; exit 1 ;;
esac
# restrict=on: the guest reaches nothing but the forwards given here.
netdev="user,id=n0,restrict=on,net=10.0.2.0/24"
netdev+=",hostfwd=tcp:127.0.0.1:$port-10.0.2.15:20049${HOSTFWD_EXTRA:-}"

log=$share/serial.log
: >"$log"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(now)
echo "[run] $name: accel $accel, 127.0.0.1:$port -> guest 20049, share $share"
timeout "${TIMEOUT:-900}" qemu-system-x86_64 "${accel_opts[@]}" -machine q35 \
	-m "${MEM:-2048}" -smp "${SMP:-2}" -nographic -no-reboot -monitor none \
	-serial "file:$log" -kernel "$PEER_DIR/vmlinuz" -initrd "$PEER_DIR/initramfs.cpio.gz" \
	-append "console=ttyS0 root=/dev/vda rw quiet loglevel=4 panic=-1 peer.ip=${PEER_IP:-10.0.2.15/24} ${CMDLINE_EXTRA:-}" \
	-drive "file=$PEER_DIR/guest.img,if=virtio,format=raw,snapshot=on" \
	-virtfs "local,path=$share,mount_tag=peer,security_model=none" \
	-netdev "$netdev" -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56 &
qemu=$!

booted=0
hooked=0
while kill -0 $qemu 2>/dev/null; do
	if [ $booted = 0 ] && grep -q 'peer-init: running' "$log"; then
		booted=1
		echo "[run] test started after $(since "$t0") s"
	fi
	if [ -n "${HOST_HOOK:-}" ] && [ $hooked = 0 ] && [ -e "$share/out/ready-host" ]; then
		hooked=1
		echo "[run] guest ready: running $HOST_HOOK"
		HOSTFWD_PORT=$port SHARE=$share OUT=$share/out bash "$HOST_HOOK" 2>&1 |
			tee "$share/out/host-hook.log" || true
		touch "$share/host-done"
	fi
	sleep 0.2
done
rc=0
wait $qemu || rc=$?
echo "[run] qemu exited ($rc) after $(since "$t0") s"
if [ "$outdir" != "$share/out" ]; then
	mkdir -p "$outdir"
	cp -a "$share/out/." "$outdir/"
fi
cp "$log" "$outdir/serial.log"
echo "[run] results in $outdir"
[ $rc = 0 ] || exit $rc
grep -q 'peer-init: test.sh exit 0' "$outdir/serial.log"
