/* SPDX-License-Identifier: MIT */
/*
 * Events of a destroyed endpoint are dropped from its event channel
 * (rpcrdma_ep_destroy, as rdma_destroy_id() discards its id's events).
 *
 * An endpoint connects to a port nobody listens on; its CONNECT_ERROR is
 * queued (the channel's fd becomes readable) but not read, and the
 * endpoint is destroyed. The channel must then be empty, and its fd quiet:
 * an endpoint created next may get the same memory, and the client's
 * reconnect took such a stale event for the new endpoint's (a connect
 * "refused" with status 0, issue 20). A second endpoint's event, queued
 * behind a destroyed one's, must still come out, and be its own.
 */
#include "siw_test_util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>
#include <sys/socket.h>

/* A loopback port with nothing listening on it. */
static uint16_t dead_port(void)
{
	uint16_t port = 0;
	int fd = siwt_tcp_listen(&port);

	SIWT_CHECK(fd >= 0, "listen: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
	return port;
}

static bool fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* Connect an endpoint of @n to @port; with @wait, progress until the
 * channel has an event (not read). */
static struct rpcrdma_ep *connect_refused(struct siwt_node *n, uint16_t port, bool wait)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons(port)};
	struct rpcrdma_ep_attr a;
	struct rpcrdma_ep *ep = NULL;
	int rc, efd = rpcrdma_evch_fd(n->evch);
	uint64_t end = siwt_now_ms() + 5000;

	siwt_ep_attr(n, &a);
	rc = rpcrdma_ep_create(n->pd, &a, &ep);
	SIWT_CHECK(rc == 0, "ep_create: %s", strerror(-rc));
	if (rc)
		return NULL;
	rc = rpcrdma_connect(ep, (struct sockaddr *)&sa, sizeof(sa), NULL, 0);
	SIWT_CHECK(rc == 0, "connect: %s", strerror(-rc));
	if (!wait)
		return ep;
	while (!fd_readable(efd, 0) && siwt_now_ms() < end)
		(void)rpcrdma_dev_progress(n->dev, 10);
	SIWT_CHECK(fd_readable(efd, 0), "no event for a refused connect in 5 s");
	return ep;
}

int main(void)
{
	struct siwt_node n;
	struct rpcrdma_event ev;
	struct rpcrdma_ep *a, *b;
	uint16_t port = dead_port();
	int efd;

	SIWT_CHECK(siwt_node_open(&n) == 0, "node open");
	efd = rpcrdma_evch_fd(n.evch);

	/* 1: the only queued event belongs to the endpoint destroyed */
	a = connect_refused(&n, port, true);
	SIWT_CHECK(a != NULL, "endpoint a");
	if (a)
		SIWT_EQ(rpcrdma_ep_destroy(a), 0);
	SIWT_EQ(rpcrdma_evch_get(n.evch, &ev), -EAGAIN);
	SIWT_CHECK(!fd_readable(efd, 0), "event channel fd readable with no event queued");

	/* 2: a's event queued, then b connects; a destroyed: the first event
	 * out is b's own */
	a = connect_refused(&n, port, true);
	b = connect_refused(&n, port, false);
	SIWT_CHECK(a && b, "endpoints a, b");
	if (a && b) {
		uint64_t end = siwt_now_ms() + 5000;
		int rc;

		SIWT_EQ(rpcrdma_ep_destroy(a), 0);
		while ((rc = rpcrdma_evch_get(n.evch, &ev)) == -EAGAIN && siwt_now_ms() < end)
			(void)rpcrdma_dev_progress(n.dev, 10);
		SIWT_EQ(rc, 0);
		SIWT_CHECK(ev.ep == b, "event of endpoint %p, want b %p", (void *)ev.ep, (void *)b);
		SIWT_EQ(ev.type, RPCRDMA_EV_CONNECT_ERROR);
		SIWT_CHECK(ev.status < 0, "status %d", ev.status);
		SIWT_EQ(rpcrdma_evch_get(n.evch, &ev), -EAGAIN);
		SIWT_EQ(rpcrdma_ep_destroy(b), 0);
	}
	siwt_node_close(&n);
	if (siwt_failures)
		fprintf(stderr, "test_siw_evpurge: %d check(s) failed\n", siwt_failures);
	else
		printf("test_siw_evpurge: ok\n");
	return siwt_failures ? 1 : 0;
}
