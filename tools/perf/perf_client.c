// SPDX-License-Identifier: MIT
/*
 * rpcrdma-perf client: runs one workload (NULL, WRITE or READ) per payload
 * size over RPC-over-RDMA and/or ONC RPC over TCP (libtirpc), and measures
 * calls per second, payload MB/s and round-trip latency.
 *
 * RDMA: each client thread owns one connection (one struct rpcrdma_clnt)
 * and keeps --inflight calls on it with rpcrdma_clnt_call_async(); a
 * completion callback checks the result, records it and starts the next
 * call of its slot, so no thread wake-up sits between two calls.
 * TCP: each client thread owns one libtirpc CLIENT (clnttcp_create) and
 * calls the rpcgen -M stubs synchronously (libtirpc has one call in flight
 * per CLIENT).
 *
 * Data check: slot s's k-th call uses pattern offset ((s + k) mod PERF_NOFF)
 * * PERF_OFF_STEP, so two consecutive calls of a slot never carry the same
 * bytes: a READ whose data did not arrive leaves the previous call's bytes
 * in the buffer and fails the check. WRITE compares the server's checksum
 * of what it received; READ checksums what landed in the receive buffer.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rpcrdma.h>

#include "perf.h"
#include "perf_tool.h"

struct run;
struct thr;

struct slot {
	struct thr *t;
	uint64_t t0;
	uint32_t offidx, calls;
	perf_write_args wa;
	perf_write_res wr;
	perf_read_args ra;
	perf_read_res rr;
	perf_echo ea, er;
	struct rpcrdma_call_opts co;
	uint8_t *rbuf;
};

struct thr {
	struct run *run;
	pthread_t th;
	struct rpcrdma_clnt *clnt;
	CLIENT *tcp;
	struct slot *slots;
	struct perf_hist *hist;
	_Atomic uint32_t outstanding;
	_Atomic uint64_t issued, done;
	/* in the window; completions may run on any library thread */
	_Atomic uint64_t ops, errors, verified, bad_data;
};

struct run {
	const struct perf_client_opts *o;
	enum perf_transport tr;
	enum perf_workload wl;
	uint32_t size, threads, inflight;
	uint64_t ws, we; /* measurement window (ns); count mode: 0, UINT64_MAX */
	_Atomic bool stop;
	uint64_t expect[PERF_NOFF]; /* perf_sum of the size bytes at each offset */
	struct thr *thr;
	pthread_mutex_t err_lock;
	char first_error[96];
	_Atomic uint64_t t_first, t_last; /* count mode: first issue, last completion */
	/* posted when a thread's last call ended: in count mode the
	 * supervisor sleeps on it instead of waking every few ms (its wakes
	 * would be counted in the instructions per call, bench/rpc) */
	sem_t fin;
};

/* A call of @t ended and issues no other. */
static void slot_gone(struct thr *t)
{
	if (atomic_fetch_sub(&t->outstanding, 1) == 1)
		sem_post(&t->run->fin);
}

static void set_error(struct run *r, const char *msg)
{
	pthread_mutex_lock(&r->err_lock);
	if (!r->first_error[0])
		snprintf(r->first_error, sizeof(r->first_error), "%s", msg);
	pthread_mutex_unlock(&r->err_lock);
}

/* ---- result checks ---- */

/* 0 if the call's result is right; a message otherwise. */
static const char *check(struct slot *s, bool verify)
{
	struct run *r = s->t->run;

	switch (r->wl) {
	case PERF_W_NULL:
		return NULL;
	case PERF_W_WRITE:
		if (s->wr.len != r->size)
			return "WRITE: server received a different length";
		if (s->wr.sum != r->expect[s->offidx])
			return "WRITE: server's checksum of the data differs";
		return NULL;
	case PERF_W_READ:
		if (s->rr.status)
			return "READ: server refused the range";
		if (s->rr.data.len != r->size || s->rr.data.base != s->rbuf)
			return "READ: data did not land in the receive buffer";
		if (verify && perf_sum(s->rbuf, r->size) != r->expect[s->offidx])
			return "READ: data checksum differs from the pattern";
		return NULL;
	case PERF_W_ECHO:
		if (s->er.data.data_len != r->size || !s->er.data.data_val)
			return "ECHO: the reply is not the size sent";
		if (verify &&
		    perf_sum((const uint8_t *)s->er.data.data_val, r->size) != r->expect[s->offidx])
			return "ECHO: the bytes came back different";
		return NULL;
	case PERF_W_UNKNOWN: /* perf_unknown.c */
		break;
	}
	return "unknown workload";
}

/* Prepare slot @s's next call (new offset, results cleared). */
static void prepare(struct slot *s)
{
	struct run *r = s->t->run;
	uint64_t off;

	s->offidx = (s->offidx + 1) % PERF_NOFF;
	off = (uint64_t)s->offidx * PERF_OFF_STEP;
	switch (r->wl) {
	case PERF_W_NULL:
		break;
	case PERF_W_WRITE:
		s->wa.offset = off;
		s->wa.data.base = (void *)(uintptr_t)(perf_pattern() + off);
		s->wa.data.len = r->size;
		s->wa.data.flags = 0;
		memset(&s->wr, 0, sizeof(s->wr));
		break;
	case PERF_W_READ:
		s->ra.offset = off;
		s->ra.len = r->size;
		memset(&s->rr, 0, sizeof(s->rr));
		/* over TCP the bytes decode into rbuf (capacity size) */
		s->rr.data.base = s->rbuf;
		s->rr.data.len = r->size;
		break;
	case PERF_W_ECHO:
		s->ea.data.data_val = (char *)(uintptr_t)(perf_pattern() + off);
		s->ea.data.data_len = r->size;
		/* the reply's bytes: allocated by the decoder (xdr_bytes into a
		 * given buffer has no bound but the XDR maximum) */
		xdr_free((xdrproc_t)xdr_perf_echo, (char *)&s->er);
		memset(&s->er, 0, sizeof(s->er));
		break;
	case PERF_W_UNKNOWN:
		break;
	}
}

/* Account one completed call; true if the slot should call again. */
static bool account(struct slot *s, int status, const char *errmsg)
{
	struct thr *t = s->t;
	struct run *r = t->run;
	uint64_t now = perf_now_ns();
	bool verify = r->o->verify_every <= 1 || s->calls % r->o->verify_every == 0;
	const char *bad = status ? NULL : check(s, verify);
	bool more;

	if (now >= r->ws && now < r->we) {
		if (status) {
			atomic_fetch_add_explicit(&t->errors, 1, memory_order_relaxed);
		} else if (bad) {
			atomic_fetch_add_explicit(&t->bad_data, 1, memory_order_relaxed);
		} else {
			atomic_fetch_add_explicit(&t->ops, 1, memory_order_relaxed);
			if (r->wl != PERF_W_NULL && verify)
				atomic_fetch_add_explicit(&t->verified, 1, memory_order_relaxed);
			perf_hist_add(t->hist, now - s->t0);
		}
	}
	if (status)
		set_error(r, errmsg);
	else if (bad)
		set_error(r, bad);
	atomic_store(&r->t_last, now);
	atomic_fetch_add(&t->done, 1);
	s->calls++;
	more = !atomic_load(&r->stop) && now < r->we && !status && !bad;
	if (more && r->o->count) {
		uint64_t n = atomic_fetch_add(&t->issued, 1);

		more = n < r->o->count;
	}
	return more;
}

/* ---- RPC-over-RDMA ---- */

static void rdma_cb(struct rpcrdma_clnt *c, int status, void *res, void *arg);

static int rdma_issue(struct slot *s)
{
	struct run *r = s->t->run;
	struct rpcrdma_clnt *c = s->t->clnt;

	prepare(s);
	s->t0 = perf_now_ns();
	switch (r->wl) {
	case PERF_W_NULL:
		return rpcrdma_clnt_call_async(c, PERF_NULL, NULL, NULL, NULL, NULL, NULL, rdma_cb,
					       s);
	case PERF_W_WRITE:
		return rpcrdma_clnt_call_async(c, PERF_WRITE, (xdrproc_t)xdr_perf_write_args,
					       &s->wa, (xdrproc_t)xdr_perf_write_res, &s->wr, NULL,
					       rdma_cb, s);
	case PERF_W_READ:
		memset(&s->co, 0, sizeof(s->co));
		s->co.comp_mask = RPCRDMA_CALL_OPT_RECV_BULK;
		s->co.recv_bulk[0].base = s->rbuf;
		s->co.recv_bulk[0].len = r->size;
		s->co.nrecv_bulk = 1;
		s->rr.data.base = NULL; /* placed into recv_bulk[0] */
		s->rr.data.len = 0;
		return rpcrdma_clnt_call_async(c, PERF_READ, (xdrproc_t)xdr_perf_read_args, &s->ra,
					       (xdrproc_t)xdr_perf_read_res, &s->rr, &s->co,
					       rdma_cb, s);
	case PERF_W_ECHO:
		/* a Reply chunk when the reply does not fit inline */
		memset(&s->co, 0, sizeof(s->co));
		s->co.comp_mask = RPCRDMA_CALL_OPT_REPLY_SIZE;
		s->co.reply_size = r->size + 64;
		return rpcrdma_clnt_call_async(c, PERF_ECHO, (xdrproc_t)xdr_perf_echo, &s->ea,
					       (xdrproc_t)xdr_perf_echo, &s->er, &s->co, rdma_cb,
					       s);
	case PERF_W_UNKNOWN:
		break;
	}
	return -EINVAL;
}

static void rdma_cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct slot *s = arg;
	struct thr *t = s->t;
	int rc;

	(void)c;
	(void)res;
	if (!account(s, status, status ? rpcrdma_strerror(status) : NULL)) {
		slot_gone(t);
		return;
	}
	rc = rdma_issue(s);
	if (rc) {
		set_error(t->run, rpcrdma_strerror(rc));
		slot_gone(t);
	}
}

static int rdma_connect(const struct perf_client_opts *o, uint32_t inflight,
			struct rpcrdma_clnt **out)
{
	return perf_rdma_connect(o, inflight, false, out);
}

int perf_rdma_connect(const struct perf_client_opts *o, uint32_t inflight, bool reliable_reply,
		      struct rpcrdma_clnt **out)
{
	struct rpcrdma_clnt_opts co = {0};

	co.comp_mask = RPCRDMA_CLNT_OPT_CREDITS | RPCRDMA_CLNT_OPT_TIMEOUT |
		       RPCRDMA_CLNT_OPT_PROGRESS | RPCRDMA_CLNT_OPT_MPA_CRC;
	co.credits = inflight > RPCRDMA_DEFAULT_CREDITS ? inflight : RPCRDMA_DEFAULT_CREDITS;
	if (co.credits > 1024)
		co.credits = 1024;
	co.timeout_ms = 30000;
	co.progress = o->busy     ? RPCRDMA_PROGRESS_BUSY_POLL
		      : o->nospin ? RPCRDMA_PROGRESS_BLOCK
				  : RPCRDMA_PROGRESS_THREAD;
	if (o->rdma_version != RPCRDMA_VERSION_1) {
		co.comp_mask |= RPCRDMA_CLNT_OPT_RDMA_VERSION;
		co.rdma_version = o->rdma_version;
		co.rdma_props = 1;
	}
	if (o->inline_size) {
		co.comp_mask |= RPCRDMA_CLNT_OPT_INLINE;
		co.inline_send = co.inline_recv = o->inline_size;
	}
	if (o->no_pdata) {
		co.comp_mask |= RPCRDMA_CLNT_OPT_PRIVATE_DATA;
		co.private_data = 0;
	}
	co.mpa_crc = o->crc;
	if (reliable_reply) {
		co.comp_mask |= RPCRDMA_CLNT_OPT_RELIABLE_REPLY;
		co.reliable_reply = 1;
	}
	if (o->cpu >= 0) {
		co.comp_mask |= RPCRDMA_CLNT_OPT_CPU;
		co.cpu = o->cpu;
	}
	return rpcrdma_clnt_create(o->host, o->port, RPCRDMA_PERF_PROG, RPCRDMA_PERF_V1, &co, out);
}

/* ---- ONC RPC over TCP (libtirpc) ---- */

static int resolve4(const char *host, uint16_t port, struct sockaddr_in *sa)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;

	if (getaddrinfo(host, NULL, &hints, &ai))
		return -ENOENT;
	memcpy(sa, ai->ai_addr, sizeof(*sa));
	sa->sin_port = htons(port);
	freeaddrinfo(ai);
	return 0;
}

static CLIENT *tcp_connect(const struct perf_client_opts *o, enum perf_transport tr, char *err,
			   size_t errlen)
{
	struct sockaddr_in sa;
	int sock = RPC_ANYSOCK;
	CLIENT *cl;
	uint16_t port = tr == PERF_T_TCP_FORK ? o->tcp_fork_port : o->tcp_port;

	if (resolve4(o->host, port, &sa)) {
		snprintf(err, errlen, "unknown host %s", o->host);
		return NULL;
	}
	/* a non-zero port: no portmapper query. Buffer sizes 0 = libtirpc's
	 * defaults, as a plain rpcgen client gets them. */
	cl = clnttcp_create(&sa, RPCRDMA_PERF_PROG, RPCRDMA_PERF_V1, &sock, 0, 0);
	if (!cl)
		snprintf(err, errlen, "%s", clnt_spcreateerror("clnttcp_create"));
	return cl;
}

static enum clnt_stat tcp_call(struct slot *s)
{
	CLIENT *cl = s->t->tcp;

	switch (s->t->run->wl) {
	case PERF_W_NULL:
		return perf_null_1(NULL, NULL, cl);
	case PERF_W_WRITE:
		return perf_write_1(&s->wa, &s->wr, cl);
	case PERF_W_READ:
		return perf_read_1(&s->ra, &s->rr, cl);
	case PERF_W_ECHO:
		return perf_echo_1(&s->ea, &s->er, cl);
	case PERF_W_UNKNOWN:
		break;
	}
	return RPC_CANTENCODEARGS;
}

static void *tcp_thread(void *arg)
{
	struct thr *t = arg;
	struct slot *s = &t->slots[0];

	for (;;) {
		enum clnt_stat st;

		prepare(s);
		s->t0 = perf_now_ns();
		st = tcp_call(s);
		if (!account(s, st == RPC_SUCCESS ? 0 : -EIO,
			     st == RPC_SUCCESS ? NULL : clnt_sperrno(st)))
			break;
	}
	atomic_store(&t->outstanding, 0);
	sem_post(&t->run->fin);
	return NULL;
}

/* ---- one case ---- */

static uint32_t inflight_of(const struct run *r)
{
	return r->tr == PERF_T_RDMA ? r->inflight : 1;
}

static void server_info(const struct perf_client_opts *o, struct run *r, perf_info *info)
{
	memset(info, 0, sizeof(*info));
	info->cpu_pinned = -2;
	info->cpu_now = -1;
	if (r->tr == PERF_T_RDMA) {
		if (rpcrdma_clnt_call(r->thr[0].clnt, PERF_INFO, NULL, NULL,
				      (xdrproc_t)xdr_perf_info, info, NULL))
			info->cpu_pinned = -2;
	} else if (perf_info_1(NULL, info, r->thr[0].tcp) != RPC_SUCCESS) {
		info->cpu_pinned = -2;
	}
	(void)o;
}

static void progress_line(const struct run *r, double el, uint64_t dn, double dt)
{
	double rate = dt > 0 ? (double)dn / dt : 0;

	fprintf(stderr, "\r  %-9s %-5s %8u B  T=%u Q=%-3u %5.1f s  %10.0f calls/s  %9.1f MB/s   ",
		perf_transport_name(r->tr), perf_workload_name(r->wl), r->size, r->threads,
		inflight_of(r), el, rate, rate * r->size / 1e6);
}

/* CPU time (us) and context switches per completed call, server (from
 * @i0 and @i1, PERF_INFO before the first call and after the last) and
 * client (from @cu0, @cs0, @cw0, perf_rusage() when @i0 was taken). The
 * server of --tcp-server fork answers PERF_INFO from another process
 * than the calls': its figures stay unknown (-1). */
static void cpu_per_call(const struct run *r, const perf_info *i0, const perf_info *i1,
			 uint64_t cu0, uint64_t cs0, uint64_t cw0, struct perf_result *res)
{
	uint64_t done = 0, cu, cs, cw;

	for (uint32_t i = 0; i < r->threads; i++)
		done += atomic_load(&r->thr[i].done);
	if (!done)
		return;
	perf_rusage(&cu, &cs, &cw);
	res->cli_user_us = (double)(cu - cu0) / 1e3 / (double)done;
	res->cli_sys_us = (double)(cs - cs0) / 1e3 / (double)done;
	res->cli_csw = (double)(cw - cw0) / (double)done;
	if (r->tr == PERF_T_TCP_FORK || i1->pid != i0->pid || i1->cpu_user_ns < i0->cpu_user_ns)
		return;
	res->srv_user_us = (double)(i1->cpu_user_ns - i0->cpu_user_ns) / 1e3 / (double)done;
	res->srv_sys_us = (double)(i1->cpu_sys_ns - i0->cpu_sys_ns) / 1e3 / (double)done;
	res->srv_csw = (double)(i1->ctx_switches - i0->ctx_switches) / (double)done;
}

#define PERF_MAX_IV 6000 /* 100 ms intervals: ten minutes */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int run_case(const struct perf_client_opts *o, enum perf_transport tr, enum perf_workload wl,
		    uint32_t size, struct perf_result *res)
{
	struct run r;
	perf_info info, info0;
	uint64_t cu0 = 0, cs0 = 0, cw0 = 0;
	uint32_t q, nthr = o->threads;
	uint64_t start, last_done = 0, last_t, iv_t = 0, iv_done = 0;
	double iv[PERF_MAX_IV];
	size_t niv = 0;
	struct perf_hist *all;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	r.o = o;
	r.tr = tr;
	r.wl = wl;
	r.size = wl == PERF_W_NULL ? 0 : size;
	r.threads = nthr;
	r.inflight = o->inflight;
	q = inflight_of(&r);
	pthread_mutex_init(&r.err_lock, NULL);
	sem_init(&r.fin, 0, 0);
	res->transport = tr;
	res->workload = wl;
	res->size = r.size;
	res->threads = nthr;
	res->inflight = q;
	res->client_cpu = o->cpu;
	res->server_cpu_pinned = -2; /* unknown until PERF_INFO answers */
	res->server_cpu_seen = -1;
	if (wl != PERF_W_NULL)
		for (uint32_t i = 0; i < PERF_NOFF; i++)
			r.expect[i] = perf_sum(perf_pattern() + (size_t)i * PERF_OFF_STEP, r.size);

	r.thr = calloc(nthr, sizeof(*r.thr));
	all = calloc(1, sizeof(*all));
	if (!r.thr || !all) {
		free(r.thr);
		free(all);
		return -ENOMEM;
	}
	/* connect every thread's client before the clock starts */
	for (uint32_t i = 0; i < nthr && !rc; i++) {
		struct thr *t = &r.thr[i];
		char err[200] = "";

		t->run = &r;
		t->hist = calloc(1, sizeof(*t->hist));
		t->slots = calloc(q, sizeof(*t->slots));
		if (!t->hist || !t->slots) {
			rc = -ENOMEM;
			break;
		}
		for (uint32_t j = 0; j < q; j++) {
			t->slots[j].t = t;
			t->slots[j].offidx = (i * q + j) % PERF_NOFF;
			if (wl == PERF_W_READ && !(t->slots[j].rbuf = malloc(r.size ? r.size : 1)))
				rc = -ENOMEM;
		}
		if (tr == PERF_T_RDMA) {
			int e = rdma_connect(o, q, &t->clnt);

			if (e) {
				/* closed before any MPA reply (a libtirpc TCP
				 * server does that with our MPA request) */
				snprintf(err, sizeof(err), "connect: %s",
					 e == -ECONNRESET ? "peer closed the connection: not an "
							    "RPC-over-RDMA server (MPA handshake "
							    "failed)"
							  : rpcrdma_strerror(e));
				rc = e;
			}
		} else if (!(t->tcp = tcp_connect(o, tr, err, sizeof(err)))) {
			rc = -ECONNREFUSED;
		}
		if (rc) {
			snprintf(res->first_error, sizeof(res->first_error), "%.*s",
				 (int)sizeof(res->first_error) - 1, err);
			res->no_connection = err[0] != 0;
		}
	}
	res->srv_user_us = res->srv_sys_us = res->srv_csw = -1;
	res->cli_user_us = res->cli_sys_us = res->cli_csw = -1;
	if (!rc) {
		server_info(o, &r, &info);
		res->server_cpu_pinned = info.cpu_pinned;
		res->server_cpu_seen = info.cpu_now;
		info0 = info;
		perf_rusage(&cu0, &cs0, &cw0);
	}

	if (!rc) {
		start = perf_now_ns();
		if (o->count) {
			r.ws = 0;
			r.we = UINT64_MAX;
		} else {
			r.ws = start + (uint64_t)(o->warmup * 1e9);
			r.we = r.ws + (uint64_t)(o->duration * 1e9);
		}
		atomic_store(&r.t_first, start);
		for (uint32_t i = 0; i < nthr; i++) {
			struct thr *t = &r.thr[i];

			if (tr == PERF_T_RDMA) {
				atomic_store(&t->outstanding, q);
				for (uint32_t j = 0; j < q; j++) {
					int e;

					if (o->count &&
					    atomic_fetch_add(&t->issued, 1) >= o->count) {
						atomic_fetch_sub(&t->outstanding, 1);
						continue;
					}
					e = rdma_issue(&t->slots[j]);
					if (e) {
						set_error(&r, rpcrdma_strerror(e));
						atomic_fetch_sub(&t->outstanding, 1);
					}
				}
			} else {
				atomic_store(&t->outstanding, 1);
				if (o->count)
					atomic_fetch_add(&t->issued, 1);
				if (pthread_create(&t->th, NULL, tcp_thread, t)) {
					atomic_store(&t->outstanding, 0);
					set_error(&r, "pthread_create");
				}
			}
		}
		/* supervise: progress line, 100 ms interval rates, end of
		 * window, drain */
		last_t = start;
		for (;;) {
			uint64_t now, busy = 0, dn = 0;

			if (o->count) {
				struct timespec ts;

				/* until a thread finished, at most 1 s */
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_sec += 1;
				(void)sem_timedwait(&r.fin, &ts);
			} else {
				usleep(20000);
			}
			now = perf_now_ns();
			for (uint32_t i = 0; i < nthr; i++) {
				busy += atomic_load(&r.thr[i].outstanding);
				dn += atomic_load(&r.thr[i].done);
			}
			if (!o->count && now >= r.ws && now <= r.we) {
				if (!iv_t) {
					iv_t = now;
					iv_done = dn;
				} else if (now - iv_t >= 100000000ull && niv < PERF_MAX_IV) {
					iv[niv++] =
					    (double)(dn - iv_done) / ((double)(now - iv_t) / 1e9);
					iv_t = now;
					iv_done = dn;
				}
			}
			if (o->progress && now - last_t >= 1000000000ull) {
				progress_line(&r, (double)(now - start) / 1e9, dn - last_done,
					      (double)(now - last_t) / 1e9);
				last_done = dn;
				last_t = now;
			}
			if (!o->count && now >= r.we)
				atomic_store(&r.stop, true);
			if (!busy)
				break;
			if (!o->count && now > r.we + 30000000000ull) {
				set_error(&r, "calls still outstanding 30 s after the run");
				rc = -ETIMEDOUT;
				break;
			}
		}
		if (o->progress)
			fprintf(stderr, "\r%*s\r", 100, "");
		for (uint32_t i = 0; i < nthr; i++)
			if (tr != PERF_T_RDMA && r.thr[i].tcp)
				pthread_join(r.thr[i].th, NULL);
		res->seconds =
		    o->count ? (double)(atomic_load(&r.t_last) - start) / 1e9 : o->duration;
		if (rc != -ETIMEDOUT) {
			server_info(o, &r, &info);
			res->server_rss_kb = info.rss_kb;
			cpu_per_call(&r, &info0, &info, cu0, cs0, cw0, res);
		}
	}

	for (uint32_t i = 0; i < nthr; i++) {
		struct thr *t = &r.thr[i];

		if (t->clnt) {
			struct rpcrdma_xprt_stats st;

			if (rpcrdma_clnt_stats(t->clnt, &st) == 0) {
				res->credit_stalls += st.credit_stalls;
				res->read_chunks += st.read_chunks;
				res->write_chunks += st.write_chunks;
				res->long_calls += st.long_calls;
				res->remote_inv += st.remote_invalidations;
			}
		}
		if (rc != -ETIMEDOUT) {
			if (t->clnt)
				rpcrdma_clnt_destroy(t->clnt);
			if (t->tcp)
				clnt_destroy(t->tcp);
		}
		res->ops += t->ops;
		res->errors += t->errors;
		res->verified += t->verified;
		res->bad_data += t->bad_data;
		if (t->hist)
			perf_hist_merge(all, t->hist);
		if (t->slots && rc != -ETIMEDOUT)
			for (uint32_t j = 0; j < q; j++) {
				free(t->slots[j].rbuf);
				xdr_free((xdrproc_t)xdr_perf_echo, (char *)&t->slots[j].er);
			}
		free(t->slots);
		free(t->hist);
	}
	if (!res->first_error[0] && r.first_error[0])
		snprintf(res->first_error, sizeof(res->first_error), "%s", r.first_error);
	if (res->seconds > 0) {
		res->ops_per_s = (double)res->ops / res->seconds;
		res->mb_per_s = res->ops_per_s * r.size / 1e6;
	}
	if (niv) {
		qsort(iv, niv, sizeof(iv[0]), cmp_double);
		res->ops_per_s_med = niv % 2 ? iv[niv / 2] : (iv[niv / 2 - 1] + iv[niv / 2]) / 2;
	}
	res->p50_us = perf_hist_quantile(all, 0.50) / 1e3;
	res->p99_us = perf_hist_quantile(all, 0.99) / 1e3;
	res->p999_us = perf_hist_quantile(all, 0.999) / 1e3;
	res->max_us = (double)all->max_ns / 1e3;
	res->mean_us = all->count ? (double)all->sum_ns / (double)all->count / 1e3 : 0;
	free(all);
	free(r.thr);
	if (!rc && (res->errors || res->bad_data || !res->ops))
		rc = -EIO;
	return rc;
}

/* ---- main ---- */

static const char *placement(const struct perf_client_opts *o, const struct perf_result *r,
			     size_t n, char *buf, size_t len)
{
	int sp = -2, ss = -1;

	for (size_t i = 0; i < n; i++)
		if (r[i].server_cpu_pinned != -2) {
			sp = r[i].server_cpu_pinned;
			ss = r[i].server_cpu_seen;
			break;
		}
	if (sp == -2)
		snprintf(buf, len, "server unknown (no answer), client %s%d",
			 o->cpu >= 0 ? "pinned to CPU " : "unpinned, last on CPU ",
			 o->cpu >= 0 ? o->cpu : sched_getcpu());
	else if (sp >= 0 && o->cpu >= 0)
		snprintf(buf, len, "server pinned to CPU %d, client pinned to CPU %d: %s", sp,
			 o->cpu, sp == o->cpu ? "same-CPU" : "cross-CPU");
	else
		snprintf(buf, len, "server %s%d, client %s%d: not both pinned (bimodal figures)",
			 sp >= 0 ? "pinned to CPU " : "unpinned, seen on CPU ", sp >= 0 ? sp : ss,
			 o->cpu >= 0 ? "pinned to CPU " : "unpinned, last on CPU ",
			 o->cpu >= 0 ? o->cpu : sched_getcpu());
	return buf;
}

int perf_client_main(const struct perf_client_opts *o)
{
	struct perf_result *res;
	struct perf_conn_report conn;
	size_t n = 0, cap;
	char place[200];
	int failed = 0;

	signal(SIGPIPE, SIG_IGN);
	if (o->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "rpcrdma-perf: cannot pin to CPU %d: %s\n", o->cpu,
				strerror(errno));
			return 1;
		}
	}
	if (o->workload == PERF_W_UNKNOWN)
		return perf_unknown_main(o) ? 1 : 0;
	if (o->connections) {
		int rc = perf_connections_mode(o, &conn);

		if (rc)
			return 1; /* connections_mode said why; no figures to report */
		if (o->json) {
			perf_report_json(stdout, o, NULL, 0, &conn, "");
		} else {
			printf(
			    "server RSS: %llu kB with 1 connection, %llu kB with %u (%+.1f kB per "
			    "connection, %u credits each)",
			    (unsigned long long)conn.rss_kb_1, (unsigned long long)conn.rss_kb_n,
			    conn.connections,
			    conn.connections > 1 ? ((double)conn.rss_kb_n - (double)conn.rss_kb_1) /
						       (conn.connections - 1)
						 : 0.0,
			    conn.credits);
			if (conn.size)
				printf(", %llu kB after one %u-byte WRITE on each at once (peak "
				       "%llu kB)",
				       (unsigned long long)conn.rss_kb_n_active, conn.size,
				       (unsigned long long)conn.hwm_kb);
			printf(
			    "; server saw %u connections; client RSS %llu kB; connected (and one "
			    "NULL each) in %.3f s\n",
			    conn.server_conns_seen, (unsigned long long)conn.client_rss_kb,
			    (double)conn.connect_us / 1e6);
		}
		return rc ? 1 : 0;
	}

	cap = (size_t)o->nsizes * 3u + 3u;
	res = calloc(cap, sizeof(*res));
	if (!res)
		return 1;
	for (uint32_t si = 0; si < (o->workload == PERF_W_NULL ? 1u : o->nsizes); si++) {
		enum perf_transport order[3];
		size_t no = 0;

		if (o->peer_rdma)
			order[no++] = PERF_T_RDMA;
		if (o->peer_tcp && o->tcp_svc)
			order[no++] = PERF_T_TCP_SVC;
		if (o->peer_tcp && o->tcp_fork)
			order[no++] = PERF_T_TCP_FORK;
		for (size_t k = 0; k < no; k++) {
			int rc = run_case(o, order[k], o->workload, o->sizes[si], &res[n]);

			if (rc) {
				failed = 1;
				fprintf(stderr, "rpcrdma-perf: %s %s %u B failed: %s\n",
					perf_transport_name(order[k]),
					perf_workload_name(o->workload), res[n].size,
					res[n].first_error[0] ? res[n].first_error : strerror(-rc));
			}
			/* a case that could not connect has no figures: the error
			 * above says so, no row of zeros */
			if (!res[n].no_connection)
				n++;
		}
	}
	if (!n) {
		free(res);
		return 1;
	}
	placement(o, res, n, place, sizeof(place));
	if (o->json) {
		perf_report_json(stdout, o, res, n, NULL, place);
	} else {
		perf_report_table(stdout, res, n);
		printf("placement: %s\n", place);
	}
	if (o->csv && perf_report_csv(o->csv, res, n))
		failed = 1;
	if (o->plot && perf_report_plot(o->plot, res, n))
		failed = 1;
	free(res);
	return failed;
}
