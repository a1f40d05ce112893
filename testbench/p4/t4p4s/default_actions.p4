/* Default actions: a plain default_action the control plane can replace,
 * and a const default_action it cannot. Both tables stay empty. */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action set_b1(bit<8> value) {
        hdr.data.b1 = value;
    }
    action set_b2(bit<8> value) {
        hdr.data.b2 = value;
    }
    table plain_default {
        key = { hdr.data.f1 : exact; }
        actions = { set_b1; NoAction; }
        default_action = set_b1(0x77);
    }
    table const_default {
        key = { hdr.data.f1 : exact; }
        actions = { set_b2; }
        const default_action = set_b2(0x88);
    }
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.data.isValid()) {
            plain_default.apply();
            const_default.apply();
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
