/* SPDX-License-Identifier: MIT */
/*
 * The verbs provider's device: listing (like ibv_devices), open and close,
 * capabilities, the device fd and progress, protection domains.
 *
 * Progress. Completions stay in the hardware CQ until someone polls it, but
 * rpcrdma_dev_progress() must say how many it produced (the transport polls
 * its CQ only then): so progress moves them into each CQ's ring
 * (verbs_cq_harvest) and counts them. rdma_cm events are taken here too.
 * To wait, progress arms every CQ (ibv_req_notify_cq), looks once more (the
 * race between the last poll and the arming), then sleeps in epoll_wait on
 * the device fd: an epoll set of the rdma_cm channel and every CQ's
 * completion channel.
 *
 * Protection domains: an rpcrdma_pd is one ibv_pd of the device, made when
 * the caller asks (not per connection): the transport registers its pools
 * before any connection exists and serves many connections from one PD,
 * and rdma_cm lets the device be fixed before connecting (verbs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "provider/verbs/verbs.h"
#include "util/log.h"

uint64_t verbs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int verbs_errno(int fallback)
{
	return errno > 0 ? -errno : -fallback;
}

static const char *transport_name(struct ibv_context *ctx, struct ibv_device *dev, uint32_t *ports,
				  bool *active)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;

	*ports = 0;
	*active = false;
	if (dev->transport_type == IBV_TRANSPORT_IWARP && !ctx)
		return "iWARP";
	if (!ctx)
		return "unknown";
	if (ibv_query_device(ctx, &da) == 0)
		*ports = da.phys_port_cnt;
	if (ibv_query_port(ctx, 1, &pa) != 0)
		return dev->transport_type == IBV_TRANSPORT_IWARP ? "iWARP" : "unknown";
	*active = pa.state == IBV_PORT_ACTIVE;
	if (dev->transport_type == IBV_TRANSPORT_IWARP)
		return "iWARP";
	if (dev->transport_type == IBV_TRANSPORT_IB)
		return pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand";
	return "unknown";
}

static int verbs_list(struct rpcrdma_dev_info *out, int n)
{
	struct ibv_device **list;
	int num = 0;

	list = ibv_get_device_list(&num);
	if (!list)
		return 0; /* no RDMA support in the kernel at all: no device */
	for (int i = 0; i < num && i < n; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);

		memset(&out[i], 0, sizeof(out[i]));
		snprintf(out[i].name, sizeof(out[i].name), "%s", ibv_get_device_name(list[i]));
		snprintf(out[i].transport, sizeof(out[i].transport), "%s",
			 transport_name(ctx, list[i], &out[i].ports, &out[i].active));
		out[i].node_guid = be64toh(ibv_get_device_guid(list[i]));
		if (ctx)
			ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return num;
}

/* librdmacm's context of device @name (NULL: the first with an active
 * port 1, else the first). */
static struct ibv_context *pick(struct ibv_context **list, int num, const char *name)
{
	struct ibv_port_attr pa;

	for (int i = 0; i < num; i++) {
		const char *dn = ibv_get_device_name(list[i]->device);

		if (name && strcmp(dn, name) == 0)
			return list[i];
		if (!name && ibv_query_port(list[i], 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE)
			return list[i];
	}
	return !name && num > 0 ? list[0] : NULL;
}

int verbs_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? verbs_errno(EIO) : 0;
}

static int epoll_add(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};

	if (verbs_set_nonblock(fd))
		return verbs_errno(EIO);
	ev.data.fd = fd;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? verbs_errno(EIO) : 0;
}

static struct rpcrdma_dev_ops verbs_ops;

/* The process that made librdmacm open its device contexts (0: none yet). */
static pid_t cm_pid;

static int dev_setup(struct vdev *d, const char *name)
{
	pid_t me = getpid(), first = 0;
	int num = 0, rc;

	/* librdmacm opens its contexts once per process image, and a forked
	 * child inherits them: the kernel refuses the child's commands on the
	 * parent's uverbs file ("changed security contexts after opening
	 * file descriptor", seen in the guest), so connections set up there
	 * go nowhere. Say so instead. */
	if (!__atomic_compare_exchange_n(&cm_pid, &first, me, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE) &&
	    first != me) {
		RLOG_PEER(RPCRDMA_LOG_ERR, "verbs", NULL,
			  "device opened in a child of the process that first opened one "
			  "(pid %d): rdma-core's state does not survive fork()",
			  (int)first);
		return -ENODEV;
	}
	d->ctx_list = rdma_get_devices(&num);
	if (!d->ctx_list || num == 0)
		return -ENODEV;
	d->ctx = pick(d->ctx_list, num, name);
	if (!d->ctx)
		return -ENODEV;
	if (ibv_query_device(d->ctx, &d->attr) || ibv_query_port(d->ctx, 1, &d->port))
		return verbs_errno(ENODEV);
	d->iwarp = d->ctx->device->transport_type == IBV_TRANSPORT_IWARP;
	d->mw2 = d->attr.max_mw > 0 &&
		 (d->attr.device_cap_flags &
		  (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0;
	d->cm_ch = rdma_create_event_channel();
	if (!d->cm_ch)
		return verbs_errno(ENOMEM);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return verbs_errno(EMFILE);
	rc = epoll_add(d->epfd, d->cm_ch->fd);
	return rc;
}

static void dev_teardown(struct vdev *d)
{
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->cm_ch)
		rdma_destroy_event_channel(d->cm_ch);
	if (d->ctx_list)
		rdma_free_devices(d->ctx_list);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static pthread_once_t ops_once = PTHREAD_ONCE_INIT;

static void ops_init(void)
{
	rpcrdma_prov_fill_dummies(&verbs_ops);
}

static int verbs_open(const struct rpcrdma_dev_attr *attr, struct rpcrdma_dev **out)
{
	const char *name = NULL;
	struct vdev *d;
	int rc;

	pthread_once(&ops_once, ops_init);
	if (attr && (attr->comp_mask & RPCRDMA_DEV_ATTR_FLAGS) &&
	    (attr->flags & RPCRDMA_DEV_F_PROGRESS_THREAD))
		return -EOPNOTSUPP; /* the caller drives progress */
	if (attr && (attr->comp_mask & RPCRDMA_DEV_ATTR_DEVICE))
		name = attr->device;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->epfd = -1;
	pthread_mutex_init(&d->lock, NULL);
	d->base.ops = &verbs_ops;
	d->base.name = VERBS_PROVIDER_NAME;
	rc = dev_setup(d, name);
	if (rc) {
		dev_teardown(d);
		return rc;
	}
	*out = &d->base;
	return 0;
}

static int verbs_close(struct rpcrdma_dev *dev)
{
	struct vdev *d = vdev_of(dev);

	if (d->npd || d->ncq || d->nevch || d->nep || d->nlistener)
		return -EBUSY;
	dev_teardown(d);
	return 0;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static int verbs_query(struct rpcrdma_dev *dev, struct rpcrdma_dev_caps *caps)
{
	struct vdev *d = vdev_of(dev);

	snprintf(caps->provider, sizeof(caps->provider), "%s", VERBS_PROVIDER_NAME);
	caps->max_mr = (uint32_t)d->attr.max_mr;
	caps->max_mr_size = d->attr.max_mr_size;
	caps->max_qp_wr = (uint32_t)d->attr.max_qp_wr;
	caps->max_sge = (uint32_t)d->attr.max_sge;
	caps->max_sge_rd = d->attr.max_sge_rd > 0 ? (uint32_t)d->attr.max_sge_rd : 1u;
	caps->max_ird = (uint32_t)d->attr.max_qp_rd_atom;
	caps->max_ord = (uint32_t)d->attr.max_qp_init_rd_atom;
	/* rdma_cm's room for private data: an InfiniBand/RoCE REQ has 56
	 * bytes after its own header; iWARP's MPA frame more than we allow */
	caps->max_private_data = d->iwarp ? RPCRDMA_MAX_PRIVATE_DATA - 4 : 56;
	caps->max_msg_size = d->port.max_msg_sz ? d->port.max_msg_sz : 1u << 31;
	caps->max_qp_wr = min_u32(caps->max_qp_wr, 1u << 16);
	caps->max_srq_wr =
	    d->attr.max_srq > 0 && d->attr.max_srq_wr > 0 ? (uint32_t)d->attr.max_srq_wr : 0;
	/* No RPCRDMA_DEV_CAP_REMOTE_INV: devices invalidate only
	 * fast-registered regions remotely, and ours are ibv_reg_mr regions
	 * (userspace verbs has no fast registration; memory windows, which
	 * could be, are missing on siw). Seen in the guest: Linux siw
	 * answered every Send With Invalidate naming one with a Terminate
	 * (RDMAP, remote operation, cannot invalidate) and rxe fails it.
	 * Nor RPCRDMA_DEV_CAP_PEER_OPS_COUNTED: the device serves the peer's
	 * Writes and Reads without a completion. A kernel device pins what
	 * is registered (RPCRDMA_DEV_CAP_PINS_MEMORY). */
	caps->flags = RPCRDMA_DEV_CAP_PINS_MEMORY;
	return 0;
}

static int verbs_get_fd(const struct rpcrdma_dev *dev)
{
	return container_of(dev, struct vdev, base)->epfd;
}

/* One look at everything, without waiting. */
static int progress_once(struct vdev *d)
{
	int n = verbs_cm_drain(d);

	pthread_mutex_lock(&d->lock);
	n += verbs_cq_harvest(d);
	n += verbs_cm_down_check(d);
	pthread_mutex_unlock(&d->lock);
	return n;
}

static int verbs_progress(struct rpcrdma_dev *dev, int timeout_ms)
{
	struct vdev *d = vdev_of(dev);
	uint64_t end = 0;
	int n = progress_once(d);

	if (n > 0 || timeout_ms == 0)
		return n;
	if (timeout_ms > 0)
		end = verbs_now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		struct epoll_event ev[8];
		int wait = -1, rc;

		pthread_mutex_lock(&d->lock);
		verbs_cq_arm_all(d);
		n = verbs_cq_harvest(d);
		pthread_mutex_unlock(&d->lock);
		if (n > 0)
			return n;
		if (timeout_ms > 0) {
			uint64_t now = verbs_now_ns();

			if (now >= end)
				return 0;
			wait = (int)((end - now + 999999u) / 1000000u);
		}
		/* a DISCONNECTED waiting for its flushes is looked at often */
		if (d->nep && (wait < 0 || wait > 20))
			wait = 20;
		rc = epoll_wait(d->epfd, ev, 8, wait);
		if (rc < 0 && errno != EINTR)
			return verbs_errno(EIO);
		n = progress_once(d);
		if (n > 0)
			return n;
		if (rc < 0)
			return -EINTR;
	}
}

static int verbs_pd_alloc(struct rpcrdma_dev *dev, struct rpcrdma_pd **out)
{
	struct vdev *d = vdev_of(dev);
	struct vpd *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->pd = ibv_alloc_pd(d->ctx);
	if (!p->pd) {
		free(p);
		return verbs_errno(ENOMEM);
	}
	p->base.dev = dev;
	pthread_mutex_lock(&d->lock);
	d->npd++;
	pthread_mutex_unlock(&d->lock);
	*out = &p->base;
	return 0;
}

static int verbs_pd_free(struct rpcrdma_pd *pd)
{
	struct vpd *p = container_of(pd, struct vpd, base);
	struct vdev *d = vdev_of(pd->dev);
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	if (p->nmr || p->nep || p->nsrq)
		rc = -EBUSY;
	else
		d->npd--;
	pthread_mutex_unlock(&d->lock);
	if (rc)
		return rc;
	ibv_dealloc_pd(p->pd);
	free(p);
	return 0;
}

/* Filled with the dummies (-EOPNOTSUPP) for the ops it lacks on first open,
 * as every provider's table is (provider_int.h). A device without shared
 * receive queues (max_srq 0) says -EOPNOTSUPP from verbs_srq_create. */
static struct rpcrdma_dev_ops verbs_ops = {
    .close = verbs_close,
    .query = verbs_query,
    .get_fd = verbs_get_fd,
    .progress = verbs_progress,
    .pd_alloc = verbs_pd_alloc,
    .pd_free = verbs_pd_free,
    .mr_reg = verbs_mr_reg,
    .mr_rereg = verbs_mr_rereg,
    .mr_invalidate = verbs_mr_invalidate,
    .mr_dereg = verbs_mr_dereg,
    .mr_bind_ep = verbs_mr_bind_ep,
    .mr_stag = verbs_mr_stag,
    .mr_valid = verbs_mr_valid,
    .mr_offset = verbs_mr_offset,
    .mr_length = verbs_mr_length,
    .cq_create = verbs_cq_create,
    .cq_destroy = verbs_cq_destroy,
    .cq_poll = verbs_cq_poll,
    .cq_req_notify = verbs_cq_req_notify,
    .cq_get_fd = verbs_cq_get_fd,
    .cq_ack_notify = verbs_cq_ack_notify,
    .evch_create = verbs_evch_create,
    .evch_destroy = verbs_evch_destroy,
    .evch_get = verbs_evch_get,
    .evch_get_fd = verbs_evch_get_fd,
    .ep_create = verbs_ep_create,
    .ep_destroy = verbs_ep_destroy,
    .ep_query_stats = verbs_ep_query_stats,
    .ep_query_conn = verbs_ep_query_conn,
    .connect = verbs_connect,
    .listen = verbs_listen,
    .listener_destroy = verbs_listener_destroy,
    .listener_addr = verbs_listener_addr,
    .accept = verbs_accept,
    .reject = verbs_reject,
    .disconnect = verbs_disconnect,
    .post_recv = verbs_post_recv,
    .post_send = verbs_post_send,
    .srq_create = verbs_srq_create,
    .srq_destroy = verbs_srq_destroy,
    .post_srq_recv = verbs_post_srq_recv,
    .srq_resize = verbs_srq_resize,
};

const struct rpcrdma_provider rpcrdma_verbs_provider = {
    .name = VERBS_PROVIDER_NAME,
    .open = verbs_open,
    .list = verbs_list,
};
