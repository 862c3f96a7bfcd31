/* SPDX-License-Identifier: MIT */
/*
 * MOUNT v3 (RFC 1813 Appendix I) over TCP through libtirpc, registered
 * without rpcbind (the client is told the port: mountport=, mountproto=tcp).
 * MNT accepts "/" and the export's own path and answers the root's handle
 * with AUTH_SYS as the one flavor; DUMP is empty, UMNT and UMNTALL keep no
 * state, EXPORT lists the one export open to everyone.
 */
#include "mount3.h"
#include "nfs3d.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char export_arg[PATH_MAX]; /* set by main: --export as given */

void nfs3d_mount_set_alias(const char *path)
{
	snprintf(export_arg, sizeof(export_arg), "%s", path);
}

static bool path_is_export(const char *p)
{
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	if (n == 1 && p[0] == '/')
		return true;
	return (strlen(nfs3d_exp.root) == n && !strncmp(p, nfs3d_exp.root, n)) ||
	       (export_arg[0] && strlen(export_arg) == n && !strncmp(p, export_arg, n));
}

static void do_mnt(SVCXPRT *xprt)
{
	dirpath path = NULL;
	mountres3 res;
	int flavors[1] = {AUTH_UNIX};
	struct nfs3d_fh fh;
	struct stat st;
	uint32_t gen;
	memset(&res, 0, sizeof(res));
	if (!svc_getargs(xprt, (xdrproc_t)xdr_dirpath, (char *)&path)) {
		svcerr_decode(xprt);
		return;
	}
	if (!path_is_export(path)) {
		res.fhs_status = MNT3ERR_NOENT;
	} else if (nfs3d_lstat(nfs3d_exp.root, &st, &gen) != 0) {
		res.fhs_status = MNT3ERR_IO;
	} else {
		nfs3d_fh_make(&st, gen, &fh);
		res.fhs_status = MNT3_OK;
		res.mountres3_u.mountinfo.fhandle.fhandle3_len = fh.len;
		res.mountres3_u.mountinfo.fhandle.fhandle3_val = (char *)fh.data;
		res.mountres3_u.mountinfo.auth_flavors.auth_flavors_len = 1;
		res.mountres3_u.mountinfo.auth_flavors.auth_flavors_val = flavors;
	}
	svc_sendreply(xprt, (xdrproc_t)xdr_mountres3, (char *)&res);
	svc_freeargs(xprt, (xdrproc_t)xdr_dirpath, (char *)&path);
}

static bool_t xdr_nothing(XDR *xdrs, void *p)
{
	(void)xdrs;
	(void)p;
	return TRUE;
}

static void mount_prog(struct svc_req *rq, SVCXPRT *xprt)
{
	switch (rq->rq_proc) {
	case MOUNTPROC3_NULL:
	case MOUNTPROC3_UMNTALL:
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		break;
	case MOUNTPROC3_MNT:
		do_mnt(xprt);
		break;
	case MOUNTPROC3_DUMP: {
		mountlist none = NULL;
		svc_sendreply(xprt, (xdrproc_t)xdr_mountlist, (char *)&none);
		break;
	}
	case MOUNTPROC3_UMNT: {
		dirpath path = NULL;
		if (!svc_getargs(xprt, (xdrproc_t)xdr_dirpath, (char *)&path)) {
			svcerr_decode(xprt);
			break;
		}
		svc_freeargs(xprt, (xdrproc_t)xdr_dirpath, (char *)&path);
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		break;
	}
	case MOUNTPROC3_EXPORT: {
		struct groupnode everyone = {.gr_name = (char *)"*", .gr_next = NULL};
		struct exportnode ex = {
		    .ex_dir = nfs3d_exp.root, .ex_groups = &everyone, .ex_next = NULL};
		exports list = &ex;
		svc_sendreply(xprt, (xdrproc_t)xdr_exports, (char *)&list);
		break;
	}
	default:
		svcerr_noproc(xprt);
		break;
	}
}

static bool registered; /* MOUNT v3 is in rpcbind (nfs3d_mount_stop) */

int nfs3d_mount_start(const char *bind_addr, uint16_t port, bool reg, uint16_t *port_out)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	if (bind_addr && bind_addr[0] && inet_pton(AF_INET, bind_addr, &sin.sin_addr) != 1) {
		close(fd);
		return -EINVAL;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	SVCXPRT *xprt = svc_vc_create(fd, 0, 0);
	/* protocol 0: the dispatcher only, rpcbind is not told */
	if (!xprt || !svc_register(xprt, MOUNT_PROGRAM, MOUNT_V3, mount_prog, 0)) {
		close(fd);
		return -EIO;
	}
	*port_out = ntohs(sin.sin_port);
	if (reg) {
		/* rpcbind's version 2 interface (pmap_set): IPPROTO_TCP maps
		 * to netid tcp. An entry an earlier server left goes first. */
		pmap_unset(MOUNT_PROGRAM, MOUNT_V3);
		if (!pmap_set(MOUNT_PROGRAM, MOUNT_V3, IPPROTO_TCP, *port_out))
			return -ECONNREFUSED;
		registered = true;
	}
	return 0;
}

void nfs3d_mount_stop(void)
{
	if (registered)
		pmap_unset(MOUNT_PROGRAM, MOUNT_V3);
	registered = false;
}

void nfs3d_mount_poll(int timeout_ms)
{
	int n = poll(svc_pollfd, (nfds_t)svc_max_pollfd, timeout_ms);
	if (n > 0)
		svc_getreq_poll(svc_pollfd, n);
}
