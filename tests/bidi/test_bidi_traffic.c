// SPDX-License-Identifier: MIT
/*
 * A small, fixed mix of forward and reverse traffic on one connection, the
 * input of the wire check (bidi_wire.sh captures it and has tshark decode
 * it): BC_ENABLE, 3 reverse CB_NULL calls, 4 forward BT_ECHO calls and,
 * started while each is served, 4 reverse CB_ECHO calls with the same XIDs
 * (RFC 8167 §2.4.1). Port from $BIDI_PORT (default: any). Also runs
 * on its own as an e2e test: every call must succeed with the right data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bidi/bidi_test.h"

int main(void)
{
	const char *p = getenv("BIDI_PORT");
	struct bt_srv_cfg cfg = {.slots = 4, .port = (uint16_t)(p ? atoi(p) : 0)};
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	struct bt_ctl_res res;
	int rc;

	rc = bt_setup(&srv, &cfg, NULL, 16, &c);
	if (rc < 0)
		return 1;
	BT_CHECK(rc == 0);
	if (rc)
		goto out;
	for (int i = 0; i < 3; i++) {
		BT_CHECK(bt_ctl(c, CTL_TRY, 0, 0, 0, &res) == 0);
		BT_CHECK(res.rc == 0);
	}
	bt_mirror(c, 4, 100, 8, 1, &res);
	BT_CHECK(res.v[2] == 4);
	printf("WIRE: server port %u, XID values used both ways %u\n", srv.port, res.v[2]);
	rpcrdma_clnt_destroy(c);
out:
	BT_CHECK(bt_server_stop(&srv) == 0);
	return bt_failures ? 1 : 0;
}
