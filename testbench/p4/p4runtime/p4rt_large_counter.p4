/* One indexed counter with as many cells as the gNB's two per-DRB counters
 * together (2 x MAX_DRBS = 131,072), for the P4Runtime server's large-read
 * tests, and a small table for writes to go on while such a read runs. */
#include "../t4p4s/common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    counter(131072, CounterType.packets_and_bytes) per_drb;

    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table t {
        key = { hdr.data.f1 : exact; }
        actions = { forward; drop; }
        default_action = drop();
    }
    apply {
        if (!hdr.data.isValid()) {
            drop();
            return;
        }
        per_drb.count(hdr.data.f1 & 0x1ffff);
        t.apply();
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
