/* Control flow: switch on a table's action_run (with default), .hit and
 * .miss, and exit (which ends the ingress; the egress still runs). */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action first() { }
    action second() { }
    table by_f1 {
        key = { hdr.data.f1 : exact; }
        actions = { first; second; NoAction; }
        default_action = NoAction();
    }
    table by_f2 {
        key = { hdr.data.f2 : exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    table by_src {
        key = { hdr.ethernet.srcAddr : exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    apply {
        if (!hdr.data.isValid()) {
            mark_to_drop(standard_metadata);
            exit;
        }
        standard_metadata.egress_spec = 1;
        switch (by_f1.apply().action_run) {
            first: { hdr.data.b1 = 0x11; }
            second: { hdr.data.b1 = 0x22; }
            default: { hdr.data.b1 = 0xdd; }
        }
        if (by_f2.apply().hit) {
            hdr.data.h1 = 0x0001;
        } else {
            hdr.data.h1 = 0x0002;
        }
        if (by_src.apply().miss) {
            hdr.data.b2 = 0x4d;
        }
        if (hdr.data.b2 == 0xee) {
            exit;
        }
        hdr.data.h2 = 0x5555;
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply {
        hdr.ethernet.dstAddr = 0xe9e9e9e9e9e9;
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         DataDeparser()) main;
