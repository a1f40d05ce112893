/* libFuzzer harness: a compiled P4 program with the runtime, each input
 * one rx burst on one port, the whole pipeline run on it exactly as the
 * lcore loop runs it (t4p4s_pipeline_process_burst, then the tx flush).
 *
 * The runtime starts as the executable does (lifecycle.c), from the command
 * line in the environment variable T4P4S_FUZZ_ARGS (EAL options, `--`, the
 * runtime's options: net_null ports, --entries with DRBs and clone
 * sessions); libFuzzer owns argv.
 *
 * An input is one rx burst: [port] then up to 32 frames, each
 * [segments][length, 2 bytes big-endian][frame] (the last frame takes what
 * is left when the length says more). The burst arrives on port
 * (port % number of ports); each frame is cut into 1 + (segments % 3) mbuf
 * segments. Each segment's bytes live in a heap buffer of exactly its size
 * (the first with the usual headroom before it), attached as an external
 * buffer: a read or write past the frame's end or before the headroom is an
 * AddressSanitizer report, which it would not be inside a mempool.
 *
 * After each input the harness checks that every mbuf came back to the
 * pool (a lost packet or clone is a leak, an mbuf freed twice shows as
 * more free than allocated): abort() then, which libFuzzer reports as a
 * crash with the input that caused it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "lcore_loop.h"
#include "lifecycle.h"
#include "runtime.h"

#define MAX_ARGS 64
#define MAX_SEGMENTS 3

static struct t4p4s_lcore *lcore;
static unsigned pool_in_use_at_rest;

static void
free_segment_buffer(void *addr, void *shared_info)
{
	free((uint8_t *)addr);
	free(shared_info);
}

/* An mbuf whose data is `len` bytes of `bytes` in a heap buffer of exactly
 * headroom + len bytes. */
static struct rte_mbuf *
segment(const uint8_t *bytes, size_t len, uint16_t headroom)
{
	if ((size_t)headroom + len > UINT16_MAX)
		return NULL;     /* more than an mbuf's buf_len can say */
	struct rte_mbuf *m = rte_pktmbuf_alloc(t4p4s_rt.pool);
	if (m == NULL)
		return NULL;
	/* apart, so that nothing but a redzone borders the bytes */
	struct rte_mbuf_ext_shared_info *info = calloc(1, sizeof(*info));
	uint8_t *buf = malloc(headroom + len);
	if (info == NULL || buf == NULL) {
		free(info);
		free(buf);
		rte_pktmbuf_free(m);
		return NULL;
	}
	info->free_cb = free_segment_buffer;
	info->fcb_opaque = info;
	rte_mbuf_ext_refcnt_set(info, 1);
	rte_pktmbuf_attach_extbuf(m, buf, RTE_BAD_IOVA, (uint16_t)(headroom + len), info);
	m->data_off = headroom;
	memcpy(buf + headroom, bytes, len);
	m->data_len = len;
	m->pkt_len = len;
	return m;
}

static struct rte_mbuf *
frame(const uint8_t *bytes, size_t len, unsigned n_segments)
{
	if (len < n_segments)
		n_segments = 1;
	size_t piece = len / n_segments;
	struct rte_mbuf *head = NULL;
	for (unsigned i = 0; i < n_segments; i++) {
		size_t this_len = i + 1 < n_segments ? piece : len - piece * i;
		struct rte_mbuf *m = segment(bytes + piece * i, this_len,
					     i == 0 ? RTE_PKTMBUF_HEADROOM : 0);
		if (m == NULL || (head != NULL && rte_pktmbuf_chain(head, m) != 0)) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (head == NULL)
			head = m;
	}
	return head;
}

/* At libFuzzer's exit (-max_total_time, -runs): what the runtime allocated
 * is freed, so LeakSanitizer's check at exit reports only real leaks. (It
 * cannot see pointers kept in DPDK memory, such as the table records that
 * rte_hash holds, and would call those leaked.) */
static void
stop_runtime(void)
{
	t4p4s_runtime_stop(false);
}

static char **
split_args(const char *program, const char *line, int *argc)
{
	static char *argv[MAX_ARGS + 1];
	char *copy = strdup(line);
	int n = 0;
	argv[n++] = (char *)program;
	for (char *word = strtok(copy, " \t\n"); word != NULL; word = strtok(NULL, " \t\n")) {
		if (n == MAX_ARGS) {
			fprintf(stderr, "frame_fuzzer: more than %d words in T4P4S_FUZZ_ARGS\n",
				MAX_ARGS);
			exit(2);
		}
		argv[n++] = word;
	}
	argv[n] = NULL;
	*argc = n;
	return argv;
}

int
LLVMFuzzerInitialize(int *argc __rte_unused, char ***argv)
{
	const char *line = getenv("T4P4S_FUZZ_ARGS");
	if (line == NULL) {
		fprintf(stderr, "frame_fuzzer: set T4P4S_FUZZ_ARGS to the runtime's command line "
			"(EAL options -- options), e.g. \"--no-huge -m 512 --no-pci "
			"--vdev net_null0 -- --entries entries.json\"\n");
		exit(2);
	}
	int n;
	char **args = split_args((*argv)[0], line, &n);
	bool eal_up;
	int status = t4p4s_runtime_start(n, args, &eal_up);
	if (status != 0) {
		fprintf(stderr, "frame_fuzzer: the runtime did not start (status %d)\n", status);
		exit(status);
	}
	if (t4p4s_rt.n_ports == 0) {
		fprintf(stderr, "frame_fuzzer: no ports: give net_null vdevs\n");
		exit(2);
	}
	atexit(stop_runtime);
	lcore = t4p4s_rt.lcores[0];
	pool_in_use_at_rest = rte_mempool_in_use_count(t4p4s_rt.pool);
	return 0;
}

/* The frames of an input, in `pkts`; returns how many. */
static unsigned
burst(const uint8_t *data, size_t size, struct rte_mbuf **pkts)
{
	unsigned n = 0;
	while (size >= 3 && n < T4P4S_STAGE_BURST) {
		unsigned n_segments = 1 + data[0] % MAX_SEGMENTS;
		size_t len = RTE_MIN((size_t)data[1] << 8 | data[2], size - 3);
		struct rte_mbuf *m = frame(data + 3, len, n_segments);
		if (m == NULL)
			break;
		pkts[n++] = m;
		data += 3 + len;
		size -= 3 + len;
	}
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf *pkts[T4P4S_STAGE_BURST];
	if (size < 4)
		return -1;    /* not a frame: kept out of the corpus */
	uint16_t port = (uint16_t)(data[0] % t4p4s_rt.n_ports);
	unsigned n = burst(data + 1, size - 1, pkts);
	if (n == 0)
		return -1;
	t4p4s_pipeline_process_burst(lcore, pkts, n, port);
	t4p4s_lcore_flush_tx(lcore);

	unsigned in_use = rte_mempool_in_use_count(t4p4s_rt.pool);
	if (in_use != pool_in_use_at_rest) {
		fprintf(stderr, "frame_fuzzer: %u mbufs in use after the frame, %u before: %s\n",
			in_use, pool_in_use_at_rest,
			in_use > pool_in_use_at_rest ? "a packet or clone was never sent "
			"nor dropped" : "an mbuf was freed twice");
		abort();
	}
	return 0;
}
