// SPDX-License-Identifier: MIT
/*
 * An rpcgen program (calc.x, generated at build time with Debian's rpcgen:
 * header, XDR routines, client stubs and the -m server dispatcher) served
 * and called over RPC-over-RDMA without changing a line of the generated
 * code: the server registers calc_prog_1 with rpcrdma_svc_register_tirpc,
 * the client calls sum_1/greet_1/hash_1 through rpcrdma_clnt_tirpc's
 * CLIENT. HASH's argument holds an rpcrdma_bulk, which travels by Read
 * chunk; the same generated routines also round-trip over libtirpc's
 * xdrmem (plain opaque<> there).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "xprt/xprt_test.h"

void calc_prog_1(struct svc_req *rqstp, SVCXPRT *transp);

/* ---- server procedures (what an rpcgen user writes) ---- */

int *sum_1_svc(calc_args *a, struct svc_req *rq)
{
	static int r;

	(void)rq;
	r = 0;
	for (u_int i = 0; i < a->vals.vals_len; i++)
		r += a->vals.vals_val[i];
	return &r;
}

char **greet_1_svc(char **name, struct svc_req *rq)
{
	static char buf[300];
	static char *p = buf;

	(void)rq;
	snprintf(buf, sizeof(buf), "hello %s", *name);
	return &p;
}

u_quad_t *hash_1_svc(blob *b, struct svc_req *rq)
{
	static u_quad_t h;

	(void)rq;
	h = xt_hash(b->data.base, b->data.len) ^ b->seed;
	return &h;
}

int calc_prog_1_freeresult(SVCXPRT *t, xdrproc_t x, caddr_t r)
{
	(void)t;
	xdr_free(x, r);
	return 1;
}

static void reg(struct rpcrdma_svc *svc)
{
	if (rpcrdma_svc_register_tirpc(svc, CALC_PROG, CALC_V1, calc_prog_1))
		xt_failures++;
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	struct rpcrdma_xprt_stats st;
	CLIENT *cl;
	int vals[5] = {1, 2, 3, 4, 1000};
	calc_args ca = {{5, vals}};
	char namebuf[] = "rdma", *name = namebuf, **g;
	int *s;
	u_quad_t *h;
	uint32_t len = 200001;
	blob b = {{malloc(len), len, 0}, 17};

	signal(SIGPIPE, SIG_IGN);
	xt_fill(b.data.base, len, 5);
	if (xt_server_start(&srv, NULL, reg))
		return 1;
	if (rpcrdma_clnt_create(tl_addr(), srv.port, CALC_PROG, CALC_V1, NULL, &c)) {
		xt_server_stop(&srv);
		return 1;
	}
	cl = rpcrdma_clnt_tirpc(c);
	XT_CHECK(cl != NULL);
	s = sum_1(&ca, cl);
	XT_CHECK(s && *s == 1010);
	g = greet_1(&name, cl);
	XT_CHECK(g && *g && strcmp(*g, "hello rdma") == 0);
	if (g)
		clnt_freeres(cl, (xdrproc_t)xdr_wrapstring, (char *)g);
	h = hash_1(&b, cl);
	XT_CHECK(h && *h == (xt_hash(b.data.base, len) ^ 17));
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.read_chunks == 1 && st.read_bytes == len && st.replies == 3);

	/* The generated routines over libtirpc's own stream. */
	{
		char *mem = malloc(len + 64);
		XDR x;
		blob out = {{NULL, 0, 0}, 0};

		xdrmem_create(&x, mem, len + 64, XDR_ENCODE);
		XT_CHECK(xdr_blob(&x, &b));
		XT_CHECK(xdr_getpos(&x) == 4 + RPCRDMA_XDR_ROUNDUP(len) + 4);
		xdrmem_create(&x, mem, len + 64, XDR_DECODE);
		XT_CHECK(xdr_blob(&x, &out));
		XT_CHECK(out.data.len == len && out.seed == 17 &&
			 memcmp(out.data.base, b.data.base, len) == 0);
		xdr_free((xdrproc_t)xdr_blob, (char *)&out);
		XT_CHECK(out.data.base == NULL);
		free(mem);
	}
	clnt_destroy(cl);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	free(b.data.base);
	return xt_result();
}
