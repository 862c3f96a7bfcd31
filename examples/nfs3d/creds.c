/* SPDX-License-Identifier: MIT */
/*
 * Acting with the caller's identity (AUTH_SYS, RFC 5531 §10.2) the way a
 * Linux export does: each request runs its file system calls with the
 * caller's uid, gid and supplementary groups as the calling thread's file
 * system identity, so the kernel itself enforces the mode bits, ownership
 * and the privileged operations (chown, device nodes). setfsuid/setfsgid
 * and the raw setgroups system call change the calling thread only (the
 * glibc setgroups() wrapper would change every thread of the server); a
 * file system uid other than 0 also drops the thread's file system
 * capabilities, and going back to 0 restores them.
 *
 * root_squash (the default): uid 0 becomes nobody (65534), and so do gid 0
 * and a supplementary gid 0. AUTH_NONE callers are nobody as well.
 * Handles are resolved to paths as the server itself (a handle names an
 * object, like nfsd's handle lookup, without a permission check).
 * When the server does not run as root it cannot change identity and acts
 * as its own user for every caller.
 */
#define _GNU_SOURCE
#include "export.h"

#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOBODY 65534u

static bool switching; /* the server runs as root: identities are switched */
static bool squash = true;

/* The identity the calling thread acts with now (active: switched). */
static __thread bool cur_active;
static __thread uint32_t cur_uid;

void nfs3d_creds_init(bool root_squash)
{
	squash = root_squash;
	switching = geteuid() == 0;
}

void nfs3d_creds_map(struct nfs3d_caller *c)
{
	if (!c->sys) {
		c->uid = c->gid = NOBODY;
		c->ngids = 0;
		c->sys = true;
		return;
	}
	if (!squash)
		return;
	if (c->uid == 0)
		c->uid = NOBODY;
	if (c->gid == 0)
		c->gid = NOBODY;
	for (uint32_t i = 0; i < c->ngids; i++)
		if (c->gids[i] == 0)
			c->gids[i] = NOBODY;
}

static void set_ids(uint32_t uid, uint32_t gid, uint32_t n, const uint32_t *gids)
{
	gid_t g[16];
	for (uint32_t i = 0; i < n && i < 16; i++)
		g[i] = (gid_t)gids[i];
	/* per thread: the raw system call, not glibc's all-threads wrapper */
	(void)syscall(SYS_setgroups, (size_t)n, g);
	(void)setfsgid((gid_t)gid);
	(void)setfsuid((uid_t)uid);
}

void nfs3d_creds_enter(const struct nfs3d_caller *c)
{
	if (!switching)
		return;
	set_ids(c->uid, c->gid, c->ngids, c->gids);
	cur_active = true;
	cur_uid = c->uid;
}

void nfs3d_creds_leave(void)
{
	if (!switching || !cur_active)
		return;
	set_ids(0, 0, 0, NULL);
	cur_active = false;
}

uint32_t nfs3d_creds_suspend(void)
{
	if (!switching || !cur_active)
		return 0;
	return (uint32_t)setfsuid(0);
}

void nfs3d_creds_resume(uint32_t prev)
{
	if (switching && cur_active)
		(void)setfsuid((uid_t)prev);
}

bool nfs3d_creds_owns(const struct stat *st)
{
	return switching && cur_active && cur_uid == (uint32_t)st->st_uid;
}
