#!/bin/bash
# ctest interop_write_verify: every file our client WROTE over RDMA, as the
# guest's kernel sees it on disk after the run (cksum in the guest, after
# host-done), must match what the client computed before sending
# (STATE_DIR/expected-*.cksum, written by test_interop_nfs3_write and
# test_interop_clnt).
# usage: write-verify.sh STATE_DIR     exit 0 / 1, 77 when there was no guest
set -uo pipefail
state=${1:?usage: write-verify.sh STATE_DIR}
if [ -f "$state/skip" ]; then
	echo "SKIP: $(cat "$state/skip")"
	exit 77
fi
got=$state/out/after.cksum
exp=$state/expected.all
cat "$state"/expected-*.cksum >"$exp" 2>/dev/null
[ -s "$got" ] || {
	echo "FAIL: no $got from the guest"
	exit 1
}
[ -s "$exp" ] || {
	echo "FAIL: no $state/expected-*.cksum: the write tests did not run or wrote nothing"
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
