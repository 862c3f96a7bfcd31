// SPDX-License-Identifier: MIT
/*
 * rpcrdma-perf server: one process serving the perf program three ways,
 *   - RPC-over-RDMA on --port, through the rpcrdma server API (native
 *     dispatch; WRITE's data arrives pulled from the client's Read chunk,
 *     READ's result goes by RDMA Write into its Write chunk);
 *   - ONC RPC over TCP on --tcp-port through libtirpc's standard model:
 *     svctcp_create + svc_run on one thread, rpcgen's dispatcher unchanged;
 *   - ONC RPC over TCP on --tcp-port + 1, libtirpc in a process forked per
 *     connection (the model that lets a multi-threaded client use several
 *     CPUs on the server side).
 * The procedures are the same code for all three (perf_*_1_svc below).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpcrdma.h>

#include "perf.h"
#include "perf_tool.h"

void rpcrdma_perf_prog_1(struct svc_req *rqstp, SVCXPRT *transp);

static struct rpcrdma_svc *g_svc;
static const struct perf_server_opts *g_opts;
static _Atomic uint32_t g_writes; /* WRITEs received, for --test-refuse-writes */

/* --test-refuse-writes: the 2nd, 4th, ... WRITE this server receives is
 * refused, so a test knows how many of a burst fail. */
static bool refuse_write(void)
{
	return g_opts->refuse_writes && atomic_fetch_add(&g_writes, 1) % 2 == 1;
}

/* VmRSS, VmHWM (kB) and Threads of this process. */
static void proc_status(uint64_t *rss, uint64_t *hwm, uint32_t *threads)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	*rss = *hwm = 0;
	*threads = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmRSS:", 6))
			*rss = strtoull(line + 6, NULL, 10);
		else if (!strncmp(line, "VmHWM:", 6))
			*hwm = strtoull(line + 6, NULL, 10);
		else if (!strncmp(line, "Threads:", 8))
			*threads = (uint32_t)strtoul(line + 8, NULL, 10);
	}
	fclose(f);
}

static void fill_info(perf_info *r)
{
	struct rpcrdma_xprt_stats st;
	uint32_t threads;

	memset(r, 0, sizeof(*r));
	proc_status(&r->rss_kb, &r->hwm_kb, &threads);
	r->threads = threads;
	r->pid = (int)getpid();
	r->cpu_pinned = g_opts->cpu;
	r->cpu_now = sched_getcpu();
	r->credits = g_opts->credits;
	r->workers = g_opts->threads;
	perf_rusage(&r->cpu_user_ns, &r->cpu_sys_ns, &r->ctx_switches);
	memset(&st, 0, sizeof(st));
	if (g_svc && rpcrdma_svc_stats(g_svc, &st) == 0) {
		r->connections = st.connections;
		r->calls = st.calls;
		r->reg_bytes = st.reg_bytes;
		r->rr_replies = st.rr_replies;
		r->rr_exposed_total = st.rr_exposed_total;
		r->rr_exposed_bytes = st.rr_exposed_bytes;
	}
}

/* READ's answer: pattern bytes [offset, offset + len) or EINVAL. The data
 * is not copied here: it points into the pattern (RDMA Writes it from
 * there; xdrrec copies it into its buffer). */
static void read_answer(const perf_read_args *a, perf_read_res *r)
{
	memset(r, 0, sizeof(*r));
	if (a->len > PERF_MAX_SIZE || a->offset > perf_pattern_len() - a->len) {
		r->status = EINVAL;
		return;
	}
	r->data.base = (void *)(uintptr_t)(perf_pattern() + a->offset);
	if (g_opts->corrupt && a->offset + 8 <= perf_pattern_len() - a->len)
		r->data.base = (uint8_t *)r->data.base + 8;
	r->data.len = a->len;
}

/* ---- the procedures as rpcgen -M names them (libtirpc dispatcher) ---- */

bool_t perf_null_1_svc(void *argp, void *res, struct svc_req *rq)
{
	(void)argp;
	(void)res;
	(void)rq;
	return TRUE;
}

bool_t perf_write_1_svc(perf_write_args *a, perf_write_res *r, struct svc_req *rq)
{
	(void)rq;
	if (refuse_write())
		return FALSE; /* libtirpc answers SYSTEM_ERR */
	r->len = a->data.len;
	r->sum = perf_sum(a->data.base, a->data.len);
	if (g_opts->corrupt)
		r->sum ^= 1;
	return TRUE;
}

bool_t perf_read_1_svc(perf_read_args *a, perf_read_res *r, struct svc_req *rq)
{
	(void)rq;
	read_answer(a, r);
	return TRUE;
}

bool_t perf_echo_1_svc(perf_echo *a, perf_echo *r, struct svc_req *rq)
{
	(void)rq;
	/* the arguments are freed apart from the result: a copy */
	r->data.data_len = a->data.data_len;
	r->data.data_val = malloc(a->data.data_len ? a->data.data_len : 1);
	if (!r->data.data_val)
		return FALSE;
	memcpy(r->data.data_val, a->data.data_val, a->data.data_len);
	return TRUE;
}

/* GET's answer without a copy: the bytes point into the pattern (the
 * RDMA reply encodes them; nothing frees them). False for a range the
 * pattern has not. */
static bool get_answer(const perf_get_args *a, perf_echo *r)
{
	memset(r, 0, sizeof(*r));
	if (a->len > PERF_MAX_SIZE || a->offset > perf_pattern_len() - a->len)
		return false;
	r->data.data_val = (char *)(uintptr_t)(perf_pattern() + a->offset);
	if (g_opts->corrupt && a->offset + 8 <= perf_pattern_len() - a->len)
		r->data.data_val += 8;
	r->data.data_len = a->len;
	return true;
}

bool_t perf_get_1_svc(perf_get_args *a, perf_echo *r, struct svc_req *rq)
{
	perf_echo p;

	(void)rq;
	/* libtirpc frees the result (freeresult): a copy */
	if (!get_answer(a, &p))
		return FALSE;
	r->data.data_len = p.data.data_len;
	r->data.data_val = malloc(p.data.data_len ? p.data.data_len : 1);
	if (!r->data.data_val)
		return FALSE;
	memcpy(r->data.data_val, p.data.data_val, p.data.data_len);
	return TRUE;
}

bool_t perf_info_1_svc(void *argp, perf_info *r, struct svc_req *rq)
{
	(void)argp;
	(void)rq;
	fill_info(r);
	return TRUE;
}

int rpcrdma_perf_prog_1_freeresult(SVCXPRT *t, xdrproc_t x, caddr_t r)
{
	(void)t;
	/* READ's data points into the pattern (flags 0): xdr_free leaves it */
	xdr_free(x, r);
	return 1;
}

/* ---- RPC-over-RDMA: native dispatch ---- */

static void rdma_dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	switch (proc) {
	case PERF_NULL:
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	case PERF_WRITE: {
		perf_write_args a;
		perf_write_res r;

		memset(&a, 0, sizeof(a));
		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_perf_write_args, &a)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		/* a.data points at the bytes pulled from the Read chunk */
		if (!perf_write_1_svc(&a, &r, NULL)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_SYSTEM_ERR);
			return;
		}
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_perf_write_res, &r);
		return;
	}
	case PERF_READ: {
		perf_read_args a;
		perf_read_res r;

		memset(&a, 0, sizeof(a));
		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_perf_read_args, &a)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		read_answer(&a, &r);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_perf_read_res, &r);
		return;
	}
	case PERF_ECHO: {
		perf_echo a;

		memset(&a, 0, sizeof(a));
		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_perf_echo, &a)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_perf_echo, &a);
		xdr_free((xdrproc_t)xdr_perf_echo, (char *)&a);
		return;
	}
	case PERF_GET: {
		perf_get_args a;
		perf_echo r;

		memset(&a, 0, sizeof(a));
		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_perf_get_args, &a)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		if (!get_answer(&a, &r)) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_perf_echo, &r);
		return;
	}
	case PERF_INFO: {
		perf_info r;

		fill_info(&r);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_perf_info, &r);
		return;
	}
	default:
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
}

/* ---- ONC RPC over TCP ---- */

/* A listening TCP socket on @host (NULL: every IPv4 address) port @port
 * (0: the kernel picks); *bound is the port it got. */
static int tcp_listen(const char *host, uint16_t port, uint16_t *bound)
{
	struct addrinfo hints = {.ai_family = host ? AF_UNSPEC : AF_INET,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char ps[8];
	int one = 1, fd;

	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(host, ps, &hints, &ai) || !ai)
		return -ENOENT;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		int e = -errno;

		close(fd);
		freeaddrinfo(ai);
		return e;
	}
	freeaddrinfo(ai);
	*bound = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
						: ((struct sockaddr_in *)&sa)->sin_port);
	return fd;
}

/* The standard model: libtirpc's svc_run on one thread. svc_register with
 * protocol 0 keeps rpcbind out of it. */
static void *svc_run_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;
	SVCXPRT *x = svctcp_create(fd, 0, 0);

	if (!x || !svc_register(x, RPCRDMA_PERF_PROG, RPCRDMA_PERF_V1, rpcrdma_perf_prog_1, 0)) {
		fprintf(stderr, "rpcrdma-perf server: svctcp_create/svc_register failed\n");
		return NULL;
	}
	svc_run();
	return NULL;
}

/* One connection of the fork model, in its own process: serve until the
 * client closes (libtirpc then destroys the transport and closes fd). */
static void fork_serve_conn(int fd)
{
	SVCXPRT *x;
	int one = 1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* libtirpc's own accept path (rendezvous_request) sets TCP_NODELAY
	 * on every connection it accepts; svc_fd_create does not, so do it
	 * here to keep the two server models alike. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	x = svc_fd_create(fd, 0, 0);
	if (!x || !svc_register(x, RPCRDMA_PERF_PROG, RPCRDMA_PERF_V1, rpcrdma_perf_prog_1, 0))
		_exit(2);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p.revents & POLLNVAL)
			_exit(0);
		svc_getreq_common(fd);
		if (fcntl(fd, F_GETFD) < 0)
			_exit(0); /* destroyed: the client went away */
	}
}

/* The fork model's acceptor, a process forked before any thread exists
 * (so children inherit no library threads or locks). */
static void fork_acceptor(int lfd)
{
	signal(SIGCHLD, SIG_IGN); /* children reap themselves */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		pid_t pid;

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			_exit(1);
		}
		pid = fork();
		if (pid == 0) {
			close(lfd);
			fork_serve_conn(c);
			_exit(0);
		}
		close(c);
	}
}

static int pin_process(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* before any thread exists: every thread and child inherits it */
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* One row of the connection table (print_conns). */
static int print_conn(const struct rpcrdma_svc_conn_stats *cs, void *arg)
{
	char host[INET6_ADDRSTRLEN] = "?", peer[INET6_ADDRSTRLEN + 8];
	uint16_t port = 0;

	if (cs->peer.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)&cs->peer;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
	} else if (cs->peer.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 =
		    (const struct sockaddr_in6 *)(const void *)&cs->peer;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
	}
	snprintf(peer, sizeof(peer), cs->peer.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
		 port);
	printf("%-5u %-24s %-5s %7u %10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64
	       " %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %8" PRIu64 " %9" PRIu64 "\n",
	       cs->id, peer, cs->connected ? "up" : "down", cs->credits, cs->calls, cs->replies,
	       cs->bytes_in, cs->bytes_out, cs->read_chunks, cs->write_chunks, cs->reply_chunks,
	       cs->err_vers_tx, cs->err_chunk_tx);
	(void)arg;
	return 0;
}

/* SIGUSR1 and exit: one row per connection (rpcrdma_svc_conn_foreach),
 * then the server's totals since it started (connections gone included). */
static void print_conns(void)
{
	struct rpcrdma_xprt_stats t;

	printf("%-5s %-24s %-5s %7s %10s %10s %12s %12s %6s %6s %6s %8s %9s\n", "conn", "peer",
	       "state", "credits", "calls", "replies", "bytes_in", "bytes_out", "read", "write",
	       "reply", "err_vers", "err_chunk");
	rpcrdma_svc_conn_foreach(g_svc, print_conn, NULL);
	if (rpcrdma_svc_stats(g_svc, &t) == 0)
		printf("%-5s %-24s %-5s %7u %10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64
		       " %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %8" PRIu64 " %9" PRIu64 "\n",
		       "total", "-", "-", t.credits, t.calls, t.replies,
		       t.inline_bytes_rx + t.read_bytes,
		       t.inline_bytes_tx + t.write_bytes + t.reply_bytes, t.read_chunks,
		       t.write_chunks, t.reply_chunks, t.err_vers_tx, t.err_chunk_tx);
	if (rpcrdma_svc_stats(g_svc, &t) == 0 && t.srq_capacity)
		printf("shared receive queue: depth %u capacity %u\n", t.srq_depth, t.srq_capacity);
	else
		printf("shared receive queue: none (a receive pool per connection)\n");
	fflush(stdout);
}

int perf_server_main(const struct perf_server_opts *o)
{
	struct rpcrdma_svc_opts so = {0};
	uint16_t tport = 0, fport = 0;
	int tfd = -1, ffd = -1, rc, sig;
	pid_t acceptor = -1;
	pthread_t th;
	sigset_t ss;

	g_opts = o;
	signal(SIGPIPE, SIG_IGN);
	if (o->cpu >= 0 && (rc = pin_process(o->cpu))) {
		fprintf(stderr, "rpcrdma-perf server: cannot pin to CPU %d: %s\n", o->cpu,
			strerror(-rc));
		return 1;
	}
	if (o->tcp) {
		tfd = tcp_listen(o->bind, o->tcp_port, &tport);
		if (tfd >= 0)
			ffd = tcp_listen(o->bind, o->tcp_fork_port, &fport);
		if (tfd < 0 || ffd < 0) {
			fprintf(stderr, "rpcrdma-perf server: TCP ports %u/%u: %s\n", o->tcp_port,
				o->tcp_fork_port, rpcrdma_strerror(tfd < 0 ? tfd : ffd));
			return 1;
		}
		fflush(NULL);
		acceptor = fork();
		if (acceptor == 0) {
			close(tfd);
			fork_acceptor(ffd);
		}
		close(ffd);
	}

	/* signals are taken by sigwait below, on this thread only */
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGUSR1); /* print the connection table */
	pthread_sigmask(SIG_BLOCK, &ss, NULL);

	so.comp_mask = RPCRDMA_SVC_OPT_CREDITS | RPCRDMA_SVC_OPT_WORKERS | RPCRDMA_SVC_OPT_MPA_CRC |
		       RPCRDMA_SVC_OPT_PROGRESS | RPCRDMA_SVC_OPT_MAX_CONNS;
	/* as many as clients can open (--connections), not the library's 1024 */
	so.max_conns = PERF_MAX_CONNECTIONS;
	so.credits = o->credits;
	so.workers = o->threads;
	so.mpa_crc = o->crc;
	so.progress = o->busy     ? RPCRDMA_PROGRESS_BUSY_POLL
		      : o->nospin ? RPCRDMA_PROGRESS_BLOCK
				  : RPCRDMA_PROGRESS_THREAD;
	if (o->rdma_version != RPCRDMA_VERSION_1) {
		so.comp_mask |= RPCRDMA_SVC_OPT_RDMA_VERSION;
		so.rdma_version = o->rdma_version;
		so.rdma_props = 1;
	}
	if (o->inline_size) {
		so.comp_mask |= RPCRDMA_SVC_OPT_INLINE;
		so.inline_send = so.inline_recv = o->inline_size;
	}
	if (o->no_pdata) {
		so.comp_mask |= RPCRDMA_SVC_OPT_PRIVATE_DATA;
		so.private_data = 0;
	}
	if (o->cpu >= 0) {
		so.comp_mask |= RPCRDMA_SVC_OPT_CPU;
		so.cpu = o->cpu;
	}
	if (o->reliable_reply) {
		so.comp_mask |= RPCRDMA_SVC_OPT_RELIABLE_REPLY;
		so.reliable_reply = 1;
	}
	if (o->srq_set) {
		so.comp_mask |= RPCRDMA_SVC_OPT_SRQ;
		so.srq_depth = o->srq_depth;
	}
	if (o->rpcbind) {
		so.comp_mask |= RPCRDMA_SVC_OPT_RPCBIND;
		so.rpcbind = 1;
	}
	rc = o->port_any ? rpcrdma_svc_create_any(o->bind, &so, &g_svc)
			 : rpcrdma_svc_create(o->bind, o->port, &so, &g_svc);
	if (!rc)
		rc = rpcrdma_svc_register(g_svc, RPCRDMA_PERF_PROG, RPCRDMA_PERF_V1, rdma_dispatch,
					  NULL);
	if (!rc)
		rc = rpcrdma_svc_start(g_svc);
	if (rc) {
		fprintf(stderr, "rpcrdma-perf server: RDMA %s port %u: %s\n",
			o->bind ? o->bind : "*", o->port, rpcrdma_strerror(rc));
		if (acceptor > 0)
			kill(acceptor, SIGTERM);
		return 1;
	}
	if (o->tcp && pthread_create(&th, NULL, svc_run_thread, (void *)(intptr_t)tfd) == 0)
		pthread_detach(th);

	printf("rpcrdma-perf server: pid %d rdma port %u", (int)getpid(), rpcrdma_svc_port(g_svc));
	if (o->tcp)
		printf(" tcp port %u (svc_run) tcp-fork port %u (fork per connection)", tport,
		       fport);
	printf(" credits %u workers %u cpu %d%s%s%s%s\n", o->credits, o->threads, o->cpu,
	       o->busy ? " busy-poll" : "", o->reliable_reply ? " reliable-reply" : "",
	       o->bind ? " bind " : "", o->bind ? o->bind : "");
	fflush(stdout);

	for (;;) {
		if (sigwait(&ss, &sig) != 0)
			continue;
		print_conns();
		if (sig != SIGUSR1)
			break;
	}
	/* a wedged library must not keep the process: SIGALRM's default
	 * action ends it if the graceful stop takes more than 10 s */
	alarm(10);
	rpcrdma_svc_stop(g_svc, 2000);
	rpcrdma_svc_destroy(g_svc);
	g_svc = NULL;
	if (acceptor > 0)
		kill(acceptor, SIGTERM);
	return 0;
}
