/* SPDX-License-Identifier: MIT */
/*
 * xdr_roundtrip: build an ONC RPC call header with AUTH_SYS credentials,
 * encode it through an XDR cursor spread over three small buffers (the way
 * an RPC-over-RDMA message is gathered), decode it back, print the bytes
 * and the decoded fields, and exit 1 if anything differs.
 *
 * Uses only the installed public API: #include <rpcrdma.h>, -lrpcrdma.
 */
#include <rpcrdma.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void hexdump(const struct iovec *iov, unsigned n)
{
	size_t at = 0;
	for (unsigned i = 0; i < n; i++) {
		const unsigned char *b = iov[i].iov_base;
		for (size_t j = 0; j < iov[i].iov_len; j++, at++) {
			if (at % 16 == 0)
				printf("%s%04zx ", at ? "\n" : "", at);
			printf(" %02x", b[j]);
		}
	}
	printf("\n");
}

int main(void)
{
	struct rpcrdma_rpc_call call, back;
	struct rpcrdma_rpc_authsys sys, sys_back;
	int rc;

	/* NFSv3 GETATTR (program 100003, version 3, procedure 1) */
	memset(&call, 0, sizeof(call));
	call.xid = 0x5450ea97u;
	call.rpcvers = RPCRDMA_RPC_VERS;
	call.prog = 100003;
	call.vers = 3;
	call.proc = 1;

	memset(&sys, 0, sizeof(sys));
	sys.stamp = 0x12345678u;
	if (gethostname(sys.machinename, sizeof(sys.machinename) - 1) != 0)
		strcpy(sys.machinename, "localhost");
	sys.uid = (uint32_t)getuid();
	sys.gid = (uint32_t)getgid();
	sys.ngids = 3;
	sys.gids[0] = 4;
	sys.gids[1] = 24;
	sys.gids[2] = 27;
	rc = rpcrdma_rpc_auth_sys(&call.cred, &sys);
	if (rc) {
		fprintf(stderr, "rpcrdma_rpc_auth_sys: %s\n", strerror(-rc));
		return 1;
	}
	rpcrdma_rpc_auth_none(&call.verf);

	/* Three buffers of awkward sizes: items straddle their edges. */
	unsigned char a[10], b[7], c[400];
	struct iovec iov[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
	struct rpcrdma_xdr x;
	rc = rpcrdma_xdr_init_iov(&x, iov, 3, RPCRDMA_XDR_ENCODE);
	if (rc == 0)
		rc = rpcrdma_rpc_encode_call(&x, &call);
	if (rc) {
		fprintf(stderr, "encode: %s\n", strerror(-rc));
		return 1;
	}
	size_t len = rpcrdma_xdr_getpos(&x);
	printf("encoded call header: %zu bytes over 3 iovecs (%zu+%zu+%zu)\n", len, sizeof(a),
	       sizeof(b), len - sizeof(a) - sizeof(b));
	iov[2].iov_len = len - sizeof(a) - sizeof(b);
	hexdump(iov, 3);

	rc = rpcrdma_xdr_init_iov(&x, iov, 3, RPCRDMA_XDR_DECODE);
	if (rc == 0)
		rc = rpcrdma_rpc_decode_call(&x, &back);
	if (rc == 0)
		rc = rpcrdma_rpc_auth_get_sys(&back.cred, &sys_back);
	if (rc) {
		fprintf(stderr, "decode: %s\n", strerror(-rc));
		return 1;
	}
	printf("xid 0x%08x rpcvers %u prog %u vers %u proc %u\n", back.xid, back.rpcvers, back.prog,
	       back.vers, back.proc);
	printf("cred AUTH_SYS (%u bytes): stamp 0x%08x machine \"%s\" uid %u gid %u gids",
	       back.cred.len, sys_back.stamp, sys_back.machinename, sys_back.uid, sys_back.gid);
	for (uint32_t i = 0; i < sys_back.ngids; i++)
		printf(" %u", sys_back.gids[i]);
	printf("\nverf flavor %u length %u\n", back.verf.flavor, back.verf.len);

	struct rpcrdma_rpc_reply reply;
	int verdict = rpcrdma_rpc_check_call(&back, RPCRDMA_RPC_FLAVORS_DEFAULT, &reply);
	printf("server admission: %s\n", verdict == 0 ? "dispatch" : "refuse");

	int same = rpcrdma_xdr_remaining(&x) == 0 && memcmp(&call, &back, sizeof(call)) == 0 &&
		   memcmp(&sys, &sys_back, sizeof(sys)) == 0 && verdict == 0;
	printf("round trip: %s\n", same ? "identical" : "MISMATCH");
	return same ? 0 : 1;
}
