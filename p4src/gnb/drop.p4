/* Dropping with a reason: every control marks the packet, and the ingress
 * counts it once at its end (DropAccounting), so no drop goes uncounted and
 * none is counted twice. */
#ifndef GNB_DROP_P4
#define GNB_DROP_P4

#include "headers.p4"

#define GNB_DROP(meta, reason) { meta.drop = 1; meta.drop_reason = reason; }

control DropAccounting(inout gnb_metadata_t meta, inout standard_metadata_t standard_metadata) {
    @name(".drop_counter") counter(DROP_REASONS, CounterType.packets_and_bytes) drop_counter;

    apply {
        if (meta.drop == 1) {
            drop_counter.count((bit<32>)meta.drop_reason);
            mark_to_drop(standard_metadata);
        }
    }
}

#endif
