/* The control API (include/baas/api.h): API threads post commands to the
 * lcores' command rings and wait for them; the lcores run them once per
 * poll round (baas_commands_run) on their own DRBs. Events go the other
 * way: each lcore's events ring, drained by the events thread into a log
 * that any number of readers follow with their own cursor. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_spinlock.h>

#include "baas.h"
#include "options.h"

#define COMMAND_RING_SIZE 64
#define EVENT_RING_SIZE 4096
#define EVENT_LOG_SIZE 8192
#define EVENTS_DRAIN_MS 10

static __thread char last_error[256];
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

const char *
baas_api_last_error(void)
{
	return last_error;
}

static int
invalid(const char *what)
{
	snprintf(last_error, sizeof(last_error), "%s", what);
	return -EINVAL;
}

/* ---- commands ---- */

enum command_type {
	CMD_DRB_INFO, CMD_LIST_DRBS, CMD_LIST_SNS, CMD_GET_CONFIG, CMD_SET_CONFIG,
	CMD_SET_DEFAULTS, CMD_FLUSH,
};

struct command {
	enum command_type type;
	bool has_key;
	struct baas_drb_key key;
	struct baas_config config;
	rte_spinlock_t lock;          /* results, written by several lcores */
	bool found;
	struct baas_drb_info info;
	struct baas_drb_info *infos;
	size_t n_infos, cap_infos;
	uint32_t *sns;
	size_t max_sns, n_sns;
	uint64_t released;
	int pending;                  /* lcores yet to run it */
	int refs;                     /* the lcores' and the caller's */
};

static void
command_put(struct command *c)
{
	if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(c->infos);
		free(c);
	}
}

static struct rte_ring *
named_ring(const char *what, unsigned index, unsigned esize, unsigned count)
{
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "baas_%s_%u", what, index);
	struct rte_ring *r = rte_ring_create_elem(name, esize, count, (int)rte_socket_id(),
						  RING_F_SC_DEQ | (esize == sizeof(void *) ? 0 : RING_F_SP_ENQ));
	if (r == NULL && rte_errno == EEXIST) {
		/* a restarted secondary: its predecessor's ring, in the primary's
		 * memory; what it holds belonged to the dead process */
		r = rte_ring_lookup(name);
		if (r != NULL)
			rte_ring_reset(r);
	}
	if (r == NULL)
		fprintf(stderr, "error: cannot create the ring %s: %s\n", name,
			rte_strerror(rte_errno));
	return r;
}

int
baas_commands_init(void)
{
	for (unsigned w = 0; w < baas.n_lcores; w++) {
		struct baas_lcore *lc = baas.lcores[w];
		lc->commands = named_ring("cmd", w, sizeof(void *), COMMAND_RING_SIZE);
		lc->events = named_ring("ev", w, sizeof(struct baas_event), EVENT_RING_SIZE);
		if (lc->commands == NULL || lc->events == NULL)
			return -1;
	}
	return 0;
}

static int
add_info(struct baas_drb *d, void *arg)
{
	struct command *c = arg;
	if (c->n_infos == c->cap_infos) {
		size_t cap = c->cap_infos ? c->cap_infos * 2 : 256;
		struct baas_drb_info *infos = realloc(c->infos, cap * sizeof(*infos));
		if (infos == NULL)
			return -ENOMEM;
		c->infos = infos;
		c->cap_infos = cap;
	}
	baas_drb_info(d, &c->infos[c->n_infos++]);
	return 0;
}

static int
flush_one(struct baas_drb *d, void *arg)
{
	struct baas_lcore *lc = arg;
	uint64_t n = baas_drb_flush(lc, d);
	lc->totals.released_flush += n;
	return 0;
}

/* a DRB that follows the defaults gets their (new) bound */
static int
apply_default_bound(struct baas_drb *d, void *arg)
{
	if (!d->own_config)
		baas_drb_apply_bound(arg, d);
	return 0;
}

static void
list_sns(const struct baas_drb *d, struct command *c)
{
	for (uint32_t off = 0; off < ((d->tx_next - d->tx_next_ack) & d->sn_mask) &&
	     c->n_sns < c->max_sns; off++) {
		uint32_t sn = (d->tx_next_ack + off) & d->sn_mask;
		const struct baas_slot *s = &d->slots[sn & (d->cap - 1)];
		if (s->m != NULL && s->sn == sn)
			c->sns[c->n_sns++] = sn;
	}
}

static void
run_command(struct baas_lcore *lc, struct command *c)
{
	struct baas_drb *d = c->has_key ? baas_drb_find(&lc->drbs, &c->key) : NULL;
	rte_spinlock_lock(&c->lock);
	if (d != NULL)
		c->found = true;
	switch (c->type) {
	case CMD_DRB_INFO:
		if (d != NULL)
			baas_drb_info(d, &c->info);
		break;
	case CMD_LIST_DRBS:
		baas_drb_foreach(&lc->drbs, add_info, c);
		break;
	case CMD_LIST_SNS:
		if (d != NULL)
			list_sns(d, c);
		break;
	case CMD_GET_CONFIG:
		if (d != NULL) {
			c->config = *baas_drb_config(lc, d);
			c->config.max_pdus = 0;   /* a global bound: never a DRB's (api.h) */
		}
		break;
	case CMD_SET_CONFIG:
		if (d != NULL) {
			d->own_config = true;
			d->config = c->config;
			baas_drb_apply_bound(lc, d);
		}
		break;
	case CMD_SET_DEFAULTS:
		lc->defaults = c->config;
		lc->drbs.max_held = baas_held_share(lc, c->config.max_pdus);
		baas_drb_foreach(&lc->drbs, apply_default_bound, lc);
		break;
	case CMD_FLUSH:
		if (c->has_key && d != NULL) {
			uint64_t n = baas_drb_flush(lc, d);
			lc->totals.released_flush += n;
			c->released += n;
		} else if (!c->has_key) {
			uint64_t before = lc->totals.released_flush;
			baas_drb_foreach(&lc->drbs, flush_one, lc);
			c->released += lc->totals.released_flush - before;
		}
		baas_free_flush(lc);
		break;
	}
	rte_spinlock_unlock(&c->lock);
	__atomic_sub_fetch(&c->pending, 1, __ATOMIC_RELEASE);
	command_put(c);
}

void
baas_commands_run(struct baas_lcore *lc)
{
	void *c;
	while (rte_ring_dequeue(lc->commands, &c) == 0)
		run_command(lc, c);
}

static struct command *
command_new(enum command_type type, const struct baas_drb_key *key)
{
	struct command *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->type = type;
	c->has_key = key != NULL;
	if (key != NULL)
		c->key = *key;
	rte_spinlock_init(&c->lock);
	return c;
}

/* Runs c on every lcore; 0 or -ETIMEDOUT/-ESHUTDOWN. The caller keeps
 * its reference and puts it. */
static int
command_run(struct command *c)
{
	c->refs = (int)baas.n_lcores + 1;
	c->pending = (int)baas.n_lcores;
	for (unsigned w = 0; w < baas.n_lcores; w++) {
		while (rte_ring_enqueue(baas.lcores[w]->commands, c) != 0) {
			if (baas.quit) {
				/* the lcores that did not get it never will */
				for (unsigned k = w; k < baas.n_lcores; k++)
					command_put(c);
				return -ESHUTDOWN;
			}
			usleep(100);
		}
	}
	for (unsigned waited_us = 0; __atomic_load_n(&c->pending, __ATOMIC_ACQUIRE) > 0;
	     waited_us += 50) {
		if (baas.quit)
			return -ESHUTDOWN;
		if (waited_us >= BAAS_API_TIMEOUT_MS * 1000u)
			return -ETIMEDOUT;
		usleep(50);
	}
	return 0;
}

static int
check_key(const struct baas_drb_key *key)
{
	if (key != NULL && key->lcid >= 64)
		return invalid("lcid must be 0..63 (NR's LCID has 6 bits, TS 38.321 6.2.1)");
	return 0;
}

/* A command for the DRB key (NULL: every DRB); NULL with *ret set when
 * the key is invalid or memory short. */
static struct command *
command_for(enum command_type type, const struct baas_drb_key *key, int *ret)
{
	*ret = check_key(key);
	if (*ret != 0)
		return NULL;
	struct command *c = command_new(type, key);
	*ret = c == NULL ? -ENOMEM : 0;
	return c;
}

/* Runs c on every lcore under the API lock; -ENOENT when it names a DRB
 * no lcore has. */
static int
run_for_key(struct command *c)
{
	pthread_mutex_lock(&api_lock);
	int ret = command_run(c);
	pthread_mutex_unlock(&api_lock);
	return ret == 0 && c->has_key && !c->found ? -ENOENT : ret;
}

int
baas_api_drb(const struct baas_drb_key *key, struct baas_drb_info *out)
{
	int ret;
	struct command *c = command_for(CMD_DRB_INFO, key, &ret);
	if (c == NULL)
		return ret;
	ret = run_for_key(c);
	if (ret == 0)
		*out = c->info;
	command_put(c);
	return ret;
}

static int
info_order(const void *a, const void *b)
{
	const struct baas_drb_info *x = a, *y = b;
	uint32_t kx = (uint32_t)x->key.ue_id << 8 | x->key.lcid;
	uint32_t ky = (uint32_t)y->key.ue_id << 8 | y->key.lcid;
	return kx < ky ? -1 : kx > ky;
}

int
baas_api_list_drbs(int (*fn)(const struct baas_drb_info *, void *), void *arg)
{
	int ret;
	struct command *c = command_for(CMD_LIST_DRBS, NULL, &ret);
	if (c == NULL)
		return ret;
	ret = run_for_key(c);
	if (ret == 0) {
		if (c->n_infos > 1)   /* qsort's pointer must be valid even for none */
			qsort(c->infos, c->n_infos, sizeof(c->infos[0]), info_order);
		for (size_t i = 0; i < c->n_infos && fn(&c->infos[i], arg) == 0; i++)
			;
	}
	command_put(c);
	return ret;
}

int
baas_api_list_sns(const struct baas_drb_key *key, uint32_t *sns, size_t max, size_t *n)
{
	int ret;
	struct command *c = command_for(CMD_LIST_SNS, key, &ret);
	if (c == NULL)
		return ret;
	c->sns = sns;
	c->max_sns = max;
	ret = run_for_key(c);
	if (ret == 0)
		*n = c->n_sns;
	/* an lcore that has not run it yet must not write sns after we return */
	if (ret == -ETIMEDOUT || ret == -ESHUTDOWN) {
		rte_spinlock_lock(&c->lock);
		c->max_sns = 0;
		rte_spinlock_unlock(&c->lock);
	}
	command_put(c);
	return ret;
}

int
baas_api_global(struct baas_global_info *out)
{
	memset(out, 0, sizeof(*out));
	out->n_lcores = baas.n_lcores;
	out->pool_size = baas.pool->size;
	out->pool_in_use = rte_mempool_in_use_count(baas.pool);
	for (unsigned w = 0; w < baas.n_lcores; w++) {
		const struct baas_lcore *lc = baas.lcores[w];
		out->n_drbs += lc->drbs.n_drbs;
		out->held += lc->drbs.held;
		out->held_bytes += lc->drbs.held_bytes;
		baas_counters_add(&out->counters, &lc->totals);
	}
	return 0;
}

int
baas_api_get_config(const struct baas_drb_key *key, struct baas_config *out)
{
	if (key == NULL) {
		pthread_mutex_lock(&api_lock);
		*out = baas.defaults;
		pthread_mutex_unlock(&api_lock);
		return 0;
	}
	int ret;
	struct command *c = command_for(CMD_GET_CONFIG, key, &ret);
	if (c == NULL)
		return ret;
	ret = run_for_key(c);
	if (ret == 0)
		*out = c->config;
	command_put(c);
	return ret;
}

int
baas_api_set_config(const struct baas_drb_key *key, const struct baas_config *cfg)
{
	int ret = check_key(key);
	if (ret != 0)
		return ret;
	const char *why = baas_config_check(cfg, key == NULL);
	if (why != NULL)
		return invalid(why);
	struct command *c = command_for(key == NULL ? CMD_SET_DEFAULTS : CMD_SET_CONFIG, key,
					&ret);
	if (c == NULL)
		return ret;
	c->config = *cfg;
	pthread_mutex_lock(&api_lock);
	ret = command_run(c);
	if (ret == 0 && key == NULL)
		baas.defaults = *cfg;
	pthread_mutex_unlock(&api_lock);
	if (ret == 0 && key != NULL && !c->found)
		ret = -ENOENT;
	command_put(c);
	return ret;
}

int
baas_api_flush(const struct baas_drb_key *key, uint64_t *released)
{
	int ret;
	struct command *c = command_for(CMD_FLUSH, key, &ret);
	if (c == NULL)
		return ret;
	ret = run_for_key(c);
	if (ret == 0 && released != NULL)
		*released = c->released;
	command_put(c);
	return ret;
}

/* ---- events ---- */

static struct baas_event event_log[EVENT_LOG_SIZE];
static uint64_t next_seq = 1;             /* the seq the next event gets */
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t events_came = PTHREAD_COND_INITIALIZER;
static pthread_t events_thread;
static volatile bool events_stopping;
static bool events_started;

void
baas_raise_event(struct baas_lcore *lc, enum baas_event_type type,
		 const struct baas_drb_key *key, uint32_t sn, uint32_t count)
{
	struct baas_event e = { .type = type, .key = *key, .sn = sn, .count = count };
	if (rte_ring_enqueue_elem(lc->events, &e, sizeof(e)) != 0)
		lc->events_lost++;
}

static void
drain_events(void)
{
	struct baas_event batch[64];
	bool any = false;
	for (unsigned w = 0; w < baas.n_lcores; w++) {
		unsigned n;
		while ((n = rte_ring_dequeue_burst_elem(baas.lcores[w]->events, batch,
							sizeof(batch[0]), 64, NULL)) > 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			pthread_mutex_lock(&events_lock);
			for (unsigned i = 0; i < n; i++) {
				batch[i].seq = next_seq;
				batch[i].time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
				event_log[next_seq % EVENT_LOG_SIZE] = batch[i];
				next_seq++;
			}
			pthread_mutex_unlock(&events_lock);
			any = true;
		}
	}
	if (any)
		pthread_cond_broadcast(&events_came);
}

static void *
events_main(void *unused __rte_unused)
{
	while (!events_stopping) {
		drain_events();
		usleep(EVENTS_DRAIN_MS * 1000);
	}
	return NULL;
}

int
baas_events_start(void)
{
	int ret = rte_ctrl_thread_create(&events_thread, "baas-events", NULL, events_main, NULL);
	if (ret != 0) {
		fprintf(stderr, "error: cannot start the events thread: %s\n", strerror(ret));
		return -1;
	}
	events_started = true;
	return 0;
}

void
baas_events_stop(void)
{
	if (!events_started)
		return;
	events_stopping = true;
	pthread_join(events_thread, NULL);
	pthread_mutex_lock(&events_lock);
	pthread_cond_broadcast(&events_came);
	pthread_mutex_unlock(&events_lock);
	events_started = false;
}

int
baas_api_events(uint64_t *cursor, struct baas_event *out, size_t max, size_t *n,
		uint64_t *lost, int timeout_ms)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	*n = 0;
	*lost = 0;
	pthread_mutex_lock(&events_lock);
	if (*cursor == 0)
		*cursor = next_seq;
	while (next_seq <= *cursor && !events_stopping && !baas.quit &&
	       pthread_cond_timedwait(&events_came, &events_lock, &until) == 0)
		;
	uint64_t oldest = next_seq > EVENT_LOG_SIZE ? next_seq - EVENT_LOG_SIZE : 1;
	if (*cursor < oldest) {
		*lost = oldest - *cursor;
		*cursor = oldest;
	}
	while (*cursor < next_seq && *n < max)
		out[(*n)++] = event_log[(*cursor)++ % EVENT_LOG_SIZE];
	bool stopping = events_stopping || baas.quit;
	pthread_mutex_unlock(&events_lock);
	return *n == 0 && stopping ? -ESHUTDOWN : 0;
}
