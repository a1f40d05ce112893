/* const entries: exact entries, and ternary entries where the one written
 * first wins (P4-16: program order is priority order). */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action tag(bit<8> value) {
        hdr.data.b2 = value;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table ports {
        key = { hdr.data.h1 : exact; }
        actions = { forward; drop; }
        default_action = drop();
        const entries = {
            0x0001 : forward(1);
            0x0002 : forward(2);
            0x0003 : drop();
        }
    }
    table tags {
        key = { hdr.data.h2 : ternary; }
        actions = { tag; NoAction; }
        default_action = NoAction();
        const entries = {
            0x1200 &&& 0xff00 : tag(0x12);
            0x1234 &&& 0xffff : tag(0x34);
            _ : tag(0xff);
        }
    }
    apply {
        if (hdr.data.isValid()) {
            ports.apply();
            tags.apply();
        } else {
            drop();
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
