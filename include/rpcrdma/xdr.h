/* SPDX-License-Identifier: MIT */
/*
 * XDR (RFC 4506) cursors: bounded encode/decode over a flat buffer or over a
 * list of iovecs (an RPC-over-RDMA message is gathered from a transport
 * header buffer, an inline payload and chunk buffers).
 *
 * Rules every function here keeps:
 *   - returns 0 or a negative errno;
 *   - on failure the cursor is left exactly where it was (nothing consumed,
 *     nothing partially written past the old position is counted);
 *   - never reads or writes outside the buffers it was given.
 *
 * Errors:
 *   -EMSGSIZE   encode: the item does not fit in the remaining space
 *   -EBADMSG    decode: the input ends before the item does (truncated)
 *   -E2BIG      a count or length exceeds the caller's limit
 *   -EOVERFLOW  count x element size overflows, or exceeds what remains
 *   -EINVAL     a value the type does not allow (bool not 0/1, bad argument)
 *
 * The cursor struct is public so it can live on the stack; its fields are
 * private to the library.
 */
#ifndef RPCRDMA_XDR_H
#define RPCRDMA_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rpcrdma/common.h"

RPCRDMA_EXTERN_C_BEGIN

/* RFC 4506 §3: every item occupies a multiple of four bytes. */
#define RPCRDMA_XDR_UNIT       4u
#define RPCRDMA_XDR_ROUNDUP(n) (((n) + 3u) & ~(size_t)3u)

/* Maximum iovecs one cursor spans. */
#define RPCRDMA_XDR_MAX_IOV 16

enum rpcrdma_xdr_op {
	RPCRDMA_XDR_ENCODE = 0,
	RPCRDMA_XDR_DECODE = 1,
};

struct rpcrdma_xdr {
	/* private */
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	unsigned int iovcnt;
	unsigned int idx; /* current iovec */
	size_t off;       /* offset inside iov[idx] */
	size_t pos;       /* bytes consumed/produced from the start */
	size_t len;       /* total bytes across all iovecs */
	enum rpcrdma_xdr_op op;
};

/* Cursor over one flat buffer. */
RPCRDMA_API void rpcrdma_xdr_init(struct rpcrdma_xdr *x, void *buf, size_t len,
				  enum rpcrdma_xdr_op op);
/* Cursor over @iovcnt iovecs (copied into the cursor). -EINVAL if
 * iovcnt > RPCRDMA_XDR_MAX_IOV or the total length overflows. */
RPCRDMA_API int rpcrdma_xdr_init_iov(struct rpcrdma_xdr *x, const struct iovec *iov,
				     unsigned int iovcnt, enum rpcrdma_xdr_op op);

/* Bytes from the start to the cursor. */
RPCRDMA_API size_t rpcrdma_xdr_getpos(const struct rpcrdma_xdr *x);
/* Move the cursor to @pos (<= total length) or -EINVAL. */
RPCRDMA_API int rpcrdma_xdr_setpos(struct rpcrdma_xdr *x, size_t pos);
/* Bytes left after the cursor. */
RPCRDMA_API size_t rpcrdma_xdr_remaining(const struct rpcrdma_xdr *x);

/* Encoders. */
RPCRDMA_API int rpcrdma_xdr_put_u32(struct rpcrdma_xdr *x, uint32_t v);
RPCRDMA_API int rpcrdma_xdr_put_i32(struct rpcrdma_xdr *x, int32_t v);
RPCRDMA_API int rpcrdma_xdr_put_u64(struct rpcrdma_xdr *x, uint64_t v); /* unsigned hyper */
RPCRDMA_API int rpcrdma_xdr_put_i64(struct rpcrdma_xdr *x, int64_t v);  /* hyper */
RPCRDMA_API int rpcrdma_xdr_put_bool(struct rpcrdma_xdr *x, bool v);
RPCRDMA_API int rpcrdma_xdr_put_enum(struct rpcrdma_xdr *x, int32_t v);
/* Fixed-length opaque: @len bytes then zero padding to a multiple of 4. */
RPCRDMA_API int rpcrdma_xdr_put_opaque_fixed(struct rpcrdma_xdr *x, const void *p, size_t len);
/* Variable-length opaque<max>: length word, bytes, zero padding.
 * -E2BIG if len > max. */
RPCRDMA_API int rpcrdma_xdr_put_opaque(struct rpcrdma_xdr *x, const void *p, uint32_t len,
				       uint32_t max);
/* string<max>: as opaque, from a NUL-terminated string. */
RPCRDMA_API int rpcrdma_xdr_put_string(struct rpcrdma_xdr *x, const char *s, uint32_t max);
/* Array count of a T<max> (RFC 4506 §4.13): -E2BIG if count > max. The
 * caller then encodes the @count elements. */
RPCRDMA_API int rpcrdma_xdr_put_count(struct rpcrdma_xdr *x, uint32_t count, uint32_t max);
/* Reserve @len bytes (multiple of 4) to fill in later, e.g. a length word;
 * *out points at them when they are contiguous, else -EMSGSIZE. */
RPCRDMA_API int rpcrdma_xdr_reserve(struct rpcrdma_xdr *x, size_t len, void **out);

/* Decoders. */
RPCRDMA_API int rpcrdma_xdr_get_u32(struct rpcrdma_xdr *x, uint32_t *v);
RPCRDMA_API int rpcrdma_xdr_get_i32(struct rpcrdma_xdr *x, int32_t *v);
RPCRDMA_API int rpcrdma_xdr_get_u64(struct rpcrdma_xdr *x, uint64_t *v);
RPCRDMA_API int rpcrdma_xdr_get_i64(struct rpcrdma_xdr *x, int64_t *v);
/* -EINVAL unless the word is 0 or 1 (RFC 4506 §4.4). */
RPCRDMA_API int rpcrdma_xdr_get_bool(struct rpcrdma_xdr *x, bool *v);
RPCRDMA_API int rpcrdma_xdr_get_enum(struct rpcrdma_xdr *x, int32_t *v);
/* Fixed-length opaque into @p (@len bytes), skipping the padding. */
RPCRDMA_API int rpcrdma_xdr_get_opaque_fixed(struct rpcrdma_xdr *x, void *p, size_t len);
/* Variable-length opaque<max> copied into @p (room for @max bytes);
 * *len receives the length. -E2BIG if the encoded length > max. */
RPCRDMA_API int rpcrdma_xdr_get_opaque(struct rpcrdma_xdr *x, void *p, uint32_t max, uint32_t *len);
/* Variable-length opaque<max> without a copy: *p points into the buffer.
 * -EAGAIN if the bytes span two iovecs (use rpcrdma_xdr_get_opaque). */
RPCRDMA_API int rpcrdma_xdr_get_opaque_ref(struct rpcrdma_xdr *x, uint32_t max, const void **p,
					   uint32_t *len);
/* string<max> into @buf of @bufsize bytes (max = bufsize - 1), NUL-terminated.
 * -EINVAL if the string holds a NUL byte. */
RPCRDMA_API int rpcrdma_xdr_get_string(struct rpcrdma_xdr *x, char *buf, size_t bufsize);
/* Array count with validation before any allocation: -E2BIG if > max;
 * -EOVERFLOW if count x min_elem_size overflows or exceeds the bytes left. */
RPCRDMA_API int rpcrdma_xdr_get_count(struct rpcrdma_xdr *x, uint32_t max, size_t min_elem_size,
				      uint32_t *count);
/* Skip @len bytes (rounded up to 4). */
RPCRDMA_API int rpcrdma_xdr_skip(struct rpcrdma_xdr *x, size_t len);
/* Point *out at the next @len bytes (no padding, no rounding) and step over
 * them, without a copy: -EBADMSG if fewer remain, -EAGAIN if they span two
 * iovecs (the cursor is then unchanged; copy them with get_opaque_fixed). */
RPCRDMA_API int rpcrdma_xdr_get_inline(struct rpcrdma_xdr *x, size_t len, const void **out);

RPCRDMA_EXTERN_C_END

#endif
