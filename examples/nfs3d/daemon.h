/* SPDX-License-Identifier: MIT */
/*
 * The startup rpcrdma-nfs3d and rpcrdma-nfs41d share: the options both
 * take (--export --port --bind --credits --workers --no-root-squash
 * --stats-file --help --version), the export, the signals (SIGINT and
 * SIGTERM stop, SIGUSR1 writes the counters to --stats-file), the service
 * with the Linux client's inline thresholds, the loop until a stop signal,
 * and the counters at the end. What differs (the programs, extra options,
 * the counters printed, what runs beside the loop) each main.c passes in.
 *
 * Header only, included by each server's main.c and nowhere else: the
 * servers are built like a user's program from their own folder's list of
 * files, and this one needs nothing but <rpcrdma.h> and export.h.
 *
 * A server's main():
 *
 *   struct nfsd_main d = {.name = "rpcrdma-nfsXd", .usage = usage,
 *                         .print_stats = print_stats, .workers = 4};
 *   nfsd_defaults(&d);
 *   while ((opt = getopt_long(argc, argv, NFSD_SHORTOPTS "...", longopts, NULL)) != -1)
 *           if (!nfsd_option(&d, opt)) { its own options, else usage(stderr, 2) }
 *   if (!nfsd_args_ok(&d, argc) || its own checks) usage(stderr, 2);
 *   if (nfsd_prepare(&d) != 0) return 1;
 *   nfsd_svc_opts(&d, &o); rc = nfsd_svc_create(&d, &o); register, start
 *   (on failure: return nfsd_start_failed(&d, rc));
 *   printf("ready nfs=%u ...\n", ...); nfsd_run(&d, idle);
 *   return nfsd_exit(&d, rpcrdma_svc_stop(d.svc, 3000));
 */
#ifndef NFS3D_DAEMON_H
#define NFS3D_DAEMON_H

#include <rpcrdma.h>

#include "export.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct nfsd_main {
	/* set by the server */
	const char *name;                                        /* "rpcrdma-nfs3d" */
	void (*usage)(FILE *out, int status);                    /* exits */
	void (*print_stats)(struct rpcrdma_svc *svc, FILE *out); /* its counters */
	/* the shared options (defaults: nfsd_defaults(), workers: the server's) */
	const char *dir, *bind_addr, *stats_file;
	bool root_squash;
	unsigned long port, credits, workers;
	/* nfsd_svc_create() */
	struct rpcrdma_svc *svc;
};

/* The long options nfsd_option() takes, at the head of each server's
 * table, and their short letters for getopt_long(). */
/* clang-format off */
#define NFSD_LONGOPTS                                                                              \
	{"export", required_argument, NULL, 'e'}, {"port", required_argument, NULL, 'p'},          \
	{"bind", required_argument, NULL, 'b'}, {"credits", required_argument, NULL, 'c'},         \
	{"workers", required_argument, NULL, 'w'}, {"no-root-squash", no_argument, NULL, 'R'},     \
	{"stats-file", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},            \
	{"version", no_argument, NULL, 'V'}
/* clang-format on */
#define NFSD_SHORTOPTS "e:p:b:c:w:h"

static volatile sig_atomic_t nfsd_stop_flag, nfsd_stats_flag;

static void nfsd_on_signal(int sig)
{
	if (sig == SIGUSR1)
		nfsd_stats_flag = 1;
	else
		nfsd_stop_flag = 1;
}

static void nfsd_defaults(struct nfsd_main *d)
{
	d->root_squash = true;
	d->port = RPCRDMA_DEFAULT_PORT;
	d->credits = 64;
}

/* @arg as a decimal number; ULONG_MAX (beyond every limit, so refused by
 * the checks after the options) when it is not one. */
static unsigned long nfsd_num(const char *arg)
{
	char *end = NULL;
	unsigned long v = arg ? strtoul(arg, &end, 10) : 0;
	return arg && end && *end == '\0' ? v : ULONG_MAX;
}

/* One option from getopt_long(): true if it is one of the shared ones
 * (--help and --version exit here). */
static bool nfsd_option(struct nfsd_main *d, int opt)
{
	switch (opt) {
	case 'e':
		d->dir = optarg;
		return true;
	case 'b':
		d->bind_addr = optarg;
		return true;
	case 'p':
		d->port = nfsd_num(optarg);
		return true;
	case 'c':
		d->credits = nfsd_num(optarg);
		return true;
	case 'w':
		d->workers = nfsd_num(optarg);
		return true;
	case 'R':
		d->root_squash = false;
		return true;
	case 's':
		d->stats_file = optarg;
		return true;
	case 'h':
		d->usage(stdout, 0);
		return true;
	case 'V':
		printf("%s (rpcrdma) %s\n", d->name, rpcrdma_version());
		exit(0);
	default:
		return false;
	}
}

/* The shared options are complete and in range, and nothing follows them. */
static bool nfsd_args_ok(const struct nfsd_main *d, int argc)
{
	return d->dir && optind == argc && d->port <= 65535 && d->credits >= 1 &&
	       d->credits <= 1024 && d->workers <= 64;
}

/* The counters into @path, replaced whole (written aside, then renamed):
 * a reader never sees half a line. */
static void nfsd_save_stats(const struct nfsd_main *d)
{
	char tmp[PATH_MAX];
	const char *path = d->stats_file;
	if (!path || snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return;
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	d->print_stats(d->svc, f);
	if (fclose(f) == 0 && rename(tmp, path) == 0)
		return;
	unlink(tmp);
}

/* nfs3d_exp for @dir, and the server's working directory its root. */
static int nfsd_setup_export(const char *dir)
{
	struct stat st;
	struct timespec now;
	if (!realpath(dir, nfs3d_exp.root) || lstat(nfs3d_exp.root, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	nfs3d_exp.dev = st.st_dev;
	nfs3d_exp.root_ino = st.st_ino;
	/* paths of objects are relative to the export root (nfs3d_abs) */
	if (chdir(nfs3d_exp.root) != 0)
		return -errno;
	/* a write verifier that changes when the server restarts (RFC 1813
	 * §3.3.7, RFC 8881 §18.32.3) */
	clock_gettime(CLOCK_REALTIME, &now);
	uint32_t v0 = (uint32_t)now.tv_sec, v1 = (uint32_t)now.tv_nsec ^ ((uint32_t)getpid() << 20);
	memcpy(nfs3d_exp.write_verf, &v0, 4);
	memcpy(nfs3d_exp.write_verf + 4, &v1, 4);
	nfs3d_fh_init();
	return 0;
}

/* After the options: credentials, the export (the working directory
 * becomes its root), the signals. 0, or -1 with the reason printed. */
static int nfsd_prepare(struct nfsd_main *d)
{
	nfs3d_creds_init(d->root_squash);
	/* a relative --stats-file names a file from here, not from the export */
	static char stats_abs[PATH_MAX];
	if (d->stats_file && d->stats_file[0] != '/' && getcwd(stats_abs, sizeof(stats_abs)) &&
	    strlen(stats_abs) + strlen(d->stats_file) + 2 <= sizeof(stats_abs)) {
		strcat(stats_abs, "/");
		strcat(stats_abs, d->stats_file);
		d->stats_file = stats_abs;
	}
	int rc = nfsd_setup_export(d->dir);
	if (rc != 0) {
		fprintf(stderr, "%s: export %s: %s\n", d->name, d->dir, strerror(-rc));
		return -1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nfsd_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* The service options of both servers: --credits, --workers, and the
 * Linux client's inline thresholds (RFC 8797: 4 KiB each way). */
static void nfsd_svc_opts(const struct nfsd_main *d, struct rpcrdma_svc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->comp_mask = RPCRDMA_SVC_OPT_CREDITS | RPCRDMA_SVC_OPT_INLINE | RPCRDMA_SVC_OPT_WORKERS;
	o->credits = (uint32_t)d->credits;
	o->inline_send = o->inline_recv = 4096;
	o->workers = (uint32_t)d->workers;
}

/* d->svc on --bind and --port (0: any free port): 0 or -errno. */
static int nfsd_svc_create(struct nfsd_main *d, const struct rpcrdma_svc_opts *o)
{
	return d->port ? rpcrdma_svc_create(d->bind_addr, (uint16_t)d->port, o, &d->svc)
		       : rpcrdma_svc_create_any(d->bind_addr, o, &d->svc);
}

/* Startup failed with @rc: say so, drop the service; the exit status. */
static int nfsd_start_failed(struct nfsd_main *d, int rc)
{
	fprintf(stderr, "%s: start: %s\n", d->name, rpcrdma_strerror(rc));
	rpcrdma_svc_destroy(d->svc);
	d->svc = NULL;
	return 1;
}

/* Until SIGINT or SIGTERM: @idle (which waits a moment) over and over,
 * the counters to --stats-file after each SIGUSR1. */
static void nfsd_run(struct nfsd_main *d, void (*idle)(void))
{
	while (!nfsd_stop_flag) {
		idle();
		if (nfsd_stats_flag) {
			nfsd_stats_flag = 0;
			nfsd_save_stats(d);
		}
	}
}

/* After rpcrdma_svc_stop() returned @stop_rc: the counters to stderr and
 * --stats-file, the service destroyed; the exit status. */
static int nfsd_exit(struct nfsd_main *d, int stop_rc)
{
	d->print_stats(d->svc, stderr);
	nfsd_save_stats(d);
	rpcrdma_svc_destroy(d->svc);
	d->svc = NULL;
	return stop_rc == 0 || stop_rc == -ETIMEDOUT ? 0 : 1;
}

/* The caller of @req from its AUTH_SYS credential (none: not AUTH_SYS). */
static void nfsd_caller_of(struct rpcrdma_svc_req *req, struct nfs3d_caller *c)
{
	struct rpcrdma_rpc_authsys sys;
	memset(c, 0, sizeof(*c));
	if (rpcrdma_svc_req_authsys(req, &sys) != 0)
		return;
	c->sys = true;
	c->uid = sys.uid;
	c->gid = sys.gid;
	c->ngids = sys.ngids < 16 ? sys.ngids : 16;
	memcpy(c->gids, sys.gids, c->ngids * sizeof(c->gids[0]));
}

#endif
