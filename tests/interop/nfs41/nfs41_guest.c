/* SPDX-License-Identifier: MIT */
/* One shell command line run inside the interop guest: see nfs41_guest.h. */
#include "nfs41_guest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The share folder (the guest's /peer): guest_out without its last part. */
static int share_dir(const struct iop_env *e, char *share, size_t cap)
{
	char *slash;

	if (!e->guest_out[0] || strlen(e->guest_out) >= cap)
		return -1;
	snprintf(share, cap, "%s", e->guest_out);
	slash = strrchr(share, '/');
	if (!slash || slash == share)
		return -1;
	*slash = '\0';
	return 0;
}

int nfs41_guest_sh_start(const struct iop_env *e, const char *name, const char *line)
{
	char share[512], tmp[700], cmd[700], done[700];
	FILE *f;
	int ok;

	if (share_dir(e, share, sizeof(share)))
		return -1;
	snprintf(done, sizeof(done), "%s/sh-%s.done", e->guest_out, name);
	snprintf(cmd, sizeof(cmd), "%s/cmd-sh-%s", share, name);
	/* Written under a name the guest's loop does not match, then renamed:
	 * the loop must never read a half-written line. */
	snprintf(tmp, sizeof(tmp), "%s/.tmp-sh-%s", share, name);
	remove(done);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%s\n", line) > 0;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, cmd) != 0) {
		remove(tmp);
		return -1;
	}
	return 0;
}

int nfs41_guest_sh_wait(const struct iop_env *e, const char *name, int timeout_ms, int *rc,
			char *out, size_t cap)
{
	char done[700], body[1024];
	uint64_t end = iop_now_ms() + (uint64_t)timeout_ms;

	snprintf(done, sizeof(done), "%s/sh-%s.done", e->guest_out, name);
	while (iop_now_ms() < end) {
		FILE *f = fopen(done, "r");

		if (f) {
			size_t n = fread(body, 1, sizeof(body) - 1, f);

			fclose(f);
			body[n] = '\0';
			/* The guest writes the answer with one shell redirection:
			 * an empty file is one still being written. */
			if (n && strchr(body, '\n')) {
				char *sp;

				body[strcspn(body, "\n")] = '\0';
				if (strncmp(body, "rc=", 3) != 0) {
					snprintf(out, cap, "%s", body);
					return -1;
				}
				*rc = atoi(body + 3);
				sp = strchr(body, ' ');
				snprintf(out, cap, "%s", sp ? sp + 1 : "");
				return 0;
			}
		}
		usleep(50 * 1000);
	}
	snprintf(out, cap, "no answer within %d ms", timeout_ms);
	return -1;
}
