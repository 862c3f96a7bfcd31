// SPDX-License-Identifier: MIT
/* rpcrdma-perf output: table with rdma/tcp ratios, CSV, JSON, gnuplot PNG. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perf_tool.h"

const char *perf_transport_name(enum perf_transport t)
{
	switch (t) {
	case PERF_T_RDMA:
		return "rdma";
	case PERF_T_TCP_SVC:
		return "tcp";
	case PERF_T_TCP_FORK:
		return "tcp-fork";
	}
	return "?";
}

const char *perf_workload_name(enum perf_workload w)
{
	switch (w) {
	case PERF_W_NULL:
		return "null";
	case PERF_W_WRITE:
		return "write";
	case PERF_W_READ:
		return "read";
	case PERF_W_ECHO:
		return "echo";
	case PERF_W_UNKNOWN:
		return "unknown";
	}
	return "?";
}

static const char *model_name(enum perf_transport t)
{
	switch (t) {
	case PERF_T_RDMA:
		return "rpcrdma";
	case PERF_T_TCP_SVC:
		return "svc_run";
	case PERF_T_TCP_FORK:
		return "fork";
	}
	return "?";
}

/* The RDMA result of the same workload, size and threads as @r. */
static const struct perf_result *rdma_peer(const struct perf_result *r, size_t n,
					   const struct perf_result *x)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].transport == PERF_T_RDMA && r[i].workload == x->workload &&
		    r[i].size == x->size && r[i].threads == x->threads && r[i].ops)
			return &r[i];
	return NULL;
}

void perf_report_table(FILE *f, const struct perf_result *r, size_t n)
{
	fprintf(f, "%-9s %-8s %-5s %9s %3s %3s %10s %10s %10s %9s %9s %9s %9s %s\n", "transport",
		"server", "work", "bytes", "T", "Q", "calls/s", "med100ms", "MB/s", "p50 us",
		"p99 us", "p99.9 us", "checked", "vs rdma");
	for (size_t i = 0; i < n; i++) {
		const struct perf_result *x = &r[i], *p = rdma_peer(r, n, x);

		fprintf(f,
			"%-9s %-8s %-5s %9u %3u %3u %10.0f %10.0f %10.1f %9.1f %9.1f %9.1f %9llu",
			perf_transport_name(x->transport), model_name(x->transport),
			perf_workload_name(x->workload), x->size, x->threads, x->inflight,
			x->ops_per_s, x->ops_per_s_med, x->mb_per_s, x->p50_us, x->p99_us,
			x->p999_us, (unsigned long long)x->verified);
		if (x->transport != PERF_T_RDMA && p && x->ops_per_s > 0 && x->p50_us > 0)
			fprintf(f, " rdma/tcp rate %.2fx, p50 %.2fx", p->ops_per_s / x->ops_per_s,
				p->p50_us / x->p50_us);
		if (x->errors || x->bad_data || x->first_error[0])
			fprintf(f, " ERRORS %llu BAD DATA %llu (%s)", (unsigned long long)x->errors,
				(unsigned long long)x->bad_data, x->first_error);
		fputc('\n', f);
	}
}

void perf_csv_header(FILE *f)
{
	fprintf(f, "transport,server_model,workload,size,threads,inflight,seconds,ops,ops_per_s,"
		   "mb_per_s,p50_us,p99_us,p999_us,mean_us,max_us,verified,errors,bad_data,"
		   "client_cpu,server_cpu,server_cpu_seen,credit_stalls,read_chunks,write_chunks,"
		   "long_calls,remote_inv,server_rss_kb,ops_per_s_med,srv_user_us,srv_sys_us,"
		   "srv_csw,cli_user_us,cli_sys_us,cli_csw\n");
}

void perf_csv_row(FILE *f, const struct perf_result *x)
{
	fprintf(
	    f,
	    "%s,%s,%s,%u,%u,%u,%.3f,%llu,%.1f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%llu,%llu,%llu,%d,%d,"
	    "%d,%llu,%llu,%llu,%llu,%llu,%llu,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
	    perf_transport_name(x->transport), model_name(x->transport),
	    perf_workload_name(x->workload), x->size, x->threads, x->inflight, x->seconds,
	    (unsigned long long)x->ops, x->ops_per_s, x->mb_per_s, x->p50_us, x->p99_us, x->p999_us,
	    x->mean_us, x->max_us, (unsigned long long)x->verified, (unsigned long long)x->errors,
	    (unsigned long long)x->bad_data, x->client_cpu, x->server_cpu_pinned,
	    x->server_cpu_seen, (unsigned long long)x->credit_stalls,
	    (unsigned long long)x->read_chunks, (unsigned long long)x->write_chunks,
	    (unsigned long long)x->long_calls, (unsigned long long)x->remote_inv,
	    (unsigned long long)x->server_rss_kb, x->ops_per_s_med, x->srv_user_us, x->srv_sys_us,
	    x->srv_csw, x->cli_user_us, x->cli_sys_us, x->cli_csw);
}

int perf_report_csv(const char *path, const struct perf_result *r, size_t n)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "rpcrdma-perf: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	perf_csv_header(f);
	for (size_t i = 0; i < n; i++)
		perf_csv_row(f, &r[i]);
	if (f != stdout)
		fclose(f);
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void machine(char *buf, size_t len)
{
	char line[256], model[128] = "unknown CPU";
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *c = strchr(line, ':');

			if (!strncmp(line, "model name", 10) && c) {
				snprintf(model, sizeof(model), "%s", c + 2);
				model[strcspn(model, "\n")] = 0;
				break;
			}
		}
		fclose(f);
	}
	uname(&u);
	snprintf(buf, len, "%s, %ld CPUs, Linux %s", model, sysconf(_SC_NPROCESSORS_ONLN),
		 u.release);
}

void perf_report_json(FILE *f, const struct perf_client_opts *o, const struct perf_result *r,
		      size_t n, const struct perf_conn_report *conn, const char *placement)
{
	char mach[300], date[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	machine(mach, sizeof(mach));
	fprintf(f, "{\n  \"tool\": \"rpcrdma-perf\",\n  \"date\": \"%s\",\n  \"machine\": ", date);
	json_str(f, mach);
	fprintf(f, ",\n  \"placement\": ");
	json_str(f, placement);
	fprintf(f, ",\n  \"params\": {\"host\": ");
	json_str(f, o->host);
	fprintf(f,
		", \"workload\": \"%s\", \"threads\": %u, \"inflight\": %u, \"duration_s\": %.3f, "
		"\"warmup_s\": %.3f, \"count\": %llu, \"client_cpu\": %d, \"mpa_crc\": %s, "
		"\"busy_poll\": %s, \"verify_every\": %u},\n",
		perf_workload_name(o->workload), o->threads, o->inflight, o->duration, o->warmup,
		(unsigned long long)o->count, o->cpu, o->crc ? "true" : "false",
		o->busy ? "true" : "false", o->verify_every);
	fprintf(f, "  \"units\": {\"mb_per_s\": \"1e6 payload bytes/s\", \"latency\": \"us, "
		   "round trip per call\"},\n");
	if (conn) {
		fprintf(
		    f,
		    "  \"connections\": {\"n\": %u, \"server_rss_kb_1\": %llu, "
		    "\"server_rss_kb_n\": %llu, \"server_rss_kb_n_active\": %llu, "
		    "\"server_hwm_kb\": %llu, \"server_connections_seen\": %u, \"credits\": %u, "
		    "\"write_size\": %u, \"client_rss_kb\": %llu, \"connect_us\": %llu},\n",
		    conn->connections, (unsigned long long)conn->rss_kb_1,
		    (unsigned long long)conn->rss_kb_n, (unsigned long long)conn->rss_kb_n_active,
		    (unsigned long long)conn->hwm_kb, conn->server_conns_seen, conn->credits,
		    conn->size, (unsigned long long)conn->client_rss_kb,
		    (unsigned long long)conn->connect_us);
	}
	fprintf(f, "  \"results\": [");
	for (size_t i = 0; i < n; i++) {
		const struct perf_result *x = &r[i], *p = rdma_peer(r, n, x);

		fprintf(
		    f,
		    "%s\n    {\"transport\": \"%s\", \"server_model\": \"%s\", \"workload\": "
		    "\"%s\", \"size\": %u, \"threads\": %u, \"inflight\": %u, \"seconds\": %.3f, "
		    "\"ops\": %llu, \"ops_per_s\": %.1f, \"mb_per_s\": %.2f, \"p50_us\": %.2f, "
		    "\"p99_us\": %.2f, \"p999_us\": %.2f, \"mean_us\": %.2f, \"max_us\": %.2f, "
		    "\"verified\": %llu, \"errors\": %llu, \"bad_data\": %llu, \"client_cpu\": %d, "
		    "\"server_cpu\": %d, \"server_cpu_seen\": %d, \"credit_stalls\": %llu, "
		    "\"read_chunks\": %llu, \"write_chunks\": %llu, \"long_calls\": %llu, "
		    "\"remote_invalidations\": %llu, \"server_rss_kb\": %llu, "
		    "\"ops_per_s_median_100ms\": %.1f, \"srv_user_us\": %.3f, \"srv_sys_us\": "
		    "%.3f, "
		    "\"srv_csw\": %.3f, \"cli_user_us\": %.3f, \"cli_sys_us\": %.3f, \"cli_csw\": "
		    "%.3f",
		    i ? "," : "", perf_transport_name(x->transport), model_name(x->transport),
		    perf_workload_name(x->workload), x->size, x->threads, x->inflight, x->seconds,
		    (unsigned long long)x->ops, x->ops_per_s, x->mb_per_s, x->p50_us, x->p99_us,
		    x->p999_us, x->mean_us, x->max_us, (unsigned long long)x->verified,
		    (unsigned long long)x->errors, (unsigned long long)x->bad_data, x->client_cpu,
		    x->server_cpu_pinned, x->server_cpu_seen, (unsigned long long)x->credit_stalls,
		    (unsigned long long)x->read_chunks, (unsigned long long)x->write_chunks,
		    (unsigned long long)x->long_calls, (unsigned long long)x->remote_inv,
		    (unsigned long long)x->server_rss_kb, x->ops_per_s_med, x->srv_user_us,
		    x->srv_sys_us, x->srv_csw, x->cli_user_us, x->cli_sys_us, x->cli_csw);
		if (x->transport != PERF_T_RDMA && p && x->ops_per_s > 0 && x->p50_us > 0)
			fprintf(f, ", \"rdma_over_this_rate\": %.3f, \"rdma_over_this_p50\": %.3f",
				p->ops_per_s / x->ops_per_s, p->p50_us / x->p50_us);
		fprintf(f, ", \"error\": ");
		json_str(f, x->first_error);
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
}

/* Throughput and p50 latency against payload size, one line per transport,
 * through gnuplot (PNG). */
int perf_report_plot(const char *png, const struct perf_result *r, size_t n)
{
	char dat[] = "/tmp/rpcrdma-perf-plot-XXXXXX";
	int fd = mkstemp(dat), rc = 0;
	FILE *d, *g;
	static const enum perf_transport ts[] = {PERF_T_RDMA, PERF_T_TCP_SVC, PERF_T_TCP_FORK};
	static const char *const names[] = {"rdma", "tcp (svc_run)", "tcp (fork)"};

	if (fd < 0)
		return -errno;
	d = fdopen(fd, "w");
	if (!d) {
		close(fd);
		unlink(dat);
		return -errno;
	}
	/* one gnuplot data block (blank-line separated) per transport that
	 * has results; gnuplot refuses to plot an empty block */
	char clauses[2][512] = {"", ""};
	int blocks = 0;

	for (size_t k = 0; k < 3; k++) {
		size_t have = 0;

		for (size_t i = 0; i < n; i++)
			if (r[i].transport == ts[k] && r[i].size && r[i].ops)
				have++;
		if (!have)
			continue;
		for (size_t i = 0; i < n; i++)
			if (r[i].transport == ts[k] && r[i].size && r[i].ops)
				fprintf(d, "%u %.2f %.2f\n", r[i].size, r[i].mb_per_s, r[i].p50_us);
		fprintf(d, "\n\n");
		for (int c = 0; c < 2; c++) {
			size_t l = strlen(clauses[c]);

			snprintf(clauses[c] + l, sizeof(clauses[c]) - l,
				 "%s'%s' index %d using 1:%d with linespoints title '%s'",
				 blocks ? ", " : "", dat, blocks, c + 2, names[k]);
		}
		blocks++;
	}
	fclose(d);
	if (!blocks) {
		unlink(dat);
		fprintf(stderr, "rpcrdma-perf: --plot: no sized results to plot\n");
		return -EINVAL;
	}
	/* x tics at the sizes measured, in binary units */
	char tics[1024] = "";
	for (size_t i = 0, l = 0; i < n && l < sizeof(tics) - 40; i++) {
		bool dup = false;

		if (!r[i].size || !r[i].ops)
			continue;
		for (size_t j = 0; j < i; j++)
			dup = dup || (r[j].size == r[i].size && r[j].ops);
		if (dup)
			continue;
		if (r[i].size >= (1u << 20) && !(r[i].size & ((1u << 20) - 1)))
			l += (size_t)snprintf(tics + l, sizeof(tics) - l, "%s\"%u MiB\" %u",
					      l ? ", " : "", r[i].size >> 20, r[i].size);
		else if (r[i].size >= 1024 && !(r[i].size & 1023))
			l += (size_t)snprintf(tics + l, sizeof(tics) - l, "%s\"%u KiB\" %u",
					      l ? ", " : "", r[i].size >> 10, r[i].size);
		else
			l += (size_t)snprintf(tics + l, sizeof(tics) - l, "%s\"%u B\" %u",
					      l ? ", " : "", r[i].size, r[i].size);
	}
	g = popen("gnuplot", "w");
	if (!g) {
		unlink(dat);
		return -errno;
	}
	fprintf(g,
		"set terminal pngcairo size 1200,500 noenhanced\n"
		"set output '%s'\n"
		"set multiplot layout 1,2 title 'rpcrdma-perf %s: RPC-over-RDMA (softiwarp) vs ONC "
		"RPC over TCP (libtirpc)'\n"
		"set logscale x 2\nset grid\nset key top left\nset xlabel 'payload bytes'\n"
		"set xtics (%s)\nset logscale y 10\n"
		"set ylabel 'MB/s (10^6 B/s)'\nplot %s\n"
		"set ylabel 'p50 round trip (us)'\nplot %s\n"
		"unset multiplot\n",
		png, perf_workload_name(r[0].workload), tics, clauses[0], clauses[1]);
	if (pclose(g) != 0) {
		fprintf(stderr, "rpcrdma-perf: gnuplot failed (is gnuplot installed?)\n");
		rc = -EIO;
	}
	unlink(dat);
	return rc;
}
