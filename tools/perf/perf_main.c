// SPDX-License-Identifier: MIT
/*
 * rpcrdma-perf: RPC-over-RDMA benchmark server and client, compared in the
 * same run with ONC RPC over TCP (libtirpc). Usage: rpcrdma-perf --help.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rpcrdma.h>

#include "perf_tool.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: rpcrdma-perf server [--bind ADDR] [--port P] [--threads N] [--credits C]\n"
	    "                           [--cpu N] [--tcp-port P] [--tcp-fork-port P] [--no-tcp]\n"
	    "                           [--busy-poll | --no-spin] [--crc] [--register]\n"
	    "                           [--srq-depth N]\n"
	    "                           [--rdma-version 1|2|auto] [--inline BYTES]\n"
	    "                           [--no-private-data] [--reliable-reply]\n"
	    "       rpcrdma-perf client HOST [--port P] --workload null|write|read|echo\n"
	    "                           [--size BYTES | --sizes LIST] [--threads T]\n"
	    "                           [--inflight Q] [--duration S] [--warmup S] [--count N]\n"
	    "                           [--cpu N] [--peer rdma|tcp|both]\n"
	    "                           [--tcp-server svc|fork|both] [--tcp-port P]\n"
	    "                           [--tcp-fork-port P] [--csv FILE] [--json]\n"
	    "                           [--plot FILE.png] [--no-progress] [--busy-poll | "
	    "--no-spin]\n"
	    "                           [--crc]\n"
	    "                           [--verify-every N] [--connections N [--hold S]]\n"
	    "                           [--rdma-version 1|2|auto] [--inline BYTES]\n"
	    "                           [--no-private-data]\n"
	    "       rpcrdma-perf client HOST --workload unknown [--port P] [--duration S]\n"
	    "                           [--count N] [--warmup S] [--block N] [--seed N] [--cpu N]\n"
	    "                           [--rdma-version 1|2|auto] [--inline BYTES] [--busy-poll]\n"
	    "       rpcrdma-perf -h | --help | --version\n"
	    "  both: [-d DEV | --device DEV] the RDMA device (rpcrdma-ping --list-devices),\n"
	    "  on the verbs provider unless $RPCRDMA_PROVIDER names another\n"
	    "\n"
	    "server: serves RPC-over-RDMA on --port (default %u; 0 picks one), ONC RPC over\n"
	    "  TCP with libtirpc's svc_run on --tcp-port (default 20050) and with a process\n"
	    "  forked per connection on --tcp-fork-port (default tcp-port + 1). --threads:\n"
	    "  RDMA worker threads (default 0: dispatch on the progress thread,\n"
	    "  as the library does by default). --bind ADDR listens on that address (name,\n"
	    "  IPv4 or IPv6) only, for every transport (default: all addresses).\n"
	    "  --register: register with the local rpcbind (netids rdma, rdma6) until exit.\n"
	    "  --cpu pins the whole server (every thread and process) to one CPU.\n"
	    "  --rdma-version 2 (or auto): answer RPC-over-RDMA Version Two calls too\n"
	    "  (default 1: Version One only, Version Two calls get ERR_VERS).\n",
	    RPCRDMA_DEFAULT_PORT);
	/* in two parts: C11 promises string literals of 4095 bytes only */
	fprintf(f,
		"  --reliable-reply: a reply that fits neither inline nor the Reply chunk\n"
		"  offered goes in a responder-provided Read chunk (docs/reliable-replies.md).\n"
		"  --srq-depth N: receives the connections share in one shared receive queue\n"
		"  (default 16 x credits; 0: a receive pool per connection). SIGUSR1 and exit\n"
		"  print every connection's grant, the totals and the queue in use.\n"
		"client: runs the workload on each size for each peer and prints calls/s,\n"
		"  payload MB/s (10^6 B/s), round-trip p50/p99/p99.9 and the rdma/tcp ratios.\n"
		"  --threads: client threads, each with its own connection; --inflight: calls\n"
		"  in flight per RDMA connection (libtirpc has one per connection).\n"
		"  Sizes take K/M suffixes (powers of two): --sizes 1K,64K,1M. Every WRITE is\n"
		"  checked by the server's checksum, every READ's data by the client\n"
		"  (--verify-every N checks every Nth READ only). --count N: N calls per thread\n"
		"  instead of --duration (default 3 s after --warmup 0.3 s). --connections N:\n"
		"  open N RDMA connections (then one WRITE of --size on each if --workload\n"
		"  write) and report the server's RSS and the time to connect them all;\n"
		"  --hold S keeps them open S seconds more (after a line \"holding N\").\n"
		"  Each connection takes a few file descriptors: the open-files limit is\n"
		"  raised to its hard limit, beyond that run several clients. MPA CRC32c\n"
		"  is off unless --crc. The\n"
		"  progress line (on stderr) is shown only when stderr is a terminal;\n"
		"  --no-progress turns it off there too. A case that cannot connect prints\n"
		"  the error, not a row; the exit status is then 1. --rdma-version: 1 (default),\n"
		"  2 (Version Two only) or auto (Version Two, Version One if the server has\n"
		"  only that).\n"
		"  both: --inline BYTES sets both inline thresholds (a multiple of 1024 up to\n"
		"  256K; default 4096, 1024 with a peer without RFC 8797). --no-private-data:\n"
		"  no RFC 8797 private data at connection setup (the peer assumes 1024, 4096\n"
		"  in Version Two, until transport properties raise it). --workload echo:\n"
		"  --size bytes sent and the same bytes back as a plain opaque (inline when\n"
		"  they fit, else a Long Call and a Reply chunk), checked.\n"
		"  --workload unknown: calls whose reply size the client does not know\n"
		"  (sizes 100 B..1 MiB - 64 B, 90%% log-uniform up to 4 KiB, 10%% log-uniform\n"
		"  above, from --seed N, default 1), in two modes on one connection that\n"
		"  alternate in blocks of --block N calls (default 50): no Reply chunk, the\n"
		"  large replies by responder-provided Read chunk (reliable replies: the\n"
		"  server needs --reliable-reply), against always a 1 MiB Reply chunk. One\n"
		"  call in flight; every payload checked; per mode mean/p50/p99 latency and\n"
		"  the bytes each side registered per call, and the ratio of the means.\n"
		"  --count N: N calls per mode (whole blocks) instead of --duration.\n"
		"  both: --busy-poll: the library's threads spin, never sleep; --no-spin:\n"
		"  they never spin, sleep as soon as nothing is ready (RPCRDMA_PROGRESS_BLOCK:\n"
		"  what bench/rpc counts instructions in; default: spin briefly, then sleep).\n"
		"  (server --test-corrupt answers with wrong data, --test-refuse-writes refuses\n"
		"  every second WRITE: for tests of the checks.)\n");
}

/* -d DEV: the provider named by RPCRDMA_PROVIDER (verbs when unset) on
 * device DEV, for the server and the client alike ("PROVIDER:DEVICE",
 * rpcrdma_dev_open(3)). */
static int set_device(const char *dev)
{
	const char *p = getenv("RPCRDMA_PROVIDER");
	char buf[128];

	if (!*dev || strchr(dev, ':'))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%.*s:%s", p && *p ? (int)strcspn(p, ":") : 5,
		 p && *p ? p : "verbs", dev);
	return setenv("RPCRDMA_PROVIDER", buf, 1) ? -errno : 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || v > UINT32_MAX)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_port(const char *s, uint16_t *out)
{
	uint32_t v;

	if (parse_u32(s, &v) || v > 65535)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

static int parse_sizes(char *list, struct perf_client_opts *o)
{
	o->nsizes = 0;
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		if (o->nsizes == sizeof(o->sizes) / sizeof(o->sizes[0]))
			return -E2BIG;
		if (parse_u32(tok, &o->sizes[o->nsizes]) || o->sizes[o->nsizes] > PERF_MAX_SIZE ||
		    !o->sizes[o->nsizes])
			return -EINVAL;
		o->nsizes++;
	}
	return o->nsizes ? 0 : -EINVAL;
}

enum {
	O_PORT = 256,
	O_THREADS,
	O_CREDITS,
	O_CPU,
	O_TCP_PORT,
	O_TCP_FORK_PORT,
	O_NO_TCP,
	O_BUSY,
	O_NO_SPIN,
	O_CRC,
	O_WORKLOAD,
	O_SIZE,
	O_SIZES,
	O_INFLIGHT,
	O_DURATION,
	O_WARMUP,
	O_COUNT,
	O_PEER,
	O_TCP_SERVER,
	O_CSV,
	O_JSON,
	O_PLOT,
	O_NO_PROGRESS,
	O_VERIFY,
	O_CONNECTIONS,
	O_HOLD,
	O_HELP,
	O_VERSION,
	O_BIND,
	O_CORRUPT,
	O_REFUSE,
	O_REGISTER,
	O_RDMA_VERSION,
	O_DEVICE,
	O_INLINE,
	O_NO_PDATA,
	O_RELIABLE,
	O_SRQ_DEPTH,
	O_SEED,
	O_BLOCK,
};

static const struct option longopts[] = {
    {"port", required_argument, NULL, O_PORT},
    {"threads", required_argument, NULL, O_THREADS},
    {"credits", required_argument, NULL, O_CREDITS},
    {"cpu", required_argument, NULL, O_CPU},
    {"tcp-port", required_argument, NULL, O_TCP_PORT},
    {"tcp-fork-port", required_argument, NULL, O_TCP_FORK_PORT},
    {"no-tcp", no_argument, NULL, O_NO_TCP},
    {"busy-poll", no_argument, NULL, O_BUSY},
    {"no-spin", no_argument, NULL, O_NO_SPIN},
    {"crc", no_argument, NULL, O_CRC},
    {"workload", required_argument, NULL, O_WORKLOAD},
    {"size", required_argument, NULL, O_SIZE},
    {"sizes", required_argument, NULL, O_SIZES},
    {"inflight", required_argument, NULL, O_INFLIGHT},
    {"duration", required_argument, NULL, O_DURATION},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"count", required_argument, NULL, O_COUNT},
    {"peer", required_argument, NULL, O_PEER},
    {"tcp-server", required_argument, NULL, O_TCP_SERVER},
    {"csv", required_argument, NULL, O_CSV},
    {"json", no_argument, NULL, O_JSON},
    {"plot", required_argument, NULL, O_PLOT},
    {"no-progress", no_argument, NULL, O_NO_PROGRESS},
    {"verify-every", required_argument, NULL, O_VERIFY},
    {"connections", required_argument, NULL, O_CONNECTIONS},
    {"hold", required_argument, NULL, O_HOLD},
    {"help", no_argument, NULL, O_HELP},
    {"version", no_argument, NULL, O_VERSION},
    {"bind", required_argument, NULL, O_BIND},
    {"test-corrupt", no_argument, NULL, O_CORRUPT},
    {"test-refuse-writes", no_argument, NULL, O_REFUSE},
    {"register", no_argument, NULL, O_REGISTER},
    {"rdma-version", required_argument, NULL, O_RDMA_VERSION},
    {"inline", required_argument, NULL, O_INLINE},
    {"no-private-data", no_argument, NULL, O_NO_PDATA},
    {"device", required_argument, NULL, O_DEVICE},
    {"reliable-reply", no_argument, NULL, O_RELIABLE},
    {"srq-depth", required_argument, NULL, O_SRQ_DEPTH},
    {"seed", required_argument, NULL, O_SEED},
    {"block", required_argument, NULL, O_BLOCK},
    {NULL, 0, NULL, 0},
};

/* Many connections need many descriptors (a socket and the provider's
 * eventfds each): the soft open-files limit goes up to the hard one. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int bad(const char *opt, const char *val)
{
	fprintf(stderr, "rpcrdma-perf: bad value for --%s: '%s' (see --help)\n", opt, val);
	return 2;
}

int main(int argc, char **argv)
{
	struct perf_server_opts so = {.port = RPCRDMA_DEFAULT_PORT,
				      .tcp_port = 20050,
				      .tcp = true,
				      .threads = 0,
				      .credits = RPCRDMA_DEFAULT_CREDITS,
				      .cpu = -1};
	struct perf_client_opts co = {.port = RPCRDMA_DEFAULT_PORT,
				      .tcp_port = 20050,
				      .workload = PERF_W_NULL,
				      .sizes = {1048576},
				      .nsizes = 1,
				      .threads = 1,
				      .inflight = 1,
				      .duration = 3,
				      .warmup = 0.3,
				      .cpu = -1,
				      .peer_rdma = true,
				      .tcp_svc = true,
				      .verify_every = 1,
				      .seed = 1,
				      .block = 50};
	bool server, fork_port_set = false, have_workload = false;
	const char *role;
	char *end;
	int c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("rpcrdma-perf (rpcrdma) %s\n", rpcrdma_version());
		return 0;
	}
	raise_nofile();
	/* \r progress lines only where someone watches them */
	co.progress = isatty(STDERR_FILENO) == 1;
	role = argv[1];
	if (!strcmp(role, "server")) {
		server = true;
	} else if (!strcmp(role, "client")) {
		server = false;
		if (argc < 3 || argv[2][0] == '-') {
			fprintf(stderr, "rpcrdma-perf client: HOST missing (see --help)\n");
			return 2;
		}
		co.host = argv[2];
	} else {
		usage(stderr);
		return 2;
	}
	optind = server ? 2 : 3;
	while ((c = getopt_long(argc, argv, "hd:", longopts, NULL)) != -1) {
		uint32_t v = 0;

		switch (c) {
		case 'd':
		case O_DEVICE:
			if (set_device(optarg))
				return bad("device", optarg);
			break;
		case O_PORT:
			if (parse_port(optarg, &so.port))
				return bad("port", optarg);
			co.port = so.port;
			so.port_any = so.port == 0;
			break;
		case O_THREADS:
			if (parse_u32(optarg, &v) || v > 1024 || (!server && !v))
				return bad("threads", optarg);
			so.threads = co.threads = v;
			break;
		case O_CREDITS:
			if (parse_u32(optarg, &v) || !v || v > 1024)
				return bad("credits", optarg);
			so.credits = v;
			break;
		case O_CPU:
			if (parse_u32(optarg, &v) || v >= CPU_SETSIZE)
				return bad("cpu", optarg);
			so.cpu = co.cpu = (int)v;
			break;
		case O_TCP_PORT:
			if (parse_port(optarg, &so.tcp_port))
				return bad("tcp-port", optarg);
			co.tcp_port = so.tcp_port;
			break;
		case O_TCP_FORK_PORT:
			if (parse_port(optarg, &so.tcp_fork_port))
				return bad("tcp-fork-port", optarg);
			co.tcp_fork_port = so.tcp_fork_port;
			fork_port_set = true;
			break;
		case O_NO_TCP:
			so.tcp = false;
			break;
		case O_BUSY:
			so.busy = co.busy = true;
			break;
		case O_NO_SPIN:
			so.nospin = co.nospin = true;
			break;
		case O_CRC:
			so.crc = co.crc = true;
			break;
		case O_RDMA_VERSION:
			if (!strcmp(optarg, "1"))
				co.rdma_version = RPCRDMA_VERSION_1;
			else if (!strcmp(optarg, "2"))
				co.rdma_version = RPCRDMA_VERSION_2;
			else if (!strcmp(optarg, "auto"))
				co.rdma_version = RPCRDMA_VERSION_AUTO;
			else
				return bad("rdma-version", optarg);
			/* a server is Version Two capable or not */
			so.rdma_version = co.rdma_version == RPCRDMA_VERSION_1 ? RPCRDMA_VERSION_1
									       : RPCRDMA_VERSION_2;
			break;
		case O_INLINE:
			/* RFC 8797 sizes: a multiple of 1024 in 1 KiB..256 KiB */
			if (parse_u32(optarg, &v) || v < 1024 || v > 262144 || v % 1024)
				return bad("inline", optarg);
			so.inline_size = co.inline_size = v;
			break;
		case O_NO_PDATA:
			so.no_pdata = co.no_pdata = true;
			break;
		case O_WORKLOAD:
			if (!strcmp(optarg, "null"))
				co.workload = PERF_W_NULL;
			else if (!strcmp(optarg, "write"))
				co.workload = PERF_W_WRITE;
			else if (!strcmp(optarg, "read"))
				co.workload = PERF_W_READ;
			else if (!strcmp(optarg, "echo"))
				co.workload = PERF_W_ECHO;
			else if (!strcmp(optarg, "unknown"))
				co.workload = PERF_W_UNKNOWN;
			else
				return bad("workload", optarg);
			have_workload = true;
			break;
		case O_SIZE:
		case O_SIZES:
			if (parse_sizes(optarg, &co))
				return bad(c == O_SIZE ? "size" : "sizes", optarg);
			break;
		case O_INFLIGHT:
			if (parse_u32(optarg, &v) || !v || v > 1024)
				return bad("inflight", optarg);
			co.inflight = v;
			break;
		case O_DURATION:
			co.duration = strtod(optarg, &end);
			if (*end || !(co.duration > 0 && co.duration < 3600))
				return bad("duration", optarg);
			break;
		case O_WARMUP:
			co.warmup = strtod(optarg, &end);
			if (*end || !(co.warmup >= 0 && co.warmup < 600))
				return bad("warmup", optarg);
			break;
		case O_COUNT:
			if (parse_u32(optarg, &v) || !v)
				return bad("count", optarg);
			co.count = v;
			break;
		case O_PEER:
			co.peer_rdma = !strcmp(optarg, "rdma") || !strcmp(optarg, "both");
			co.peer_tcp = !strcmp(optarg, "tcp") || !strcmp(optarg, "both");
			if (!co.peer_rdma && !co.peer_tcp)
				return bad("peer", optarg);
			break;
		case O_TCP_SERVER:
			co.tcp_svc = !strcmp(optarg, "svc") || !strcmp(optarg, "both");
			co.tcp_fork = !strcmp(optarg, "fork") || !strcmp(optarg, "both");
			if (!co.tcp_svc && !co.tcp_fork)
				return bad("tcp-server", optarg);
			break;
		case O_CSV:
			co.csv = optarg;
			break;
		case O_JSON:
			co.json = true;
			break;
		case O_PLOT:
			co.plot = optarg;
			break;
		case O_NO_PROGRESS:
			co.progress = false;
			break;
		case O_VERIFY:
			if (parse_u32(optarg, &v) || !v)
				return bad("verify-every", optarg);
			co.verify_every = v;
			break;
		case O_CONNECTIONS:
			if (parse_u32(optarg, &v) || !v || v > PERF_MAX_CONNECTIONS)
				return bad("connections", optarg);
			co.connections = v;
			break;
		case O_HOLD:
			if (parse_u32(optarg, &v))
				return bad("hold", optarg);
			co.hold_s = v;
			break;
		case O_CORRUPT:
			so.corrupt = true;
			break;
		case O_REFUSE:
			so.refuse_writes = true;
			break;
		case O_RELIABLE:
			if (!server)
				return bad("reliable-reply", "(server only)");
			so.reliable_reply = true;
			break;
		case O_SRQ_DEPTH:
			if (!server)
				return bad("srq-depth", "(server only)");
			if (parse_u32(optarg, &v) || v > (1u << 20))
				return bad("srq-depth", optarg);
			so.srq_set = true;
			so.srq_depth = v;
			break;
		case O_SEED:
			co.seed = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				return bad("seed", optarg);
			break;
		case O_BLOCK:
			if (parse_u32(optarg, &v) || !v || v > 1000000)
				return bad("block", optarg);
			co.block = v;
			break;
		case O_BIND:
			if (!server || !*optarg)
				return bad("bind", optarg);
			so.bind = optarg;
			break;
		case O_VERSION:
			printf("rpcrdma-perf (rpcrdma) %s\n", rpcrdma_version());
			return 0;
		case O_REGISTER:
			so.rpcbind = true;
			break;
		case 'h':
		case O_HELP:
			usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rpcrdma-perf: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!fork_port_set) {
		so.tcp_fork_port = so.tcp_port ? (uint16_t)(so.tcp_port + 1) : 0;
		co.tcp_fork_port = co.tcp_port ? (uint16_t)(co.tcp_port + 1) : 0;
	}
	if (server)
		return perf_server_main(&so) ? 1 : 0;
	if (!have_workload && !co.connections) {
		fprintf(
		    stderr,
		    "rpcrdma-perf client: --workload null|write|read|echo|unknown is required\n");
		return 2;
	}
	if (co.peer_tcp && !co.tcp_port) {
		fprintf(stderr, "rpcrdma-perf client: --peer tcp needs --tcp-port\n");
		return 2;
	}
	if (co.peer_tcp && co.tcp_fork && !co.tcp_fork_port) {
		fprintf(stderr, "rpcrdma-perf client: --tcp-server fork needs --tcp-fork-port\n");
		return 2;
	}
	return perf_client_main(&co);
}
