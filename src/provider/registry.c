/* SPDX-License-Identifier: MIT */
/*
 * Provider registry: maps a provider name to its open() and picks the
 * default ("softiwarp", or $RPCRDMA_PROVIDER). A name may carry the device
 * after a colon ("verbs:rxe0"), so every place that takes a provider name
 * (client and server options, RPCRDMA_PROVIDER) can also pick a device
 * without an option of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/provider_int.h"

static const struct rpcrdma_provider *const providers[] = {
    &rpcrdma_softiwarp_provider,
#ifdef RPCRDMA_HAVE_VERBS
    &rpcrdma_verbs_provider,
#endif
};

/* Longest provider name we look up (the names are short words). */
#define PROV_NAME_MAX 32

/* Split @name ("PROVIDER" or "PROVIDER:DEVICE", NULL/"" for the default)
 * into the provider (copied into @prov) and *@device (NULL when none, else
 * pointing into @name or the environment). */
static const struct rpcrdma_provider *lookup(const char *name, char prov[PROV_NAME_MAX],
					     const char **device)
{
	const char *colon;
	size_t len;

	if (!name || !*name) {
		name = getenv("RPCRDMA_PROVIDER");
		if (!name || !*name)
			name = "softiwarp";
	}
	colon = strchr(name, ':');
	len = colon ? (size_t)(colon - name) : strlen(name);
	*device = colon && colon[1] ? colon + 1 : NULL;
	if (len >= PROV_NAME_MAX)
		return NULL;
	memcpy(prov, name, len);
	prov[len] = '\0';
	for (size_t i = 0; i < sizeof(providers) / sizeof(providers[0]); i++) {
		if (strcmp(providers[i]->name, prov) == 0)
			return providers[i];
	}
	return NULL;
}

RPCRDMA_API int rpcrdma_dev_open(const char *name, const struct rpcrdma_dev_attr *attr,
				 struct rpcrdma_dev **out)
{
	struct rpcrdma_dev_attr a = {0};
	const struct rpcrdma_provider *p;
	char prov[PROV_NAME_MAX];
	const char *device;

	if (!out)
		return -EINVAL;
	p = lookup(name, prov, &device);
	if (!p)
		return -ENOENT;
	if (attr)
		a = *attr;
	if ((a.comp_mask & RPCRDMA_DEV_ATTR_DEVICE) && a.device && *a.device)
		device = a.device;
	a.comp_mask &= ~(uint32_t)RPCRDMA_DEV_ATTR_DEVICE;
	a.device = NULL;
	if (device) {
		if (!p->list) {
			/* one device, named after the provider */
			if (strcmp(device, p->name) != 0)
				return -ENODEV;
		} else {
			a.comp_mask |= RPCRDMA_DEV_ATTR_DEVICE;
			a.device = device;
		}
	}
	return p->open(&a, out);
}

RPCRDMA_API int rpcrdma_dev_list(const char *name, struct rpcrdma_dev_info *out, int n)
{
	const struct rpcrdma_provider *p;
	char prov[PROV_NAME_MAX];
	const char *device;

	if (n < 0 || (n > 0 && !out))
		return -EINVAL;
	p = lookup(name, prov, &device);
	if (!p)
		return -ENOENT;
	if (p->list)
		return p->list(out, n);
	if (n > 0) {
		memset(&out[0], 0, sizeof(out[0]));
		snprintf(out[0].name, sizeof(out[0].name), "%s", p->name);
		snprintf(out[0].transport, sizeof(out[0].transport), "iWARP");
		out[0].ports = 1;
		out[0].active = true;
	}
	return 1;
}
