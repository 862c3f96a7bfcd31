/* SPDX-License-Identifier: MIT */
/*
 * The debug log: the level and the sink, RPCRDMA_DEBUG read once when the
 * library is loaded, message formatting (util/log.h says what a call site
 * costs).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "util/log.h"

int rlog_level;

static pthread_mutex_t rlog_lock = PTHREAD_MUTEX_INITIALIZER;
static rpcrdma_log_fn rlog_fn; /* NULL: stderr */
static void *rlog_arg;

/* RPCRDMA_DEBUG: a level number 0..3 or its name (off, err, info,
 * debug); anything else (or unset) is off. */
static int env_level(const char *e)
{
	static const char *const names[] = {"off", "err", "info", "debug"};

	if (!e || !*e)
		return RPCRDMA_LOG_OFF;
	if (e[0] >= '0' && e[0] <= '3' && e[1] == '\0')
		return e[0] - '0';
	for (int i = 0; i < 4; i++)
		if (strcasecmp(e, names[i]) == 0)
			return i;
	return RPCRDMA_LOG_OFF;
}

__attribute__((constructor)) static void rlog_init(void)
{
	__atomic_store_n(&rlog_level, env_level(getenv("RPCRDMA_DEBUG")), __ATOMIC_RELAXED);
}

int rpcrdma_set_log(rpcrdma_log_fn fn, void *arg, int level)
{
	if (level < RPCRDMA_LOG_OFF || level > RPCRDMA_LOG_DEBUG)
		return -EINVAL;
	pthread_mutex_lock(&rlog_lock);
	rlog_fn = fn;
	rlog_arg = arg;
	__atomic_store_n(&rlog_level, level, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&rlog_lock);
	return 0;
}

/* "a.b.c.d:port", "[v6]:port" or "?" into @buf. */
static void fmt_addr(const void *peer, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN];
	uint16_t port;

	snprintf(buf, len, "?");
	if (!peer)
		return;
	memcpy(&ss, peer, sizeof(ss));
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in sin;

		memcpy(&sin, &ss, sizeof(sin));
		port = ntohs(sin.sin_port);
		if (inet_ntop(AF_INET, &sin.sin_addr, host, sizeof(host)))
			snprintf(buf, len, "%s:%u", host, port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, &ss, sizeof(sin6));
		port = ntohs(sin6.sin6_port);
		if (inet_ntop(AF_INET6, &sin6.sin6_addr, host, sizeof(host)))
			snprintf(buf, len, "[%s]:%u", host, port);
	}
}

void rlog_emit_peer(int level, const char *side, const void *peer, const char *fmt, ...)
{
	char body[400], msg[512], addr[INET6_ADDRSTRLEN + 8];
	va_list ap;

	va_start(ap, fmt);
	/* clang-analyzer 14 reports ap uninitialized here although va_start
	 * is the line above (a false positive of valist.Uninitialized) */
	vsnprintf(body, sizeof(body), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	fmt_addr(peer, addr, sizeof(addr));
	snprintf(msg, sizeof(msg), "%s %s: %s", side, addr, body);
	pthread_mutex_lock(&rlog_lock);
	/* the level may have dropped since the caller looked */
	if (level <= __atomic_load_n(&rlog_level, __ATOMIC_RELAXED)) {
		if (rlog_fn)
			rlog_fn(level, msg, rlog_arg);
		else
			fprintf(stderr, "rpcrdma: %s\n", msg);
	}
	pthread_mutex_unlock(&rlog_lock);
}

const char *rlog_errname(int err)
{
	const char *s = strerrorname_np(err < 0 ? -err : err);

	return s ? s : "E?";
}
