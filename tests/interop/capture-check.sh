#!/bin/bash
# ctest interop_capture: the guest's tcpdump capture of the interop run
# (tcp port 20049 on its eth0: our provider's traffic with the kernel's
# siw/svcrdma) decoded by tshark in two passes (-2). Asserts:
#   - tshark reads it and it holds MPA start frames and DDP/RDMAP frames;
#   - no "Bad CRC32" anywhere (connections with MPA CRC on) and a good
#     CRC on every FPDU of those connections;
#   - every RDMAP Send (Send, Send with Invalidate, with SE, both) decodes
#     as rpcordma (an RPC-over-RDMA message: our calls and the kernel's
#     replies), i.e. as many rpcordma xids in a frame as Send FPDUs; where
#     Wireshark leaves a Send undecoded (several FPDUs in one segment, or
#     a Send cut across segments by QEMU's re-segmenting), the script
#     walks the FPDUs itself (capture-selftest.py tests that walk);
#   - no malformed packets (except Wireshark's own misreading of odd-length
#     WRITE data carried by a Read chunk, of a call with two Read chunks,
#     and of MPA frames of a TCP session that reuses an earlier one's
#     ports, all explained below).
# A direction of a TCP session in which the capture lost a segment
# (tcpdump drops packets under load: "packets dropped by kernel";
# Wireshark's tcp.analysis.lost_segment) cannot be dissected reliably
# after the gap: Wireshark then reads payload bytes as MPA/DDP headers.
# Its frames from the first lost segment on are left out of the three
# checks above and counted in the summary; everything before the gap, and
# every other direction, is checked.
# Artifacts in STATE_DIR: capture-summary.txt (one line per packet) and
# capture-rpcordma.txt (every RPC-over-RDMA message, decoded).
# usage: capture-check.sh STATE_DIR      exit 0 / 1, 77 when there was no guest
set -uo pipefail
state=${1:?usage: capture-check.sh STATE_DIR}
if [ -f "$state/skip" ]; then
	echo "SKIP: $(cat "$state/skip")"
	exit 77
fi
command -v tshark >/dev/null || {
	echo "SKIP: tshark not installed"
	exit 77
}
pcap=$state/out/interop.pcap
fail() {
	echo "FAIL: $*"
	exit 1
}
[ -s "$pcap" ] || fail "no capture at $pcap"

ts=(tshark -n -2 -r "$pcap")
"${ts[@]}" >"$state/capture-summary.txt" 2>"$state/tshark.err" || {
	cat "$state/tshark.err"
	fail "tshark cannot read $pcap"
}
"${ts[@]}" -Y rpcordma -O rpcordma,rpc,nfs >"$state/capture-rpcordma.txt" 2>/dev/null
"${ts[@]}" -T fields -E separator='|' -e frame.number -e frame.protocols \
	-e iwarp_mpa.key.req -e iwarp_mpa.key.rep -e iwarp_rdma.opcode -e rpcordma.xid \
	-e iwarp_mpa.crc_flag -e tcp.payload -e tcp.reassembled.data -e tcp.stream -e tcp.srcport \
	>"$state/capture-fields.txt" 2>/dev/null
# the first lost segment of each direction (stream and source port)
"${ts[@]}" -Y tcp.analysis.lost_segment -T fields -E separator='|' -e frame.number -e tcp.stream \
	-e tcp.srcport >"$state/capture-lost.txt" 2>/dev/null
# after_loss FIELDS-FILE: the frame numbers of FIELDS-FILE (frame|...|stream|srcport in
# its last two fields) at or after the first lost segment of their direction
after_loss() {
	awk -F'|' 'FILENAME == ARGV[1] { k = $2 "|" $3; if (!(k in from)) from[k] = $1 + 0; next }
		{ k = $(NF - 1) "|" $NF; if ((k in from) && $1 + 0 >= from[k]) print $1 }' \
		"$state/capture-lost.txt" "$1"
}
after_loss "$state/capture-fields.txt" >"$state/capture-skipped.txt"
nskip=$(wc -l <"$state/capture-skipped.txt")
nlostdir=$(awk -F'|' '{print $2 "|" $3}' "$state/capture-lost.txt" | sort -u | wc -l)
nframes=$(wc -l <"$state/capture-fields.txt")
nreq=$(awk -F'|' '$3 != ""' "$state/capture-fields.txt" | wc -l)
nrep=$(awk -F'|' '$4 != ""' "$state/capture-fields.txt" | wc -l)
nddp=$(awk -F'|' '$2 ~ /iwarp_ddp_rdmap/' "$state/capture-fields.txt" | wc -l)
if [ "$nreq" -lt 1 ] || [ "$nrep" -lt 1 ]; then
	fail "no MPA request/reply frames ($nreq/$nrep)"
fi
[ "$nddp" -ge 1 ] || fail "no DDP/RDMAP frames"

# The MPA layer of every FPDU that carries a CRC (Wireshark labels each
# "Good CRC32" or "Bad CRC32"; the full -V decode is 10x slower).
"${ts[@]}" -Y iwarp_mpa.crc_check -O iwarp_mpa >"$state/capture-crc.txt" 2>/dev/null
# Frames after a lost segment are left out (see the top).
crc_count() {
	awk -v what="$1" 'FILENAME == ARGV[1] { skip[$1] = 1; next }
		/^Frame [0-9]+:/ { f = $2; sub(":", "", f) }
		index($0, what) && !(f in skip) { n++ }
		END { print n + 0 }' "$state/capture-skipped.txt" "$state/capture-crc.txt"
}
nbad=$(crc_count 'Bad CRC32')
ngood=$(crc_count 'Good CRC32')
if [ "$nbad" -ne 0 ]; then
	grep -m5 -B30 'Bad CRC32' "$state/capture-crc.txt" | grep -E '^Frame|Bad CRC32'
	fail "$nbad FPDUs with a bad CRC32"
fi
# Some connections run with MPA CRC on (connect, read, readdir tests).
[ "$ngood" -gt 0 ] || fail "no FPDU with a CRC: the CRC-on connections are missing"

# RDMAP Send opcodes: 3 Send, 4 Send with Invalidate, 5 with SE, 6 with
# SE and Invalidate (RFC 5040 §4.2). Each must carry an rpcordma message.
# A Send the test programs built invalid on purpose (rdma_vers 2, unknown
# rdma_proc: STATE_DIR/invalid-xids) is not an RPC-over-RDMA Version One
# message, and Wireshark rightly leaves it (and a reply that echoes its
# rdma_vers) undecoded: such a frame is accepted when it holds one FPDU
# whose xid (the first word after the 18-byte untagged DDP/RDMAP header)
# is listed.
#
# Wireshark 4.0 hands only the first FPDU of a TCP segment to rpcordma:
# when a segment carries several Sends (our client sends calls back to
# back), the later ones show RDMAP headers and nothing more. Likewise a
# deliberately invalid Send can share its segment with other FPDUs (the
# first-frame nudge's zero-length Write, a later call), and when the host
# or QEMU's user-mode network is slow to forward, QEMU re-segments the
# stream so that a Send FPDU starts in one TCP segment and ends in the
# next (Wireshark reassembles it but then may not hand it to rpcordma).
# Such frames are checked here instead: walking the bytes FPDU by FPDU
# (2-byte ULPDU length, ULPDU, pad to 4, 4-byte CRC field, RFC 5044 §4),
# every Send's payload must start with an RPC-over-RDMA Version One
# header (rdma_vers 1, rdma_proc 0..4) or carry a listed deliberate xid,
# and the walk must end exactly at the end. The bytes are the segment's
# payload, or, when the segment completes an FPDU begun earlier, that
# reassembled FPDU (tcp.reassembled.data) followed by the rest of the
# segment after the FPDU's tail.
touch "$state/invalid-xids"
bad=$(awk -F'|' '
	function hex(s,    i, v, c) {
		v = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			if (c < 0) return -1
			v = v * 16 + c
		}
		return v
	}
	# Walks p (hex) as FPDUs, adding to W_V1 (Sends with a v1 header) and
	# W_INV (Sends with a listed deliberate xid). Returns 1 when every
	# Send is one of the two and the walk ends exactly at the end or, with
	# partial set, inside a last FPDU that a later segment completes (that
	# frame checks it, reassembled). The smallest FPDU is a tagged one
	# without payload: ULPDU 14.
	function walk(p, partial,    pos, n, ulen, op, tot) {
		pos = 1; n = length(p)
		while (pos < n) {
			if (partial && pos + 4 > n) return 1
			ulen = hex(substr(p, pos, 4))
			if (ulen < 14) return 0
			tot = 2 + ulen; tot += (4 - tot % 4) % 4; tot += 4
			if (partial && pos + 2 * tot > n + 1) return 1
			op = hex(substr(p, pos + 7, 1))
			if (op >= 3 && op <= 6) {
				if (ulen < 18 + 16) return 0
				if (substr(p, pos + 48, 8) == "00000001" &&
				    hex(substr(p, pos + 64, 8)) <= 4)
					W_V1++
				else if (substr(p, pos + 40, 8) in inv)
					W_INV++
				else
					return 0
			}
			pos += 2 * tot
		}
		return pos == n + 1
	}
	# The segment p completes the reassembled FPDU r: p starts with the
	# tail of r; FPDUs follow.
	function walk_reassembled(p, r,    k, lp, lr, a, b) {
		lp = length(p); lr = length(r)
		if (r == "" || !walk(r, 0)) return 0
		for (k = 2; k <= lp && k <= lr; k += 2) {
			if (substr(r, lr - k + 1) != substr(p, 1, k)) continue
			if (k == lp) return 1
			a = W_V1; b = W_INV
			if (walk(substr(p, k + 1), 1)) return 1
			W_V1 = a; W_INV = b
		}
		return 0
	}
	FILENAME == ARGV[1] { skip[$1] = 1; next }
	FILENAME == ARGV[2] { inv[$1] = 1; next }
	($1 in skip) { next }
	{
	n = split($5, op, ","); sends = 0
	for (i = 1; i <= n; i++) if (op[i] ~ /^(0x0)?[3456]$|^0x0[3456]$/) sends++
	xids = ($6 == "") ? 0 : split($6, x, ",")
	if (sends == xids) next
	split($9, re, ",")
	W_V1 = 0; W_INV = 0; how = "segment"
	ok = walk($8, 1)
	if (!ok) {
		W_V1 = 0; W_INV = 0; how = "reassembled"
		ok = walk_reassembled($8, re[1])
	}
	# Every Send walked is valid; Wireshark may list fewer Sends than the
	# bytes hold (it leaves an FPDU behind a reassembled one undissected).
	if (ok && W_V1 + W_INV >= sends && W_V1 >= xids) {
		if (W_INV)
			print "deliberate frame " $1 ": " W_INV " of " (W_V1 + W_INV) " Sends (" how ")" > "/dev/stderr"
		if (W_V1 - xids > 0)
			print "frame " $1 ": " (W_V1 + W_INV) " Sends, " (W_V1 - xids) " checked by hand (" how ")" > "/dev/stderr"
		next
	}
	print "frame " $1 ": " sends " Send FPDUs but " xids " rpcordma messages (" $2 "), payload " substr($8, 1, 96) (length($8) > 96 ? "..." : "") " (" length($8) / 2 " bytes; reassembled " length(re[1]) / 2 ")"
}' "$state/capture-skipped.txt" "$state/invalid-xids" "$state/capture-fields.txt" 2>"$state/capture-notes.txt")
ndelib=$(grep -c '^deliberate' "$state/capture-notes.txt")
nhand=$(grep -c 'checked by hand (segment)' "$state/capture-notes.txt")
nreas=$(grep -c 'reassembled)$' "$state/capture-notes.txt")
nsend=$(awk -F'|' 'FILENAME == ARGV[1] { skip[$1] = 1; next } ($1 in skip) { next }
	{n = split($5, op, ","); for (i = 1; i <= n; i++) if (op[i] ~ /^(0x0)?[3456]$|^0x0[3456]$/) s++} END {print s + 0}' \
	"$state/capture-skipped.txt" "$state/capture-fields.txt")
nrpc=$(awk -F'|' 'FILENAME == ARGV[1] { skip[$1] = 1; next } ($1 in skip) { next }
	$6 != "" {s += split($6, x, ",")} END {print s + 0}' "$state/capture-skipped.txt" "$state/capture-fields.txt")
if [ -n "$bad" ]; then
	echo "$bad" | head -20
	fail "Send FPDUs not decoded as RPC-over-RDMA"
fi
[ "$nsend" -ge 2 ] || fail "only $nsend RDMAP Sends in the capture"
# Malformed packets. One kind is Wireshark's, not ours: an NFSv3 WRITE
# whose data came by Read chunk with an odd length. RFC 5666 §3.7 and
# RFC 8166 §3.4.6 elide the XDR roundup from the chunk (Linux's client
# does too, and nfsd accepts it: interop_write_verify), but Wireshark 4.0
# reassembles the call from the chunk and then looks for the pad bytes
# ("fill bytes ... TRUNCATED"). Those frames are listed, not failed.
#
# Another: a call with two Read chunks (test_interop_nfs41's COMPOUND of two
# WRITEs, XIDs in STATE_DIR/multichunk-xids). Its positions are RFC 8166
# §3.4.5's (offsets in the complete XDR stream; nfsd decodes both WRITEs),
# but Wireshark 4.0 reassembles such a call wrongly (both WRITEs' data
# come out empty) and flags it. Those frames are listed, not failed.
#
# The other: QEMU's user-mode network reuses a host-side source port for a
# later connection (the suite makes ~100). Wireshark then misreads the MPA
# request and reply of the new TCP session (SYN flagged "same ports as an
# earlier session") as FPDUs of the old one. Such a frame is accepted when
# its stream is one of those and its payload is exactly one MPA
# request/reply frame: the 16-byte key (RFC 5044 §7.1), then 20 +
# PD_Length bytes in all.
reused=" $("${ts[@]}" -Y 'tcp.analysis.reused_ports' -T fields -e tcp.stream 2>/dev/null | tr '\n' ' ')"
"${ts[@]}" -Y '_ws.malformed' -T fields -E separator='|' -e frame.number -e nfs.procedure_v3 \
	-e nfs.count3 -e rpc.msgtyp -e iwarp_rdma.opcode -e tcp.stream -e tcp.payload -e tcp.stream \
	-e tcp.srcport -e rpc.xid >"$state/capture-malformed.txt" 2>/dev/null
touch "$state/multichunk-xids"
# frames after a lost segment: out of the check (see the top)
after_loss "$state/capture-malformed.txt" >"$state/capture-malformed-skipped.txt"
nmal=0
nodd=0
nreuse=0
mpa_req=4d504120494420526571204672616d65 # "MPA ID Req Frame"
mpa_rep=4d504120494420526570204672616d65 # "MPA ID Rep Frame"
while IFS='|' read -r fr proc count msgtyp ops stream payload _ _ xid; do
	payload=${payload//:/}
	xid=${xid##*,}
	if grep -qx "$fr" "$state/capture-malformed-skipped.txt"; then
		continue
	elif [ "$msgtyp" = 0 ] && [ -n "$xid" ] &&
		grep -qix "$(printf '%08x' "$((xid))")" "$state/multichunk-xids"; then
		echo "note: frame $fr: call $xid with two Read chunks (RFC 8166 §3.4.5 positions)," \
			"reassembled wrongly and flagged malformed by Wireshark"
		nodd=$((nodd + 1))
	elif [ "$proc" = 7 ] && [ "$msgtyp" = 0 ] && [ -n "$count" ] && [ $((count % 4)) -ne 0 ] &&
		[[ ",$ops," == *",0x02,"* ]]; then
		echo "note: frame $fr: NFS WRITE call of $count bytes from a Read chunk without XDR" \
			"roundup (RFC 8166 §3.4.6), flagged malformed by Wireshark"
		nodd=$((nodd + 1))
	elif [[ "$reused" == *" $stream "* ]] && { [ "${payload:0:32}" = "$mpa_req" ] ||
		[ "${payload:0:32}" = "$mpa_rep" ]; } &&
		[ ${#payload} -eq $(((20 + 16#${payload:36:4}) * 2)) ]; then
		kind=request
		[ "${payload:0:32}" = "$mpa_rep" ] && kind=reply
		echo "note: frame $fr: MPA $kind frame of TCP stream $stream, whose ports an" \
			"earlier session used, flagged malformed by Wireshark"
		nreuse=$((nreuse + 1))
	else
		echo "malformed: frame $fr (nfs proc ${proc:-none}, count ${count:-none}, opcodes $ops)"
		nmal=$((nmal + 1))
	fi
done <"$state/capture-malformed.txt"
[ "$nmal" -eq 0 ] || fail "$nmal malformed packets"
ops=$(cut -d'|' -f5 "$state/capture-fields.txt" | tr ',' '\n' | grep . | sort | uniq -c | awk '{printf "%s x%s ", $2, $1}')
echo "capture: $nframes frames, $nreq MPA requests, $nrep replies, $nddp DDP/RDMAP frames," \
	"$nsend Sends: $nrpc decoded as rpcordma, $ndelib deliberately invalid headers," \
	"Sends in $nhand multi-FPDU segments and $nreas re-segmented ones checked by hand;" \
	"$ngood good CRCs, 0 bad; $nodd odd-length Read-chunk WRITEs;" \
	"$nreuse MPA frames of reused-port sessions;" \
	"$nskip frames after segments the capture lost ($nlostdir direction(s)) not checked;" \
	"RDMAP opcodes: $ops"
echo "decoded summary: $state/capture-summary.txt, RPC-over-RDMA detail: $state/capture-rpcordma.txt"
