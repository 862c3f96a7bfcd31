#!/bin/sh
# rpcrdma-ping's device options (issue 18): --list-devices lists every
# provider like ibv_devices, and a provider that is not built or has no
# device is said in words, not "unknown host".
# usage: test_tool_devices.sh RPCRDMA-PING VERBS_BUILT(0|1)
# exit 0 pass, 1 fail
set -u
ping=$1 built=$2
fail() {
	echo "FAIL: $*"
	exit 1
}
out=$("$ping" --list-devices) || fail "--list-devices exit $?"
echo "$out"
echo "$out" | head -1 | grep -q '^provider *device *transport' || fail "no header line"
echo "$out" | grep -Eq '^softiwarp +softiwarp +iWARP' || fail "softiwarp's device not listed"
nsys=$(ls /sys/class/infiniband 2>/dev/null | wc -l)
if [ "$built" = 1 ]; then
	if [ "$nsys" -eq 0 ]; then
		echo "$out" | grep -q '^verbs *(no RDMA device' || fail "verbs: 'no RDMA device' missing"
		msg=$(RPCRDMA_PROVIDER=verbs "$ping" -w 2 127.0.0.1 2>&1) && fail "ping without device succeeded"
		echo "$msg"
		echo "$msg" | grep -q "RDMA provider 'verbs' has no usable device" || fail "no-device message: $msg"
		msg=$("$ping" -w 2 -d rxe0 127.0.0.1 2>&1) && fail "-d rxe0 without device succeeded"
		echo "$msg" | grep -q "'verbs:rxe0' has no usable device of that name" || fail "-d message: $msg"
	else
		for d in $(ls /sys/class/infiniband); do
			echo "$out" | grep -Eq "^verbs +$d " || fail "device $d not listed"
		done
	fi
else
	echo "$out" | grep -q '^verbs *(not built' || fail "verbs: 'not built' missing"
	msg=$(RPCRDMA_PROVIDER=verbs "$ping" -w 2 127.0.0.1 2>&1) && fail "ping over an unbuilt provider succeeded"
	echo "$msg" | grep -q "provider 'verbs' is not built" || fail "not-built message: $msg"
fi
msg=$(RPCRDMA_PROVIDER=nosuch "$ping" -w 2 127.0.0.1 2>&1) && fail "unknown provider succeeded"
echo "$msg" | grep -q "unknown RDMA provider 'nosuch'" || fail "unknown-provider message: $msg"
"$ping" -d 'a:b' 127.0.0.1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "-d with a colon is not bad usage"
"$ping" --help | grep -q -- '--list-devices' || fail "--help does not mention --list-devices"
"$ping" --help | grep -q -- '-d DEVICE' || fail "--help does not mention -d"
echo PASS
