/* SPDX-License-Identifier: MIT */
/*
 * The soft-iWARP provider's socket calls (part of siw.h, included from it
 * once struct siw_ep exists; not a header of its own use): the receive
 * path's and connection setup's recv/recvmsg/send, the transmit path's
 * sendmsg. Production builds make the system calls; test builds
 * (RPCRDMA_TEST_HOOKS) divert the in-memory fuzz harness's descriptor to
 * fuzz.c and the FPDU stream through fault injection.
 */
#ifndef RPCRDMA_SIW_SOCK_H
#define RPCRDMA_SIW_SOCK_H

#ifdef RPCRDMA_TEST_HOOKS
/*
 * The in-memory fuzz harness (fuzz.c, siw_fuzz.h): the descriptor
 * siw_fuzz_mem_fd (-1 when unused) stands for a socket whose byte stream
 * is memory. Each socket call of the receive path and of connection setup
 * goes through one of the wrappers below, which divert that descriptor to
 * fuzz.c; every other descriptor gets the system call. Builds without
 * RPCRDMA_TEST_HOOKS make the calls as before, with no test.
 */
extern int siw_fuzz_mem_fd;
ssize_t siw_fuzz_mem_recv(const struct msghdr *mh);
ssize_t siw_fuzz_mem_send(const struct msghdr *mh);

static inline bool siw_fuzz_mem(int fd)
{
	return __builtin_expect(fd == siw_fuzz_mem_fd, 0);
}

static inline struct msghdr siw_fuzz_mem_one(void *buf, size_t len, struct iovec *iov)
{
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 1};

	iov->iov_base = buf;
	iov->iov_len = len;
	return mh;
}
#endif

/* recv() of a socket of the device, non-blocking: through libc
 * (connection setup) or as the raw system call (@raw: the receive path;
 * see siw_syscall). */
static inline ssize_t siw_sock_recv_how(int fd, void *buf, size_t len, bool raw)
{
#ifdef RPCRDMA_TEST_HOOKS
	if (siw_fuzz_mem(fd)) {
		struct iovec iov;
		struct msghdr mh = siw_fuzz_mem_one(buf, len, &iov);

		return siw_fuzz_mem_recv(&mh);
	}
#endif
	if (raw)
		return (ssize_t)siw_syscall(SYS_recvfrom, fd, (long)buf, (long)len, MSG_DONTWAIT, 0,
					    0);
	return recv(fd, buf, len, MSG_DONTWAIT);
}

static inline ssize_t siw_sock_recv(int fd, void *buf, size_t len)
{
	return siw_sock_recv_how(fd, buf, len, false);
}

static inline ssize_t siw_sock_recv_raw(int fd, void *buf, size_t len)
{
	return siw_sock_recv_how(fd, buf, len, true);
}

/* recvmsg(), non-blocking: payload straight into its target. */
static inline ssize_t siw_sock_recvmsg(int fd, struct msghdr *mh)
{
#ifdef RPCRDMA_TEST_HOOKS
	if (siw_fuzz_mem(fd))
		return siw_fuzz_mem_recv(mh);
#endif
	return recvmsg(fd, mh, MSG_DONTWAIT);
}

/* send() of MPA frames, non-blocking, no SIGPIPE. */
static inline ssize_t siw_sock_send(int fd, const void *buf, size_t len)
{
#ifdef RPCRDMA_TEST_HOOKS
	if (siw_fuzz_mem(fd)) {
		struct iovec iov;
		struct msghdr mh = siw_fuzz_mem_one((void *)(uintptr_t)buf, len, &iov);

		return siw_fuzz_mem_send(&mh);
	}
#endif
	return send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* sendmsg() of the endpoint's FPDU stream: the raw system call (see
 * siw_tx_process), through fault injection in test builds. */
static inline ssize_t siw_tx_sendmsg(struct siw_ep *ep, struct msghdr *mh)
{
#ifdef RPCRDMA_TEST_HOOKS
	if (siw_fuzz_mem(ep->fd))
		return siw_fuzz_mem_send(mh);
	return siw_fault_sendmsg(ep, mh);
#else
	return (ssize_t)siw_syscall(SYS_sendmsg, ep->fd, (long)mh, MSG_NOSIGNAL | MSG_DONTWAIT, 0,
				    0, 0);
#endif
}

#endif
