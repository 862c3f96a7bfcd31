#!/bin/sh
# rpcrdma-perf end to end: a real server process and client runs over
# loopback, RPC-over-RDMA (softiwarp) and ONC RPC over TCP (libtirpc, both
# server models), for NULL, WRITE (Read chunks) and READ (Write chunks).
# Asserts: the CSV has the documented columns and one row per case; every
# row has calls, a positive rate and latency, no errors; every WRITE/READ
# payload was checked (verified == calls) and RDMA really used chunks; the
# JSON parses with the same figures; --plot writes a PNG; --connections
# reports the server's RSS with the connections it saw; a server
# answering with wrong bytes is caught on every transport; and --connections
# counts each failed WRITE once (wrong data, or refused by a server with
# --test-refuse-writes), naming its connection.
# usage: test_tool_perf.sh PERF
set -u
PERF=$1
TMP=$(mktemp -d)
. "$(dirname "$0")/server_start.sh"
trap 'perf_server_stop; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

perf_server_start
cat "$TMP/server.log"
C="$PERF client 127.0.0.1 --port $RPORT --tcp-port $TPORT --tcp-fork-port $FPORT --no-progress"

cols="transport,server_model,workload,size,threads,inflight,seconds,ops,ops_per_s,mb_per_s,p50_us,p99_us,p999_us,mean_us,max_us,verified,errors,bad_data,client_cpu,server_cpu,server_cpu_seen,credit_stalls,read_chunks,write_chunks,long_calls,remote_inv,server_rss_kb,ops_per_s_med,srv_user_us,srv_sys_us,srv_csw,cli_user_us,cli_sys_us,cli_csw"

# check_csv FILE ROWS WORKLOAD: header, row count, figures of every row
check_csv() {
	[ "$(head -1 "$1")" = "$cols" ] || fail "$1: header is $(head -1 "$1")"
	n=$(($(wc -l <"$1") - 1))
	[ "$n" -eq "$2" ] || fail "$1: $n rows, want $2"
	awk -F, -v wl="$3" '
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		id = $c["transport"] " " $c["workload"] " " $c["size"]
		if ($c["workload"] != wl) { print id ": wrong workload"; bad = 1 }
		if ($c["ops"] + 0 <= 0 || $c["ops_per_s"] + 0 <= 0) { print id ": no calls"; bad = 1 }
		if ($c["p50_us"] + 0 <= 0 || $c["p99_us"] + 0 < $c["p50_us"] + 0) { print id ": latency"; bad = 1 }
		if ($c["errors"] != 0 || $c["bad_data"] != 0) { print id ": errors/bad data"; bad = 1 }
		if (wl != "null") {
			if ($c["size"] + 0 <= 0 || $c["mb_per_s"] + 0 <= 0) { print id ": no MB/s"; bad = 1 }
			if ($c["verified"] != $c["ops"]) { print id ": not every payload checked"; bad = 1 }
		}
		if ($c["transport"] == "rdma" && wl == "write" && $c["read_chunks"] + 0 < $c["ops"] + 0) {
			print id ": WRITE did not use Read chunks"; bad = 1 }
		if ($c["transport"] == "rdma" && wl == "read" && $c["write_chunks"] + 0 < $c["ops"] + 0) {
			print id ": READ did not use Write chunks"; bad = 1 }
		# CPU per call: measured for the client and the server that
		# answered the calls; unknown (-1) for the forked TCP server,
		# whose PERF_INFO comes from another process
		if ($c["cli_user_us"] + $c["cli_sys_us"] <= 0 || $c["cli_csw"] < 0) { print id ": client CPU per call"; bad = 1 }
		if ($c["transport"] == "tcp-fork") {
			if ($c["srv_user_us"] != -1 || $c["srv_csw"] != -1) { print id ": forked server CPU not unknown"; bad = 1 }
		} else if ($c["srv_user_us"] + $c["srv_sys_us"] <= 0 || $c["srv_csw"] < 0) { print id ": server CPU per call"; bad = 1 }
		seen[$c["transport"]] = 1
	}
	END {
		if (!seen["rdma"] || !seen["tcp"] || !seen["tcp-fork"]) { print "missing a transport"; bad = 1 }
		exit bad
	}' "$1" || fail "$1 figures"
}

$C --workload null --peer both --tcp-server both --count 300 --csv "$TMP/null.csv" >"$TMP/null.out" 2>&1 ||
	{ cat "$TMP/null.out"; fail "null run"; }
cat "$TMP/null.out"
check_csv "$TMP/null.csv" 3 null
grep -q "rdma/tcp rate" "$TMP/null.out" || fail "no rdma/tcp ratio in the table"
grep -q "^placement: " "$TMP/null.out" || fail "no placement line"

$C --workload write --sizes 4K,1M --threads 2 --inflight 4 --peer both --tcp-server both --count 20 \
	--csv "$TMP/write.csv" >"$TMP/write.out" 2>&1 || { cat "$TMP/write.out"; fail "write run"; }
cat "$TMP/write.out"
check_csv "$TMP/write.csv" 6 write

$C --workload read --sizes 4K,1M --threads 2 --inflight 4 --peer both --tcp-server both --count 20 \
	--csv "$TMP/read.csv" >"$TMP/read.out" 2>&1 || { cat "$TMP/read.out"; fail "read run"; }
cat "$TMP/read.out"
check_csv "$TMP/read.csv" 6 read

# JSON: every figure machine-readable
$C --workload read --size 64K --peer both --count 30 --json >"$TMP/read.json" 2>"$TMP/json.err" ||
	{ cat "$TMP/json.err"; fail "json run"; }
if command -v python3 >/dev/null 2>&1; then
	python3 - "$TMP/read.json" <<'PY' || fail "JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
assert len(r) == 2, r
for x in r:
    assert x["workload"] == "read" and x["size"] == 65536, x
    assert x["ops"] > 0 and x["ops_per_s"] > 0 and x["mb_per_s"] > 0, x
    assert x["verified"] == x["ops"] and x["errors"] == 0 and x["bad_data"] == 0, x
    assert x["p50_us"] > 0, x
assert {x["transport"] for x in r} == {"rdma", "tcp"}
assert "rdma_over_this_rate" in [x for x in r if x["transport"] == "tcp"][0]
assert d["machine"] and d["placement"]
print("json ok:", [(x["transport"], round(x["ops_per_s"])) for x in r])
PY
else
	grep -q '"transport": "rdma"' "$TMP/read.json" || fail "JSON lacks the rdma result"
	echo "python3 absent: JSON checked with grep only"
fi

# --plot: a PNG of MB/s and latency against size
if command -v gnuplot >/dev/null 2>&1; then
	$C --workload write --sizes 4K,64K --peer both --count 10 --plot "$TMP/w.png" >/dev/null 2>&1 ||
		fail "plot run"
	[ "$(head -c 4 "$TMP/w.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "not a PNG"
fi

# --connections: server RSS with N connections, one WRITE on each at once
$C --connections 8 --workload write --size 64K --json >"$TMP/conn.json" 2>"$TMP/conn.err" ||
	{ cat "$TMP/conn.err"; fail "connections run"; }
cat "$TMP/conn.json"
grep -q '"server_connections_seen": \(8\|9\|1[0-9]\)' "$TMP/conn.json" || fail "server did not see 8 connections"
grep -q '"server_rss_kb_n": [1-9]' "$TMP/conn.json" || fail "no server RSS"

perf_server_stop || fail "server exit status $?"

# The checks can fail: a server that answers with wrong bytes (READ data 8
# bytes off, WRITE checksum off by one) makes every case report bad data
# and the client exit 1.
# check_conn_fail OUT N X ERR WRONG: a --connections N run whose WRITEs
# failed says "X of N WRITEs failed: ERR with an error, WRONG with wrong
# data, 0 unanswered" and names X different connections, each once (a
# failed call once counted twice printed "382 of 200").
check_conn_fail() {
	awk -v n="$2" -v x="$3" -v e="$4" -v w="$5" '
	/^rpcrdma-perf: WRITE on connection [0-9]+ failed: / {
		k = $5 + 0; if (k < 1 || k > n || seen[k]++) { print "connection " $5; bad = 1 }
		listed++
	}
	/ WRITEs failed: / {
		sums++
		if ($2 != x || $4 != n || $7 != e || $11 != w || $15 != 0 || $2 > $4 || $7 + $11 + $15 != $2) {
			print "counts: " $0; bad = 1
		}
	}
	END { if (sums != 1 || listed != x) { print sums " summaries, " listed " listed"; bad = 1 } exit bad }
	' "$1" || { cat "$1"; fail "--connections $2 with failed WRITEs"; }
}

perf_server_start --test-corrupt
C="$PERF client 127.0.0.1 --port $RPORT --tcp-port $TPORT --tcp-fork-port $FPORT --no-progress"
for wl in write read; do
	$C --workload $wl --size 64K --peer both --tcp-server both --count 3 \
		--csv "$TMP/bad-$wl.csv" >"$TMP/bad.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || { cat "$TMP/bad.out"; fail "corrupt $wl: exit status $rc, want 1"; }
	n=$(awk -F, 'NR > 1 && $18 > 0 && $8 == 0' "$TMP/bad-$wl.csv" | wc -l)
	[ "$n" -eq 3 ] || { cat "$TMP/bad-$wl.csv"; fail "corrupt $wl: $n of 3 rows show bad data"; }
done
# every WRITE answered, each with a wrong checksum: counted once each
$C --connections 5 --workload write --size 64K >"$TMP/cbad.out" 2>&1 &&
	{ cat "$TMP/cbad.out"; fail "--connections with wrong data exited 0"; }
check_conn_fail "$TMP/cbad.out" 5 5 0 5
perf_server_stop || fail "corrupt server exit status $?"

# A server refusing every second WRITE: of 7 at once, 3 fail with an RPC
# error (their results stay zeroed: they must not also count as wrong data).
perf_server_start --test-refuse-writes
C="$PERF client 127.0.0.1 --port $RPORT --tcp-port $TPORT --tcp-fork-port $FPORT --no-progress"
$C --connections 7 --workload write --size 64K >"$TMP/cref.out" 2>&1 &&
	{ cat "$TMP/cref.out"; fail "--connections with refused WRITEs exited 0"; }
check_conn_fail "$TMP/cref.out" 7 3 3 0
grep -q "failed: SYSTEM_ERR" "$TMP/cref.out" || { cat "$TMP/cref.out"; fail "refusal not named"; }
perf_server_stop || fail "refusing server exit status $?"
echo ok
