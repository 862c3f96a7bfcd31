/* SPDX-License-Identifier: MIT */
/*
 * bench_provider: the one command of the provider-level benchmark (issue 3).
 * Spawns server and client worker processes on 127.0.0.1, pinned as asked,
 * for rpcrdma softiwarp (bench_siw), libfabric tcp (bench_fabric) and plain
 * TCP (bench_tcp); collects their RESULT lines; prints a table with the
 * ratios the targets are stated in, or everything as JSON (--json).
 * User-space instructions per 64-byte round trip are counted with callgrind
 * when `perf stat -e instructions:u` is unavailable (see README.md).
 *
 * Every worker has its own watchdog (--timeout); the driver also kills any
 * worker that outlives its deadline and reaps every child it started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"

enum impl { IMPL_SIW, IMPL_FABRIC, IMPL_TCP, IMPL_N };
static const char *const impl_bin[IMPL_N] = {"bench_siw", "bench_fabric", "bench_tcp"};
static const char *const impl_name[IMPL_N] = {"rpcrdma softiwarp", "libfabric tcp", "plain TCP"};
static const char *const impl_key[IMPL_N] = {"rpcrdma_softiwarp", "libfabric_tcp", "plain_tcp"};

enum run_status { RUN_OK, RUN_FAILED, RUN_NOT_BUILT };

#define MAX_KV   64
#define MAX_INFO 8

#define MAX_REP 9

/* One figure: its value in each repetition; reported as the median. */
struct kv {
	char key[64];
	double v[MAX_REP];
	int n;
};

struct run {
	enum impl impl;
	enum bench_mode mode;
	int crc;   /* -1: not applicable */
	int instr; /* callgrind instruction-count run */
	int rep;   /* current repetition */
	enum run_status status;
	char why[256];
	struct kv kv[MAX_KV];
	int nkv;
	char info[MAX_INFO][200];
	int ninfo;
};

static struct {
	int json;
	int server_cpu, client_cpu;
	const char *placement; /* "cross-CPU", "same CPU", "not pinned" */
	unsigned impls;        /* bit per impl */
	unsigned modes;        /* bit per mode */
	unsigned crcs;         /* bit 0: off, bit 1: on */
	double seconds;
	unsigned rtt_iters, qd, timeout;
	unsigned repeat;   /* repetitions, interleaved; figures are medians */
	int progress_wait; /* softiwarp blocking: wait inside rpcrdma_dev_progress */
	int instr;         /* count instructions */
	unsigned instr_iters;
	char dir[1024];
	char instr_tool[64];
	char instr_why[256];
} G;

static struct run runs[32];
static int nruns;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench_provider: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static double now_s(void)
{
	return (double)bench_now_ns() / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const struct kv *kv)
{
	double v[MAX_REP];

	if (!kv->n)
		return NAN;
	memcpy(v, kv->v, sizeof(v));
	qsort(v, (size_t)kv->n, sizeof(v[0]), cmp_double);
	return kv->n % 2 ? v[kv->n / 2] : (v[kv->n / 2 - 1] + v[kv->n / 2]) / 2;
}

static const struct kv *kv_of(const struct run *r, const char *key)
{
	int i;

	for (i = 0; r && i < r->nkv; i++)
		if (!strcmp(r->kv[i].key, key))
			return &r->kv[i];
	return NULL;
}

static double get(const struct run *r, const char *key)
{
	/* A failed run keeps the figures it reported before failing. */
	const struct kv *kv = kv_of(r, key);

	return kv ? median(kv) : NAN;
}

/* Records one repetition's value of key (a repeated key in the same
 * repetition replaces the value). */
static void put(struct run *r, const char *key, double v)
{
	struct kv *kv = NULL;
	int i;

	for (i = 0; i < r->nkv && !kv; i++)
		if (!strcmp(r->kv[i].key, key))
			kv = &r->kv[i];
	if (!kv) {
		if (r->nkv == MAX_KV)
			return;
		kv = &r->kv[r->nkv++];
		snprintf(kv->key, sizeof(kv->key), "%s", key);
		kv->n = 0;
	}
	if (kv->n > r->rep)
		kv->v[r->rep] = v;
	else if (kv->n < MAX_REP)
		kv->v[kv->n++] = v;
}

static struct run *find(enum impl impl, enum bench_mode mode, int crc, int instr)
{
	int i;

	for (i = 0; i < nruns; i++)
		if (runs[i].impl == impl && runs[i].mode == mode && runs[i].crc == crc &&
		    runs[i].instr == instr)
			return &runs[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Child processes                                                     */
/* ------------------------------------------------------------------ */

struct child {
	pid_t pid;
	int out; /* read end of its stdout, -1 at EOF */
	char buf[4096];
	size_t len;
	int status;
	int reaped;
	const char *role;
};

static pid_t spawn(const char **argv, int *out)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		/* execv's prototype predates const; it does not modify argv. */
		execv(argv[0], (char *const *)(void *)argv);
		fprintf(stderr, "bench_provider: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

/* Handles one complete line from a worker. */
static void on_line(struct run *r, struct child *c, char *line, unsigned *port)
{
	char key[48];
	double v;

	if (!strncmp(line, "READY ", 6)) {
		*port = (unsigned)strtoul(line + 6, NULL, 10);
	} else if (sscanf(line, "RESULT %47s %lf", key, &v) == 2) {
		char k[64];

		/* Server figures get a "server_" prefix unless they have it. */
		if (!strcmp(c->role, "server") && strncmp(key, "server_", 7))
			snprintf(k, sizeof(k), "server_%s", key);
		else
			snprintf(k, sizeof(k), "%s", key);
		put(r, k, v);
	} else if (!strncmp(line, "INFO ", 5)) {
		int i;

		for (i = 0; i < r->ninfo; i++)
			if (!strcmp(r->info[i], line + 5))
				return;
		if (r->ninfo < MAX_INFO)
			snprintf(r->info[r->ninfo++], sizeof(r->info[0]), "%s", line + 5);
	}
}

/* Reads what is available from c; returns 0 at EOF. */
static int pump(struct run *r, struct child *c, unsigned *port)
{
	ssize_t n = read(c->out, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	char *nl, *start;

	if (n <= 0) {
		if (n < 0 && errno == EINTR)
			return 1;
		close(c->out);
		c->out = -1;
		return 0;
	}
	c->len += (size_t)n;
	c->buf[c->len] = 0;
	start = c->buf;
	while ((nl = strchr(start, '\n'))) {
		*nl = 0;
		on_line(r, c, start, port);
		start = nl + 1;
	}
	c->len -= (size_t)(start - c->buf);
	memmove(c->buf, start, c->len);
	if (c->len == sizeof(c->buf) - 1)
		c->len = 0; /* an absurdly long line: drop it */
	return 1;
}

static void reap(struct child *c, double deadline)
{
	while (c->pid > 0 && !c->reaped) {
		pid_t p = waitpid(c->pid, &c->status, WNOHANG);

		if (p == c->pid) {
			c->reaped = 1;
		} else if (p < 0 && errno != EINTR) {
			c->reaped = 1;
			c->status = -1;
		} else if (now_s() > deadline) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &c->status, 0);
			c->reaped = 1;
			c->status = -2;
		} else {
			usleep(2000);
		}
	}
}

static void describe_exit(char *dst, size_t len, const struct child *c)
{
	if (c->status == -2)
		snprintf(dst, len, "%s killed after the driver's timeout", c->role);
	else if (c->status == -1)
		snprintf(dst, len, "%s could not be waited for", c->role);
	else if (WIFSIGNALED(c->status))
		snprintf(dst, len, "%s died of signal %d%s", c->role, WTERMSIG(c->status),
			 WTERMSIG(c->status) == SIGALRM ? " (its watchdog timeout)" : "");
	else if (WEXITSTATUS(c->status))
		snprintf(dst, len, "%s exited with status %d (its error is on stderr above)",
			 c->role, WEXITSTATUS(c->status));
	else
		dst[0] = 0;
}

static int same_cpu(void)
{
	return G.server_cpu >= 0 && G.server_cpu == G.client_cpu;
}

/* Builds a worker's argv (optionally under callgrind) into av. */
static void worker_argv(const struct run *r, int server, unsigned port, const char *cg_out,
			char store[][1200], const char **av)
{
	int n = 0, s = 0;
	unsigned tests = r->instr
			     ? BENCH_T_RTT
			     : (r->impl == IMPL_TCP ? BENCH_T_RTT | BENCH_T_WRITE : BENCH_T_ALL);
	unsigned timeout = r->instr ? G.timeout * 4 : G.timeout;

#define ARG(...) (snprintf(store[s], sizeof(store[0]), __VA_ARGS__), av[n++] = store[s++])
	if (r->instr) {
		av[n++] = "/usr/bin/valgrind";
		av[n++] = "--tool=callgrind";
		av[n++] = "--quiet";
		ARG("--callgrind-out-file=%s", cg_out);
		ARG("--toggle-collect=%s", server ? "bench_serve_loop" : "bench_rtt_loop");
	}
	ARG("%s/%s", G.dir, impl_bin[r->impl]);
	av[n++] = server ? "--server" : "--client";
	av[n++] = "--mode";
	av[n++] = r->mode == BENCH_POLL ? "poll" : "block";
	if (r->crc >= 0) {
		av[n++] = "--crc";
		av[n++] = r->crc ? "1" : "0";
	}
	av[n++] = "--cpu";
	ARG("%d", server ? G.server_cpu : G.client_cpu);
	av[n++] = "--timeout";
	ARG("%u", timeout);
	if (r->mode == BENCH_POLL && same_cpu())
		av[n++] = "--yield";
	if ((r->impl == IMPL_SIW || r->impl == IMPL_FABRIC) && G.progress_wait)
		av[n++] = "--progress-wait";
	if (!server) {
		av[n++] = "--port";
		ARG("%u", port);
		av[n++] = "--tests";
		ARG("%s%s%s", tests & BENCH_T_RTT ? "rtt," : "",
		    tests & BENCH_T_WRITE ? "write," : "", tests & BENCH_T_READ ? "read" : "");
		if (store[s - 1][strlen(store[s - 1]) - 1] == ',')
			store[s - 1][strlen(store[s - 1]) - 1] = 0;
		av[n++] = "--rtt-iters";
		ARG("%u", r->instr ? G.instr_iters : G.rtt_iters);
		av[n++] = "--rtt-warmup";
		ARG("%u", r->instr ? G.instr_iters / 10 : 1000);
		av[n++] = "--seconds";
		ARG("%g", G.seconds);
		av[n++] = "--qd";
		ARG("%u", G.qd);
	}
	av[n] = NULL;
#undef ARG
}

/* Sum of the Ir events callgrind collected ("totals:" or "summary:" line). */
static double callgrind_ir(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	double v = NAN;

	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "totals:", 7))
			v = strtod(line + 7, NULL);
		else if (!strncmp(line, "summary:", 8) && isnan(v))
			v = strtod(line + 8, NULL);
	}
	fclose(f);
	return v;
}

static void run_pair(struct run *r)
{
	char path[PATH_MAX + 16], store[2][24][1200];
	const char *av[2][40];
	char cg[2][64];
	struct child c[2] = {{.role = "server", .out = -1}, {.role = "client", .out = -1}};
	char why[sizeof(r->why) - 32];
	unsigned port = 0;
	double deadline;
	int i;

	snprintf(path, sizeof(path), "%s/%s", G.dir, impl_bin[r->impl]);
	if (access(path, X_OK)) {
		r->status = RUN_NOT_BUILT;
		snprintf(r->why, sizeof(r->why), "%s not built", impl_bin[r->impl]);
		return;
	}
	for (i = 0; i < 2; i++)
		snprintf(cg[i], sizeof(cg[i]), "/tmp/bench_provider.%d.%s.cg", (int)getpid(),
			 i ? "client" : "server");
	if (!G.json)
		fprintf(stderr, "  [%d/%u] running %s, %s%s%s ...\n", r->rep + 1, G.repeat,
			impl_name[r->impl], r->mode == BENCH_POLL ? "busy-polling" : "blocking",
			r->crc < 0 ? ""
			: r->crc   ? ", CRC on"
				   : ", CRC off",
			r->instr ? ", under callgrind" : "");

	worker_argv(r, 1, 0, cg[0], store[0], av[0]);
	c[0].pid = spawn(av[0], &c[0].out);
	deadline = now_s() + (r->instr ? 60 : 20);
	while (!port && c[0].out >= 0) {
		struct pollfd p = {.fd = c[0].out, .events = POLLIN};

		if (now_s() > deadline)
			break;
		if (poll(&p, 1, 200) > 0)
			pump(r, &c[0], &port);
	}
	if (port) {
		worker_argv(r, 0, port, cg[1], store[1], av[1]);
		c[1].pid = spawn(av[1], &c[1].out);
	}
	deadline = now_s() + (r->instr ? G.timeout * 4 : G.timeout) + 5;
	while ((c[0].out >= 0 || c[1].out >= 0) && now_s() < deadline) {
		struct pollfd p[2] = {{.fd = c[0].out, .events = POLLIN},
				      {.fd = c[1].out, .events = POLLIN}};

		if (poll(p, 2, 200) <= 0)
			continue;
		for (i = 0; i < 2; i++)
			if (p[i].revents)
				pump(r, &c[i], &port);
		/* A client that is gone leaves nothing for the server to do:
		 * give it a moment to finish, then the deadline applies. */
		if (c[1].pid > 0 && c[1].out < 0 && c[0].out >= 0 && deadline > now_s() + 5)
			deadline = now_s() + 5;
	}
	for (i = 0; i < 2; i++) {
		if (c[i].out >= 0)
			close(c[i].out);
		reap(&c[i], deadline);
	}

	/* A run fails if any repetition failed; the reason kept is the
	 * first one seen. */
	why[0] = 0;
	if (!port) {
		describe_exit(why, sizeof(why), &c[0]);
		if (!why[0])
			snprintf(why, sizeof(why), "server never reported READY");
	}
	for (i = 1; i >= 0 && port; i--) {
		char one[120];
		size_t l = strlen(why);

		describe_exit(one, sizeof(one), &c[i]);
		if (one[0])
			snprintf(why + l, sizeof(why) - l, "%s%s", l ? "; " : "", one);
	}
	if (why[0] && r->status == RUN_OK) {
		r->status = RUN_FAILED;
		snprintf(r->why, sizeof(r->why), "%s%s",
			 G.repeat > 1 ? "a repetition failed: " : "", why);
	}
	if (r->instr) {
		double it = G.instr_iters + G.instr_iters / 10;

		if (!why[0]) {
			put(r, "client_instr_per_rtt", callgrind_ir(cg[1]) / it);
			put(r, "server_instr_per_rtt", callgrind_ir(cg[0]) / it);
		}
		unlink(cg[0]);
		unlink(cg[1]);
	}
}

/* ------------------------------------------------------------------ */
/* Set-up                                                              */
/* ------------------------------------------------------------------ */

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: bench_provider [options]\n"
	    "  --json                 machine-readable output (stdout)\n"
	    "  --placement P          cross (default: server and client on two CPUs),\n"
	    "                         same (both on one CPU), none (no pinning)\n"
	    "  --server-cpu N --client-cpu N   explicit CPUs (override --placement)\n"
	    "  --only LIST            siw,fabric,tcp (default all)\n"
	    "  --modes LIST           block,poll (default both)\n"
	    "  --crc LIST             off,on (default both; softiwarp only)\n"
	    "  --seconds S            per bandwidth test (default 1.5)\n"
	    "  --rtt-iters N          measured 64 B round trips (default 20000)\n"
	    "  --qd N                 RDMA operations in flight (default 16)\n"
	    "  --no-instr             skip the instruction counts\n"
	    "  --instr-iters N        round trips under callgrind (default 2000)\n"
	    "  --timeout S            per worker process (default 60)\n"
	    "  --repeat N             run every case N times, interleaved; report medians\n"
	    "  --progress-wait        blocking mode waits in each provider's own call:\n"
	    "                         rpcrdma_dev_progress(dev, 1000) / fi_cq_sread(), instead\n"
	    "                         of poll() on the provider's fd + a non-blocking poll\n"
	    "  --quick                short run: 0.3 s per bandwidth test, 3000 round trips\n");
	exit(2);
}

static unsigned parse_list(const char *s, const char *const *names, int n)
{
	char buf[128], *save = NULL, *tok;
	unsigned bits = 0;
	int i;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i == n)
			die("unknown list item '%s'", tok);
		bits |= 1u << i;
	}
	return bits;
}

static int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (i = 0; i < CPU_SETSIZE && n < max; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	return n;
}

static void setup_instr(void)
{
	int st;
	pid_t pid;

	if (!G.instr) {
		snprintf(G.instr_why, sizeof(G.instr_why), "skipped (--no-instr)");
		return;
	}
#ifdef BENCH_SANITIZED
	G.instr = 0;
	snprintf(G.instr_why, sizeof(G.instr_why),
		 "skipped: sanitizer build (valgrind cannot run ASan binaries)");
	return;
#endif
	/* perf first: the figure is `perf stat -e instructions:u`. */
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execlp("sh", "sh", "-c",
		       "perf stat -x, -e instructions:u true 2>&1 >/dev/null | grep -q '^[0-9]'",
		       (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st)) {
		/* perf works here; callgrind counts the same user-space
		 * instructions but only inside the steady-state loops, so it
		 * is still what we use (deterministic, no setup noise). */
		snprintf(G.instr_why, sizeof(G.instr_why),
			 "callgrind Ir inside the round-trip loops (perf also works here)");
	} else {
		snprintf(G.instr_why, sizeof(G.instr_why),
			 "perf stat -e instructions:u is not supported on this machine (no PMU "
			 "in the VM); counted with callgrind (Ir inside the round-trip loops)");
	}
	if (access("/usr/bin/valgrind", X_OK)) {
		G.instr = 0;
		snprintf(G.instr_why, sizeof(G.instr_why),
			 "skipped: valgrind not installed and perf instructions:u unusable");
		return;
	}
	snprintf(G.instr_tool, sizeof(G.instr_tool), "callgrind");
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"placement", required_argument, NULL, 'P'},
	    {"server-cpu", required_argument, NULL, 's'},
	    {"client-cpu", required_argument, NULL, 'c'},
	    {"only", required_argument, NULL, 'o'},
	    {"modes", required_argument, NULL, 'm'},
	    {"crc", required_argument, NULL, 'C'},
	    {"seconds", required_argument, NULL, 'S'},
	    {"rtt-iters", required_argument, NULL, 'n'},
	    {"qd", required_argument, NULL, 'q'},
	    {"no-instr", no_argument, NULL, 'I'},
	    {"instr-iters", required_argument, NULL, 'i'},
	    {"timeout", required_argument, NULL, 'T'},
	    {"quick", no_argument, NULL, 'Q'},
	    {"repeat", required_argument, NULL, 'R'},
	    {"progress-wait", no_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static const char *const impls[] = {"siw", "fabric", "tcp"};
	static const char *const modes[] = {"block", "poll"};
	static const char *const crcs[] = {"off", "on"};
	const char *placement = "cross";
	int c, scpu = INT_MIN, ccpu = INT_MIN, cpus[2], ncpu;
	char self[1024], *slash;
	ssize_t n;

	G.impls = 7;
	G.modes = 3;
	G.crcs = 3;
	G.seconds = 1.5;
	G.rtt_iters = 20000;
	G.qd = 16;
	G.timeout = 60;
	G.instr = 1;
	G.instr_iters = 2000;
	G.repeat = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			G.json = 1;
			break;
		case 'P':
			placement = optarg;
			break;
		case 's':
			scpu = atoi(optarg);
			break;
		case 'c':
			ccpu = atoi(optarg);
			break;
		case 'o':
			G.impls = parse_list(optarg, impls, 3);
			break;
		case 'm':
			G.modes = parse_list(optarg, modes, 2);
			break;
		case 'C':
			G.crcs = parse_list(optarg, crcs, 2);
			break;
		case 'S':
			G.seconds = atof(optarg);
			if (!(G.seconds > 0 && G.seconds < 60))
				die("bad --seconds");
			break;
		case 'n':
			G.rtt_iters = (unsigned)atoi(optarg);
			break;
		case 'q':
			G.qd = (unsigned)atoi(optarg);
			if (!G.qd || G.qd > BENCH_MAX_QD)
				die("--qd must be 1..%u", BENCH_MAX_QD);
			break;
		case 'I':
			G.instr = 0;
			break;
		case 'i':
			G.instr_iters = (unsigned)atoi(optarg);
			break;
		case 'T':
			G.timeout = (unsigned)atoi(optarg);
			break;
		case 'w':
			G.progress_wait = 1;
			break;
		case 'R':
			G.repeat = (unsigned)atoi(optarg);
			if (!G.repeat || G.repeat > MAX_REP)
				die("--repeat must be 1..%d", MAX_REP);
			break;
		case 'Q':
			G.seconds = 0.3;
			G.rtt_iters = 3000;
			G.instr_iters = 500;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !G.rtt_iters || !G.instr_iters || !G.timeout)
		usage();

	ncpu = allowed_cpus(cpus, 2);
	if (!strcmp(placement, "cross")) {
		G.server_cpu = ncpu > 0 ? cpus[0] : -1;
		G.client_cpu = ncpu > 1 ? cpus[1] : G.server_cpu;
	} else if (!strcmp(placement, "same")) {
		G.server_cpu = G.client_cpu = ncpu > 0 ? cpus[0] : -1;
	} else if (!strcmp(placement, "none")) {
		G.server_cpu = G.client_cpu = -1;
	} else {
		die("--placement must be cross, same or none");
	}
	if (scpu != INT_MIN)
		G.server_cpu = scpu;
	if (ccpu != INT_MIN)
		G.client_cpu = ccpu;
	if (G.server_cpu < 0 && G.client_cpu < 0)
		G.placement = "not pinned";
	else if (G.server_cpu < 0 || G.client_cpu < 0)
		G.placement = "one side pinned";
	else
		G.placement = G.server_cpu == G.client_cpu ? "same CPU" : "cross-CPU";

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = 0;
	slash = strrchr(self, '/');
	*slash = 0;
	memcpy(G.dir, self, sizeof(G.dir));
}

static void add_run(enum impl impl, int mode, int crc, int instr)
{
	runs[nruns++] =
	    (struct run){.impl = impl, .mode = (enum bench_mode)mode, .crc = crc, .instr = instr};
}

static void plan(void)
{
	int m, crc;

	for (m = 0; m < 2; m++) {
		if (!(G.modes & (1u << m)))
			continue;
		if (G.impls & 1)
			for (crc = 0; crc < 2; crc++)
				if (G.crcs & (1u << crc))
					add_run(IMPL_SIW, m, crc, 0);
		if (G.impls & 2)
			add_run(IMPL_FABRIC, m, -1, 0);
		if (G.impls & 4)
			add_run(IMPL_TCP, m, -1, 0);
	}
	if (G.instr) {
		if (G.impls & 1)
			add_run(IMPL_SIW, BENCH_BLOCK, 0, 1);
		if (G.impls & 2)
			add_run(IMPL_FABRIC, BENCH_BLOCK, -1, 1);
		if (G.impls & 4)
			add_run(IMPL_TCP, BENCH_BLOCK, -1, 1);
	}
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

static const char *const mode_name[2] = {"block", "poll"};

static double ratio(double a, double b)
{
	return (isnan(a) || isnan(b) || b == 0) ? NAN : a / b;
}

/* One table cell: a figure, or a ratio (suffix x); "-" when missing. */
static void cell(double v, int is_ratio)
{
	if (isnan(v))
		printf(" %9s", "-");
	else if (is_ratio)
		printf(" %8.2fx", v);
	else
		printf(" %9.2f", v);
}

static void machine(char *dst, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256], model[128] = "?";
	struct utsname u;

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
				snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
				model[strcspn(model, "\n")] = 0;
				break;
			}
		fclose(f);
	}
	uname(&u);
	snprintf(dst, len, "%s, %ld CPUs, Linux %s", model, sysconf(_SC_NPROCESSORS_ONLN),
		 u.release);
}

/* The 1-minute load average at the start: other work on the machine is the
 * main source of noise in these figures. */
static double load_at_start = NAN;

static void note_load(void)
{
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &load_at_start) != 1)
			load_at_start = NAN;
		fclose(f);
	}
}

struct target {
	const char *what;
	double value, limit;
	int at_least; /* value >= limit passes, else value <= limit */
	/* a ratio target: the figures of its numerator and denominator, one
	 * value per repetition (NULL: not a ratio of two runs' figures) */
	const struct kv *num, *den;
};

/* With --repeat: the ratio of each repetition's pair of figures (the two
 * runs of a repetition ran back to back), their range, and how many of them
 * meet the limit. Returns the number of pairs (0: not a ratio target or a
 * single repetition). */
static int target_spread(const struct target *t, double *lo, double *hi, int *meet)
{
	int i, n = 0;

	*meet = 0;
	if (!t->num || !t->den || G.repeat < 2)
		return 0;
	for (i = 0; i < t->num->n && i < t->den->n; i++) {
		double q = ratio(t->num->v[i], t->den->v[i]);

		if (isnan(q))
			continue;
		if (!n || q < *lo)
			*lo = q;
		if (!n || q > *hi)
			*hi = q;
		n++;
		*meet += t->at_least ? q >= t->limit : q <= t->limit;
	}
	return n;
}

static int targets(struct target *t)
{
	int n = 0, m, crc;

	for (m = 0; m < 2; m++) {
		struct run *fab = find(IMPL_FABRIC, (enum bench_mode)m, -1, 0);
		struct run *tcp = find(IMPL_TCP, (enum bench_mode)m, -1, 0);

		for (crc = 0; crc < 2; crc++) {
			struct run *siw = find(IMPL_SIW, (enum bench_mode)m, crc, 0);
			static char what[2][2][4][64];
			static const char *const op[3] = {"Write", "Read", "64 B RTT p50"};
			static const char *const key[3] = {"write_gbs", "read_gbs", "rtt_p50_us"};
			int k;

			if (!siw)
				continue;
			for (k = 0; k < 3; k++) {
				snprintf(what[m][crc][k], sizeof(what[0][0][0]),
					 "%s %s CRC %s / libfabric", mode_name[m], op[k],
					 crc ? "on" : "off");
				t[n++] = (struct target){what[m][crc][k],
							 ratio(get(siw, key[k]), get(fab, key[k])),
							 k == 2 ? 1.0
							 : crc  ? 0.6
								: 1.0,
							 k != 2,
							 kv_of(siw, key[k]),
							 kv_of(fab, key[k])};
			}
			if (m == BENCH_BLOCK) {
				snprintf(what[m][crc][3], sizeof(what[0][0][0]),
					 "block 64 B RTT p50 CRC %s / plain TCP",
					 crc ? "on" : "off");
				t[n++] = (struct target){
				    what[m][crc][3],
				    ratio(get(siw, "rtt_p50_us"), get(tcp, "rtt_p50_us")),
				    1.2,
				    0,
				    kv_of(siw, "rtt_p50_us"),
				    kv_of(tcp, "rtt_p50_us")};
			}
		}
	}
	{
		struct run *si = find(IMPL_SIW, BENCH_BLOCK, 0, 1);
		struct run *fi = find(IMPL_FABRIC, BENCH_BLOCK, -1, 1);

		if (si)
			t[n++] = (struct target){
			    "instructions/RTT (client) / libfabric",
			    ratio(get(si, "client_instr_per_rtt"), get(fi, "client_instr_per_rtt")),
			    1.0,
			    0,
			    NULL,
			    NULL};
	}
	{
		/* One line: the worst allocations-per-operation figure over every
		 * softiwarp run, client and server side (server totals for the
		 * bandwidth phases divided by the operations of that phase). */
		static const char *const ak[] = {"allocs_per_op_rtt", "allocs_per_op_write",
						 "allocs_per_op_read", "server_allocs_per_op_rtt"};
		static char what[96];
		double worst = NAN;
		int i, cnt = 0;

		for (i = 0; i < nruns; i++) {
			unsigned a;

			if (runs[i].impl != IMPL_SIW || runs[i].instr)
				continue;
			for (a = 0; a < 6; a++) {
				double v;

				if (a < 4) {
					v = get(&runs[i], ak[a]);
				} else {
					double tot = get(&runs[i], a == 4 ? "server_allocs_write"
									  : "server_allocs_read");
					double b = get(&runs[i], a == 4 ? "write_gbs_bytes"
									: "read_gbs_bytes");

					v = b > 0 ? tot / (b / BENCH_BW_SIZE) : NAN;
				}
				if (isnan(v))
					continue;
				cnt++;
				if (isnan(worst) || v > worst)
					worst = v;
			}
		}
		if (cnt) {
			snprintf(what, sizeof(what),
				 "heap allocs/op, worst of %d softiwarp figures", cnt);
			t[n++] = (struct target){what, worst, 0, 0, NULL, NULL};
		}
	}
	return n;
}

static const char *verdict(const struct target *t)
{
	if (isnan(t->value))
		return "n/a";
	return (t->at_least ? t->value >= t->limit : t->value <= t->limit) ? "meets" : "MISSES";
}

static void print_table(void)
{
	static const struct {
		const char *label, *key, *fmt;
	} rows[] = {
	    {"64 B RTT p50 (us)", "rtt_p50_us", " %9.2f"},
	    {"64 B RTT p99 (us)", "rtt_p99_us", " %9.2f"},
	    {"1 MiB Write (GB/s)", "write_gbs", " %9.2f"},
	    {"1 MiB Read (GB/s)", "read_gbs", " %9.2f"},
	    {"TCP stream (GB/s)", "stream_gbs", " %9.2f"},
	};
	struct target t[64];
	char mach[256], date[64];
	time_t now = time(NULL);
	int m, k, i, n, meet;
	double lo = 0, hi = 0;

	machine(mach, sizeof(mach));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	printf("\nProvider benchmark, %s\nmachine: %s; load average %.2f at start\n", date, mach,
	       load_at_start);
	if (load_at_start > 1.0)
		printf(
		    "WARNING: the machine was busy (load %.2f on %ld CPUs): other processes share "
		    "the CPUs, figures are noisy; --repeat 3 reports medians\n",
		    load_at_start, sysconf(_SC_NPROCESSORS_ONLN));
	printf("placement: server on CPU %d, client on CPU %d (%s); loopback 127.0.0.1\n",
	       G.server_cpu, G.client_cpu, G.placement);
	if (G.impls & 1)
		printf("softiwarp blocking mode: %s\n",
		       G.progress_wait
			   ? "rpcrdma_dev_progress(dev, 1000) waits on the device fd"
			   : "poll() on rpcrdma_dev_fd(), then rpcrdma_dev_progress(dev, 0)");
	if (G.impls & 2)
		printf("libfabric blocking mode: %s\n",
		       G.progress_wait ? "fi_cq_sread() waits on the CQ"
				       : "fi_trywait() + poll() on the CQ's fd, then fi_cq_read()");
	if (same_cpu() && (G.modes & 2))
		printf("busy-polling on one CPU: workers sched_yield() after an empty poll\n");
	printf("RTT: 64-byte Send round trip; bandwidth: 1 MiB ops, %u in flight, %.1f s each; "
	       "GB/s = 1e9 B/s\n",
	       G.qd, G.seconds);
	if (G.repeat > 1)
		printf("every figure is the median of %u interleaved runs\n", G.repeat);
	putchar('\n');
	printf("%-6s %-20s %9s %9s %9s %9s %9s %9s %9s\n", "mode", "figure", "siw", "siw",
	       "libfabric", "plain", "siw/fab", "siw/fab", "siw/TCP");
	printf("%-6s %-20s %9s %9s %9s %9s %9s %9s %9s\n", "", "", "CRC off", "CRC on", "tcp",
	       "TCP", "CRC off", "CRC on", "CRC off");
	for (m = 0; m < 2; m++) {
		struct run *s0 = find(IMPL_SIW, (enum bench_mode)m, 0, 0);
		struct run *s1 = find(IMPL_SIW, (enum bench_mode)m, 1, 0);
		struct run *fa = find(IMPL_FABRIC, (enum bench_mode)m, -1, 0);
		struct run *tc = find(IMPL_TCP, (enum bench_mode)m, -1, 0);

		if (!(G.modes & (1u << m)))
			continue;
		for (k = 0; k < 5; k++) {
			const char *key = rows[k].key;
			int stream = !strcmp(key, "stream_gbs");

			printf("%-6s %-20s", mode_name[m], rows[k].label);
			cell(stream ? NAN : get(s0, key), 0);
			cell(stream ? NAN : get(s1, key), 0);
			cell(stream ? NAN : get(fa, key), 0);
			cell(get(tc, stream ? "stream_gbs" : k < 2 ? key : "-"), 0);
			cell(stream ? NAN : ratio(get(s0, key), get(fa, key)), 1);
			cell(stream ? NAN : ratio(get(s1, key), get(fa, key)), 1);
			cell(stream  ? ratio(get(s0, "write_gbs"), get(tc, key))
			     : k < 2 ? ratio(get(s0, key), get(tc, key))
				     : NAN,
			     1);
			putchar('\n');
		}
	}
	if (G.instr) {
		printf("\nuser-space instructions per 64 B round trip (blocking; %s):\n",
		       G.instr_tool);
		for (i = 0; i < IMPL_N; i++) {
			struct run *r = find((enum impl)i, BENCH_BLOCK, i == IMPL_SIW ? 0 : -1, 1);

			if (!r)
				continue;
			printf("  %-18s client %8.0f   server %8.0f\n", impl_name[i],
			       get(r, "client_instr_per_rtt"), get(r, "server_instr_per_rtt"));
		}
	}
	printf("(instructions: %s)\n", G.instr_why);

	n = targets(t);
	printf("\nissue 3 targets:\n");
	for (i = 0; i < n; i++) {
		printf("  %-46s", t[i].what);
		if (isnan(t[i].value))
			printf(" %9s", "-");
		else
			printf(" %9.3f", t[i].value);
		printf("  %s %.1f  %s", t[i].at_least ? ">=" : "<=", t[i].limit, verdict(&t[i]));
		if ((k = target_spread(&t[i], &lo, &hi, &meet)) > 0)
			printf("  (runs %.3f-%.3f, %d of %d meet)", lo, hi, meet, k);
		putchar('\n');
	}
	if (G.repeat > 1)
		printf("(a target's verdict is on the medians; each run's own ratio is in "
		       "brackets)\n");

	printf("\nruns:\n");
	for (i = 0; i < nruns; i++) {
		struct run *r = &runs[i];
		int j;

		printf("  %-18s %-5s %-8s%s: %s%s%s\n", impl_name[r->impl], mode_name[r->mode],
		       r->crc < 0 ? ""
		       : r->crc   ? "CRC on"
				  : "CRC off",
		       r->instr ? " callgrind" : "",
		       r->status == RUN_OK          ? "ok"
		       : r->status == RUN_NOT_BUILT ? "not built"
						    : "FAILED",
		       r->why[0] ? " - " : "", r->why);
		for (j = 0; j < r->ninfo && !r->instr; j++)
			printf("      %s\n", r->info[j]);
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_num(double v)
{
	if (isnan(v) || isinf(v))
		printf("null");
	else
		printf("%.10g", v);
}

static void print_json(void)
{
	struct target t[64];
	char mach[256], date[64];
	time_t now = time(NULL);
	int i, j, n, k, meet;
	double lo = 0, hi = 0;

	machine(mach, sizeof(mach));
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	printf("{\n  \"date\": ");
	json_str(date);
	printf(",\n  \"machine\": ");
	json_str(mach);
	printf(",\n  \"load_average_at_start\": ");
	json_num(load_at_start);
	printf(",\n  \"placement\": {\"server_cpu\": %d, \"client_cpu\": %d, \"kind\": ",
	       G.server_cpu, G.client_cpu);
	json_str(G.placement);
	printf("},\n  \"params\": {\"msg_bytes\": %u, \"rma_bytes\": %u, \"qd\": %u, "
	       "\"bw_seconds\": %g, \"rtt_iters\": %u, \"instr_iters\": %u, \"repeat\": %u, "
	       "\"siw_progress_wait\": %s},\n",
	       BENCH_MSG_SIZE, BENCH_BW_SIZE, G.qd, G.seconds, G.rtt_iters, G.instr_iters, G.repeat,
	       G.progress_wait ? "true" : "false");
	printf("  \"units\": {\"gbs\": \"1e9 bytes/s\", \"us\": \"microseconds\"},\n");
	printf("  \"instructions_method\": ");
	json_str(G.instr_why);
	printf(",\n  \"runs\": [\n");
	for (i = 0; i < nruns; i++) {
		struct run *r = &runs[i];

		printf("    {\"impl\": \"%s\", \"mode\": \"%s\", \"crc\": %s, \"callgrind\": %s, "
		       "\"status\": \"%s\", \"error\": ",
		       impl_key[r->impl], mode_name[r->mode],
		       r->crc < 0 ? "null"
		       : r->crc   ? "true"
				  : "false",
		       r->instr ? "true" : "false",
		       r->status == RUN_OK          ? "ok"
		       : r->status == RUN_NOT_BUILT ? "not_built"
						    : "failed");
		json_str(r->why);
		printf(",\n     \"results\": {");
		for (j = 0; j < r->nkv; j++) {
			printf("%s\"%s\": ", j ? ", " : "", r->kv[j].key);
			json_num(median(&r->kv[j]));
		}
		printf("},\n     \"samples\": {");
		for (j = 0; j < r->nkv; j++) {
			printf("%s\"%s\": [", j ? ", " : "", r->kv[j].key);
			for (k = 0; k < r->kv[j].n; k++) {
				printf("%s", k ? ", " : "");
				json_num(r->kv[j].v[k]);
			}
			printf("]");
		}
		printf("},\n     \"info\": [");
		for (j = 0; j < r->ninfo; j++) {
			printf("%s", j ? ", " : "");
			json_str(r->info[j]);
		}
		printf("]}%s\n", i + 1 < nruns ? "," : "");
	}
	printf("  ],\n  \"targets\": [\n");
	n = targets(t);
	for (i = 0; i < n; i++) {
		printf("    {\"what\": ");
		json_str(t[i].what);
		printf(", \"value\": ");
		json_num(t[i].value);
		printf(", \"limit\": %g, \"direction\": \"%s\", \"verdict\": \"%s\"", t[i].limit,
		       t[i].at_least ? ">=" : "<=", verdict(&t[i]));
		if ((k = target_spread(&t[i], &lo, &hi, &meet)) > 0)
			printf(", \"runs\": %d, \"runs_meeting\": %d, \"run_min\": %g, "
			       "\"run_max\": %g",
			       k, meet, lo, hi);
		printf("}%s\n", i + 1 < n ? "," : "");
	}
	printf("  ]\n}\n");
}

int main(int argc, char **argv)
{
	int i, rep, failed = 0;

	signal(SIGPIPE, SIG_IGN);
	parse(argc, argv);
	note_load();
	setup_instr();
	plan();
	if (!G.json)
		fprintf(stderr,
			"bench_provider: workers in %s; server CPU %d, client CPU %d (%s)\n", G.dir,
			G.server_cpu, G.client_cpu, G.placement);
	/* Repetitions are interleaved so every implementation sees the same
	 * spread of machine noise; callgrind counts are deterministic and run
	 * once. */
	for (rep = 0; rep < (int)G.repeat; rep++)
		for (i = 0; i < nruns; i++) {
			if (runs[i].instr && rep)
				continue;
			if (runs[i].status == RUN_NOT_BUILT)
				continue;
			runs[i].rep = rep;
			run_pair(&runs[i]);
		}
	for (i = 0; i < nruns; i++) {
		if (runs[i].status == RUN_FAILED) {
			failed = 1;
			fprintf(stderr, "bench_provider: %s %s%s: %s\n", impl_name[runs[i].impl],
				mode_name[runs[i].mode], runs[i].instr ? " (callgrind)" : "",
				runs[i].why);
		}
	}
	if (G.json)
		print_json();
	else
		print_table();
	return failed;
}
