#!/bin/bash
# ctest interop_write_verify: every file our client WROTE over RDMA, as the
# guest's kernel sees it on disk after the run (cksum in the guest, after
# host-done), must match what the client computed before sending
# (STATE_DIR/expected-write.cksum, written by test_interop_nfs3_write).
# usage: write-verify.sh STATE_DIR     exit 0 / 1, 77 when there was no guest
set -uo pipefail
state=${1:?usage: write-verify.sh STATE_DIR}
if [ -f "$state/skip" ]; then
	echo "SKIP: $(cat "$state/skip")"
	exit 77
fi
exp=$state/expected-write.cksum
got=$state/out/after.cksum
[ -s "$got" ] || {
	echo "FAIL: no $got from the guest"
	exit 1
}
[ -s "$exp" ] || {
	echo "FAIL: no $exp: the write test did not run or wrote nothing"
	exit 1
}
echo "client (host) computed:"
cat "$exp"
echo "guest kernel has on disk:"
cat "$got"
rc=0
while read -r crc size name; do
	line=$(awk -v n="$name" '$3 == n' "$got")
	if [ "$line" = "$crc $size $name" ]; then
		echo "OK   $name: $size bytes, cksum $crc on both sides"
	else
		echo "FAIL $name: client $crc $size, guest ${line:-missing}"
		rc=1
	fi
done <"$exp"
exit $rc
