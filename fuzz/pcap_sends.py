#!/usr/bin/env python3
"""Real seed inputs from a capture of iWARP traffic (pcap, Ethernet, Linux
cooked v1/v2): the payloads of the Sends (RPC-over-RDMA messages, transport
header and RPC message) of every TCP stream that begins with an MPA start
frame, one file per kind (procedure, size in 64-byte steps, RPC msg_type).

    fuzz/pcap_sends.py CAPTURE OUTDIR PREFIX [MAX]

writes OUTDIR/PREFIX-sendNN.bin, the smallest first, at most MAX (default
40). The seeds linux-nfsv*-send*.bin of fuzz/corpus/short and
fuzz/corpus/bidi came from the Linux kernel NFS-over-RDMA captures
linux-siw-nfsv3.pcap and linux-siw-nfsv4.1.pcap the project keeps beside
the repository. A stream is followed in sequence order up to its
first gap; FPDUs are read without markers (RFC 5044 §5), whatever the CRC.
"""
import collections
import os
import struct
import sys


def records(path):
    d = open(path, "rb").read()
    magic = struct.unpack("<I", d[:4])[0]
    en = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    link = struct.unpack(en + "I", d[20:24])[0]
    off = 24
    while off + 16 <= len(d):
        incl = struct.unpack(en + "I", d[off + 8:off + 12])[0]
        off += 16
        yield link, d[off:off + incl]
        off += incl


def tcp_segment(link, p):
    """(flow, seq, payload) of a TCP segment over IPv4/IPv6, or None."""
    if link == 1:  # Ethernet
        et, p = struct.unpack(">H", p[12:14])[0], p[14:]
    elif link == 113:  # Linux cooked v1
        et, p = struct.unpack(">H", p[14:16])[0], p[16:]
    elif link == 276:  # Linux cooked v2
        et, p = struct.unpack(">H", p[0:2])[0], p[20:]
    else:
        return None
    if et == 0x0800 and len(p) >= 20 and p[9] == 6:
        src, dst = p[12:16], p[16:20]
        p = p[(p[0] & 15) * 4:struct.unpack(">H", p[2:4])[0]]
    elif et == 0x86DD and len(p) >= 40 and p[6] == 6:
        src, dst = p[8:24], p[24:40]
        p = p[40:40 + struct.unpack(">H", p[4:6])[0]]
    else:
        return None
    if len(p) < 20:
        return None
    sport, dport, seq = struct.unpack(">HHI", p[:8])
    return (src, sport, dst, dport), seq, p[(p[12] >> 4) * 4:]


def stream_bytes(segs):
    """The stream from its first segment to its first gap."""
    out, nxt = bytearray(), None
    for seq in sorted(segs):
        pl = segs[seq]
        if nxt is None:
            nxt = seq
        if seq > nxt:
            break
        out += pl[nxt - seq:]
        nxt = max(nxt, seq + len(pl))
    return bytes(out)


def sends(b):
    """Whole Send messages (RFC 5040 §4.3) of one direction of a stream."""
    if b[:16] not in (b"MPA ID Req Frame", b"MPA ID Rep Frame") or len(b) < 20:
        return
    off = 20 + struct.unpack(">H", b[18:20])[0]
    cur = bytearray()
    while off + 2 <= len(b):
        ulen = struct.unpack(">H", b[off:off + 2])[0]
        covered = (2 + ulen + 3) & ~3
        if off + covered + 4 > len(b):
            return
        u = b[off + 2:off + 2 + ulen]
        off += covered + 4
        # untagged (RFC 5041 §4.4), queue 0, a Send opcode
        if ulen < 18 or u[0] & 0x80 or (u[1] & 15) not in (3, 4, 5, 6):
            continue
        if struct.unpack(">I", u[6:10])[0] != 0:
            continue
        cur += u[18:]
        if u[0] & 0x40:
            yield bytes(cur)
            cur = bytearray()


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    cap, outdir, prefix = sys.argv[1:4]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    flows = collections.defaultdict(dict)
    for link, p in records(cap):
        s = tcp_segment(link, p)
        if s and s[2]:
            flows[s[0]].setdefault(s[1], s[2])
    kinds = {}
    for segs in flows.values():
        for m in sends(stream_bytes(segs)):
            if len(m) < 16:
                continue
            proc = struct.unpack(">I", m[12:16])[0]
            msg_type = m[32:36] if proc == 0 and len(m) >= 36 else b""
            kinds.setdefault((proc, min(len(m) // 64, 8), msg_type), m)
    chosen = sorted(kinds.values(), key=len)[:limit]
    for i, m in enumerate(chosen):
        with open(os.path.join(outdir, "%s-send%02d.bin" % (prefix, i)), "wb") as f:
            f.write(m)
    print("%d streams, %d kinds, %d written" % (len(flows), len(kinds), len(chosen)))


if __name__ == "__main__":
    main()
