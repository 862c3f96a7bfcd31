// SPDX-License-Identifier: MIT
/*
 * The debug log (rpcrdma_set_log(), RPCRDMA_DEBUG), client and server in
 * one process over loopback:
 *   - with a callback at RPCRDMA_LOG_DEBUG: the server logs the accept
 *     with the MPA values (revision 2, CRC on, the client's IRD 128) and
 *     the RFC 8797 private data and credits, the client logs its connect
 *     with the same values and the credit grant changing from 1 to 64; a
 *     raw peer sending rdma_vers 2 makes the server log the ERR_VERS it
 *     sends; a dropped connection under a slow call makes the client log
 *     the loss, the reconnect and (at DEBUG) the call retransmitted, the
 *     server the disconnect;
 *   - level OFF: nothing more reaches the callback;
 *   - the program again with RPCRDMA_DEBUG unset: stderr stays empty
 *     under the same traffic; with RPCRDMA_DEBUG=info the messages are on
 *     stderr, one "rpcrdma: " line each, and the DEBUG-only retransmit
 *     is not among them.
 */
#include <errno.h>
#include <pthread.h>
#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/api_int.h"
#include "lib/check.h"
#include "obs/obs_test.h"
#include "xprt/raw_peer.h"

static volatile int slow_done, slow_status = -1;

static void slow_cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)res;
	(void)arg;
	slow_status = status;
	__atomic_store_n(&slow_done, 1, __ATOMIC_RELEASE);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[64 * 1024];
static size_t loglen;
static int nmsg, bad_level;

static void sink(int level, const char *msg, void *arg)
{
	size_t n = strlen(msg);

	pthread_mutex_lock(&mu);
	if (arg != (void *)logbuf || level < RPCRDMA_LOG_ERR || level > RPCRDMA_LOG_DEBUG)
		bad_level++;
	if (loglen + n + 2 < sizeof(logbuf)) {
		memcpy(logbuf + loglen, msg, n);
		loglen += n;
		logbuf[loglen++] = '\n';
		logbuf[loglen] = '\0';
	}
	nmsg++;
	pthread_mutex_unlock(&mu);
}

/* Does one logged line contain @a and then @b? */
static int logged(const char *a, const char *b)
{
	int found = 0;

	pthread_mutex_lock(&mu);
	for (const char *l = logbuf; *l && !found;) {
		const char *e = strchr(l, '\n');
		const char *p = strstr(l, a);

		if (p && p < e && (!b || ((p = strstr(p, b)) && p < e)))
			found = 1;
		l = e + 1;
	}
	pthread_mutex_unlock(&mu);
	if (!found)
		fprintf(stderr, "not logged: \"%s\" ... \"%s\"\n", a, b ? b : "");
	return found;
}

/* Connect, a call, an ERR_VERS provoked, a dropped connection and a call
 * after it (reconnect). Returns the server's port. */
static uint16_t traffic(void)
{
	struct rpcrdma_svc *s;
	struct rpcrdma_clnt *c;
	/* rdma_vers 2: ERR_VERS whatever follows (RFC 8166 §4.5.1) */
	const uint32_t v2[] = {0x77, 2, 1, 0, 0, 0, 0};
	uint32_t ans[16];
	u_int ms = 200;
	uint16_t port = 0;

	int srv = obs_server(NULL, &s);

	CHECK(srv == 0);
	if (srv)
		return 0;
	port = rpcrdma_svc_port(s);
	CHECK(rpcrdma_clnt_create("127.0.0.1", port, OBS_PROG, OBS_VERS, NULL, &c) == 0);
	CHECK(rpcrdma_clnt_call(c, 0, NULL, NULL, NULL, NULL, NULL) == 0);
	CHECK(raw_exchange(port, v2, 7, ans, 16) == 7 && ans[3] == 4 && ans[4] == 1);
	/* a slow call on the wire when the connection drops: retransmitted */
	slow_done = 0;
	CHECK(rpcrdma_clnt_call_async(c, OBS_SLOW, (xdrproc_t)xdr_u_int, &ms, NULL, NULL, NULL,
				      slow_cb, NULL) == 0);
	usleep(50000);
	CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
	for (int i = 0; i < 500 && !__atomic_load_n(&slow_done, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	CHECK(slow_done && slow_status == 0);
	CHECK(rpcrdma_clnt_call(c, 0, NULL, NULL, NULL, NULL, NULL) == 0);
	rpcrdma_clnt_destroy(c);
	usleep(100000); /* the server sees the disconnects */
	rpcrdma_svc_destroy(s);
	return port;
}

/* Run this program again with @env ("" for RPCRDMA_DEBUG unset) doing
 * traffic(); its stderr goes into @out. */
static int run_child(const char *self, const char *env, char *out, size_t max)
{
	int p[2];
	pid_t pid;
	size_t n = 0;
	ssize_t k;
	int st;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		if (*env)
			setenv("RPCRDMA_DEBUG", env, 1);
		else
			unsetenv("RPCRDMA_DEBUG");
		execl(self, self, "child", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (n + 1 < max && (k = read(p[0], out + n, max - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(p[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	static char err[64 * 1024];
	uint16_t port;
	int n;

	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		traffic();
		return failures ? 1 : 0;
	}
	CHECK(rpcrdma_set_log(sink, logbuf, 4) == -EINVAL);
	CHECK(rpcrdma_set_log(sink, logbuf, -1) == -EINVAL);
	CHECK(rpcrdma_set_log(sink, logbuf, RPCRDMA_LOG_DEBUG) == 0);
	port = traffic();
	CHECK(port != 0);
	CHECK(bad_level == 0);
	CHECK(logged("svc 127.0.0.1:", "accepted: MPA rev 2, CRC on, peer IRD 128 ORD 16"));
	/* both advertise 4096 (RPCRDMA_ADVERTISED_INLINE, issue 32) */
	CHECK(logged("accepted:", "private data 8 bytes, inline send 4096 recv 4096"));
	/* on the shared receive queue a connection starts at one credit,
	 * raised by the replies (svc_srq.c): the client sees 64 */
	CHECK(logged("accepted:", "credits granted 1 (shared receive queue"));
	CHECK(logged("clnt 127.0.0.1:", "connected: MPA rev 2, CRC on, peer IRD 0 ORD 128"));
	CHECK(logged("clnt 127.0.0.1:", "credits granted 64 (was 1)"));
	/* the raw peer sent no private data */
	CHECK(logged("accepted: MPA rev 2", "private data 0 bytes"));
	CHECK(logged("svc 127.0.0.1:", "RDMA_ERROR ERR_VERS sent for xid 0x77"));
	CHECK(logged("clnt 127.0.0.1:", "connection lost"));
	CHECK(logged("clnt 127.0.0.1:", "reconnected"));
	CHECK(logged("clnt 127.0.0.1:", "retransmitted xid 0x"));
	CHECK(logged("svc 127.0.0.1:", "disconnected"));
	/* Off: the same traffic logs nothing. */
	CHECK(rpcrdma_set_log(sink, logbuf, RPCRDMA_LOG_OFF) == 0);
	n = nmsg;
	traffic();
	CHECK(nmsg == n);
	/* The environment, in a fresh process: unset means silent. */
	CHECK(run_child(argv[0], "", err, sizeof(err)) == 0);
	if (err[0])
		fprintf(stderr, "stderr with RPCRDMA_DEBUG unset:\n%s\n", err);
	CHECK(err[0] == '\0');
	CHECK(run_child(argv[0], "info", err, sizeof(err)) == 0);
	CHECK(strstr(err, "rpcrdma: svc 127.0.0.1:") && strstr(err, "accepted: MPA rev 2"));
	CHECK(strstr(err, "rpcrdma: clnt 127.0.0.1:") && strstr(err, "reconnected\n"));
	CHECK(strstr(err, "RDMA_ERROR ERR_VERS sent"));
	CHECK(!strstr(err, "retransmitted")); /* DEBUG only */
	CHECK(run_child(argv[0], "0", err, sizeof(err)) == 0 && err[0] == '\0');
	if (failures) {
		fprintf(stderr, "log:\n%s", logbuf);
		return 1;
	}
	printf("ok\n");
	return 0;
}
