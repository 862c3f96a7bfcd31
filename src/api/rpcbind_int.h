/* SPDX-License-Identifier: MIT */
/*
 * Between rpcbind.c and the server API (server.c), and for the unit tests
 * of the universal address codec (tests/rpcbind).
 */
#ifndef RPCRDMA_API_RPCBIND_INT_H
#define RPCRDMA_API_RPCBIND_INT_H

#include <stddef.h>
#include <sys/socket.h>

struct rpcrdma_svc;

/* Longest universal address: an IPv6 address in text (INET6_ADDRSTRLEN
 * counts its NUL) and ".255.255". */
#define RPCB_UADDR_MAX (46 + 8)

/*
 * The universal address of @sa (RFC 5665 §5.2.3.3 for IPv4,
 * §5.2.3.4 for IPv6): the address as inet_ntop() writes it, then the
 * port's high and low bytes in decimal, dot-separated ("192.0.2.1.78.81",
 * "::1.78.81" for port 20049). -EAFNOSUPPORT for another family,
 * -ENOSPC when @len is too small.
 */
int rpcb_uaddr_format(const struct sockaddr *sa, char *buf, size_t len);

/*
 * The inverse: @uaddr into *@ss (AF_INET or AF_INET6, by what the address
 * part parses as). -EINVAL unless it is an address followed by exactly
 * two decimal bytes 0..255.
 */
int rpcb_uaddr_parse(const char *uaddr, struct sockaddr_storage *ss);

/* RPCRDMA_SVC_OPT_RPCBIND: register every program/version of @s with the
 * local rpcbind under the netids its listener serves (rdma, rdma6, or
 * both for the dual-stack wildcard), replacing stale entries of the same
 * netid; or remove them again (idempotent, errors ignored). */
int svc_rpcb_set(struct rpcrdma_svc *s);
void svc_rpcb_unset(struct rpcrdma_svc *s);

#endif
