#!/bin/bash
# Builds the QEMU guest the interop suite runs the Linux kernel's
# RPC-over-RDMA in: Debian 12 (bookworm) with nfsd/svcrdma, the xprtrdma
# client and soft-iWARP (siw).
#
# Debian's 6.1 kernel is configured without siw (CONFIG_RDMA_SIW unset),
# so siw.ko is compiled here from the linux-source-6.1 package against the
# linux-headers of the installed kernel and loaded as an out-of-tree module.
# Everything else comes from the Debian archive this host's apt uses.
#
# usage: build-guest.sh            build what is missing or stale
#        build-guest.sh --check    exit 0 when a current guest is in PEER_DIR
# env:   PEER_DIR  output (default /tmp/rpcrdma-guest): vmlinuz,
#                  initramfs.cpio.gz, guest.img, harness.stamp
#        KVER      kernel release (default: newest 6.1.0-N-amd64 installed)
#        MIRROR    Debian archive (default: the first one in apt's sources)
#        FORCE=1   redo everything but the debootstrap and siw.ko;
#                  FORCE_ROOTFS=1 redoes the debootstrap too
#
# harness.stamp holds a hash of the files that shape the image (this
# script and peer-init): when either changes, the image is rebuilt, so an
# image of another harness version is never taken for the current one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PEER_DIR=${PEER_DIR:-/tmp/rpcrdma-guest}
stamp_file=$PEER_DIR/harness.stamp
version=$(cat "$here/build-guest.sh" "$here/peer-init" | sha256sum | cut -c1-16)

is_current() {
	local f
	for f in vmlinuz initramfs.cpio.gz guest.img; do
		[ -f "$PEER_DIR/$f" ] || return 1
	done
	[ "$(cat "$stamp_file" 2>/dev/null)" = "$version" ]
}
if [ "${1:-}" = --check ]; then
	is_current
	exit
fi
say() { echo "[build-guest] $*"; }

mkdir -p "$PEER_DIR"
rootfs=$PEER_DIR/rootfs
if is_current && [ -z "${FORCE:-}" ]; then
	say "guest in $PEER_DIR is current (harness $version)"
	exit 0
fi
# another harness version, a partial build or FORCE: redo all but the
# debootstrap (kept while the package list is the same) and siw.ko (kept
# per kernel release)
FORCE=1
rm -f "$stamp_file"

# ---- host packages (Debian)
host_pkgs="qemu-system-x86 debootstrap linux-image-amd64 linux-source-6.1 gcc make
	busybox-static xz-utils e2fsprogs cpio gzip kmod"
missing=$(for p in $host_pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"
done | tr '\n' ' ')
if [ -n "${missing// /}" ]; then
	say "installing host packages: $missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # a list of package names
	apt-get install -y -qq $missing
fi

if [ -z "${KVER:-}" ]; then
	KVER=$(find /lib/modules -mindepth 1 -maxdepth 1 -name '6.1.0-*-amd64' -printf '%f\n' |
		sort -V | tail -n 1)
fi
if [ -z "$KVER" ] || [ ! -f "/boot/vmlinuz-$KVER" ]; then
	say "no Debian 6.1 kernel installed (linux-image-amd64)"
	exit 1
fi
dpkg-query -W -f='${Status}\n' "linux-headers-$KVER" 2>/dev/null | grep -q 'ok installed' ||
	apt-get install -y -qq "linux-headers-$KVER"
say "kernel $KVER, output $PEER_DIR"

# ---- root file system (debootstrap, minbase)
if [ -z "${MIRROR:-}" ]; then
	MIRROR=$(awk '$1 == "URIs:" { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
fi
if [ -z "${MIRROR:-}" ]; then
	MIRROR=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list \
		/etc/apt/sources.list.d/*.list 2>/dev/null || true)
fi
guest_pkgs=(rdma-core ibverbs-utils ibverbs-providers rdmacm-utils iproute2 kmod procps
	nfs-kernel-server nfs-common rpcbind tcpdump iputils-ping netcat-openbsd ethtool)
# the marker holds the package list: a changed list redoes the debootstrap
[ -n "${FORCE_ROOTFS:-}" ] && rm -rf "$rootfs"
if [ "$(cat "$rootfs/.debootstrap-done" 2>/dev/null)" != "${guest_pkgs[*]}" ]; then
	[ -n "${MIRROR:-}" ] || { say "no Debian archive in apt's sources: set MIRROR"; exit 1; }
	rm -rf "$rootfs"
	say "debootstrap bookworm from $MIRROR (several minutes)"
	debootstrap --variant=minbase --include="$(
		IFS=,
		echo "${guest_pkgs[*]}"
	)" bookworm "$rootfs" "$MIRROR"
	echo "${guest_pkgs[*]}" >"$rootfs/.debootstrap-done"
fi
rm -f "$rootfs"/var/cache/apt/archives/*.deb

# ---- siw.ko, out of tree, once per kernel release
siw_build=$PEER_DIR/siw-$KVER
siw_dir=$siw_build/linux-source-6.1/drivers/infiniband/sw/siw
if [ ! -f "$siw_dir/siw.ko" ]; then
	say "building siw.ko from linux-source-6.1"
	rm -rf "$siw_build"
	mkdir -p "$siw_build"
	tar -C "$siw_build" -xaf /usr/src/linux-source-6.1.tar.xz \
		--wildcards 'linux-source-6.1/drivers/infiniband/sw/siw/*'
	make -s -C "/lib/modules/$KVER/build" M="$siw_dir" CONFIG_RDMA_SIW=m modules
fi

# ---- kernel modules: the subtrees the guest loads from, not all of them
mods=$rootfs/lib/modules/$KVER
if [ -n "${FORCE:-}" ] || [ ! -e "$mods/modules.dep" ]; then
	say "copying kernel modules"
	rm -rf "$rootfs/lib/modules"
	mkdir -p "$mods/extra" "$mods/kernel/drivers/net" "$mods/kernel/drivers/firmware"
	src=/lib/modules/$KVER
	cp -a "$src/modules.order" "$src/modules.builtin" "$src/modules.builtin.modinfo" "$mods/"
	for d in fs net crypto lib arch drivers/infiniband drivers/virtio drivers/block; do
		mkdir -p "$mods/kernel/${d%/*}"
		cp -a "$src/kernel/$d" "$mods/kernel/$d"
	done
	for m in virtio_net net_failover; do
		cp -a "$src/kernel/drivers/net/$m.ko" "$mods/kernel/drivers/net/"
	done
	cp -a "$src/kernel/drivers/firmware/qemu_fw_cfg.ko" "$mods/kernel/drivers/firmware/" 2>/dev/null || true
	cp "$siw_dir/siw.ko" "$mods/extra/"
	depmod -b "$rootfs" "$KVER"
fi

# ---- guest configuration
install -m 0755 "$here/peer-init" "$rootfs/sbin/peer-init"
echo peer >"$rootfs/etc/hostname"
printf '127.0.0.1 localhost\n10.0.2.15 peer\n' >"$rootfs/etc/hosts"
mkdir -p "$rootfs/export" "$rootfs/mnt/nfs" "$rootfs/peer"
echo '/export *(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)' >"$rootfs/etc/exports"
# nfsd also listens for RPC-over-RDMA (20049, RFC 8267 §4)
printf '[nfsd]\nthreads=8\nrdma=y\nrdma-port=20049\nvers3=y\nvers4=y\nvers4.1=y\nvers4.2=y\n' \
	>"$rootfs/etc/nfs.conf"

# ---- initramfs: busybox loads virtio + ext4, then switches to /dev/vda
if [ -n "${FORCE:-}" ] || [ ! -f "$PEER_DIR/initramfs.cpio.gz" ]; then
	say "initramfs"
	ir=$PEER_DIR/initramfs
	rm -rf "$ir"
	mkdir -p "$ir/bin" "$ir/dev" "$ir/proc" "$ir/sys" "$ir/newroot" "$ir/lib/modules"
	cp /bin/busybox "$ir/bin/"
	for a in sh mount umount insmod switch_root sleep cat; do ln -s busybox "$ir/bin/$a"; done
	# the modules with their dependencies first, each once
	for m in virtio_pci virtio_blk ext4; do
		modprobe -d "$rootfs" -S "$KVER" --show-depends "$m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
		cp "$ko" "$ir/lib/modules/"
		basename "$ko" >>"$ir/lib/modules/order"
	done
	cat >"$ir/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /lib/modules/order); do insmod "/lib/modules/$m" 2>/dev/null; done
n=0
while [ ! -b /dev/vda ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
mount -t ext4 /dev/vda /newroot || { echo "initramfs: no /dev/vda"; exec sh; }
umount /proc /sys /dev 2>/dev/null
exec switch_root /newroot /sbin/peer-init
INIT
	chmod 0755 "$ir/init"
	(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) >"$PEER_DIR/initramfs.cpio.gz"
fi
cp -f "/boot/vmlinuz-$KVER" "$PEER_DIR/vmlinuz"

# ---- root image (the guest boots it with snapshot=on: never written)
say "ext4 image from $rootfs"
rm -f "$PEER_DIR/guest.img"
truncate -s 2G "$PEER_DIR/guest.img"
mkfs.ext4 -q -F -L rpcrdma-guest -d "$rootfs" "$PEER_DIR/guest.img"
echo "$version" >"$stamp_file"
say "done: $PEER_DIR (harness $version)"
