/* An exact table whose every hit writes 16 bytes of the packet from the
 * entry's action data (both MAC addresses and f2), for the test that
 * replaces entries under traffic (testbench/tests/runtime/
 * test_entry_replacement_under_traffic.py): a forwarded frame shows exactly
 * which entry the lcore read, and one read from freed or reused memory
 * shows as bytes no entry ever held. `stamp` is the table's first action
 * (index 0), so even an all-zero entry is applied and seen rather than
 * dropped; a miss drops, so only frames that hit an entry are sent. */
#include "../t4p4s/common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action stamp(bit<48> dmac, bit<48> smac, bit<32> f2) {
        hdr.ethernet.dstAddr = dmac;
        hdr.ethernet.srcAddr = smac;
        hdr.data.f2 = f2;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table stamps {
        key = { hdr.data.f1 : exact; }
        actions = { stamp; drop; }
        default_action = drop();
        size = 1024;
    }
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.data.isValid()) {
            stamps.apply();
        } else {
            drop();
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
