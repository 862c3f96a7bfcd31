// SPDX-License-Identifier: MIT
/*
 * rpcbind for RPC-over-RDMA (include/rpcrdma/rpcbind.h; RFC 8166 §9,
 * RFC 5666 §12): registration of a server's programs under the netids
 * "rdma" and "rdma6", and the client's port lookup.
 *
 * Debian's /etc/netconfig has no rdma line, so libtirpc's rpcb_set() and
 * rpcb_getaddr() cannot name these netids; this file speaks the rpcbind
 * protocol (RFC 1833) itself through libtirpc's clnt_vc over a stream
 * socket it connects: the local rpcbind's AF_LOCAL socket for SET and
 * UNSET (rpcbind refuses them over TCP from anyone but a reserved port
 * with its -L flag), TCP port 111 on the server for the lookup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/rpcbind_int.h"
#include "rpcrdma/rpcbind.h"
#include "transport/responder.h"

#define RPCB_PORT        111
#define RPCB_LOCAL_SOCK  "/var/run/rpcbind.sock" /* /run/rpcbind.sock */
#define RPCB_TIMEOUT_MS  5000u
#define RPCB_OWNER_CHARS 16

/* ---- universal addresses (RFC 5665 §5.2.3) ---- */

int rpcb_uaddr_format(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
	const void *a;
	uint16_t port;
	int n;

	/* Copied out: @sa need not be aligned for the family's struct. */
	if (sa->sa_family == AF_INET) {
		memcpy(&in4, sa, sizeof(in4));
		a = &in4.sin_addr;
		port = ntohs(in4.sin_port);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(&in6, sa, sizeof(in6));
		a = &in6.sin6_addr;
		port = ntohs(in6.sin6_port);
	} else {
		return -EAFNOSUPPORT;
	}
	if (!inet_ntop(sa->sa_family, a, host, sizeof(host)))
		return -EAFNOSUPPORT;
	n = snprintf(buf, len, "%s.%u.%u", host, port >> 8, port & 0xffu);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* One decimal byte "0".."255" of @s[0..@n). */
static int uaddr_byte(const char *s, size_t n, unsigned *out)
{
	unsigned v = 0;

	if (n < 1 || n > 3)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > 255)
		return -EINVAL;
	*out = v;
	return 0;
}

int rpcb_uaddr_parse(const char *uaddr, struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN];
	const char *lo, *hi;
	unsigned p1, p2;
	size_t hlen;

	if (!uaddr)
		return -EINVAL;
	lo = strrchr(uaddr, '.');
	if (!lo || lo == uaddr)
		return -EINVAL;
	for (hi = lo - 1; hi > uaddr && *hi != '.'; hi--)
		;
	if (*hi != '.' || uaddr_byte(hi + 1, (size_t)(lo - hi - 1), &p1) ||
	    uaddr_byte(lo + 1, strlen(lo + 1), &p2))
		return -EINVAL;
	hlen = (size_t)(hi - uaddr);
	if (hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, uaddr, hlen);
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		ss->ss_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)(p1 << 8 | p2));
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		ss->ss_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)(p1 << 8 | p2));
		return 0;
	}
	return -EINVAL;
}

/* ---- talking to an rpcbind ---- */

/* A blocking stream socket connected to @sa within @timeout_ms. */
static int rpcb_connect(const struct sockaddr *sa, socklen_t len, uint32_t timeout_ms)
{
	struct pollfd p;
	int fd, err = 0, rc;
	socklen_t el = sizeof(err);

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, sa, len) < 0) {
		if (errno != EINPROGRESS) {
			err = errno;
			goto fail;
		}
		p.fd = fd;
		p.events = POLLOUT;
		do
			rc = poll(&p, 1, (int)timeout_ms);
		while (rc < 0 && errno == EINTR);
		if (rc == 0) {
			err = ETIMEDOUT;
			goto fail;
		}
		if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
			err = errno;
		if (err)
			goto fail;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	/* no local socket: no rpcbind running, as a refused TCP connection */
	return err == ENOENT ? -ECONNREFUSED : -err;
}

/* A TI-RPC client for rpcbind version @vers over @fd, which it closes on
 * clnt_destroy() (and here on failure). */
static CLIENT *rpcb_clnt(int fd, const struct sockaddr *sa, socklen_t len, uint32_t vers)
{
	struct netbuf nb = {.maxlen = len, .len = len, .buf = (void *)(uintptr_t)sa};
	CLIENT *cl = clnt_vc_create(fd, &nb, RPCBPROG, vers, 0, 0);

	if (!cl) {
		close(fd);
		return NULL;
	}
	(void)clnt_control(cl, CLSET_FD_CLOSE, NULL);
	return cl;
}

/* One rpcbind call, version 4 first and 3 when the server has no 4 (the
 * procedures used here are the same in both, RFC 1833 §2.2). */
static int rpcb_call(CLIENT *cl, uint32_t proc, xdrproc_t xa, void *a, xdrproc_t xr, void *r,
		     uint32_t timeout_ms)
{
	struct timeval tv = {.tv_sec = timeout_ms / 1000,
			     .tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000};
	enum clnt_stat st = clnt_call(cl, proc, xa, a, xr, r, tv);

	if (st == RPC_PROGVERSMISMATCH) {
		rpcvers_t v = RPCBVERS;

		(void)clnt_control(cl, CLSET_VERS, (char *)&v);
		st = clnt_call(cl, proc, xa, a, xr, r, tv);
	}
	switch (st) {
	case RPC_SUCCESS:
		return 0;
	case RPC_TIMEDOUT:
		return -ETIMEDOUT;
	case RPC_CANTSEND:
	case RPC_CANTRECV:
		return -ECONNRESET;
	default:
		return -EPROTO;
	}
}

static CLIENT *rpcb_local(int *err)
{
	struct sockaddr_un sun = {.sun_family = AF_LOCAL};
	socklen_t len = (socklen_t)sizeof(sun);
	int fd;

	memcpy(sun.sun_path, RPCB_LOCAL_SOCK, sizeof(RPCB_LOCAL_SOCK));
	fd = rpcb_connect((struct sockaddr *)&sun, len, RPCB_TIMEOUT_MS);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	return rpcb_clnt(fd, (struct sockaddr *)&sun, len, RPCBVERS4);
}

/* ---- server: registration ---- */

/* The netids @la serves and the universal address of each: the dual-stack
 * wildcard "::" (IPV6_V6ONLY off, softiwarp/cm.c) serves both, as
 * "0.0.0.0.p1.p2" and "::.p1.p2". Returns how many (0..2). */
static int svc_rpcb_entries(const struct sockaddr_storage *la, const char *netid[2],
			    char uaddr[2][RPCB_UADDR_MAX])
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)la;
	struct sockaddr_in v4 = {.sin_family = AF_INET};
	int n = 0;

	if (la->ss_family == AF_INET) {
		netid[0] = RPCRDMA_RPCB_NETID;
		return rpcb_uaddr_format((const struct sockaddr *)la, uaddr[0], RPCB_UADDR_MAX) ? 0
												: 1;
	}
	if (la->ss_family != AF_INET6)
		return 0;
	v4.sin_port = s6->sin6_port;
	if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		memcpy(&v4.sin_addr, &s6->sin6_addr.s6_addr[12], sizeof(v4.sin_addr));
		netid[0] = RPCRDMA_RPCB_NETID;
		return rpcb_uaddr_format((const struct sockaddr *)&v4, uaddr[0], RPCB_UADDR_MAX)
			   ? 0
			   : 1;
	}
	if (!rpcb_uaddr_format((const struct sockaddr *)la, uaddr[n], RPCB_UADDR_MAX))
		netid[n++] = RPCRDMA_RPCB_NETID6;
	if (IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) &&
	    !rpcb_uaddr_format((const struct sockaddr *)&v4, uaddr[n], RPCB_UADDR_MAX))
		netid[n++] = RPCRDMA_RPCB_NETID;
	return n;
}

/* SET (@set) or UNSET every program of @s under each of @n netids. */
static int svc_rpcb_apply(struct rpcrdma_svc *s, CLIENT *cl, bool set, int n, const char *netid[2],
			  char uaddr[2][RPCB_UADDR_MAX])
{
	char owner[RPCB_OWNER_CHARS];
	struct svc_prog progs[SVC_MAX_PROGS];
	uint32_t np;
	int rc = 0;

	/* rpcbind records the owner from the socket's credentials; libtirpc
	 * sends the uid as well. */
	snprintf(owner, sizeof(owner), "%u", (unsigned)geteuid());
	futex_mutex_lock(&s->lock);
	np = s->nprogs;
	memcpy(progs, s->progs, np * sizeof(progs[0]));
	futex_mutex_unlock(&s->lock);
	for (uint32_t i = 0; i < np && !rc; i++) {
		for (int k = 0; k < n && !rc; k++) {
			RPCB r = {.r_prog = progs[i].prog,
				  .r_vers = progs[i].vers,
				  .r_netid = (char *)(uintptr_t)netid[k],
				  .r_addr = (char *)"",
				  .r_owner = owner};
			bool_t ok = FALSE;

			/* a stale entry (a server that died unregistered) would
			 * make SET fail: replace it, as rpcgen's servers do */
			rc = rpcb_call(cl, RPCBPROC_UNSET, (xdrproc_t)xdr_rpcb, &r,
				       (xdrproc_t)xdr_bool, &ok, RPCB_TIMEOUT_MS);
			if (rc || !set)
				continue;
			r.r_addr = uaddr[k];
			ok = FALSE;
			rc = rpcb_call(cl, RPCBPROC_SET, (xdrproc_t)xdr_rpcb, &r,
				       (xdrproc_t)xdr_bool, &ok, RPCB_TIMEOUT_MS);
			if (!rc && !ok)
				rc = -EADDRINUSE; /* another user's entry */
		}
	}
	return rc;
}

static int svc_rpcb_run(struct rpcrdma_svc *s, bool set)
{
	struct sockaddr_storage la;
	const char *netid[2];
	char uaddr[2][RPCB_UADDR_MAX];
	CLIENT *cl;
	int n, rc;

	rc = rpcrdma_listener_addr(s->lst, &la);
	if (rc)
		return rc;
	n = svc_rpcb_entries(&la, netid, uaddr);
	if (n == 0)
		return -EAFNOSUPPORT;
	cl = rpcb_local(&rc);
	if (!cl)
		return rc ? rc : -ENOMEM;
	rc = svc_rpcb_apply(s, cl, set, n, netid, uaddr);
	clnt_destroy(cl);
	return rc;
}

int svc_rpcb_set(struct rpcrdma_svc *s)
{
	int rc = svc_rpcb_run(s, true);

	if (rc) {
		(void)svc_rpcb_run(s, false); /* the entries set before the error */
		return rc;
	}
	__atomic_store_n(&s->rpcb_set, true, __ATOMIC_RELEASE);
	return 0;
}

void svc_rpcb_unset(struct rpcrdma_svc *s)
{
	if (__atomic_exchange_n(&s->rpcb_set, false, __ATOMIC_ACQ_REL))
		(void)svc_rpcb_run(s, false);
}

/* ---- client: lookup ---- */

static int resolve(const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	char ps[8];

	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(host && *host ? host : "127.0.0.1", ps, &hints, &res) || !res)
		return -ENOENT;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* No arguments (DUMP's): libtirpc's xdr_void has an old-style prototype
 * that cannot be cast to xdrproc_t cleanly. */
static bool_t xdr_noargs(XDR *xdrs, void *p)
{
	(void)xdrs;
	(void)p;
	return TRUE;
}

/* The port of @prog/@vers under @netid in rpcbind's list @l. */
static int rpcb_find(const rpcblist_ptr l, uint32_t prog, uint32_t vers, const char *netid,
		     uint16_t *port)
{
	for (const struct rp__list *e = l; e; e = e->rpcb_next) {
		struct sockaddr_storage ss;

		if (e->rpcb_map.r_prog != prog || e->rpcb_map.r_vers != vers ||
		    !e->rpcb_map.r_netid || strcmp(e->rpcb_map.r_netid, netid) != 0 ||
		    rpcb_uaddr_parse(e->rpcb_map.r_addr, &ss))
			continue;
		*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						      : ((struct sockaddr_in6 *)&ss)->sin6_port);
		return 0;
	}
	return -ENXIO;
}

/* rpcrdma_rpcb_getport() for the rpcbind at @sa (port 111). */
static int getport_at(const struct sockaddr_storage *sa, socklen_t len, uint32_t prog,
		      uint32_t vers, uint32_t timeout_ms, uint16_t *port)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const char *netid = RPCRDMA_RPCB_NETID;
	rpcblist_ptr list = NULL;
	CLIENT *cl;
	int fd, rc;

	if (sa->ss_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		netid = RPCRDMA_RPCB_NETID6;
	fd = rpcb_connect((const struct sockaddr *)sa, len, timeout_ms);
	if (fd < 0)
		return fd;
	cl = rpcb_clnt(fd, (const struct sockaddr *)sa, len, RPCBVERS4);
	if (!cl)
		return -ENOMEM;
	rc = rpcb_call(cl, RPCBPROC_DUMP, (xdrproc_t)xdr_noargs, NULL, (xdrproc_t)xdr_rpcblist_ptr,
		       &list, timeout_ms);
	if (!rc)
		rc = rpcb_find(list, prog, vers, netid, port);
	xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&list);
	clnt_destroy(cl);
	return rc;
}

int rpcrdma_rpcb_getport(const char *host, uint32_t prog, uint32_t vers, uint32_t timeout_ms,
			 uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int rc;

	if (!port)
		return -EINVAL;
	rc = resolve(host, RPCB_PORT, &ss, &len);
	if (rc)
		return rc;
	return getport_at(&ss, len, prog, vers, timeout_ms ? timeout_ms : RPCB_TIMEOUT_MS, port);
}

int rpcrdma_clnt_create_rpcb(const char *host, uint32_t prog, uint32_t vers,
			     const struct rpcrdma_clnt_opts *opts, struct rpcrdma_clnt **out)
{
	uint32_t tmo = RPCB_TIMEOUT_MS;
	struct sockaddr_storage ss;
	char numeric[NI_MAXHOST];
	uint16_t port = RPCRDMA_DEFAULT_PORT;
	socklen_t len;
	int rc;

	if (!out)
		return -EINVAL;
	if (opts && (opts->comp_mask & RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT) &&
	    opts->connect_timeout_ms)
		tmo = opts->connect_timeout_ms;
	rc = resolve(host, RPCB_PORT, &ss, &len);
	if (rc)
		return rc;
	if (getnameinfo((struct sockaddr *)&ss, len, numeric, sizeof(numeric), NULL, 0,
			NI_NUMERICHOST))
		return -ENOENT;
	/* RFC 8166 §9: no entry (or no rpcbind) means the well-known port */
	if (getport_at(&ss, len, prog, vers, tmo, &port))
		port = RPCRDMA_DEFAULT_PORT;
	return rpcrdma_clnt_create(numeric, port, prog, vers, opts, out);
}
