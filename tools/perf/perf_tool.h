/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma-perf internals: the data pattern and checksum both sides agree
 * on, the latency histogram, the server and the client runners, and the
 * report (table, CSV, JSON, gnuplot).
 */
#ifndef RPCRDMA_PERF_TOOL_H
#define RPCRDMA_PERF_TOOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rpcrdma_clnt;

/* ---- pattern (perf_pattern.c) ---- */

/* Largest payload one call may carry, and the span of offsets clients use:
 * the server's pattern covers [0, PERF_MAX_SIZE + PERF_NOFF * PERF_OFF_STEP). */
#define PERF_MAX_SIZE (8u << 20)
#define PERF_NOFF     13u /* distinct offsets per size; prime, see perf_client.c */
#define PERF_OFF_STEP 4096u

/* The pattern bytes [0, PERF_MAX_SIZE + PERF_NOFF * PERF_OFF_STEP): the
 * 64-bit word at byte offset 8k is a mix of k alone, so any process derives
 * the same bytes. Built on first use (thread-safe); never freed. */
const uint8_t *perf_pattern(void);
size_t perf_pattern_len(void);
/* 64-bit position-dependent checksum of @n bytes (Fletcher-64 in four
 * lanes, then mixed): about memory speed. */
uint64_t perf_sum(const void *p, size_t n);

/* ---- latency histogram (perf_hist.c) ---- */

/* Log-linear buckets of nanoseconds, 1/32 relative precision, 1 ns .. ~1 h.
 * Counters are atomics so completions from any thread can record. */
#define PERF_HIST_SUB     32u
#define PERF_HIST_BUCKETS (PERF_HIST_SUB * 42u)
struct perf_hist {
	_Atomic uint64_t b[PERF_HIST_BUCKETS];
	_Atomic uint64_t count, sum_ns, max_ns;
};
void perf_hist_add(struct perf_hist *h, uint64_t ns);
void perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src);
/* Value (ns) below which a fraction @q of the samples fall. */
double perf_hist_quantile(const struct perf_hist *h, double q);
uint64_t perf_now_ns(void);
/* This process's CPU time (ns) and context switches, every thread. */
void perf_rusage(uint64_t *user_ns, uint64_t *sys_ns, uint64_t *csw);

/* ---- server (perf_server.c) ---- */

struct perf_server_opts {
	uint16_t port, tcp_port, tcp_fork_port;
	bool port_any;    /* --port 0: let the kernel pick */
	const char *bind; /* --bind ADDR: listen on this address only (NULL: all) */
	bool tcp;         /* serve TCP too (default) */
	uint32_t threads, credits;
	int cpu;     /* -1: not pinned */
	bool busy;   /* busy-poll progress */
	bool nospin; /* --no-spin: progress that never busy-polls */
	bool crc;    /* MPA CRC32c */
	/* Tests only: answer WRITE with a wrong checksum and READ with the
	 * bytes 8 further on, so a test can see the client's checks fail. */
	bool corrupt;
	/* Tests only: refuse every second WRITE with an RPC error. */
	bool refuse_writes;
	/* --register: with the local rpcbind (netids rdma, rdma6) */
	bool rpcbind;
	/* --rdma-version: RPCRDMA_VERSION_1 (default) or _2 (Version Two capable) */
	int rdma_version;
	uint32_t inline_size; /* --inline: both thresholds (0: the default) */
	bool no_pdata;        /* --no-private-data: no RFC 8797 private data */
	/* --reliable-reply: expose replies that fit nothing the client
	 * offered in a Read chunk (RPCRDMA_SVC_OPT_RELIABLE_REPLY) */
	bool reliable_reply;
	/* --srq-depth: RPCRDMA_SVC_OPT_SRQ (srq_set: given; 0 turns the
	 * shared receive queue off) */
	bool srq_set;
	uint32_t srq_depth;
};
int perf_server_main(const struct perf_server_opts *o);

/* ---- client (perf_client.c) ---- */

enum perf_workload { PERF_W_NULL, PERF_W_WRITE, PERF_W_READ, PERF_W_ECHO, PERF_W_UNKNOWN };
enum perf_transport { PERF_T_RDMA, PERF_T_TCP_SVC, PERF_T_TCP_FORK };

struct perf_client_opts {
	const char *host;
	uint16_t port, tcp_port, tcp_fork_port;
	enum perf_workload workload;
	uint32_t sizes[32];
	uint32_t nsizes;
	uint32_t threads, inflight;
	double duration, warmup;
	uint64_t count; /* calls per thread instead of a duration (0: duration) */
	int cpu;
	bool peer_rdma, peer_tcp;
	bool tcp_svc, tcp_fork; /* which TCP server models */
	bool busy, nospin, crc;
	/* --rdma-version: RPCRDMA_VERSION_1 (default), _AUTO or _2 */
	int rdma_version;
	uint32_t inline_size; /* --inline: both thresholds (0: the default) */
	bool no_pdata;        /* --no-private-data: no RFC 8797 private data */
	bool progress;        /* live line on stderr */
	bool json;
	uint32_t verify_every; /* check every Nth payload of each slot (1: all) */
	uint32_t connections;  /* --connections N mode */
	uint32_t hold_s;       /* --hold S: keep them open S s more */
	const char *csv, *plot;
	/* --workload unknown (perf_unknown.c) */
	uint64_t seed;  /* --seed: of the reply size sequence */
	uint32_t block; /* --block: calls per block, the modes alternating */
};

/* One measured case. */
struct perf_result {
	enum perf_transport transport;
	enum perf_workload workload;
	uint32_t size, threads, inflight;
	double seconds;
	uint64_t ops, errors, verified, bad_data;
	double ops_per_s, mb_per_s; /* MB = 10^6 bytes of payload */
	/* Median of the calls/s of each 100 ms of the window: what the
	 * transport does between the stalls a busy machine causes. */
	double ops_per_s_med;
	double p50_us, p99_us, p999_us, mean_us, max_us;
	int client_cpu, server_cpu_pinned, server_cpu_seen;
	uint64_t server_rss_kb; /* server process VmRSS after the run */
	char first_error[96];
	/* the case never ran: a connection could not be made (first_error
	 * says why); reported as an error, not as a row of zeros */
	bool no_connection;
	/* RDMA transport counters over the run (client side). */
	uint64_t credit_stalls, read_chunks, write_chunks, long_calls, remote_inv;
	/* CPU time and context switches per completed call of each process
	 * (every thread; getrusage), from the server's PERF_INFO and the
	 * client's own before the first call and after the last: warm-up
	 * included, connection set-up not; -1 when unknown. */
	double srv_user_us, srv_sys_us, srv_csw, cli_user_us, cli_sys_us, cli_csw;
};

/* --connections N at most: a bound on what one process can hold (the
 * open-files limit stops it sooner; it says so). */
#define PERF_MAX_CONNECTIONS 20000u

/* Server RSS by connection count (--connections). */
struct perf_conn_report {
	uint32_t connections;
	uint64_t rss_kb_1, rss_kb_n, rss_kb_n_active, hwm_kb;
	uint32_t server_conns_seen, credits, size;
	uint64_t client_rss_kb;
	uint64_t connect_us; /* all N connected (each with its first call) */
};
/* --connections N (perf_conns.c): 0, or nonzero once it has said why on
 * stderr. */
int perf_connections_mode(const struct perf_client_opts *o, struct perf_conn_report *rep);

int perf_client_main(const struct perf_client_opts *o);
/* One RPC-over-RDMA connection with the options of @o, for @inflight
 * calls at once; @reliable_reply: RPCRDMA_CLNT_OPT_RELIABLE_REPLY. */
int perf_rdma_connect(const struct perf_client_opts *o, uint32_t inflight, bool reliable_reply,
		      struct rpcrdma_clnt **out);

/* ---- --workload unknown (perf_unknown.c) ---- */

/* Largest reply payload: the whole RPC reply (24-byte accepted reply
 * header, 4-byte length, payload) fits the 1 MiB Reply chunk the
 * comparison mode offers. */
#define PERF_UNKNOWN_MAX   (1048576u - 64u)
#define PERF_UNKNOWN_MIN   100u
#define PERF_UNKNOWN_SMALL 4096u /* 90% of the sizes are at most this */
#define PERF_UNKNOWN_CHUNK 1048576u
/* Payload size of call @i of the sequence @seed (see perf_unknown.c). */
uint32_t perf_unknown_size(uint64_t seed, uint64_t i);
int perf_unknown_main(const struct perf_client_opts *o);

/* ---- report (perf_report.c) ---- */

const char *perf_transport_name(enum perf_transport t);
const char *perf_workload_name(enum perf_workload w);
void perf_report_table(FILE *f, const struct perf_result *r, size_t n);
int perf_report_csv(const char *path, const struct perf_result *r, size_t n);
void perf_report_json(FILE *f, const struct perf_client_opts *o, const struct perf_result *r,
		      size_t n, const struct perf_conn_report *conn, const char *placement);
int perf_report_plot(const char *png, const struct perf_result *r, size_t n);
void perf_csv_header(FILE *f);
void perf_csv_row(FILE *f, const struct perf_result *r);

#endif
