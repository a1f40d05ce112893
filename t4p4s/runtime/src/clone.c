#include <errno.h>

#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "arrival_stamp.h"
#include "clone.h"
#include "runtime.h"

/* bit 63: valid; bits 32..62: port; bits 0..31: truncate length */
#define SESSION_VALID (UINT64_C(1) << 63)

static uint64_t sessions[T4P4S_MAX_CLONE_SESSIONS];

int32_t
t4p4s_clone_session_port(uint32_t session, uint32_t *truncate)
{
	if (unlikely(session >= T4P4S_MAX_CLONE_SESSIONS))
		return -1;
	uint64_t s = __atomic_load_n(&sessions[session], __ATOMIC_RELAXED);
	if (!(s & SESSION_VALID))
		return -1;
	*truncate = (uint32_t)s;
	return (int32_t)((s & ~SESSION_VALID) >> 32);
}

int
t4p4s_clone_session_set(uint32_t session, uint32_t port, uint32_t truncate)
{
	if (session >= T4P4S_MAX_CLONE_SESSIONS || port > INT32_MAX)
		return -EINVAL;
	uint64_t s = SESSION_VALID | ((uint64_t)port << 32) | truncate;
	__atomic_store_n(&sessions[session], s, __ATOMIC_RELAXED);
	return 0;
}

int
t4p4s_clone_session_clear(uint32_t session)
{
	if (session >= T4P4S_MAX_CLONE_SESSIONS)
		return -EINVAL;
	if (!(sessions[session] & SESSION_VALID))
		return -ENOENT;
	__atomic_store_n(&sessions[session], 0, __ATOMIC_RELAXED);
	return 0;
}

/* A one-segment packet that fits one mbuf is copied inline: rte_pktmbuf_copy
 * walks segments and copies offload metadata a clone does not need, and was
 * most of the cost of the gNB's copy to the buffering service. */
static inline struct rte_mbuf *
copy_contiguous(struct rte_mempool *pool, const struct rte_mbuf *m)
{
	struct rte_mbuf *copy = rte_pktmbuf_alloc(pool);
	if (unlikely(copy == NULL))
		return NULL;
	uint16_t len = rte_pktmbuf_data_len(m);
	if (unlikely(len > rte_pktmbuf_tailroom(copy))) {
		rte_pktmbuf_free(copy);
		return rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
	}
	rte_memcpy(rte_pktmbuf_mtod(copy, void *), rte_pktmbuf_mtod(m, const void *), len);
	copy->data_len = len;
	copy->pkt_len = len;
	copy->port = m->port;
	t4p4s_arrival_copy(copy, m);
	return copy;
}

bool
t4p4s_clone_session(struct t4p4s_lcore *lc, uint32_t session,
		    uint32_t *port, uint32_t *truncate)
{
	int32_t session_port = t4p4s_clone_session_port(session, truncate);
	if (session_port < 0) {
		lc->drops[T4P4S_DROP_CLONE_NO_SESSION]++;
		return false;
	}
	*port = (uint32_t)session_port;
	return true;
}

struct rte_mbuf *
t4p4s_clone_copy(struct t4p4s_lcore *lc, const struct rte_mbuf *m)
{
	struct rte_mbuf *copy = likely(rte_pktmbuf_is_contiguous(m))
		? copy_contiguous(lc->pool, m)
		: rte_pktmbuf_copy(m, lc->pool, 0, UINT32_MAX);
	if (unlikely(copy == NULL))
		lc->drops[T4P4S_DROP_CLONE_FAILED]++;
	return copy;
}

void
t4p4s_truncate(struct rte_mbuf *m, uint32_t len)
{
	if (rte_pktmbuf_pkt_len(m) <= len)
		return;
	m->pkt_len = len;
	struct rte_mbuf *seg = m;
	uint16_t kept = 1;
	while (seg->data_len < len && seg->next != NULL) {
		len -= seg->data_len;
		seg = seg->next;
		kept++;
	}
	seg->data_len = (uint16_t)len;
	struct rte_mbuf *rest = seg->next;
	seg->next = NULL;
	m->nb_segs = kept;
	if (rest != NULL) {
		rest->nb_segs = 1;   /* rte_pktmbuf_free walks it by ->next */
		rte_pktmbuf_free(rest);
	}
}
