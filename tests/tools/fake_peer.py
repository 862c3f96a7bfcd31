#!/usr/bin/env python3
# usage: fake_peer.py http|rpc|garbage
# A TCP server on 127.0.0.1 (kernel-chosen port, printed on stdout) that is
# not an RPC-over-RDMA server: to each connection it answers whatever
# arrives with an HTTP error, an ONC RPC reply record (RFC 5531 §11 record
# mark, MSG_DENIED / RPC_MISMATCH) or bytes of neither kind, then closes.
# Runs until killed.
import socket
import struct
import sys

ANSWERS = {
    "http": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    # xid, REPLY, MSG_DENIED, RPC_MISMATCH, low 2, high 2
    "rpc": struct.pack(">IIIIIII", 0x80000000 | 24, 0x12345678, 1, 1, 0, 2, 2),
    "garbage": b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n",
}

answer = ANSWERS[sys.argv[1]]
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(8)
print(srv.getsockname()[1], flush=True)
while True:
    conn, _ = srv.accept()
    conn.settimeout(5)
    try:
        conn.recv(4096)
        conn.sendall(answer)
    except OSError:
        pass
    conn.close()
