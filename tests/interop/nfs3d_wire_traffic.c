// SPDX-License-Identifier: MIT
/*
 * Traffic for nfs3d_wire.sh (ctest test_nfs3d_wire, label wire): starts
 * rpcrdma-nfs3d on the port in $NFS3D_WIRE_PORT over an export of 33
 * small files (READDIRPLUS's reply then outgrows the inline threshold and
 * comes in the Reply chunk), mounts it (MOUNT v3 over TCP, not captured), and sends over
 * RPC-over-RDMA FSINFO, GETATTR, LOOKUP, READ, WRITE, ACCESS, PATHCONF,
 * READDIR and READDIRPLUS. Each reply is decoded by rpcgen's routines of
 * xdr/nfs3.x and printed as one line of the fields tshark's NFS dissector
 * reports for it, in tshark's -T fields format (nfs3d_wire.sh's list):
 *   REPLY|procedure|status|fattr3 types|fattr3 sizes|fattr3 fileids|
 *        handles (hex)|entry names|entry fileids|READ/WRITE count|
 *        READ data (hex)|ACCESS rights|PATHCONF name_max|READDIR* eof
 * with every occurrence in reply order, comma-separated.
 * usage: NFS3D_WIRE_PORT=P NFS3D_BIN=PATH-TO-rpcrdma-nfs3d nfs3d_wire_traffic
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <rpc/rpc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpcrdma/client.h"

#include "nfs3.h" /* rpcgen, xdr/nfs3.x */
#include "nfs3d_tclnt.h"

static CLIENT *nfs;

/* One reply's line, field by field */
enum {
	F_TYPE,
	F_SIZE,
	F_FILEID,
	F_FH,
	F_NAME,
	F_EFILEID,
	F_COUNT,
	F_DATA,
	F_ACCESS,
	F_NAMEMAX,
	F_EOF,
	NF
};
static char fields[NF][8192];

static void add(int f, const char *fmt, ...)
{
	char v[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	size_t n = strlen(fields[f]);
	snprintf(fields[f] + n, sizeof(fields[f]) - n, "%s%s", n ? "," : "", v);
}

static void add_hex(int f, const void *p, size_t len)
{
	char v[2 * NFS3_FHSIZE + 1] = "";
	for (size_t i = 0; i < len && 2 * i + 2 < sizeof(v); i++)
		sprintf(v + 2 * i, "%02x", ((const unsigned char *)p)[i]);
	add(f, "%s", v);
}

static void add_fattr(const fattr3 *a)
{
	add(F_TYPE, "%u", (unsigned)a->type);
	add(F_SIZE, "%llu", (unsigned long long)a->size);
	add(F_FILEID, "%llu", (unsigned long long)a->fileid);
}

static void add_post(const post_op_attr *p)
{
	if (p->attributes_follow)
		add_fattr(&p->post_op_attr_u.attributes);
}

static void add_fh(const nfs_fh3 *h)
{
	add_hex(F_FH, h->data.data_val, h->data.data_len);
}

static void print_reply(rpcproc_t proc, nfsstat3 status)
{
	printf("REPLY|%u|%u", (unsigned)proc, (unsigned)status);
	for (int f = 0; f < NF; f++) {
		printf("|%s", fields[f]);
		fields[f][0] = '\0';
	}
	printf("\n");
}

#define CALL(P, NAME, a, r)                                                                        \
	nfs3d_call(nfs, P, (xdrproc_t)xdr_##NAME##3args, &(a), (xdrproc_t)xdr_##NAME##3res, &(r),  \
		   stderr)

static void put_file(const char *dir, const char *fname, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, fname);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror("write");
		fchmod(fd, 0666);
		close(fd);
	}
}

/* The traffic itself: every reply printed; 0, or -1 if a call failed. */
static int traffic(const nfs_fh3 *root)
{
	int rc = 0;
	{
		FSINFO3args a = {.fsroot = *root};
		FSINFO3res r = {0};
		rc |= CALL(NFSPROC3_FSINFO, FSINFO, a, r);
		add_post(&r.FSINFO3res_u.resok.obj_attributes);
		print_reply(NFSPROC3_FSINFO, r.status);
		xdr_free((xdrproc_t)xdr_FSINFO3res, &r);
	}
	{
		GETATTR3args a = {.object = *root};
		GETATTR3res r = {0};
		rc |= CALL(NFSPROC3_GETATTR, GETATTR, a, r);
		if (r.status == NFS3_OK)
			add_fattr(&r.GETATTR3res_u.resok.obj_attributes);
		print_reply(NFSPROC3_GETATTR, r.status);
		xdr_free((xdrproc_t)xdr_GETATTR3res, &r);
	}
	char hbuf[NFS3_FHSIZE];
	nfs_fh3 hello = {.data = {.data_len = 0, .data_val = hbuf}};
	{
		char fname[] = "hello";
		LOOKUP3args a = {.what = {.dir = *root, .name = fname}};
		LOOKUP3res r = {0};
		rc |= CALL(NFSPROC3_LOOKUP, LOOKUP, a, r);
		LOOKUP3resok *ok = &r.LOOKUP3res_u.resok;
		if (r.status == NFS3_OK && ok->object.data.data_len <= NFS3_FHSIZE) {
			add_fh(&ok->object);
			add_post(&ok->obj_attributes);
			add_post(&ok->dir_attributes);
			hello.data.data_len = ok->object.data.data_len;
			memcpy(hbuf, ok->object.data.data_val, hello.data.data_len);
		}
		print_reply(NFSPROC3_LOOKUP, r.status);
		xdr_free((xdrproc_t)xdr_LOOKUP3res, &r);
	}
	{
		char fname[] = "absent";
		LOOKUP3args a = {.what = {.dir = *root, .name = fname}};
		LOOKUP3res r = {0};
		rc |= CALL(NFSPROC3_LOOKUP, LOOKUP, a, r);
		add_post(&r.LOOKUP3res_u.resfail.dir_attributes);
		print_reply(NFSPROC3_LOOKUP, r.status);
		xdr_free((xdrproc_t)xdr_LOOKUP3res, &r);
	}
	{
		WRITE3args a = {.file = hello, .offset = 6, .count = 5, .stable = FILE_SYNC};
		WRITE3res r = {0};
		char data[] = "wire!";
		a.data.base = data;
		a.data.len = 5;
		rc |= CALL(NFSPROC3_WRITE, WRITE, a, r);
		WRITE3resok *ok = &r.WRITE3res_u.resok;
		add_post(&ok->file_wcc.after);
		if (r.status == NFS3_OK)
			add(F_COUNT, "%u", ok->count);
		print_reply(NFSPROC3_WRITE, r.status);
		xdr_free((xdrproc_t)xdr_WRITE3res, &r);
	}
	{
		READ3args a = {.file = hello, .offset = 0, .count = 64};
		READ3res r = {0};
		rc |= CALL(NFSPROC3_READ, READ, a, r);
		READ3resok *ok = &r.READ3res_u.resok;
		add_post(&ok->file_attributes);
		if (r.status == NFS3_OK) {
			add(F_COUNT, "%u", ok->count);
			add_hex(F_DATA, ok->data.base, ok->data.len);
		}
		print_reply(NFSPROC3_READ, r.status);
		xdr_free((xdrproc_t)xdr_READ3res, &r);
	}
	{
		ACCESS3args a = {.object = hello, .access = ACCESS3_READ | ACCESS3_MODIFY};
		ACCESS3res r = {0};
		rc |= CALL(NFSPROC3_ACCESS, ACCESS, a, r);
		add_post(&r.ACCESS3res_u.resok.obj_attributes);
		if (r.status == NFS3_OK)
			add(F_ACCESS, "0x%02x", r.ACCESS3res_u.resok.access);
		print_reply(NFSPROC3_ACCESS, r.status);
		xdr_free((xdrproc_t)xdr_ACCESS3res, &r);
	}
	{
		PATHCONF3args a = {.object = *root};
		PATHCONF3res r = {0};
		rc |= CALL(NFSPROC3_PATHCONF, PATHCONF, a, r);
		add_post(&r.PATHCONF3res_u.resok.obj_attributes);
		if (r.status == NFS3_OK)
			add(F_NAMEMAX, "%u", r.PATHCONF3res_u.resok.name_max);
		print_reply(NFSPROC3_PATHCONF, r.status);
		xdr_free((xdrproc_t)xdr_PATHCONF3res, &r);
	}
	{
		READDIR3args a = {.dir = *root, .cookie = 0, .count = 4096};
		READDIR3res r = {0};
		rc |= CALL(NFSPROC3_READDIR, READDIR, a, r);
		READDIR3resok *ok = &r.READDIR3res_u.resok;
		add_post(&ok->dir_attributes);
		for (entry3 *e = r.status == NFS3_OK ? ok->reply.entries : NULL; e;
		     e = e->nextentry) {
			add(F_NAME, "%s", e->name);
			add(F_EFILEID, "%llu", (unsigned long long)e->fileid);
		}
		if (r.status == NFS3_OK)
			add(F_EOF, "%d", ok->reply.eof);
		print_reply(NFSPROC3_READDIR, r.status);
		xdr_free((xdrproc_t)xdr_READDIR3res, &r);
	}
	{
		READDIRPLUS3args a = {
		    .dir = *root, .cookie = 0, .dircount = 16384, .maxcount = 16384};
		READDIRPLUS3res r = {0};
		rc |= CALL(NFSPROC3_READDIRPLUS, READDIRPLUS, a, r);
		READDIRPLUS3resok *ok = &r.READDIRPLUS3res_u.resok;
		add_post(&ok->dir_attributes);
		for (entryplus3 *e = r.status == NFS3_OK ? ok->reply.entries : NULL; e;
		     e = e->nextentry) {
			add(F_NAME, "%s", e->name);
			add(F_EFILEID, "%llu", (unsigned long long)e->fileid);
			add_post(&e->name_attributes);
			if (e->name_handle.handle_follows)
				add_fh(&e->name_handle.post_op_fh3_u.handle);
		}
		if (r.status == NFS3_OK)
			add(F_EOF, "%d", ok->reply.eof);
		print_reply(NFSPROC3_READDIRPLUS, r.status);
		xdr_free((xdrproc_t)xdr_READDIRPLUS3res, &r);
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *env = getenv("NFS3D_WIRE_PORT"), *bin = getenv("NFS3D_BIN");
	(void)argv;
	if (argc != 1 || !env || !bin) {
		fprintf(stderr, "usage: NFS3D_WIRE_PORT=P NFS3D_BIN=PATH nfs3d_wire_traffic\n");
		return 2;
	}
	char dir[] = "/tmp/nfs3d-wire.XXXXXX";
	if (!mkdtemp(dir) || chmod(dir, 0777) != 0)
		return 1;
	put_file(dir, "hello", "hello world\n");
	put_file(dir, "second", "2");
	put_file(dir, "third", "");
	for (int i = 0; i < 30; i++) {
		char n[64];
		snprintf(n, sizeof(n), "a-longer-name-for-entry-%02d-of-readdirplus", i);
		put_file(dir, n, "");
	}
	/* whole lines before the server's counters, on the same stream */
	setvbuf(stdout, NULL, _IOLBF, 0);
	int pfd[2];
	if (pipe(pfd) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(bin, "rpcrdma-nfs3d", "--export", dir, "--port", env, "--mount-port", "0",
		      "--bind", "127.0.0.1", (const char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	uint16_t np = 0, mp = 0;
	int rc = 1;
	char rbuf[NFS3_FHSIZE];
	nfs_fh3 root = {.data = {.data_len = 0, .data_val = rbuf}};
	struct rpcrdma_clnt *cl = NULL;
	if (nfs3d_ready(pfd[0], &np, &mp) != 0 || nfs3d_mnt(mp, rbuf, &root.data.data_len) != 0) {
		fprintf(stderr, "nfs3d_wire_traffic: server did not start or mount failed\n");
		goto out;
	}
	if (!(nfs = nfs3d_connect(np, &cl))) {
		fprintf(stderr, "nfs3d_wire_traffic: no connection\n");
		goto out;
	}
	rc = traffic(&root) ? 1 : 0;
	clnt_destroy(nfs);
out:
	if (cl)
		rpcrdma_clnt_destroy(cl);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
