#!/usr/bin/env python3
"""Check the MPA CRC32c of every FPDU in a capture, walking the TCP bytes.

usage: fpdu-crc.py PCAP PORT     prints "good G bad B unchecked U", exit 0

Wireshark 4.0's MPA dissector can lose the FPDU boundaries of a stream of
large FPDUs (RDMA Writes of 64 KiB spread over 45 segments) and then reads
payload bytes as FPDU headers, with "bad" CRCs, in a stream whose bytes are
fine (the kernel's siw, which checks every CRC, took them all). So the
test's CRC count does not rest on it: tshark only hands over each TCP
segment's payload (-T fields), and this walks each direction of each
connection from its MPA start frame (RFC 5044 §7.1: 16-byte key, flags,
revision, private data length, private data), FPDU by FPDU (ULPDU length,
ULPDU, pad to 4 bytes, CRC32c over all of it, RFC 5044 §4), and checks
each CRC. A direction whose capture has a hole (a segment tcpdump did not
record, or recorded short) is walked up to the hole; its bytes after it
are counted as unchecked, as are connections without CRC or with markers
and those whose start frames the capture does not hold.
"""
import subprocess
import sys

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"


def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


T = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def streams(pcap, port):
    """{(tcp stream, src addr, src port): (bytes up to the first hole, hole)}"""
    out = subprocess.run(
        ["tshark", "-n", "-r", pcap, "-Y", f"tcp.port == {port} && tcp.len > 0", "-T", "fields",
         "-e", "tcp.stream", "-e", "ip.src", "-e", "tcp.srcport", "-e", "tcp.seq", "-e",
         "tcp.payload"], capture_output=True, text=True, check=True).stdout
    dirs = {}
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < 5 or not f[4]:
            continue
        key = (f[0], f[1], f[2])
        seq = int(f[3])
        data = bytes.fromhex(f[4].replace(":", ""))
        buf, base, hole = dirs.get(key, (bytearray(), seq, False))
        off = seq - base
        if not hole:
            if off > len(buf):
                hole = True  # a segment the capture lacks
            elif off >= 0:
                buf[off:off + len(data)] = data
        dirs[key] = (buf, base, hole)
    return dirs


def start_frame(buf):
    """(CRC flag, markers flag, offset of the first FPDU) or None"""
    if len(buf) < 20 or buf[:16] not in (KEY_REQ, KEY_REP):
        return None
    flags = buf[16]
    pdlen = int.from_bytes(buf[18:20], "big")
    return bool(flags & 0x40), bool(flags & 0x80), 20 + pdlen, buf[:16] == KEY_REP


def main():
    pcap, port = sys.argv[1], sys.argv[2]
    dirs = streams(pcap, port)
    # CRC is on for a connection when its MPA reply says so
    crc_on = {}
    for (stream, _, _), (buf, _, _) in dirs.items():
        s = start_frame(buf)
        if s and s[3]:
            crc_on[stream] = s[0]
    good = bad = unchecked = 0
    for (stream, src, sport), (buf, _, hole) in sorted(dirs.items()):
        s = start_frame(buf)
        if not s or s[1] or not crc_on.get(stream):
            unchecked += 1
            continue
        pos = s[2]
        while pos + 2 <= len(buf):
            ulen = int.from_bytes(buf[pos:pos + 2], "big")
            body = 2 + ulen + (-(2 + ulen)) % 4
            if pos + body + 4 > len(buf):
                break  # cut by the capture's end or its hole
            # the CRC32c's bytes as RFC 3385 (iSCSI) puts them: low byte first
            crc = int.from_bytes(buf[pos + body:pos + body + 4], "little")
            if crc32c(buf[pos:pos + body]) == crc:
                good += 1
            else:
                bad += 1
                if bad <= 5:
                    print(f"bad CRC32: stream {stream} from {src}:{sport}, byte {pos + 1}, "
                          f"ULPDU length {ulen}", file=sys.stderr)
            pos += body + 4
        if hole:
            unchecked += 1
    print(f"good {good} bad {bad} unchecked {unchecked}")


if __name__ == "__main__":
    main()
