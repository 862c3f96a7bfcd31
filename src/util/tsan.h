/* SPDX-License-Identifier: MIT */
/*
 * ThreadSanitizer annotations for the library's own locks (issue 37).
 *
 * Under -fsanitize=thread (cmake -DRPCRDMA_TSAN=ON) the futex mutex
 * (util/futex_mutex.h) tells TSan where it is taken and dropped, so its
 * reports name the mutex and its lock-order check sees it; its atomics are
 * then ignored inside the lock and unlock. futex_cond's wait drops and
 * retakes the mutex under the same annotations (util/futex_cond.c), as
 * TSan's pthread_cond_wait interceptor does. In every other build each
 * macro is empty: the hot path compiles to the same instructions.
 */
#ifndef RPCRDMA_UTIL_TSAN_H
#define RPCRDMA_UTIL_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define RPCRDMA_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RPCRDMA_UNDER_TSAN 1
#endif
#endif

#ifdef RPCRDMA_UNDER_TSAN
#include <sanitizer/tsan_interface.h>
#define TSAN_MUTEX_CREATE(m)      __tsan_mutex_create((m), 0)
#define TSAN_MUTEX_PRE_LOCK(m)    __tsan_mutex_pre_lock((m), 0)
#define TSAN_MUTEX_POST_LOCK(m)   __tsan_mutex_post_lock((m), 0, 0)
#define TSAN_MUTEX_PRE_UNLOCK(m)  __tsan_mutex_pre_unlock((m), 0)
#define TSAN_MUTEX_POST_UNLOCK(m) __tsan_mutex_post_unlock((m), 0)
#else
#define TSAN_MUTEX_CREATE(m)      ((void)0)
#define TSAN_MUTEX_PRE_LOCK(m)    ((void)0)
#define TSAN_MUTEX_POST_LOCK(m)   ((void)0)
#define TSAN_MUTEX_PRE_UNLOCK(m)  ((void)0)
#define TSAN_MUTEX_POST_UNLOCK(m) ((void)0)
#endif

#endif
