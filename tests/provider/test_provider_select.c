// SPDX-License-Identifier: MIT
/*
 * Choosing a provider and a device (src/provider/registry.c) and the verbs
 * provider on a host without RDMA devices:
 *   - "PROVIDER:DEVICE" names, RPCRDMA_PROVIDER with and without a device,
 *     RPCRDMA_DEV_ATTR_DEVICE winning over the suffix;
 *   - unknown providers are -ENOENT, unknown devices -ENODEV, and the
 *     out-parameter is left untouched on failure;
 *   - rpcrdma_dev_list(): softiwarp's one device, argument checks, and for
 *     verbs (when built) a count that agrees with /sys/class/infiniband:
 *     0 devices there means rpcrdma_dev_open("verbs") is -ENODEV;
 *   - without the verbs provider built in, "verbs" is -ENOENT.
 * Exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpcrdma/provider.h"

static int failures;

#define CHECK(cond) (void)check_((cond), #cond, __LINE__)

static bool check_(bool ok, const char *expr, int line)
{
	if (!ok) {
		fprintf(stderr, "FAIL line %d: %s\n", line, expr);
		failures++;
	}
	return ok;
}

#define UNTOUCHED ((struct rpcrdma_dev *)(uintptr_t)0x5a5a)

static int open_close(const char *name, const struct rpcrdma_dev_attr *attr, char *prov, size_t len)
{
	struct rpcrdma_dev *d = UNTOUCHED;
	int rc = rpcrdma_dev_open(name, attr, &d);

	if (rc) {
		CHECK(d == UNTOUCHED);
		return rc;
	}
	snprintf(prov, len, "%s", rpcrdma_dev_provider(d));
	CHECK(rpcrdma_dev_close(d) == 0);
	return 0;
}

/* Devices the kernel exposes (absent directory: none). */
static int sys_devices(void)
{
	FILE *f = popen("ls /sys/class/infiniband 2>/dev/null | wc -l", "r");
	int n = 0;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	pclose(f);
	return n;
}

static void test_names(void)
{
	struct rpcrdma_dev_attr a = {.comp_mask = RPCRDMA_DEV_ATTR_DEVICE, .device = "softiwarp"};
	char prov[32] = "";

	unsetenv("RPCRDMA_PROVIDER");
	CHECK(open_close(NULL, NULL, prov, sizeof(prov)) == 0 && strcmp(prov, "softiwarp") == 0);
	CHECK(open_close("softiwarp:softiwarp", NULL, prov, sizeof(prov)) == 0);
	CHECK(open_close("softiwarp:", NULL, prov, sizeof(prov)) == 0);
	CHECK(open_close("softiwarp:eth0", NULL, prov, sizeof(prov)) == -ENODEV);
	/* the attribute wins over the suffix */
	CHECK(open_close("softiwarp:eth0", &a, prov, sizeof(prov)) == 0);
	a.device = "mlx5_0";
	CHECK(open_close("softiwarp", &a, prov, sizeof(prov)) == -ENODEV);
	CHECK(open_close("nosuch", NULL, prov, sizeof(prov)) == -ENOENT);
	CHECK(open_close("nosuch:dev", NULL, prov, sizeof(prov)) == -ENOENT);
	CHECK(open_close(":dev", NULL, prov, sizeof(prov)) == -ENOENT);
	CHECK(open_close("softiwarpsoftiwarpsoftiwarpsoftiwarp", NULL, prov, sizeof(prov)) ==
	      -ENOENT);
	/* the environment, with a device */
	setenv("RPCRDMA_PROVIDER", "softiwarp:nodev", 1);
	CHECK(open_close(NULL, NULL, prov, sizeof(prov)) == -ENODEV);
	CHECK(open_close("", NULL, prov, sizeof(prov)) == -ENODEV);
	setenv("RPCRDMA_PROVIDER", "softiwarp:softiwarp", 1);
	CHECK(open_close(NULL, NULL, prov, sizeof(prov)) == 0);
	setenv("RPCRDMA_PROVIDER", "nosuch", 1);
	CHECK(open_close(NULL, NULL, prov, sizeof(prov)) == -ENOENT);
	unsetenv("RPCRDMA_PROVIDER");
}

static void test_list(void)
{
	struct rpcrdma_dev_info info[4];

	memset(info, 0x5a, sizeof(info));
	CHECK(rpcrdma_dev_list("softiwarp", info, 4) == 1);
	CHECK(strcmp(info[0].name, "softiwarp") == 0 && strcmp(info[0].transport, "iWARP") == 0);
	CHECK(info[0].active && info[0].comp_mask == 0);
	CHECK(rpcrdma_dev_list("softiwarp:x", NULL, 0) == 1);
	CHECK(rpcrdma_dev_list(NULL, NULL, 0) == 1);
	CHECK(rpcrdma_dev_list("softiwarp", NULL, 1) == -EINVAL);
	CHECK(rpcrdma_dev_list("softiwarp", info, -1) == -EINVAL);
	CHECK(rpcrdma_dev_list("nosuch", info, 4) == -ENOENT);
}

static void test_verbs(void)
{
	struct rpcrdma_dev_info info[16];
	char prov[32] = "";
	int n = rpcrdma_dev_list("verbs", info, 16), sys = sys_devices();

#ifdef TEST_VERBS_BUILT
	CHECK(n >= 0);
	if (sys == 0) {
		/* a host without RDMA devices: said in words, never a crash */
		CHECK(n == 0);
		CHECK(open_close("verbs", NULL, prov, sizeof(prov)) == -ENODEV);
		setenv("RPCRDMA_PROVIDER", "verbs", 1);
		CHECK(open_close(NULL, NULL, prov, sizeof(prov)) == -ENODEV);
		unsetenv("RPCRDMA_PROVIDER");
	} else if (n > 0) {
		/* a host with devices: each one listed opens by name */
		for (int i = 0; i < n && i < 16; i++) {
			char name[80];

			snprintf(name, sizeof(name), "verbs:%s", info[i].name);
			CHECK(open_close(name, NULL, prov, sizeof(prov)) == 0 &&
			      strcmp(prov, "verbs") == 0);
		}
	}
	CHECK(open_close("verbs:no-such-device-0", NULL, prov, sizeof(prov)) == -ENODEV);
	printf("verbs provider built; %d device(s) listed, %d in /sys/class/infiniband\n", n, sys);
#else
	(void)sys;
	CHECK(n == -ENOENT);
	CHECK(open_close("verbs", NULL, prov, sizeof(prov)) == -ENOENT);
	printf("verbs provider not built: -ENOENT as documented\n");
#endif
}

int main(void)
{
	test_names();
	test_list();
	test_verbs();
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
