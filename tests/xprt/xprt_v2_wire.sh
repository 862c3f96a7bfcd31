#!/usr/bin/env bash
# Wire check of RPC-over-RDMA Version Two (ctest label wire). Runs
# test_xprt_v2_wire_traffic (a Version Two client sending its properties to
# a v2-capable server that does not take them: inline call and reply, Read
# chunk, Write chunk, Long Call with a Reply chunk, RDMA2_OPTIONAL answered
# by RDMA2_ERROR ERR_INVAL_OPTION) on a free port, captures lo with tcpdump.
# Wireshark 4.0 does not decode Version Two: tshark (two passes) only
# dissects MPA / DDP / RDMAP, the untagged Send payloads are reassembled
# by (direction, queue, MSN, MO) and decoded by our codec (V2_DECODER,
# tests/transport/v2_wire_decode.c), one line per header. Asserts:
#   - tcpdump dropped nothing; no bad CRC32c and CRCs checked at all;
#   - every Send decodes, with vers 2;
#   - the message mix the program sent: 5 RPC calls and 5 replies as
#     RDMA2_MSG / RDMA2_NOMSG with rdma_direction CALL from the client and
#     REPLY from the server; 1 RDMA2_NOMSG each way (a Position-Zero Read
#     chunk and a Reply chunk in the call); a Read chunk in an RDMA2_MSG
#     call; a Write chunk in a call and in its reply; 1 RDMA2_OPTIONAL
#     (our properties) from the client and 1 RDMA2_ERROR ERR_INVAL_OPTION
#     from the server with its XID;
#   - every reply's XID is a call's, the RDMA XID of an inline message is
#     its RPC XID, and every call was answered exactly once;
#   - every server header carries the credit grant the client reports.
# Usage: xprt_v2_wire.sh TRAFFIC_BINARY V2_DECODER    exit 0 pass, 1 fail, 77 skip
set -uo pipefail

bin=${1:?usage: xprt_v2_wire.sh TRAFFIC_BINARY V2_DECODER}
dec=${2:?usage: xprt_v2_wire.sh TRAFFIC_BINARY V2_DECODER}
# shellcheck source-path=SCRIPTDIR source=../lib/wire_capture.sh
. "$(dirname "$0")/../lib/wire_capture.sh"

command -v python3 >/dev/null || skip "python3 not installed"
wire_init xprtv2 "$bin"
[ -x "$dec" ] || fail "decoder $dec not found"
wire_capture XPRT_WIRE_PORT ||
	skip "tcpdump dropped packets in 5 captures (machine too loaded to capture)"

ts -V >"$work/verbose.txt"
bad_crc=$(grep -ci "bad crc" "$work/verbose.txt")
good_crc=$(grep -ci "good crc" "$work/verbose.txt")
[ "$bad_crc" -eq 0 ] || fail "$bad_crc FPDUs with a bad CRC32c"
[ "$good_crc" -gt 0 ] || fail "no FPDU with a checked CRC (CRC not negotiated?)"
granted=$(sed -n 's/^granted \([0-9]*\)$/\1/p' "$work/traffic.out")
[ -n "$granted" ] || fail "the traffic program did not print its credit grant"

# Send payloads, one line each: frame (where the FPDU starts), source
# port, hex bytes. tshark 4.0 loses Send payloads (its RDMAP reassembly
# keys on the frame, so the second Send of a frame has no data, and its
# rpcordma heuristic swallows some v2 headers), so tshark gives the TCP
# payloads and the MPA / DDP / RDMAP framing (RFC 5044, 5041, 5040) is
# read here; the Send count is checked against tshark's dissection.
ts -T fields -E separator=' ' -e frame.number -e tcp.srcport -e tcp.seq_raw -e tcp.payload \
	-Y 'tcp.len > 0' >"$work/segments.txt"
python3 - "$work/segments.txt" >"$work/sends.txt" <<'PY' || fail "could not extract the Sends"
import struct
import sys

SENDS = {3, 4, 5, 6}  # Send, with Invalidate, with SE, with SE and Invalidate
streams = {}  # source port -> {seq: (frame, bytes)}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4:
        streams.setdefault(f[1], {}).setdefault(int(f[2]), (int(f[0]), bytes.fromhex(f[3])))
flat = {}
crc = False
for port, segs in streams.items():
    data, frames, nxt = b"", [], None
    for seq in sorted(segs):
        frame, b = segs[seq]
        if nxt is not None and seq != nxt:
            sys.exit("port %s: gap or overlap in the TCP stream at %d" % (port, seq))
        frames.append((len(data), frame))
        data += b
        nxt = seq + len(b)
    # MPA request / reply: 16-byte key, flags, revision, private data length
    flags, pdlen = data[16], struct.unpack(">H", data[18:20])[0]
    if flags & 0x80:
        sys.exit("MPA markers in use: not handled here")
    crc = crc or bool(flags & 0x40)
    flat[port] = (data[20 + pdlen:], frames, 20 + pdlen)
parts, done = {}, []
for port, (data, frames, base) in flat.items():
    off = 0
    while off + 2 <= len(data):
        n = struct.unpack(">H", data[off:off + 2])[0]
        ulpdu = data[off + 2:off + 2 + n]
        frame = max(fr for start, fr in frames if start <= base + off)
        off += (2 + n + 3) // 4 * 4 + (4 if crc else 0)
        if len(ulpdu) != n or off > len(data):
            sys.exit("port %s: truncated FPDU" % port)
        ddp, op = ulpdu[0], ulpdu[1] & 0x0F
        if ddp & 0x80 or op not in SENDS:
            continue  # tagged (RDMA Write, Read Response) or Read Request
        qn, msn, mo = struct.unpack(">III", ulpdu[6:18])
        key = (port, qn, msn)
        parts.setdefault(key, {})[mo] = ulpdu[18:]
        if ddp & 0x40:  # last segment of the message
            done.append((frame, key))
for frame, key in sorted(done, key=lambda d: d[0]):
    msg = b""
    for mo in sorted(parts[key]):
        if mo != len(msg):
            sys.exit("Send %s: gap at offset %d" % (key, len(msg)))
        msg += parts[key][mo]
    print(frame, key[0], msg.hex())
PY
tsends=$(ts -T fields -E occurrence=a -E aggregator=' ' -e iwarp_rdma.opcode |
	tr ' ' '\n' | grep -Ec '^(0x0*)?[3-6]$')
[ "$(wc -l <"$work/sends.txt")" -eq "$tsends" ] ||
	fail "$(wc -l <"$work/sends.txt") Sends read from the stream, tshark dissected $tsends"
[ -s "$work/sends.txt" ] || fail "no Send found in the capture"
"$dec" <"$work/sends.txt" >"$work/headers.txt"
drc=$?
cat "$work/headers.txt"
[ $drc -eq 0 ] || fail "a Send did not decode: $(grep -m1 error= "$work/headers.txt")"
[ "$(wc -l <"$work/headers.txt")" -eq "$(wc -l <"$work/sends.txt")" ] ||
	fail "the decoder printed fewer lines than Sends"

# $port (wire_capture.sh) is the server's; the other side is the client.
awk -v sport="$port" -v granted="$granted" '
function v(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
{
	client = v("port") != sport
	if (v("vers") != 2) { print "FAIL: frame " v("frame") ": vers " v("vers"); bad++ }
	proc = v("proc"); dir = v("direction")
	if (!client && v("credit") != granted) {
		print "FAIL: frame " v("frame") ": credit " v("credit") ", granted " granted; bad++
	}
	if (proc == "MSG" || proc == "NOMSG") {
		want = client ? "CALL" : "REPLY"
		if (dir != want) { print "FAIL: frame " v("frame") ": direction " dir; bad++ }
		if (proc == "MSG" && v("rpc_xid") != v("xid")) {
			print "FAIL: frame " v("frame") ": RPC xid " v("rpc_xid") " in header xid " v("xid"); bad++
		}
		if (proc == "MSG" && v("rpc_type") != (client ? 0 : 1)) {
			print "FAIL: frame " v("frame") ": RPC msg_type " v("rpc_type"); bad++
		}
		if (client) { calls++; call[v("xid")]++; nomsg_c += proc == "NOMSG"
			readc += proc == "MSG" && v("reads") > 0; pzero += proc == "NOMSG" && v("reads") > 0
			writec += v("writes") > 0; replyc += v("reply") == 1 }
		else { replies++; reply[v("xid")]++; nomsg_r += proc == "NOMSG"; writer += v("writes") > 0 }
	} else if (proc == "OPTIONAL") {
		if (client) { opt++; optxid = v("xid") } else { print "FAIL: OPTIONAL from the server"; bad++ }
	} else if (proc == "ERROR") {
		if (client) { print "FAIL: RDMA2_ERROR from the client"; bad++ }
		else { err++; errxid = v("xid"); errcode = v("err") }
	}
}
END {
	for (x in reply) if (call[x] != 1 || reply[x] != 1) { print "FAIL: reply xid " x " matches " call[x] " calls"; bad++ }
	for (x in call) if (reply[x] != 1) { print "FAIL: call xid " x " has " reply[x] " replies"; bad++ }
	printf "calls %d, replies %d; RDMA2_NOMSG %d call(s) %d reply(ies); RDMA2_MSG calls with a Read chunk %d, Position-Zero %d; calls with a Write chunk %d, replies %d; Reply chunks %d; OPTIONAL %d; ERROR %d (%s); credit grant %s\n",
		calls, replies, nomsg_c, nomsg_r, readc, pzero, writec, writer, replyc, opt, err, errcode, granted
	if (calls != 5 || replies != 5) { print "FAIL: expected 5 calls and 5 replies"; bad++ }
	if (nomsg_c != 1 || nomsg_r != 1 || pzero != 1 || replyc != 1) { print "FAIL: expected one Long Call with a Reply chunk and one RDMA2_NOMSG reply"; bad++ }
	if (readc != 1) { print "FAIL: expected one RDMA2_MSG call with a Read chunk"; bad++ }
	if (writec != 1 || writer != 1) { print "FAIL: expected a Write chunk in one call and its reply"; bad++ }
	if (opt != 1 || err != 1 || errcode != "ERR_INVAL_OPTION" || errxid != optxid) {
		print "FAIL: expected one RDMA2_OPTIONAL answered by ERR_INVAL_OPTION with its XID"; bad++
	}
	exit bad > 0
}' "$work/headers.txt" || fail "the Version Two message mix is not the one sent"
echo "FPDUs with good CRC $good_crc"
echo "PASS"
