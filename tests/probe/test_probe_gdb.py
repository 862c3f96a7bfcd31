#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every USDT probe fires, with the arguments the traffic says (issue 37).

Runs probe_drive (its server child and its clients) under gdb, which
stops at every rpcrdma:* probe of the binary (the list: its stapsdt
notes, readelf -n) in both processes (detach-on-fork off) and prints the
probe's arguments; then checks them against what each step's call result
says: the XID of a call marshalled is the XID the server received, the
server answered and the client received; the RDMA_ERROR codes are the ones
provoked; the reconnect is counted; Version Two is the negotiation result;
a reply in a Read chunk is exposed, pulled, notified and released with
the same XID and length; a reverse call has the same XID at all four
points. Exit 77 (skip) only when gdb is missing.

usage: test_probe_gdb.py PROBE_DRIVE
"""
import re
import shutil
import subprocess
import sys
import tempfile

ERR_CHUNK = 2
EREMOTEIO = 121
MSG, NOMSG, ERROR = 0, 1, 4
CLIENT, SERVER = 0, 1
FORWARD, REVERSE = 0, 1


def probe_notes(binary):
    """{name: argument count} from the binary's rpcrdma stapsdt notes."""
    out = subprocess.run(["readelf", "-n", binary], check=True, capture_output=True,
                         text=True).stdout
    probes = {}
    prov = name = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Provider:"):
            prov = line.split()[1]
        elif line.startswith("Name:"):
            name = line.split()[1]
        elif line.startswith("Arguments:") and prov == "rpcrdma":
            probes[name] = len(line.split()) - 1
    return probes


def gdb_script(probes):
    s = ["set pagination off", "set confirm off", "set width 0",
         "set detach-on-fork off", "set follow-fork-mode parent",
         "set schedule-multiple on", "set print inferior-events off",
         "set print thread-events off"]
    for name, n in sorted(probes.items()):
        args = "".join(", $_probe_arg%d" % i for i in range(n))
        s += ["break -probe-stap rpcrdma:%s" % name, "commands", "silent",
              'printf "PROBE %%d %s%s\\n", $_inferior%s' % (name, " %lld" * n, args),
              "continue", "end"]
    # run; whenever a server child exits (they do before the client, which
    # waits for them), go on from the client, inferior 1, with the others,
    # until the client has exited too (continue then fails: the end)
    s += ["run", "while 1", "inferior 1", "continue", "end"]
    return "\n".join(s) + "\n"


failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL: " + what, file=sys.stderr)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    drive = sys.argv[1]
    if not shutil.which("gdb"):
        print("SKIP: gdb not installed (apt-get install gdb)")
        return 77
    probes = probe_notes(drive)
    # the 19 probes of man/man3/rpcrdma.3 (TRACING) are in the binary
    check(len(probes) >= 19, "probes in %s: %s" % (drive, sorted(probes)))
    with tempfile.NamedTemporaryFile("w", suffix=".gdb") as f:
        f.write(gdb_script(probes))
        f.flush()
        r = subprocess.run(["gdb", "-batch", "-nx", "-x", f.name, "--args", drive],
                           capture_output=True, text=True, timeout=170)
    out = r.stdout
    fired = []  # (inferior, name, [args])
    steps = {}
    for line in out.splitlines():
        m = re.match(r"PROBE (\d+) (\w+)((?: -?\d+)*)$", line)
        if m:
            fired.append((int(m.group(1)), m.group(2), [int(x) for x in m.group(3).split()]))
            continue
        m = re.match(r"STEP (\w+) (.*)$", line)
        if m:
            steps[m.group(1)] = {k: int(v, 0) for k, v in
                                 (kv.split("=") for kv in m.group(2).split())}
    if "end" not in steps or steps["end"]["failures"] != 0:
        print(out + r.stderr, file=sys.stderr)
        check(False, "probe_drive did not run through (its checks above)")
        return 1

    def find(name, **want):
        """Firings of @name whose arguments match @want (position: value)."""
        res = []
        for _, n, a in fired:
            if n == name and all(a[int(k[1:])] == v for k, v in want.items()):
                res.append(a)
        return res

    # every probe fired at least once
    for name in probes:
        check(find(name), "probe %s never fired" % name)

    # a Short call: marshalled RDMA_MSG without chunks, received, answered
    # and its reply received, one XID throughout
    x = steps["null"]["xid"]
    m = find("call_marshal", a0=x)
    check(len(m) == 1 and m[0][1:5] == [MSG, 0, 0, 0] and m[0][5] > 0 and m[0][6] > 0,
          "call_marshal of the NULL call %#x: %s" % (x, m))
    c = find("call_recv", a0=x)
    check(len(c) == 1 and c[0][1:3] == [1, MSG] and c[0][3] == 16,
          "call_recv of %#x (vers 1, RDMA_MSG, 16 credits asked): %s" % (x, c))
    s = find("reply_send", a0=x)
    check(len(s) == 1 and s[0][1] == MSG, "reply_send of %#x: %s" % (x, s))
    rr = find("reply_recv", a0=x)
    check(len(rr) == 1 and rr[0][1] == MSG and rr[0][3] == 0, "reply_recv of %#x: %s" % (x, rr))
    # credits: the grant of the server's first reply, as reply_recv saw it,
    # more than the one credit a connection starts with (RFC 8166 §3.3.1)
    cr = find("credits", a0=FORWARD)
    check(cr and cr[0][1] > 1 and rr and cr[0][1] == rr[0][2] and cr[0][2] == 1,
          "first forward credits (the grant reply_recv saw, one call on the wire): %s" % cr[:2])

    # a Long Call: RDMA_NOMSG with a Position-Zero Read chunk
    x = steps["long_call"]["xid"]
    m = find("call_marshal", a0=x)
    check(len(m) == 1 and m[0][1] == NOMSG and m[0][2] >= 1,
          "call_marshal of the Long Call %#x: %s" % (x, m))
    c = find("call_recv", a0=x)
    check(len(c) == 1 and c[0][2] == NOMSG, "call_recv of the Long Call: %s" % c)
    check(len(find("reply_recv", a0=x)) == 1, "reply_recv of the Long Call")

    # reliable reply: exposed, sent RDMA_NOMSG, pulled, notified, released
    x = steps["rr"]["xid"]
    e = find("rr_expose", a0=x)
    check(len(e) == 1 and e[0][1] > 70000, "rr_expose of %#x: %s" % (x, e))
    check(len(find("reply_send", a0=x, a1=NOMSG)) == 1, "reply_send RDMA_NOMSG of %#x" % x)
    p = find("rr_pull", a0=x)
    check(len(p) == 1 and e and p[0][1] == e[0][1], "rr_pull of %#x (length exposed): %s" % (x, p))
    n = find("rr_notify", a0=x)
    # RDMA_DONE in Version One; Send With Invalidate names the exposed STag
    check(len(n) == 1 and n[0][1] == 1 and e and n[0][2] in (0, e[0][2]),
          "rr_notify of %#x: %s" % (x, n))
    d = find("rr_done", a0=x)
    check(len(d) == 1 and e and n and d[0][1:] == [e[0][1], n[0][2]], "rr_done of %#x: %s" % (x, d))
    r2 = find("reply_recv", a0=x)
    check(len(r2) == 1 and r2[0][1] == NOMSG and r2[0][3] == 0, "reply_recv of %#x: %s" % (x, r2))

    # reverse calls (RFC 8167): a Short one answered; one with a Read
    # chunk refused by a client without reverse chunks (ERR_CHUNK)
    sent = find("bc_call_send")
    short = [a for a in sent if a[2] == 0]
    chunked = [a for a in sent if a[2] >= 1]
    check(len(short) == 1 and len(chunked) == 1, "bc_call_send: %s" % sent)
    if short:
        y = short[0][0]
        check(len(find("bc_call_recv", a0=y, a2=MSG)) == 1, "bc_call_recv of %#x" % y)
        check(len(find("bc_reply_send", a0=y)) == 1, "bc_reply_send of %#x" % y)
        b = find("bc_reply_recv", a0=y)
        check(len(b) == 1 and b[0][1] == MSG and b[0][3] == 0, "bc_reply_recv of %#x: %s" % (y, b))
        check(find("credits", a0=REVERSE), "reverse credits")
    if chunked:
        z = chunked[0][0]
        check(len(find("error_send", a0=CLIENT, a1=z, a2=ERR_CHUNK, a3=1)) == 1,
              "client's ERR_CHUNK for reverse call %#x" % z)
        check(len(find("error_recv", a0=SERVER, a1=z, a2=ERR_CHUNK, a3=1)) == 1,
              "server received ERR_CHUNK for reverse call %#x" % z)
        b = find("bc_reply_recv", a0=z)
        check(len(b) == 1 and b[0][1] == ERROR and b[0][3] == -EREMOTEIO,
              "bc_reply_recv of the refused reverse call: %s" % b)

    # forward ERR_CHUNK: the reply fits no Reply chunk offered
    x = steps["err_chunk"]["xid"]
    check(len(find("error_send", a0=SERVER, a1=x, a2=ERR_CHUNK, a3=1)) == 1,
          "server's ERR_CHUNK for %#x: %s" % (x, find("error_send")))
    check(len(find("error_recv", a0=CLIENT, a1=x, a2=ERR_CHUNK, a3=1)) == 1,
          "client received ERR_CHUNK for %#x: %s" % (x, find("error_recv")))
    b = find("reply_recv", a0=x)
    check(len(b) == 1 and b[0][1] == ERROR and b[0][3] == -EREMOTEIO,
          "reply_recv of the refused call: %s" % b)

    # the dropped connection: down on both sides, reconnected, up again
    check(find("conn_down", a0=CLIENT, a1=0), "client conn_down of connection 0")
    check(find("conn_down", a0=SERVER), "server conn_down")
    rc = find("reconnect")
    check(len(rc) == 1 and rc[0][0] == 1 and rc[0][1] == 0 and rc[0][2] == 1,
          "reconnect (connection 1, no failed attempt, first reconnect): %s" % rc)
    check(find("conn_up", a0=CLIENT, a1=1), "client conn_up of connection 1")
    check(len(find("conn_up", a0=SERVER)) >= 4, "server conn_up for each connection")
    x = steps["after_reconnect"]["xid"]
    check(len(find("reply_recv", a0=x)) == 1, "reply_recv after the reconnect")

    # Version Two negotiated, both sides; Version One never a result here
    v = find("v2_result")
    check(find("v2_result", a0=CLIENT, a1=2) and find("v2_result", a0=SERVER, a1=2)
          and not find("v2_result", a1=1), "v2_result: %s" % v)
    x = steps["v2"]["xid"]
    c = find("call_recv", a0=x)
    check(len(c) == 1 and c[0][1] == 2, "call_recv of the Version Two call %#x: %s" % (x, c))

    if failures:
        print(out, file=sys.stderr)
        print("%d probe check(s) failed" % failures)
        return 1
    if "-v" in sys.argv[2:]:
        print(out)
    print("%d probes, %d firings checked" % (len(probes), len(fired)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
