/* Longest-prefix match, including a /0 default route and a /32 host route. */
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
    table routes {
        key = { hdr.data.f2 : lpm; }
        actions = { forward; drop; }
        default_action = drop();
    }
    apply {
        if (hdr.data.isValid()) {
            routes.apply();
        } else {
            drop();
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
