/* SPDX-License-Identifier: MIT */
/* Shared helpers for the soft-iWARP end-to-end tests; see siw_test_util.h. */
#include "siw_test_util.h"
#include "softiwarp/siw.h" /* siwt_node_reread_env */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int siwt_failures;
const char *siwt_role = "parent";
uint64_t siwt_bytes_hashed;

void siwt_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	siwt_failures++;
	fprintf(stderr, "FAIL [%s pid %d] %s:%d: %s: ", siwt_role, (int)getpid(), file, line, expr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

void siwt_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(77);
}

/* ---- pattern and checksum ---------------------------------------------- */

void siwt_fill(void *p, size_t n, uint64_t seed)
{
	uint8_t *b = p;
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	size_t i = 0;

	if (x == 0)
		x = 1;
	while (i < n) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		uint64_t v = x * 0x2545F4914F6CDD1Dull;
		size_t k = n - i < 8 ? n - i : 8;
		memcpy(b + i, &v, k);
		i += k;
	}
}

static inline uint64_t rotl64(uint64_t v, unsigned r)
{
	return (v << r) | (v >> (64 - r));
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

uint64_t siwt_hash(const void *p, size_t n)
{
	const uint64_t k1 = 0x9E3779B185EBCA87ull, k2 = 0xC2B2AE3D27D4EB4Full;
	const uint8_t *b = p;
	uint64_t a0 = k1, a1 = k2, a2 = ~k1, a3 = ~k2;
	size_t i = 0;

	siwt_bytes_hashed += n;
	for (; i + 32 <= n; i += 32) {
		a0 = rotl64(a0 ^ (load64(b + i) * k2), 31) * k1;
		a1 = rotl64(a1 ^ (load64(b + i + 8) * k2), 31) * k1;
		a2 = rotl64(a2 ^ (load64(b + i + 16) * k2), 31) * k1;
		a3 = rotl64(a3 ^ (load64(b + i + 24) * k2), 31) * k1;
	}
	uint64_t h = rotl64(a0, 1) + rotl64(a1, 7) + rotl64(a2, 12) + rotl64(a3, 18);
	for (; i + 8 <= n; i += 8)
		h = rotl64(h ^ (load64(b + i) * k2), 27) * k1 + 0x27D4EB2F165667C5ull;
	for (; i < n; i++)
		h = rotl64(h ^ (b[i] * 0x165667B19E3779F9ull), 11) * k1;
	h ^= (uint64_t)n;
	h ^= h >> 33;
	h *= k2;
	h ^= h >> 29;
	return h;
}

/* ---- control channel --------------------------------------------------- */

int siwt_send_msg(int fd, const struct siwt_msg *m)
{
	return siwt_write_all(fd, m, sizeof(*m));
}

int siwt_recv_msg(int fd, struct siwt_msg *m, int timeout_ms)
{
	size_t got = 0;

	return siwt_read_exact(fd, m, sizeof(*m), timeout_ms, &got);
}

int siwt_send4(int fd, uint32_t type, uint32_t a, uint64_t u0, uint64_t u1)
{
	struct siwt_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.a = a;
	m.u[0] = u0;
	m.u[1] = u1;
	return siwt_send_msg(fd, &m);
}

int siwt_expect(int fd, uint32_t type, struct siwt_msg *out)
{
	struct siwt_msg m;
	int rc = siwt_recv_msg(fd, &m, 30000);

	if (rc) {
		siwt_fail(__FILE__, __LINE__, "control message", "waiting for type %u: %s", type,
			  strerror(-rc));
		return rc;
	}
	if (m.type != type) {
		siwt_fail(__FILE__, __LINE__, "control message", "got type %u, want %u", m.type,
			  type);
		return -EPROTO;
	}
	if (out)
		*out = m;
	return 0;
}

pid_t siwt_fork(int (*fn)(int ctl, void *arg), void *arg, int *ctl, unsigned watchdog_s)
{
	int sv[2];

	fflush(stdout);
	fflush(stderr);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (pid == 0) {
		close(sv[0]);
		siwt_role = "child";
		siwt_failures = 0;
		/* The default SIGALRM action kills the child: a hung child
		 * shows up as a failed wait in the parent, never a hung ctest. */
		alarm(watchdog_s);
		int rc = fn(sv[1], arg);
		close(sv[1]);
		fflush(stdout);
		fflush(stderr);
		_exit(rc == 0 && siwt_failures == 0 ? 0 : 1);
	}
	close(sv[1]);
	*ctl = sv[0];
	return pid;
}

int siwt_wait_child(pid_t pid, unsigned timeout_s)
{
	uint64_t deadline = siwt_now_ms() + (uint64_t)timeout_s * 1000;
	int st = 0;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			siwt_fail(__FILE__, __LINE__, "waitpid", "%s", strerror(errno));
			return -1;
		}
		if (siwt_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			siwt_fail(__FILE__, __LINE__, "child exit", "child %d did not exit in %us",
				  (int)pid, timeout_s);
			return -1;
		}
		usleep(2000);
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st))
		siwt_fail(__FILE__, __LINE__, "child exit", "child killed by signal %d",
			  WTERMSIG(st));
	else
		siwt_fail(__FILE__, __LINE__, "child exit", "child exit status %d",
			  WEXITSTATUS(st));
	return -1;
}

uint64_t siwt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- iWARP bytes -------------------------------------------------------- */

uint32_t siwt_crc32c(const void *p, size_t n)
{
	static uint32_t table[256];
	static int ready;
	const uint8_t *b = p;
	uint32_t crc = 0xffffffffu;

	if (!ready) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
			table[i] = c;
		}
		ready = 1;
	}
	for (size_t i = 0; i < n; i++)
		crc = table[(crc ^ b[i]) & 0xffu] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

size_t siwt_mpa_frame(uint8_t *out, bool request, uint16_t bits, uint16_t ird_word,
		      uint16_t ord_word, const void *pd, size_t pdlen)
{
	/* RFC 5044 §7.1: 16-byte key, flags+revision, PD_Length, PD. */
	memcpy(out, request ? "MPA ID Req Frame" : "MPA ID Rep Frame", 16);
	put_be16(out + 16, bits);
	size_t off = 20, total_pd = pdlen;
	if (bits & SIWT_MPA_H) {
		/* RFC 6581 §5: IRD and ORD words lead the private data. */
		put_be16(out + 20, ird_word);
		put_be16(out + 22, ord_word);
		off = 24;
		total_pd += 4;
	}
	put_be16(out + 18, (uint16_t)total_pd);
	if (pdlen)
		memcpy(out + off, pd, pdlen);
	return off + pdlen;
}

size_t siwt_fpdu(uint8_t *out, const void *ulpdu, size_t len, bool crc)
{
	put_be16(out, (uint16_t)len);
	memcpy(out + 2, ulpdu, len);
	size_t n = 2 + len;
	while (n % 4)
		out[n++] = 0;
	uint32_t c = crc ? siwt_crc32c(out, n) : 0;
	/* Stored least significant byte first (what Linux siw sends and
	 * Wireshark verifies). */
	put_le32(out + n, c);
	return n + 4;
}

size_t siwt_ddp_untagged(uint8_t *out, bool last, unsigned op, uint32_t inv_stag, uint32_t qn,
			 uint32_t msn, uint32_t mo)
{
	/* RFC 5041 §4.2/§4.4: T=0, L, DV=1; RsvdULP = RDMAP ctrl (RV=1, op)
	 * then the 32-bit RsvdULP word (RFC 5040 §4.3: Invalidate STag). */
	out[0] = (uint8_t)((last ? 0x40 : 0) | 0x01);
	out[1] = (uint8_t)(0x40 | (op & 0x0f));
	put_be32(out + 2, inv_stag);
	put_be32(out + 6, qn);
	put_be32(out + 10, msn);
	put_be32(out + 14, mo);
	return 18;
}

size_t siwt_ddp_tagged(uint8_t *out, bool last, unsigned op, uint32_t stag, uint64_t to)
{
	/* RFC 5041 §4.3: T=1, L, DV=1; RsvdULP; STag; TO. */
	out[0] = (uint8_t)(0x80 | (last ? 0x40 : 0) | 0x01);
	out[1] = (uint8_t)(0x40 | (op & 0x0f));
	put_be32(out + 2, stag);
	put_be64(out + 6, to);
	return 14;
}

/* ---- raw TCP ------------------------------------------------------------ */

int siwt_tcp_connect(uint16_t port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int siwt_tcp_listen(uint16_t *port)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(*port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 8) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

int siwt_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = {.fd = fd, .events = POLLOUT};
				poll(&pfd, 1, 1000);
				continue;
			}
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int siwt_read_exact(int fd, void *p, size_t n, int timeout_ms, size_t *got)
{
	uint8_t *b = p;
	uint64_t deadline = siwt_now_ms() + (uint64_t)timeout_ms;

	*got = 0;
	while (*got < n) {
		uint64_t now = siwt_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = poll(&pfd, 1, (int)(deadline - now));
		if (pr < 0 && errno != EINTR)
			return -errno;
		if (pr <= 0)
			continue;
		ssize_t r = recv(fd, b + *got, n - *got, MSG_DONTWAIT);
		if (r == 0)
			return -EPIPE;
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		*got += (size_t)r;
	}
	return 0;
}

int siwt_read_fpdu(int fd, uint8_t *ulpdu, size_t cap, bool crc, bool *crc_ok, int timeout_ms)
{
	uint8_t hdr[2], trailer[8];
	size_t got;
	int rc = siwt_read_exact(fd, hdr, 2, timeout_ms, &got);

	if (rc)
		return rc;
	size_t len = get_be16(hdr);
	if (len > cap)
		return -EMSGSIZE;
	rc = siwt_read_exact(fd, ulpdu, len, timeout_ms, &got);
	if (rc)
		return rc;
	size_t pad = (4 - ((2 + len) % 4)) % 4;
	rc = siwt_read_exact(fd, trailer, pad + 4, timeout_ms, &got);
	if (rc)
		return rc;
	if (crc_ok) {
		uint32_t want = 0;
		if (crc) {
			/* CRC over ULPDU_Length | ULPDU | pad (RFC 5044 §4.4). */
			uint8_t *tmp = malloc(2 + len + pad);
			if (!tmp)
				return -ENOMEM;
			memcpy(tmp, hdr, 2);
			memcpy(tmp + 2, ulpdu, len);
			memset(tmp + 2 + len, 0, pad);
			want = siwt_crc32c(tmp, 2 + len + pad);
			free(tmp);
		}
		const uint8_t *c = trailer + pad;
		*crc_ok = get_le32(c) == want;
	}
	return (int)len;
}

int siwt_wait_closed(int fd, int timeout_ms)
{
	uint8_t buf[4096];
	uint64_t deadline = siwt_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		uint64_t now = siwt_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = poll(&pfd, 1, (int)(deadline - now));
		if (pr <= 0)
			continue;
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r == 0)
			return 0;
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return 0; /* ECONNRESET and friends: closed */
	}
}

void siwt_hexdump(FILE *f, const char *what, const void *p, size_t n)
{
	const uint8_t *b = p;

	fprintf(f, "%s (%zu bytes):", what, n);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%02x", (i % 32) ? " " : "\n  ", b[i]);
	fputc('\n', f);
}

/* ---- provider harness --------------------------------------------------- */

#include <sys/mman.h>

const char *siwt_status_str(enum rpcrdma_wc_status s)
{
	static const char *const names[] = {
	    "SUCCESS",        "LOC_LEN_ERR",     "LOC_PROT_ERR", "LOC_QP_OP_ERR", "WR_FLUSH_ERR",
	    "REM_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_OP_ERR",   "TRANSPORT_ERR", "GENERAL_ERR",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *siwt_event_str(enum rpcrdma_event_type t)
{
	static const char *const names[] = {
	    "CONNECT_REQUEST", "ESTABLISHED",  "REJECTED",
	    "CONNECT_ERROR",   "DISCONNECTED", "TERMINATE",
	};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

int siwt_node_open(struct siwt_node *n)
{
	return siwt_node_open_flags(n, 0);
}

int siwt_node_open_flags(struct siwt_node *n, uint32_t dev_flags)
{
	struct rpcrdma_cq_attr ca = {.cqe = 1024};
	struct rpcrdma_dev_attr da = {.comp_mask = RPCRDMA_DEV_ATTR_FLAGS, .flags = dev_flags};
	int rc;

	memset(n, 0, sizeof(*n));
	n->thread = (dev_flags & RPCRDMA_DEV_F_PROGRESS_THREAD) != 0;
	rc = rpcrdma_dev_open("softiwarp", &da, &n->dev);
	if (rc) {
		SIWT_CHECK(rc == 0, "rpcrdma_dev_open: %s", strerror(-rc));
		return rc;
	}
	rc = rpcrdma_pd_alloc(n->dev, &n->pd);
	if (!rc)
		rc = rpcrdma_cq_create(n->dev, &ca, &n->scq);
	if (!rc)
		rc = rpcrdma_cq_create(n->dev, &ca, &n->rcq);
	if (!rc)
		rc = rpcrdma_evch_create(n->dev, NULL, &n->evch);
	SIWT_CHECK(rc == 0, "opening provider objects: %s", strerror(-rc));
	return rc;
}

void siwt_node_reread_env(struct siwt_node *n)
{
	struct siw_dev *dev = to_siw_dev(n->dev);

	siw_dev_lock(dev);
	siw_tunables_read(&dev->tun);
	siw_dev_unlock(dev);
}

void siwt_node_close(struct siwt_node *n)
{
	/* After a failure objects may legitimately still be in use (an MR
	 * the failed case left registered): only check a clean teardown. */
	int quiet = siwt_failures, rc;

	if (n->ep) {
		rc = rpcrdma_ep_destroy(n->ep);
		SIWT_CHECK(quiet || rc == 0, "ep_destroy: %s", strerror(-rc));
		n->ep = NULL;
	}
	if (n->lis) {
		rc = rpcrdma_listener_destroy(n->lis);
		SIWT_CHECK(quiet || rc == 0, "listener_destroy: %s", strerror(-rc));
		n->lis = NULL;
	}
	if (n->evch) {
		rc = rpcrdma_evch_destroy(n->evch);
		SIWT_CHECK(quiet || rc == 0, "evch_destroy: %s", strerror(-rc));
	}
	if (n->scq) {
		rc = rpcrdma_cq_destroy(n->scq);
		SIWT_CHECK(quiet || rc == 0, "cq_destroy: %s", strerror(-rc));
	}
	if (n->rcq) {
		rc = rpcrdma_cq_destroy(n->rcq);
		SIWT_CHECK(quiet || rc == 0, "cq_destroy: %s", strerror(-rc));
	}
	if (n->pd) {
		rc = rpcrdma_pd_free(n->pd);
		SIWT_CHECK(quiet || rc == 0, "pd_free: %s", strerror(-rc));
	}
	if (n->dev) {
		rc = rpcrdma_dev_close(n->dev);
		SIWT_CHECK(quiet || rc == 0, "dev_close: %s", strerror(-rc));
	}
	memset(n, 0, sizeof(*n));
}

int siwt_listen(struct siwt_node *n)
{
	struct sockaddr_in sa;
	struct sockaddr_storage ss;
	const char *env = getenv("SIWT_PORT");
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(env ? (uint16_t)atoi(env) : 0);
	rc = rpcrdma_listen(n->dev, n->evch, (struct sockaddr *)&sa, sizeof(sa), 16, NULL, &n->lis);
	if (rc) {
		SIWT_CHECK(rc == 0, "rpcrdma_listen: %s", strerror(-rc));
		return rc;
	}
	rc = rpcrdma_listener_addr(n->lis, &ss);
	SIWT_CHECK(rc == 0 && ss.ss_family == AF_INET, "listener_addr: %d", rc);
	n->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	SIWT_CHECK(n->port != 0, "listener port %u", n->port);
	return rc;
}

void siwt_ep_attr(struct siwt_node *n, struct rpcrdma_ep_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->send_cq = n->scq;
	a->recv_cq = n->rcq;
	a->evch = n->evch;
	/* The wire test runs with CRC on; SIWT_CRC=off asks for none on both
	 * sides (then CRC is off: the provider's CRC-less paths, such as the
	 * direct Send); everything else takes defaults (CRC on). */
	if (getenv("SIWT_WIRE")) {
		a->comp_mask |= RPCRDMA_EP_ATTR_CRC;
		a->mpa_crc = true;
	} else if (getenv("SIWT_CRC") && !strcmp(getenv("SIWT_CRC"), "off")) {
		a->comp_mask |= RPCRDMA_EP_ATTR_CRC;
		a->mpa_crc = false;
	}
}

/* Moves completions and events from the provider into the rings; returns
 * how many, or -errno. */
static int reap(struct siwt_node *n)
{
	int rc, got = 0;

	if (n->swc_n < SIWT_RING) {
		rc = rpcrdma_cq_poll(n->scq, n->swc + n->swc_n, (int)(SIWT_RING - n->swc_n));
		SIWT_CHECK(rc >= 0, "cq_poll: %d", rc);
		if (rc > 0) {
			n->swc_n += (unsigned)rc;
			got += rc;
		}
	}
	if (n->rwc_n < SIWT_RING) {
		rc = rpcrdma_cq_poll(n->rcq, n->rwc + n->rwc_n, (int)(SIWT_RING - n->rwc_n));
		SIWT_CHECK(rc >= 0, "cq_poll: %d", rc);
		if (rc > 0) {
			n->rwc_n += (unsigned)rc;
			got += rc;
		}
	}
	while (n->ev_n < sizeof(n->ev) / sizeof(n->ev[0])) {
		rc = rpcrdma_evch_get(n->evch, &n->ev[n->ev_n]);
		if (rc == -EAGAIN)
			break;
		if (rc) {
			SIWT_CHECK(rc == 0, "evch_get: %s", strerror(-rc));
			return rc;
		}
		n->ev_n++;
		got++;
	}
	return got;
}

/* Progress-thread device: nothing to drive; wait on the CQ and event
 * channel fds (the pattern of provider.h: arm, poll the CQ to close the
 * race, wait, acknowledge). */
static int pump_thread(struct siwt_node *n, int timeout_ms)
{
	int rc = rpcrdma_cq_req_notify(n->scq, false);

	if (!rc && !n->no_rcq_notify)
		rc = rpcrdma_cq_req_notify(n->rcq, false);
	if (rc) {
		SIWT_CHECK(rc == 0, "cq_req_notify: %s", strerror(-rc));
		return rc;
	}
	rc = reap(n);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	struct pollfd pfd[3] = {
	    {.fd = rpcrdma_cq_fd(n->scq), .events = POLLIN},
	    {.fd = n->no_rcq_notify ? -1 : rpcrdma_cq_fd(n->rcq), .events = POLLIN},
	    {.fd = rpcrdma_evch_fd(n->evch), .events = POLLIN}};
	if (poll(pfd, 3, timeout_ms) > 0) {
		if (pfd[0].revents)
			rpcrdma_cq_ack_notify(n->scq);
		if (pfd[1].revents)
			rpcrdma_cq_ack_notify(n->rcq);
	}
	rc = reap(n);
	return rc < 0 ? rc : 0;
}

int siwt_pump(struct siwt_node *n, int timeout_ms)
{
	if (n->thread)
		return pump_thread(n, timeout_ms);
	int rc = rpcrdma_dev_progress(n->dev, timeout_ms);

	if (rc < 0 && rc != -EINTR) {
		SIWT_CHECK(rc >= 0, "rpcrdma_dev_progress: %s", strerror(-rc));
		return rc;
	}
	rc = reap(n);
	return rc < 0 ? rc : 0;
}

int siwt_wc(struct siwt_node *n, bool recv, struct rpcrdma_wc *wc, int timeout_ms)
{
	uint64_t deadline = siwt_now_ms() + (uint64_t)timeout_ms;
	struct rpcrdma_wc *ring = recv ? n->rwc : n->swc;
	unsigned *cnt = recv ? &n->rwc_n : &n->swc_n;

	for (;;) {
		if (*cnt) {
			*wc = ring[0];
			memmove(ring, ring + 1, (*cnt - 1) * sizeof(*ring));
			(*cnt)--;
			return 0;
		}
		uint64_t now = siwt_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		uint64_t left = deadline - now;
		int rc = siwt_pump(n, left > 50 ? 50 : (int)left);
		if (rc)
			return rc;
	}
}

void siwt_forget(struct siwt_node *n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n->ev_n; i++)
		if (n->ev[i].type == RPCRDMA_EV_CONNECT_REQUEST)
			n->ev[k++] = n->ev[i];
	n->ev_n = k;
	n->swc_n = n->rwc_n = 0;
}

int siwt_event(struct siwt_node *n, struct rpcrdma_event *ev, int timeout_ms)
{
	uint64_t deadline = siwt_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		if (n->ev_n) {
			*ev = n->ev[0];
			memmove(n->ev, n->ev + 1, (n->ev_n - 1) * sizeof(n->ev[0]));
			n->ev_n--;
			return 0;
		}
		uint64_t now = siwt_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		uint64_t left = deadline - now;
		int rc = siwt_pump(n, left > 50 ? 50 : (int)left);
		if (rc)
			return rc;
	}
}

int siwt_expect_event(struct siwt_node *n, enum rpcrdma_event_type want, struct rpcrdma_event *ev,
		      int timeout_ms)
{
	int rc = siwt_event(n, ev, timeout_ms);

	if (rc) {
		siwt_fail(__FILE__, __LINE__, "event", "waiting for %s: %s", siwt_event_str(want),
			  strerror(-rc));
		return rc;
	}
	if (ev->type != want) {
		siwt_fail(__FILE__, __LINE__, "event", "got %s (status %d), want %s",
			  siwt_event_str(ev->type), ev->status, siwt_event_str(want));
		return -EPROTO;
	}
	return 0;
}

int siwt_pump_until_msg(struct siwt_node *n, int ctl, struct siwt_msg *m, int timeout_ms)
{
	uint64_t deadline = siwt_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		struct pollfd pfd[2] = {{.fd = ctl, .events = POLLIN},
					{.fd = rpcrdma_dev_fd(n->dev), .events = POLLIN}};
		uint64_t now = siwt_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		uint64_t left = deadline - now;
		/* with a progress thread only the control socket is ours */
		poll(pfd, n->thread ? 1 : 2, left > 20 ? 20 : (int)left);
		if (pfd[0].revents)
			return siwt_recv_msg(ctl, m, 10000);
		int rc = siwt_pump(n, 0);
		if (rc)
			return rc;
	}
}

void siwt_pump_for(struct siwt_node *n, int ms)
{
	uint64_t deadline = siwt_now_ms() + (uint64_t)ms;

	while (siwt_now_ms() < deadline)
		if (siwt_pump(n, 10))
			return;
}

int siwt_accept(struct siwt_node *n, const struct rpcrdma_ep_attr *attr,
		int (*pre_accept)(struct siwt_node *n, void *arg), void *arg, const void *pd,
		size_t len, struct rpcrdma_event *req_ev, struct rpcrdma_event *est_ev)
{
	int rc = siwt_expect_event(n, RPCRDMA_EV_CONNECT_REQUEST, req_ev, 15000);

	if (rc)
		return rc;
	rc = rpcrdma_ep_create(n->pd, attr, &n->ep);
	if (rc) {
		SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
		rpcrdma_reject(req_ev->req, NULL, 0);
		return rc;
	}
	if (pre_accept) {
		rc = pre_accept(n, arg);
		if (rc)
			return rc;
	}
	rc = rpcrdma_accept(req_ev->req, n->ep, pd, len);
	if (rc) {
		SIWT_CHECK(rc == 0, "accept: %s", strerror(-rc));
		return rc;
	}
	rc = siwt_expect_event(n, RPCRDMA_EV_ESTABLISHED, est_ev, 15000);
	if (!rc)
		SIWT_CHECK(est_ev->ep == n->ep, "ESTABLISHED names another ep");
	return rc;
}

int siwt_connect(struct siwt_node *n, const struct rpcrdma_ep_attr *attr,
		 int (*pre)(struct siwt_node *n, void *arg), void *arg, uint16_t port,
		 const void *pd, size_t len, struct rpcrdma_event *est_ev)
{
	struct sockaddr_in sa;
	int rc = rpcrdma_ep_create(n->pd, attr, &n->ep);

	if (rc) {
		SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
		return rc;
	}
	if (pre) {
		rc = pre(n, arg);
		if (rc)
			return rc;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	rc = rpcrdma_connect(n->ep, (struct sockaddr *)&sa, sizeof(sa), pd, len);
	if (rc) {
		SIWT_CHECK(rc == 0, "connect: %s", strerror(-rc));
		return rc;
	}
	rc = siwt_expect_event(n, RPCRDMA_EV_ESTABLISHED, est_ev, 15000);
	if (!rc)
		SIWT_CHECK(est_ev->ep == n->ep, "ESTABLISHED names another ep");
	return rc;
}

int siwt_post_recv1(struct siwt_node *n, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct rpcrdma_sge sg = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
	int rc = rpcrdma_post_recv(n->ep, wr_id, &sg, 1);

	SIWT_CHECK(rc == 0, "post_recv(%llu): %s", (unsigned long long)wr_id, strerror(-rc));
	return rc;
}

int siwt_post(struct siwt_node *n, uint64_t wr_id, enum rpcrdma_wr_opcode op, uint32_t flags,
	      const struct rpcrdma_sge *sg, uint32_t nsge, uint32_t rstag, uint64_t roff,
	      uint32_t inv)
{
	struct rpcrdma_send_wr wr = {
	    .wr_id = wr_id,
	    .opcode = op,
	    .flags = flags,
	    .sg = sg,
	    .num_sge = nsge,
	    .invalidate_stag = inv,
	    .remote_offset = roff,
	    .remote_stag = rstag,
	};
	int rc = rpcrdma_post_send(n->ep, &wr);

	SIWT_CHECK(rc == 0, "post_send(%llu, op %d): %s", (unsigned long long)wr_id, op,
		   strerror(-rc));
	return rc;
}

int siwt_expect_wc(struct siwt_node *n, bool recv, uint64_t wr_id, enum rpcrdma_wc_status status,
		   enum rpcrdma_wc_opcode op, struct rpcrdma_wc *out)
{
	struct rpcrdma_wc wc;
	int rc = siwt_wc(n, recv, &wc, 20000);

	if (rc) {
		siwt_fail(__FILE__, __LINE__, "completion", "wr_id %llu (%s): %s",
			  (unsigned long long)wr_id, recv ? "recv" : "send", strerror(-rc));
		return rc;
	}
	if (out)
		*out = wc;
	if (wc.wr_id != wr_id || wc.status != status ||
	    (status == RPCRDMA_WC_SUCCESS && wc.opcode != op)) {
		siwt_fail(
		    __FILE__, __LINE__, "completion",
		    "got wr_id %llu %s opcode %d vendor_err 0x%x, want wr_id %llu %s opcode %d",
		    (unsigned long long)wc.wr_id, siwt_status_str(wc.status), wc.opcode,
		    wc.vendor_err, (unsigned long long)wr_id, siwt_status_str(status), op);
		return -EPROTO;
	}
	return 0;
}

void *siwt_alloc_buf(size_t len)
{
	void *p =
	    mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		SIWT_CHECK(p != MAP_FAILED, "mmap %zu: %s", len, strerror(errno));
		return NULL;
	}
	return p;
}

void siwt_free_buf(void *p, size_t len)
{
	if (p)
		munmap(p, len ? len : 1);
}

int siwt_finish(const char *test, uint64_t bytes_verified, uint64_t t0_ms)
{
	printf("%s: %s; %llu payload bytes verified by checksum, %llu bytes hashed in this "
	       "process, %.2f s\n",
	       test, siwt_failures ? "FAILED" : "ok", (unsigned long long)bytes_verified,
	       (unsigned long long)siwt_bytes_hashed, (double)(siwt_now_ms() - t0_ms) / 1000.0);
	fflush(stdout);
	return siwt_failures ? 1 : 0;
}

int siwt_expect_pumped(struct siwt_node *n, int ctl, uint32_t type, struct siwt_msg *out)
{
	struct siwt_msg m;
	int rc = siwt_pump_until_msg(n, ctl, &m, 30000);

	if (rc) {
		siwt_fail(__FILE__, __LINE__, "control message", "waiting for type %u: %s", type,
			  strerror(-rc));
		return rc;
	}
	if (m.type != type) {
		siwt_fail(__FILE__, __LINE__, "control message", "got type %u, want %u", m.type,
			  type);
		return -EPROTO;
	}
	if (out)
		*out = m;
	return 0;
}

int siwt_expect_terminate(struct siwt_node *n, bool local, const uint32_t *allowed,
			  unsigned n_allowed)
{
	struct rpcrdma_event ev;
	int rc = siwt_expect_event(n, RPCRDMA_EV_TERMINATE, &ev, 15000);

	if (rc)
		return rc;
	uint32_t got = SIWT_TERM(ev.term_layer, ev.term_etype, ev.term_code);
	SIWT_CHECK(ev.term_local == local,
		   "TERMINATE term_local %d, want %d (layer/etype/code %u/%u/0x%02x, %s endpoint)",
		   ev.term_local, local, ev.term_layer, ev.term_etype, ev.term_code,
		   ev.ep == n->ep ? "this" : "another");
	SIWT_CHECK(ev.ep == n->ep, "TERMINATE event of another endpoint");
	bool ok = false;
	for (unsigned i = 0; i < n_allowed; i++)
		ok |= allowed[i] == got;
	SIWT_CHECK(ok, "TERMINATE layer/etype/code %u/%u/0x%02x, want %u/%u/0x%02x%s",
		   ev.term_layer, ev.term_etype, ev.term_code, (allowed[0] >> 16) & 0xff,
		   (allowed[0] >> 8) & 0xff, allowed[0] & 0xff,
		   n_allowed > 1 ? " (or alternates)" : "");
	return (int)got;
}
