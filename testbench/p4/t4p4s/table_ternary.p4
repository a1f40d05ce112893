/* Ternary match with overlapping entries: the larger priority wins,
 * whatever the order the entries were added in. */
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
            hdr.data.h1 : ternary;
        }
        actions = { forward; drop; }
        default_action = drop();
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
