// SPDX-License-Identifier: MIT
/*
 * Universal addresses (RFC 5665 §5.2.3.3, §5.2.3.4), what the server
 * registers with rpcbind and the client reads back (api/rpcbind.c):
 * IPv4 "h1.h2.h3.h4.p1.p2", IPv6 text form then ".p1.p2", both ways,
 * and every malformed form refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/rpcbind_int.h"

#include "lib/check.h"

static void fmt4(const char *host, uint16_t port, const char *want)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	char buf[RPCB_UADDR_MAX];

	CHECK(inet_pton(AF_INET, host, &sin.sin_addr) == 1);
	CHECK(rpcb_uaddr_format((struct sockaddr *)&sin, buf, sizeof(buf)) == 0);
	if (strcmp(buf, want)) {
		fprintf(stderr, "FAIL: %s port %u gave '%s', want '%s'\n", host, port, buf, want);
		failures++;
	}
}

static void fmt6(const char *host, uint16_t port, const char *want)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	char buf[RPCB_UADDR_MAX];

	CHECK(inet_pton(AF_INET6, host, &s6.sin6_addr) == 1);
	CHECK(rpcb_uaddr_format((struct sockaddr *)&s6, buf, sizeof(buf)) == 0);
	if (strcmp(buf, want)) {
		fprintf(stderr, "FAIL: %s port %u gave '%s', want '%s'\n", host, port, buf, want);
		failures++;
	}
}

/* @uaddr parses to @family, @host, @port. */
static void parse_ok(const char *uaddr, int family, const char *host, uint16_t port)
{
	struct sockaddr_storage ss;
	char got[INET6_ADDRSTRLEN] = "";
	uint16_t p = 0;

	if (rpcb_uaddr_parse(uaddr, &ss)) {
		fprintf(stderr, "FAIL: '%s' does not parse\n", uaddr);
		failures++;
		return;
	}
	CHECK(ss.ss_family == family);
	if (family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, got, sizeof(got));
		p = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, got, sizeof(got));
		p = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	if (strcmp(got, host) || p != port) {
		fprintf(stderr, "FAIL: '%s' parsed as %s port %u, want %s port %u\n", uaddr, got, p,
			host, port);
		failures++;
	}
}

static void parse_bad(const char *uaddr)
{
	struct sockaddr_storage ss;

	if (rpcb_uaddr_parse(uaddr, &ss) != -EINVAL) {
		fprintf(stderr, "FAIL: '%s' accepted\n", uaddr ? uaddr : "(null)");
		failures++;
	}
}

int main(void)
{
	struct sockaddr un = {.sa_family = AF_UNIX};
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons(65535)};
	char buf[RPCB_UADDR_MAX];

	/* RFC 8166 §9's port 20049 = 78 * 256 + 81 */
	fmt4("192.0.2.1", 20049, "192.0.2.1.78.81");
	fmt4("0.0.0.0", 111, "0.0.0.0.0.111");
	fmt4("127.0.0.1", 0, "127.0.0.1.0.0");
	fmt4("255.255.255.255", 65535, "255.255.255.255.255.255");
	fmt6("::", 20049, "::.78.81");
	fmt6("::1", 256, "::1.1.0");
	fmt6("2001:db8::5:1", 2049, "2001:db8::5:1.8.1");
	fmt6("::ffff:192.0.2.7", 1, "::ffff:192.0.2.7.0.1");

	/* the longest IPv6 text form fits RPCB_UADDR_MAX; one byte less does not */
	inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", &s6.sin6_addr);
	CHECK(rpcb_uaddr_format((struct sockaddr *)&s6, buf, sizeof(buf)) == 0);
	CHECK(rpcb_uaddr_format((struct sockaddr *)&s6, buf, strlen(buf)) == -ENOSPC);
	CHECK(rpcb_uaddr_format(&un, buf, sizeof(buf)) == -EAFNOSUPPORT);

	parse_ok("192.0.2.1.78.81", AF_INET, "192.0.2.1", 20049);
	parse_ok("0.0.0.0.0.111", AF_INET, "0.0.0.0", 111);
	parse_ok("::.78.81", AF_INET6, "::", 20049);
	parse_ok("::1.1.0", AF_INET6, "::1", 256);
	parse_ok("fe80::1:2.255.255", AF_INET6, "fe80::1:2", 65535);
	parse_ok("::ffff:192.0.2.7.0.1", AF_INET6, "::ffff:192.0.2.7", 1);

	parse_bad(NULL);
	parse_bad("");
	parse_bad("192.0.2.1");        /* no port */
	parse_bad("192.0.2.1.78");     /* one port byte: the host is "192.0.2" */
	parse_bad("192.0.2.1.256.1");  /* byte out of range */
	parse_bad("192.0.2.1.1.1000"); /* four digits */
	parse_bad("192.0.2.1.-1.1");   /* not decimal */
	parse_bad("192.0.2.1.0x1.1");  /* not decimal */
	parse_bad("192.0.2.1..1");     /* empty byte */
	parse_bad("192.0.2.1.1.");     /* empty byte */
	parse_bad(".1.1");             /* no host */
	parse_bad("host.example.1.1"); /* names are not addresses */
	parse_bad("192.0.2.1.78.81 "); /* trailing blank */
	parse_bad("1:2:3:4:5:6:7:8:9.1.1");

	if (failures) {
		fprintf(stderr, "test_uaddr: %d failures\n", failures);
		return 1;
	}
	printf("test_uaddr: ok\n");
	return 0;
}
