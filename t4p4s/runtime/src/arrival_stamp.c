#include <stdio.h>

#include <rte_errno.h>

#include "arrival_stamp.h"

int t4p4s_arrival_offset = -1;
/* no frame is stamped until the flag is registered: a 0 bit never matches */
uint64_t t4p4s_arrival_flag;

int
t4p4s_arrival_stamp_register(void)
{
	static const struct rte_mbuf_dynfield field = {
		.name = "t4p4s_arrival_tsc",
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};
	static const struct rte_mbuf_dynflag flag = { .name = "t4p4s_arrival_stamped" };
	if (t4p4s_arrival_offset >= 0)
		return 0;
	int offset = rte_mbuf_dynfield_register(&field);
	int bit = offset < 0 ? -1 : rte_mbuf_dynflag_register(&flag);
	if (offset < 0 || bit < 0) {
		fprintf(stderr, "error: cannot register the arrival stamp's mbuf field: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	t4p4s_arrival_offset = offset;
	t4p4s_arrival_flag = RTE_BIT64(bit);
	return 0;
}
