#!/bin/bash
# test_instr (issue 38): user-space instructions per NULL call, counted the
# reproducible way (bench/rpc/instr.sh: callgrind, no busy-polling, ticks
# and idle threads left out), for our client and server and for libtirpc's
# client and svc_run server in the same run; fails when ours exceeds
# libtirpc's on either side. Counts, not times. Skips (77) without valgrind.
#
#   test_instr.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
if ! command -v valgrind >/dev/null 2>&1; then
	echo "SKIP: valgrind is not installed (scripts/install-deps.sh installs it); the count needs callgrind"
	exit 77
fi
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# figures on stdout ("SIDE PEER N"), each pair's detail on stderr
out=$(bash "$src/bench/rpc/instr.sh" --build "$build" --calls 200,1200 2>"$err")
rc=$?
cat "$err"
echo "$out"
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "FAIL: instr.sh exited $rc"; exit 1; }
fig() { echo "$out" | awk -v s="$1" -v p="$2" 'NF == 3 && $1 == s && $2 == p && $3 ~ /^[0-9]+$/ { print $3 }'; }
fail=0
for side in client server; do
	ours=$(fig $side rdma) theirs=$(fig $side tcp)
	if [ -z "$ours" ] || [ -z "$theirs" ] || [ "$ours" = 0 ] || [ "$theirs" = 0 ]; then
		echo "FAIL: no $side figure (ours '$ours', libtirpc '$theirs')"
		fail=1
	elif [ "$ours" -gt "$theirs" ]; then
		echo "FAIL: $side: $ours instructions per NULL call, libtirpc $theirs"
		fail=1
	else
		echo "ok: $side: $ours instructions per NULL call, libtirpc $theirs"
	fi
done
exit $fail
