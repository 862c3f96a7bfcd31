// SPDX-License-Identifier: MIT
/* Server child process and test data of the e2e tests (see test_server.h). */
#include "lib/test_server.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t tl_hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

void tl_fill(void *p, size_t n, uint32_t seed)
{
	uint8_t *b = p;
	uint64_t x = seed | 1u;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)x;
	}
}

const char *tl_addr(void)
{
	const char *a = getenv("RPCRDMA_TEST_ADDR");

	return a && *a ? a : "127.0.0.1";
}

bool tl_remote_inv(void)
{
	struct rpcrdma_dev *d;
	struct rpcrdma_dev_caps caps = {0};
	bool r;

	if (rpcrdma_dev_open(NULL, NULL, &d))
		return false;
	r = rpcrdma_dev_query(d, &caps) == 0 && (caps.flags & RPCRDMA_DEV_CAP_REMOTE_INV);
	rpcrdma_dev_close(d);
	return r;
}

/* Control pipes of the servers running now: a later child must not hold
 * them open (an earlier server would never see its pipe close). */
#define TL_MAX_SERVERS 8
static int ctl_fds[TL_MAX_SERVERS];
static int nctl_fds;

static void child_run(const struct tl_child *ch, int port_fd, int ctl_fd)
{
	struct rpcrdma_svc *svc = NULL;
	uint16_t port = 0;
	char c;
	int rc;

	for (int i = 0; i < nctl_fds; i++)
		close(ctl_fds[i]);
	rc = ch->start(ch->arg, &svc);
	if (!rc)
		port = rpcrdma_svc_port(svc);
	if (write(port_fd, &port, sizeof(port)) != sizeof(port))
		_exit(3);
	if (rc)
		_exit(2);
	/* serve until the parent closes the control pipe */
	while (read(ctl_fd, &c, 1) > 0)
		;
	if (ch->closing)
		ch->closing(ch->arg);
	rpcrdma_svc_stop(svc, 2000);
	rpcrdma_svc_destroy(svc);
	_exit(*ch->failures ? 1 : 0);
}

int tl_server_fork(struct tl_server *srv, const struct tl_child *ch)
{
	int portp[2], ctlp[2];
	pid_t pid;

	if (pipe(portp) || pipe(ctlp))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(portp[0]);
		close(ctlp[1]);
		child_run(ch, portp[1], ctlp[0]);
	}
	close(portp[1]);
	close(ctlp[0]);
	srv->pid = pid;
	srv->ctl = ctlp[1];
	if (nctl_fds < TL_MAX_SERVERS)
		ctl_fds[nctl_fds++] = ctlp[1];
	srv->port = 0;
	if (read(portp[0], &srv->port, sizeof(srv->port)) != sizeof(srv->port) || !srv->port) {
		close(portp[0]);
		return -EIO;
	}
	close(portp[0]);
	return 0;
}

int tl_server_stop(struct tl_server *srv, int wait_ms)
{
	int st = 0;

	for (int i = 0; i < nctl_fds; i++) {
		if (ctl_fds[i] == srv->ctl) {
			ctl_fds[i] = ctl_fds[--nctl_fds];
			break;
		}
	}
	close(srv->ctl);
	for (int i = 0; i < wait_ms / 50; i++) {
		pid_t p = waitpid(srv->pid, &st, WNOHANG);

		if (p == srv->pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
		usleep(50000);
	}
	kill(srv->pid, SIGKILL);
	waitpid(srv->pid, &st, 0);
	return 98;
}

uint64_t tl_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
