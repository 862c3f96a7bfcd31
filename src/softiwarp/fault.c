// SPDX-License-Identifier: MIT
/*
 * Fault injection for tests (siw_fault.h says what each fault does and how
 * RPCRDMA_SIW_FAULT names it). Compiled only with RPCRDMA_TEST_HOOKS: the
 * library's transmit path calls the system call directly.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "softiwarp/siw.h"
#include "util/be.h"

#ifdef RPCRDMA_TEST_HOOKS

/* ---------------- configuration ---------------- */

static bool parse_u64(const char *s, char **end, uint64_t *v)
{
	errno = 0;
	*v = strtoull(s, end, 0);
	return !errno && *end != s;
}

/* splitmix64: the seed's sequence of choices */
static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool pick(uint64_t seed, uint64_t span, struct siw_fault_cfg *f)
{
	static const enum siw_fault_kind kinds[] = {SIW_FAULT_CUT,    SIW_FAULT_CORRUPT,
						    SIW_FAULT_DELAY,  SIW_FAULT_DROP,
						    SIW_FAULT_CUT_OP, SIW_FAULT_REFUSE_REG};
	uint64_t x = seed;

	if (!span)
		return false;
	f->kind = kinds[mix(&x) % (sizeof(kinds) / sizeof(kinds[0]))];
	switch (f->kind) {
	case SIW_FAULT_CUT:
	case SIW_FAULT_CORRUPT:
		f->at = mix(&x) % span;
		break;
	case SIW_FAULT_DELAY:
		f->at = mix(&x) % span;
		f->delay_ms = 1 + (uint32_t)(mix(&x) % 200);
		break;
	case SIW_FAULT_DROP:
		f->at = mix(&x) % 16;
		break;
	default: /* ops and registrations count from 1 */
		f->at = 1 + mix(&x) % 16;
		break;
	}
	return true;
}

bool siw_fault_parse(const char *s, struct siw_fault_cfg *f)
{
	static const struct {
		const char *name;
		enum siw_fault_kind kind;
	} names[] = {
	    {"cut:", SIW_FAULT_CUT},
	    {"corrupt:", SIW_FAULT_CORRUPT},
	    {"delay:", SIW_FAULT_DELAY},
	    {"drop:", SIW_FAULT_DROP},
	    {"cut-op:", SIW_FAULT_CUT_OP},
	    {"refuse-reg:", SIW_FAULT_REFUSE_REG},
	    {"cut-setup:", SIW_FAULT_CUT_SETUP},
	    {"mute-reads:", SIW_FAULT_MUTE_READ},
	    {"pin:", SIW_FAULT_PIN},
	};
	uint64_t a, b;
	char *end;

	memset(f, 0, sizeof(*f));
	if (!s)
		return false;
	if (strncmp(s, "seed:", 5) == 0) {
		if (!parse_u64(s + 5, &end, &a) || *end != ':' || !parse_u64(end + 1, &end, &b) ||
		    *end)
			return false;
		return pick(a, b, f);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i].name);

		if (strncmp(s, names[i].name, n) != 0)
			continue;
		if (!parse_u64(s + n, &end, &a))
			return false;
		if (names[i].kind == SIW_FAULT_DELAY) {
			if (*end != ':' || !parse_u64(end + 1, &end, &b) || b > 60000)
				return false;
			f->delay_ms = (uint32_t)b;
		}
		if (names[i].kind == SIW_FAULT_CUT_SETUP) {
			if (!a || *end != ':' || !parse_u64(end + 1, &end, &b) || !b ||
			    b > UINT32_MAX)
				return false;
			f->count = (uint32_t)b;
		}
		if (*end)
			return false;
		f->kind = names[i].kind;
		f->at = a;
		return true;
	}
	return false;
}

/* ---------------- the transmit stream ---------------- */

#define FAULT_IOV 1024

static ssize_t raw_sendmsg(int fd, const struct msghdr *mh)
{
	return (ssize_t)siw_syscall(SYS_sendmsg, fd, (long)mh, MSG_NOSIGNAL | MSG_DONTWAIT, 0, 0,
				    0);
}

static uint64_t iov_bytes(const struct msghdr *mh)
{
	uint64_t n = 0;

	for (size_t i = 0; i < mh->msg_iovlen; i++)
		n += mh->msg_iov[i].iov_len;
	return n;
}

/* The byte at offset @off of the message */
static uint8_t iov_byte(const struct msghdr *mh, uint64_t off)
{
	for (size_t i = 0; i < mh->msg_iovlen; i++) {
		if (off < mh->msg_iov[i].iov_len)
			return ((const uint8_t *)mh->msg_iov[i].iov_base)[off];
		off -= mh->msg_iov[i].iov_len;
	}
	return 0;
}

/* Send the first @n bytes of @mh only. */
static ssize_t send_prefix(int fd, const struct msghdr *mh, uint64_t n)
{
	struct iovec iov[FAULT_IOV];
	struct msghdr m = {0};
	size_t k = 0;

	for (size_t i = 0; i < mh->msg_iovlen && n && k < FAULT_IOV; i++) {
		size_t l = mh->msg_iov[i].iov_len < n ? mh->msg_iov[i].iov_len : (size_t)n;

		if (!l)
			continue;
		iov[k].iov_base = mh->msg_iov[i].iov_base;
		iov[k++].iov_len = l;
		n -= l;
	}
	m.msg_iov = iov;
	m.msg_iovlen = k;
	return raw_sendmsg(fd, &m);
}

/* Walk the MPA length fields in [pos, pos + len) until the FPDU to drop
 * (number @k) is found: then fe->drop_end is where it ends and
 * fe->hdr_at where it starts. RFC 5044 §4 without markers: 2 bytes of
 * ULPDU length, the ULPDU, pad to 4, 4 bytes of CRC (zero when off). */
static void find_drop(struct siw_fault_ep *fe, const struct msghdr *mh, uint64_t len, uint64_t k)
{
	while (!fe->drop_end && fe->hdr_at + fe->hdr_have < fe->pos + len) {
		uint64_t off = fe->hdr_at + fe->hdr_have;
		uint32_t ulpdu, total;

		fe->hdr[fe->hdr_have++] = iov_byte(mh, off - fe->pos);
		if (fe->hdr_have < 2)
			continue;
		ulpdu = get_be16(fe->hdr);
		total = 2 + ulpdu;
		total += (4 - (total & 3)) & 3;
		total += 4;
		if (fe->idx == k) {
			fe->drop_end = fe->hdr_at + total;
			return;
		}
		fe->hdr_at += total;
		fe->hdr_have = 0;
		fe->idx++;
	}
}

static ssize_t fault_drop(struct siw_ep *ep, struct msghdr *mh, uint64_t len)
{
	struct siw_fault_ep *fe = &ep->fault;
	ssize_t r;

	find_drop(fe, mh, len, ep->dev->tun.fault.at);
	if (fe->drop_end && fe->pos >= fe->hdr_at) {
		/* inside the dropped FPDU: taken, sent nowhere */
		uint64_t n = fe->drop_end - fe->pos < len ? fe->drop_end - fe->pos : len;

		fe->pos += n;
		if (fe->pos == fe->drop_end)
			ep->dev->fault_fired = true;
		return (ssize_t)n;
	}
	if (fe->drop_end && fe->hdr_at < fe->pos + len)
		r = send_prefix(ep->fd, mh, fe->hdr_at - fe->pos);
	else
		r = raw_sendmsg(ep->fd, mh);
	if (r > 0)
		fe->pos += (uint64_t)r;
	return r;
}

/* Byte @at of the stream with a bit flipped: the bytes before it, then
 * that byte alone (a short write the caller continues from). */
static ssize_t fault_corrupt(struct siw_ep *ep, struct msghdr *mh, uint64_t at)
{
	struct siw_fault_ep *fe = &ep->fault;
	uint64_t n = at - fe->pos;
	uint8_t b;
	ssize_t r;

	if (n) {
		r = send_prefix(ep->fd, mh, n);
		if (r <= 0)
			return r;
		fe->pos += (uint64_t)r;
		if ((uint64_t)r < n)
			return r;
	}
	b = iov_byte(mh, n) ^ 0x10;
	r = (ssize_t)siw_syscall(SYS_sendto, ep->fd, (long)&b, 1, MSG_NOSIGNAL | MSG_DONTWAIT, 0,
				 0);
	if (r != 1)
		return n ? (ssize_t)n : r;
	fe->pos++;
	ep->dev->fault_fired = true;
	return (ssize_t)n + 1;
}

ssize_t siw_fault_sendmsg(struct siw_ep *ep, struct msghdr *mh)
{
	const struct siw_fault_cfg *f = &ep->dev->tun.fault;
	struct siw_fault_ep *fe = &ep->fault;
	uint64_t len = iov_bytes(mh);
	bool here = f->at >= fe->pos && f->at < fe->pos + len;
	ssize_t r;

	if (!ep->dev->fault_fired) {
		switch (f->kind) {
		case SIW_FAULT_CUT:
			if (f->at >= fe->pos + len)
				break;
			ep->dev->fault_fired = true;
			r = f->at > fe->pos ? send_prefix(ep->fd, mh, f->at - fe->pos) : 0;
			if (r > 0)
				fe->pos += (uint64_t)r;
			(void)shutdown(ep->fd, SHUT_RDWR);
			if (r > 0)
				return r;
			errno = ECONNRESET;
			return -1;
		case SIW_FAULT_CORRUPT:
			if (here)
				return fault_corrupt(ep, mh, f->at);
			break;
		case SIW_FAULT_DELAY:
			if (here) {
				struct timespec ts = {f->delay_ms / 1000,
						      (long)(f->delay_ms % 1000) * 1000000L};

				ep->dev->fault_fired = true;
				(void)nanosleep(&ts, NULL);
			}
			break;
		case SIW_FAULT_DROP:
			return fault_drop(ep, mh, len);
		default:
			break;
		}
	}
	r = raw_sendmsg(ep->fd, mh);
	if (r > 0)
		fe->pos += (uint64_t)r;
	return r;
}

void siw_fault_post(struct siw_ep *ep)
{
	struct siw_dev *dev = ep->dev;

	if (dev->tun.fault.kind != SIW_FAULT_CUT_OP || dev->fault_fired)
		return;
	if (++dev->fault_ops == dev->tun.fault.at) {
		dev->fault_fired = true;
		(void)shutdown(ep->fd, SHUT_RDWR);
	}
}

/* the process's pinned pages (Linux: mm->pinned_vm) */
static _Atomic int64_t pinned_pages;

int siw_fault_pin(const struct siw_dev *dev, struct siw_mr *mr, const void *addr, size_t length)
{
	uintptr_t a = (uintptr_t)addr;
	int64_t n = length ? (int64_t)(((a + length + 4095u) >> 12) - (a >> 12)) : 0, was;
	struct rlimit rl;

	if (dev->tun.fault.kind != SIW_FAULT_PIN)
		return 0;
	was = atomic_fetch_add(&pinned_pages, n - mr->pinned);
	if (n > mr->pinned && !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)(was + n - mr->pinned) > rl.rlim_cur / 4096u) {
		atomic_fetch_sub(&pinned_pages, n - mr->pinned);
		return -ENOMEM;
	}
	mr->pinned = n;
	return 0;
}

uint32_t siw_fault_caps(const struct siw_dev *dev)
{
	return dev->tun.fault.kind == SIW_FAULT_PIN ? RPCRDMA_DEV_CAP_PINS_MEMORY : 0;
}

int siw_fault_reg(struct siw_dev *dev)
{
	if (dev->tun.fault.kind != SIW_FAULT_REFUSE_REG || dev->fault_fired)
		return 0;
	if (++dev->fault_regs == dev->tun.fault.at) {
		dev->fault_fired = true;
		return -ENOMEM;
	}
	return 0;
}

void siw_fault_setup(struct siw_ep *ep)
{
	struct siw_dev *dev = ep->dev;
	const struct siw_fault_cfg *f = &dev->tun.fault;
	uint64_t n;

	if (f->kind != SIW_FAULT_CUT_SETUP)
		return;
	n = ++dev->fault_setups;
	if (n >= f->at && n - f->at < f->count) {
		(void)shutdown(ep->fd, SHUT_RDWR);
		/* Linux still hands out what arrives after SHUT_RD: an MPA
		 * reply that came quickly would bring the endpoint up on a
		 * socket that can no longer send. The cut is a failed connect,
		 * every time. */
		siw_ep_fail(ep, -ECONNRESET, RPCRDMA_WC_WR_FLUSH_ERR, 0);
	}
}

bool siw_fault_mute_read(struct siw_ep *ep)
{
	struct siw_dev *dev = ep->dev;

	if (dev->tun.fault.kind != SIW_FAULT_MUTE_READ)
		return false;
	return ++dev->fault_reads >= dev->tun.fault.at;
}

#endif /* RPCRDMA_TEST_HOOKS */
