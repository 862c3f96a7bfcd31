// SPDX-License-Identifier: MIT
/*
 * ThreadSanitizer sees the futex mutex as a mutex (util/tsan.h): a child
 * run of this program takes two futex mutexes in both orders, and TSan
 * must report the lock-order inversion in futex_mutex_lock (without the
 * annotations it sees atomics only, and says nothing). A second child hands data from thread to thread under the
 * mutex and futex_cond, and must draw no report at all.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/futex_cond.h"
#include "util/futex_mutex.h"

static struct futex_mutex ma, mb;
static struct futex_cond cv;
static int data, ready;

static void *ab_order(void *p)
{
	(void)p;
	futex_mutex_lock(&ma);
	futex_mutex_lock(&mb);
	futex_mutex_unlock(&mb);
	futex_mutex_unlock(&ma);
	return NULL;
}

static int child_inversion(void)
{
	pthread_t t;

	futex_mutex_init(&ma);
	futex_mutex_init(&mb);
	if (pthread_create(&t, NULL, ab_order, NULL))
		return 2;
	pthread_join(t, NULL);
	futex_mutex_lock(&mb);
	futex_mutex_lock(&ma);
	futex_mutex_unlock(&ma);
	futex_mutex_unlock(&mb);
	return 0;
}

static void *producer(void *p)
{
	(void)p;
	usleep(20000); /* the consumer sleeps in futex_cond_wait */
	futex_mutex_lock(&ma);
	data = 42;
	ready = 1;
	futex_cond_signal(&cv);
	futex_mutex_unlock(&ma);
	return NULL;
}

static int child_handoff(void)
{
	pthread_t t;
	int got;

	futex_mutex_init(&ma);
	futex_cond_init(&cv);
	if (pthread_create(&t, NULL, producer, NULL))
		return 2;
	futex_mutex_lock(&ma);
	while (!ready)
		futex_cond_wait(&cv, &ma);
	got = data;
	futex_mutex_unlock(&ma);
	pthread_join(t, NULL);
	return got == 42 ? 0 : 3;
}

/* Runs this program as "child MODE" and returns its stderr and exit code. */
static int run_child(const char *self, const char *mode, char *out, size_t cap)
{
	char cmd[4096];
	FILE *f;
	size_t n = 0;

	snprintf(cmd, sizeof(cmd),
		 "TSAN_OPTIONS=halt_on_error=0:exitcode=0:detect_deadlocks=1 '%s' child %s 2>&1",
		 self, mode);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (n + 1 < cap) {
		size_t r = fread(out + n, 1, cap - 1 - n, f);

		if (!r)
			break;
		n += r;
	}
	out[n] = '\0';
	return pclose(f);
}

int main(int argc, char **argv)
{
	static char out[1 << 16];
	int fails = 0, rc;

	if (argc == 3 && !strcmp(argv[1], "child"))
		return !strcmp(argv[2], "inversion") ? child_inversion() : child_handoff();

	rc = run_child(argv[0], "inversion", out, sizeof(out));
	if (rc != 0 || !strstr(out, "lock-order-inversion") || !strstr(out, "futex_mutex_lock")) {
		fprintf(stderr,
			"inversion: exit %d, no lock-order-inversion report on futex "
			"mutexes:\n%s\n",
			rc, out);
		fails++;
	}
	rc = run_child(argv[0], "handoff", out, sizeof(out));
	if (rc != 0 || strstr(out, "ThreadSanitizer")) {
		fprintf(stderr, "handoff: exit %d, output:\n%s\n", rc, out);
		fails++;
	}
	if (fails)
		return 1;
	printf("futex mutex and cond under ThreadSanitizer: inversion reported, handoff clean\n");
	return 0;
}
