/* SPDX-License-Identifier: MIT */
/*
 * One shell command line run inside the interop guest (helper iop41).
 *
 * guest/nfs-server.sh (owned by helper iop3) polls the share for
 * `cmd-sh-<name>` files: it runs the line in the file once and answers
 * `<guest_out>/sh-<name>.done` with "rc=<exit status> <first output line>"
 * (or "TIMEOUT ..." after 60 s). The share is the parent folder of the
 * state's guest_out, as iop_guest_cmd() (interop_util.c) computes it.
 * Starting and waiting are split so a test can serve the NFS traffic the
 * command causes (e.g. a delegation recall) while the command runs.
 */
#ifndef RPCRDMA_TESTS_INTEROP_NFS41_GUEST_H
#define RPCRDMA_TESTS_INTEROP_NFS41_GUEST_H

#include <stddef.h>

#include "interop_util.h"

/* Queue @line under @name (letters, digits, '-'); a stale answer of the
 * same name is removed first. 0, or -1 (no shared folder, I/O error). */
int nfs41_guest_sh_start(const struct iop_env *e, const char *name, const char *line);

/* Wait up to @timeout_ms for the answer to @name: 0 with the command's exit
 * status in *@rc and its first output line in @out (@cap bytes); -1 on
 * timeout or when the guest answered TIMEOUT (then @out holds that). */
int nfs41_guest_sh_wait(const struct iop_env *e, const char *name, int timeout_ms, int *rc,
			char *out, size_t cap);

#endif
