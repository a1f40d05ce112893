/* Exact match on a two-field key: entries hit, a miss runs the default
 * action (drop). */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(bit<9> port, bit<8> tag) {
        standard_metadata.egress_spec = port;
        hdr.data.b1 = tag;
    }
    table t {
        key = {
            hdr.data.f1 : exact;
            hdr.data.h1 : exact;
        }
        actions = { forward; drop; }
        default_action = drop();
        size = 1024;
    }
    apply {
        if (hdr.data.isValid()) {
            t.apply();
        } else {
            drop();
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
