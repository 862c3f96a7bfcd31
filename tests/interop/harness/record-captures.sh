#!/bin/bash
# Records the Linux-to-Linux captures the wire test reads
# (tests/data/captures/linux-siw-nfsv3.pcap.gz, linux-siw-nfsv4.1.pcap.gz):
# the guest's kernel NFS client and server over siw, NFSv3 and NFSv4.1
# (tests/interop/guest/record-captures.sh says what they do). tshark reads
# the gzip files as they are.
#
# usage: record-captures.sh [DEST]   (default tests/data/captures)
# env:   PEER_DIR (the guest, built by build-guest.sh), SIZE_MB=3
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
dest=${1:-$root/tests/data/captures}
export PEER_DIR=${PEER_DIR:-/tmp/rpcrdma-guest}

"$here/build-guest.sh" --check || {
	echo "no current guest in $PEER_DIR: run $here/build-guest.sh"
	exit 1
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
NAME=record-captures GUEST_ENV="SIZE_MB=${SIZE_MB:-3}" \
	"$here/run-guest.sh" "$root/tests/interop/guest/record-captures.sh" "$out"
mkdir -p "$dest"
for v in 3 4.1; do
	f=linux-siw-nfsv$v.pcap
	[ -s "$out/$f" ] || { echo "the guest wrote no $f"; exit 1; }
	gzip -9 -n -c "$out/$f" >"$dest/$f.gz"
	echo "$dest/$f.gz: $(stat -c %s "$dest/$f.gz") bytes," \
		"$(tshark -n -2 -r "$dest/$f.gz" -Y rpcordma 2>/dev/null | wc -l) RPC-over-RDMA frames"
done
