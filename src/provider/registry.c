/* SPDX-License-Identifier: MIT */
/*
 * Provider registry: maps a provider name to its open() and picks the
 * default ("softiwarp", or $RPCRDMA_PROVIDER).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/provider_int.h"

static const struct rpcrdma_provider *const providers[] = {
    &rpcrdma_softiwarp_provider,
};

RPCRDMA_API int rpcrdma_dev_open(const char *name, const struct rpcrdma_dev_attr *attr,
				 struct rpcrdma_dev **out)
{
	if (!out)
		return -EINVAL;
	if (!name || !*name) {
		name = getenv("RPCRDMA_PROVIDER");
		if (!name || !*name)
			name = "softiwarp";
	}
	for (size_t i = 0; i < sizeof(providers) / sizeof(providers[0]); i++) {
		if (strcmp(providers[i]->name, name) == 0)
			return providers[i]->open(attr, out);
	}
	return -ENOENT;
}
