// SPDX-License-Identifier: MIT
/*
 * rpcrdma-ping: call procedure 0 (NULL) of an RPC program over
 * RPC-over-RDMA and print the round-trip time, the way `rpcinfo -T rdma
 * HOST PROG VERS` reports a program "ready and waiting". Exit status 0 when
 * at least one call got a successful reply, 1 otherwise, 2 for bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpcrdma.h>

/* rpcrdma-perf's program (tools/perf/perf.x): what a bare
 * `rpcrdma-ping HOST` asks for. */
#define PING_DEFAULT_PROG 0x20049001u
#define PING_DEFAULT_VERS 1u

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: rpcrdma-ping HOST [-p PORT] [-P PROG] [-V VERS] [-c COUNT] [-i INTERVAL]\n"
	    "                   [-w TIMEOUT] [-d DEVICE] [-q] [--rdma-version 1|2|auto] [--ccp]\n"
	    "       rpcrdma-ping --list-devices\n"
	    "       rpcrdma-ping -h | --help | --version\n"
	    "  Calls procedure 0 (NULL) of PROG/VERS over RPC-over-RDMA (softiwarp, or\n"
	    "  $RPCRDMA_PROVIDER) and prints each round-trip time, like rpcinfo -T.\n"
	    "  -p PORT      server port (default: with -P, the port the host's rpcbind\n"
	    "               has for PROG/VERS under netid rdma or rdma6, else %u)\n"
	    "  -P PROG      program number (default 0x%x, rpcrdma-perf)\n"
	    "  -V VERS      program version (default %u)\n"
	    "  -c COUNT     calls to make (default 1; 0 = until interrupted)\n"
	    "  -i INTERVAL  seconds between calls (default 1)\n"
	    "  -w TIMEOUT   seconds to wait for the connection and each reply (default 5)\n"
	    "  -d DEVICE    RDMA device to use (verbs provider unless $RPCRDMA_PROVIDER\n"
	    "               names another), as --list-devices names it, e.g. rxe0\n"
	    "  -q           print only the summary\n"
	    "  --rdma-version 1|2|auto\n"
	    "               RPC-over-RDMA version: 1 (default), 2 (Version Two only)\n"
	    "               or auto (Version Two, Version One if the server has only it)\n"
	    "  --ccp        ask the server's Connection Configuration Protocol (RFC 5666\n"
	    "               §6, program 100417) right after connecting, print its answer\n"
	    "               and apply it (RFC 8797 private data takes precedence)\n"
	    "  --list-devices  list the RDMA devices of every provider, like ibv_devices\n"
	    "  -h, --help   print this help and exit\n"
	    "  --version    print the rpcrdma library version and exit\n"
	    "Exit status: 0 if a call succeeded, 1 otherwise, 2 on bad usage.\n",
	    RPCRDMA_DEFAULT_PORT, PING_DEFAULT_PROG, PING_DEFAULT_VERS);
}

/* --ccp: what CONF_RDMA said (rpcrdma_clnt_ccp). */
static void print_ccp(struct rpcrdma_clnt *c)
{
	struct rpcrdma_ccp_info ci;

	if (rpcrdma_clnt_ccp(c, &ci))
		return;
	if (ci.status) {
		printf("CONF_RDMA (program 100417): no answer: %s", rpcrdma_strerror(ci.status));
		if (ci.accept_stat)
			printf(" (accept_stat %s)", rpcrdma_rpc_accept_stat_name(ci.accept_stat));
		printf("; inline send %u\n", ci.inline_send);
		return;
	}
	printf("CONF_RDMA (program 100417): maxcall_sendsize %u align %u maxrdmaread %u; "
	       "inline send %u (%s)\n",
	       ci.maxcall_sendsize, ci.align, ci.maxrdmaread, ci.inline_send,
	       ci.applied ? "applied" : "unchanged");
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int parse_ul(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Why a call failed, in rpcinfo's words where it has them. @prog is the
 * program number as the user wrote it (hex stays hex). */
static void explain(const char *host, const char *prog, uint32_t vers, int rc,
		    const struct rpcrdma_call_result *r)
{
	switch (rc) {
	case -EPFNOSUPPORT:
		fprintf(stderr,
			"rpcrdma-ping: %s: RPC: Program unavailable\n"
			"program %s version %u is not available\n",
			host, prog, vers);
		break;
	case -EPROTOTYPE:
		fprintf(stderr,
			"rpcrdma-ping: %s: RPC: Program/version mismatch; low version = %u, high "
			"version = %u\nprogram %s version %u is not available\n",
			host, r->mismatch_low, r->mismatch_high, prog, vers);
		break;
	case -EOPNOTSUPP:
		fprintf(stderr,
			"rpcrdma-ping: %s: RPC: Procedure unavailable\n"
			"program %s version %u is not available\n",
			host, prog, vers);
		break;
	case -ETIMEDOUT:
		fprintf(stderr, "rpcrdma-ping: %s: RPC: Timed out (no reply)\n", host);
		break;
	default:
		fprintf(stderr, "rpcrdma-ping: %s: call failed: %s (%s)\n", host,
			rpcrdma_strerror(rc), strerror(-rc));
		break;
	}
}

/* rpcrdma_clnt_create() says -ENOENT for an unknown host and for an
 * unknown provider name alike: the host resolving tells them apart. */
static bool host_resolves(const char *host)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;

	if (getaddrinfo(host, NULL, &hints, &res) || !res)
		return false;
	freeaddrinfo(res);
	return true;
}

/* The providers rpcrdma knows of, built in or not. */
static const char *const known_providers[] = {"softiwarp", "verbs"};

static bool provider_known(const char *prov)
{
	size_t n = strcspn(prov, ":");

	for (size_t i = 0; i < sizeof(known_providers) / sizeof(known_providers[0]); i++)
		if (strlen(known_providers[i]) == n && strncmp(known_providers[i], prov, n) == 0)
			return true;
	return false;
}

/* --list-devices: every provider's devices, like ibv_devices. */
static int list_devices(void)
{
	printf("%-10s %-16s %-11s %-18s %s\n", "provider", "device", "transport", "node GUID",
	       "port 1");
	for (size_t i = 0; i < sizeof(known_providers) / sizeof(known_providers[0]); i++) {
		struct rpcrdma_dev_info info[32];
		const char *p = known_providers[i];
		int n = rpcrdma_dev_list(p, info, 32);

		if (n == -ENOENT) {
			printf("%-10s (not built into this librpcrdma: it needs libibverbs-dev and "
			       "librdmacm-dev at build time)\n",
			       p);
			continue;
		}
		if (n < 0) {
			printf("%-10s (cannot list: %s)\n", p, rpcrdma_strerror(n));
			continue;
		}
		if (n == 0)
			printf("%-10s (no RDMA device: no adapter, and neither siw nor rxe set up "
			       "with `rdma link add`)\n",
			       p);
		for (int j = 0; j < n && j < 32; j++) {
			char guid[24] = "-";

			if (info[j].node_guid)
				snprintf(guid, sizeof(guid), "%016llx",
					 (unsigned long long)info[j].node_guid);
			printf("%-10s %-16s %-11s %-18s %s\n", p, info[j].name, info[j].transport,
			       guid, info[j].active ? "ACTIVE" : "down");
		}
	}
	return 0;
}

static void connect_error(const char *host, unsigned long port, int rc, const char *prov)
{

	switch (rc) {
	case -ECONNREFUSED:
		fprintf(stderr,
			"rpcrdma-ping: %s port %lu: connection refused (no RPC-over-RDMA server on "
			"that port?)\n",
			host, port);
		break;
	case -ETIMEDOUT:
		fprintf(stderr,
			"rpcrdma-ping: %s port %lu: timed out connecting (no answer to the MPA "
			"request: not an RPC-over-RDMA server, or not responding)\n",
			host, port);
		break;
	case -ECONNRESET:
		/* closed during connection setup, before any MPA reply: what
		 * a libtirpc TCP server does with our MPA request */
		fprintf(stderr,
			"rpcrdma-ping: %s port %lu: connection closed by the peer: peer is not an "
			"RPC-over-RDMA server (MPA handshake failed)\n",
			host, port);
		break;
	case -ENOENT:
		if (!host_resolves(host))
			fprintf(stderr, "rpcrdma-ping: %s: unknown host\n", host);
		else if (prov && provider_known(prov))
			fprintf(stderr,
				"rpcrdma-ping: RDMA provider '%.*s' is not built into this "
				"librpcrdma (it needs libibverbs-dev and librdmacm-dev at build "
				"time)\n",
				(int)strcspn(prov, ":"), prov);
		else
			fprintf(stderr,
				"rpcrdma-ping: unknown RDMA provider '%s' (RPCRDMA_PROVIDER)\n",
				prov ? prov : "");
		break;
	case -ENODEV:
		fprintf(stderr,
			"rpcrdma-ping: RDMA provider '%s' has no usable device%s (rpcrdma-ping "
			"--list-devices shows them)\n",
			prov ? prov : "softiwarp",
			prov && strchr(prov, ':') ? " of that name" : "");
		break;
	default:
		fprintf(stderr, "rpcrdma-ping: %s port %lu: %s\n", host, port,
			rpcrdma_strerror(rc));
		break;
	}
}

int main(int argc, char **argv)
{
	unsigned long port = RPCRDMA_DEFAULT_PORT, prog = PING_DEFAULT_PROG,
		      vers = PING_DEFAULT_VERS, count = 1;
	double interval = 1.0, timeout = 5.0, t0, tconn, rmin = INFINITY, rmax = 0, rsum = 0;
	struct rpcrdma_clnt_opts co = {0};
	struct rpcrdma_clnt *c = NULL;
	unsigned long sent = 0, ok = 0;
	enum rpcrdma_version_policy rdma_version = RPCRDMA_VERSION_1;
	bool quiet = false, ccp = false;
	const char *host, *prog_str = NULL, *device = NULL, *prov = getenv("RPCRDMA_PROVIDER");
	bool port_given = false, prog_given;
	char prog_buf[16], prov_buf[128];
	char *end;
	int opt, rc;

	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'v'},
	    {"rdma-version", required_argument, NULL, 'R'},
	    {"list-devices", no_argument, NULL, 'L'},
	    {"ccp", no_argument, NULL, 'C'},
	    {NULL, 0, NULL, 0},
	};

	while ((opt = getopt_long(argc, argv, "p:P:V:c:i:w:d:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_ul(optarg, 65535, &port) || !port)
				goto bad;
			port_given = true;
			break;
		case 'P':
			if (parse_ul(optarg, UINT32_MAX, &prog))
				goto bad;
			prog_str = optarg;
			break;
		case 'V':
			if (parse_ul(optarg, UINT32_MAX, &vers))
				goto bad;
			break;
		case 'c':
			if (parse_ul(optarg, UINT32_MAX, &count))
				goto bad;
			break;
		case 'i':
			interval = strtod(optarg, &end);
			if (*end || end == optarg || !(interval >= 0 && interval <= 3600))
				goto bad;
			break;
		case 'w':
			timeout = strtod(optarg, &end);
			if (*end || end == optarg || !(timeout > 0 && timeout <= 3600))
				goto bad;
			break;
		case 'R':
			if (!strcmp(optarg, "1"))
				rdma_version = RPCRDMA_VERSION_1;
			else if (!strcmp(optarg, "2"))
				rdma_version = RPCRDMA_VERSION_2;
			else if (!strcmp(optarg, "auto"))
				rdma_version = RPCRDMA_VERSION_AUTO;
			else {
				usage(stderr);
				return 2;
			}
			break;
		case 'd':
			if (!*optarg || strchr(optarg, ':'))
				goto bad;
			device = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'L':
			return list_devices();
		case 'C':
			ccp = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			printf("rpcrdma-ping (rpcrdma) %s\n", rpcrdma_version());
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	host = argv[optind];
	prog_given = prog_str != NULL;
	if (!prog_str) {
		snprintf(prog_buf, sizeof(prog_buf), "%lu", prog);
		prog_str = prog_buf;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_sigint);

	co.comp_mask = RPCRDMA_CLNT_OPT_TIMEOUT | RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT |
		       RPCRDMA_CLNT_OPT_RETRIES | RPCRDMA_CLNT_OPT_CREDITS;
	co.timeout_ms = (uint32_t)(timeout * 1000);
	co.connect_timeout_ms = (uint32_t)(timeout * 1000);
	co.retries = 1;
	co.credits = 1; /* one call at a time: no need for 64 receive buffers */
	if (rdma_version != RPCRDMA_VERSION_1) {
		co.comp_mask |= RPCRDMA_CLNT_OPT_RDMA_VERSION;
		co.rdma_version = rdma_version;
	}
	if (prog_given && !port_given) {
		/* RFC 8166 §9: ask the host's rpcbind; without an entry, the
		 * RPC-over-RDMA port */
		uint16_t p16;

		rc = rpcrdma_rpcb_getport(host, (uint32_t)prog, (uint32_t)vers,
					  co.connect_timeout_ms, &p16);
		if (rc == 0)
			port = p16;
		else
			fprintf(stderr, "rpcrdma-ping: rpcbind on %s: %s; trying port %lu\n", host,
				rpcrdma_strerror(rc), port);
	}
	if (ccp) {
		co.comp_mask |= RPCRDMA_CLNT_OPT_CCP;
		co.ccp = 1;
	}
	if (device) {
		/* "PROVIDER:DEVICE" (provider.h): -d alone means verbs */
		snprintf(prov_buf, sizeof(prov_buf), "%.*s:%s",
			 prov && *prov ? (int)strcspn(prov, ":") : 5,
			 prov && *prov ? prov : "verbs", device);
		prov = prov_buf;
		co.comp_mask |= RPCRDMA_CLNT_OPT_PROVIDER;
		co.provider = prov;
	}
	t0 = now_us();
	rc = rpcrdma_clnt_create(host, (uint16_t)port, (uint32_t)prog, (uint32_t)vers, &co, &c);
	tconn = now_us() - t0;
	if (rc) {
		connect_error(host, port, rc, prov);
		return 1;
	}
	if (!quiet)
		printf("RPCRDMA-PING %s port %lu program %s version %lu: connected in %.1f us\n",
		       host, port, prog_str, vers, tconn);
	if (ccp)
		print_ccp(c);
	for (unsigned long i = 0; (!count || i < count) && !interrupted; i++) {
		struct rpcrdma_call_result r;
		struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};
		double t, rtt;

		if (i && interval > 0)
			usleep((useconds_t)(interval * 1e6));
		if (interrupted)
			break;
		memset(&r, 0, sizeof(r));
		t = now_us();
		rc = rpcrdma_clnt_call(c, 0, NULL, NULL, NULL, NULL, &o);
		rtt = now_us() - t;
		sent++;
		if (rc) {
			explain(host, prog_str, (uint32_t)vers, rc, &r);
			continue;
		}
		ok++;
		rsum += rtt;
		rmin = rtt < rmin ? rtt : rmin;
		rmax = rtt > rmax ? rtt : rmax;
		if (!quiet)
			printf("program %s version %lu ready and waiting: seq=%lu xid=0x%08x "
			       "rtt=%.1f us\n",
			       prog_str, vers, i + 1, r.xid, rtt);
		fflush(stdout);
	}
	rpcrdma_clnt_destroy(c);
	printf("--- %s rpcrdma ping statistics ---\n%lu calls, %lu replies, %.0f%% failed", host,
	       sent, ok, sent ? 100.0 * (double)(sent - ok) / (double)sent : 0.0);
	if (ok)
		printf(", rtt min/avg/max = %.1f/%.1f/%.1f us", rmin, rsum / (double)ok, rmax);
	printf("\n");
	return ok ? 0 : 1;
bad:
	fprintf(stderr, "rpcrdma-ping: bad value for -%c: '%s'\n", opt, optarg);
	usage(stderr);
	return 2;
}
