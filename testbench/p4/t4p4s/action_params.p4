/* Actions with directional parameters (bound in the table's action list or
 * at a direct call) next to control-plane parameters (from the entry). */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action write_byte(inout bit<8> target, bit<8> value) {
        target = value;
    }
    action add_to(inout bit<16> sum, in bit<16> amount) {
        sum = sum + amount;
    }
    table t {
        key = { hdr.data.f1 : exact; }
        actions = { write_byte(hdr.data.b2); NoAction; }
        default_action = NoAction();
    }
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.data.isValid()) {
            t.apply();
            add_to(hdr.data.h1, hdr.data.h2);
            write_byte(hdr.data.b1, 0x5a);
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
