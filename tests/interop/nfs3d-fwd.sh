#!/bin/bash
# QEMU guestfwd command of test_interop_nfs3d (guest-start.sh): one per
# guest connection, carries it to 127.0.0.1:PORT on the host. While the
# test restarts rpcrdma-nfs3d the port is closed for a moment: socat keeps
# retrying the connect (up to 20 s) instead of closing the guest's fresh
# connection before its MPA reply, which Linux 6.1 siw does not survive
# (an MPA reply that never comes ends in a NULL dereference in
# siw_cm_work_handler -> iw_cm cm_event_handler, and no reconnection).
exec socat - "TCP:127.0.0.1:${1:?usage: nfs3d-fwd.sh PORT},retry=200,interval=0.1"
