/* The machine's cost of one timed wakeup, for `make bench` section "power"
 * (gnb_power.py compiles it into the build directory at bench time):
 * COUNT nanosleeps of NAP_NS each with the thread's timer slack at SLACK_NS
 * (prctl PR_SET_TIMERSLACK, as the runtime's proportional governor sets
 * it), timed by the wall clock and by the thread's own CPU clock. The CPU
 * time per sleep is what a lcore pays for every nap however short: entering
 * the kernel, arming the timer, the interrupt, the wakeup and the return
 * (under nested virtualization also the exits to the hypervisors, which
 * the guest sees as the thread's time).
 *
 * usage: wakeup_cost COUNT NAP_NS SLACK_NS
 * prints one JSON object on stdout. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static double
seconds(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s COUNT NAP_NS SLACK_NS\n", argv[0]);
		return 2;
	}
	long count = atol(argv[1]), nap_ns = atol(argv[2]), slack_ns = atol(argv[3]);
	if (count <= 0 || nap_ns <= 0 || nap_ns >= 1000000000L || slack_ns <= 0) {
		fprintf(stderr, "error: COUNT, NAP_NS (< 1 s) and SLACK_NS must be positive\n");
		return 2;
	}
	if (prctl(PR_SET_TIMERSLACK, (unsigned long)slack_ns, 0, 0, 0) != 0) {
		fprintf(stderr, "error: prctl(PR_SET_TIMERSLACK, %ld): %s\n", slack_ns, strerror(errno));
		return 1;
	}
	long slack_set = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	const struct timespec nap = {0, nap_ns};
	double wall0 = seconds(CLOCK_MONOTONIC), cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < count; i++)
		nanosleep(&nap, NULL);
	double wall = seconds(CLOCK_MONOTONIC) - wall0;
	double cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	printf("{\"sleeps\": %ld, \"nap_ns\": %ld, \"timer_slack_ns\": %ld, "
	       "\"wall_us_per_sleep\": %.3f, \"cpu_us_per_sleep\": %.3f, \"cpu_share\": %.4f}\n",
	       count, nap_ns, slack_set, wall / (double)count * 1e6, cpu / (double)count * 1e6,
	       wall > 0 ? cpu / wall : 0.0);
	return 0;
}
