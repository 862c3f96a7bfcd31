#!/usr/bin/env python3
"""ctest interop_capture_selftest: capture-check.sh against hand-built pcaps.

The interop capture comes from the guest's eth0, behind QEMU's user-mode
network, which re-segments the TCP stream as it likes: under load a Send
FPDU can begin in one segment and end in the next, or share a segment with
a zero-length Write. This builds one MPA session (CRC on, RFC 5044 §7.1
start frames, then FPDUs with their CRC32c) and cuts the same byte stream
into segments three ways, then runs capture-check.sh on each:

  aligned      one FPDU per segment                      -> must pass
  resegmented  Sends split across segments, a deliberately
               invalid Send (rdma_vers 2, xid listed in
               invalid-xids) behind a zero-length Write   -> must pass
  bad          as resegmented, plus one split Send whose
               header is not Version One and not listed   -> must fail

usage: capture-selftest.py CAPTURE_CHECK_SH   (exit 0 pass, 1 fail, 77 skip)
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

CLI, SRV = ("10.0.2.2", 40001), ("10.0.2.15", 20049)


def crc32c(data):
    """CRC32c (Castagnoli, reflected 0x82F63B78), as MPA uses it."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def fpdu(ulpdu):
    """MPA FPDU: length, ULPDU, pad to 4, CRC32c stored little-endian."""
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * (-len(body) % 4)
    return body + struct.pack("<I", crc32c(body))


MSN = {"c": 0, "s": 0}


def send(side, payload):
    """Untagged RDMAP Send (opcode 3), DDP queue 0, Last, MO 0."""
    MSN[side] += 1
    hdr = bytes([0x41, 0x43]) + struct.pack(">IIII", 0, 0, MSN[side], 0)
    return fpdu(hdr + payload)


def write0():
    """Zero-length tagged RDMA Write (opcode 0): the RFC 6581 RTR form."""
    return fpdu(bytes([0xC1, 0x40]) + struct.pack(">IQ", 0, 0))


def rpcrdma_msg(xid, vers=1, proc=0):
    # rdma_xid, rdma_vers, rdma_credit, rdma_proc, empty Read/Write lists,
    # no Reply chunk (RFC 8166 §4.1)
    return struct.pack(">IIIIIII", xid, vers, 32, proc, 0, 0, 0)


def null_call(xid, vers=1):
    # RFC 5531 CALL: NFS (100003) v3 NULL, AUTH_NONE credential and verifier
    return rpcrdma_msg(xid, vers) + struct.pack(">IIIIIIIIII", xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0)


def null_reply(xid):
    return rpcrdma_msg(xid) + struct.pack(">IIIIII", xid, 1, 0, 0, 0, 0)


def mpa_frame(key, pdata=b""):
    # key, flags (C: CRC wanted), revision 1, private data length
    return key + bytes([0x40, 1]) + struct.pack(">H", len(pdata)) + pdata


def ip_csum(h):
    s = sum(struct.unpack(">%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


class Pcap:
    def __init__(self):
        self.out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        self.seq = {"c": 1000, "s": 5000}
        self.t = 0

    def pkt(self, side, flags, payload=b""):
        src, dst = (CLI, SRV) if side == "c" else (SRV, CLI)
        other = "s" if side == "c" else "c"
        tcp = struct.pack(">HHIIBBHHH", src[1], dst[1], self.seq[side],
                          self.seq[other] if flags & 0x10 else 0, 5 << 4, flags, 65535, 0, 0)
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 0, 0x4000, 64, 6, 0,
                         bytes(map(int, src[0].split("."))), bytes(map(int, dst[0].split("."))))
        ip = ip[:10] + struct.pack(">H", ip_csum(ip)) + ip[12:]
        eth = (b"\x52\x55\x0a\x00\x02\x02" if side == "s" else b"\x52\x54\x00\x12\x34\x56")
        eth += (b"\x52\x54\x00\x12\x34\x56" if side == "s" else b"\x52\x55\x0a\x00\x02\x02")
        frame = eth + b"\x08\x00" + ip + tcp + payload
        self.t += 1
        self.out += struct.pack("<IIII", 1, self.t * 100, len(frame), len(frame)) + frame
        self.seq[side] += len(payload) + (1 if flags & 0x03 else 0)

    def data(self, side, payload, lost=False):
        if lost:  # sent but not captured (tcpdump dropped it)
            self.seq[side] += len(payload)
            return
        self.pkt(side, 0x18, payload)  # PSH ACK
        self.pkt("s" if side == "c" else "c", 0x10)  # bare ACK


def build(path, cuts, bad, lose=None):
    """One session; the client's FPDU stream after the MPA request is cut
    at the byte offsets CUTS (none: one FPDU per segment); its segment
    number LOSE (0-based) is left out of the capture."""
    MSN["c"] = MSN["s"] = 0
    p = Pcap()
    p.pkt("c", 0x02)
    p.pkt("s", 0x12)
    p.pkt("c", 0x10)
    p.data("c", mpa_frame(b"MPA ID Req Frame"))
    p.data("s", mpa_frame(b"MPA ID Rep Frame"))
    fpdus = [send("c", null_call(0x11110001)), send("c", null_call(0x11110002)), write0(),
             send("c", null_call(0x22220001, vers=2)), send("c", null_call(0x11110003))]
    if bad:
        fpdus.insert(2, send("c", null_call(0x33330001, vers=3)))
    if cuts is None:
        for f in fpdus:
            p.data("c", f)
    else:
        stream = b"".join(fpdus)
        edges = [0] + [c for c in cuts if 0 < c < len(stream)] + [len(stream)]
        for i, (a, b) in enumerate(zip(edges, edges[1:])):
            p.data("c", stream[a:b], lost=(i == lose))
    for xid in (0x11110001, 0x11110002, 0x11110003):
        p.data("s", send("s", null_reply(xid)))
    with open(path, "wb") as f:
        f.write(p.out)


def run(check, name, cuts, bad, lose=None):
    state = tempfile.mkdtemp(prefix="capsel-")
    try:
        os.makedirs(os.path.join(state, "out"))
        build(os.path.join(state, "out", "interop.pcap"), cuts, bad, lose)
        with open(os.path.join(state, "invalid-xids"), "w") as f:
            f.write("22220001\n")
        r = subprocess.run(["bash", check, state], capture_output=True, text=True, timeout=120)
        with open(os.path.join(state, "capture-notes.txt")) as f:
            notes = f.read()
        return r.returncode, r.stdout, notes
    finally:
        shutil.rmtree(state, ignore_errors=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 1
    if not shutil.which("tshark"):
        print("SKIP: tshark not installed")
        return 77
    check = sys.argv[1]
    failures = 0
    # Send 2 cut after 30 bytes; the Write and the deliberate Send share
    # a segment with Send 2's tail; the deliberate Send itself is cut.
    one = len(send("c", null_call(1)))
    resegment = [one + 30, 2 * one + 20 + 9, 2 * one + 20 + one + 50]
    MSN["c"] = 0
    # lost: the segment with Send 2's tail and the Write is not captured,
    # so the client's frames after it are not checked (Wireshark reads the
    # deliberate Send's tail as an FPDU); lostbad: the bad Send comes
    # before the lost segment (the last one) and must still be found.
    cases = (("aligned", None, False, 0, None), ("resegmented", resegment, False, 0, None),
             ("bad", resegment, True, 1, None), ("lost", resegment, False, 0, 1),
             ("lostbad", resegment, True, 1, 4))
    for name, cuts, bad, want, lose in cases:
        rc, out, notes = run(check, name, cuts, bad, lose)
        summary = [ln for ln in out.splitlines() if ln.startswith(("capture:", "FAIL", "frame"))]
        if name == "lost" and not re.search(r"[1-9][0-9]* frames after segments the capture lost", out):
            print("    the frames after the lost segment were not left out")
            failures += 1
        print("%s: exit %d (want %d)" % (name, rc, want))
        for ln in summary + notes.splitlines():
            print("    " + ln)
        if rc != want:
            failures += 1
        if name == "resegmented" and "(reassembled)" not in notes:
            # Wireshark leaves the split deliberate Send undecoded, so the
            # check must have walked the reassembled FPDU
            print("    the re-segmented deliberate Send was not walked as reassembled")
            failures += 1
        if name in ("bad", "lostbad") and "33330001" not in out.replace(" ", "").lower() and "Send FPDUs" not in out:
            print("    the failure does not name the bad Send")
            failures += 1
    print("%d passed, %d failed" % (len(cases) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
