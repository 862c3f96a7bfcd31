/* Library version, for tools and for callers checking what they loaded. */
#include "rpcrdma.h"

const char *rpcrdma_version(void)
{
	return RPCRDMA_VERSION_STRING;
}
