/* Counters: an indexed counter per ingress port (packets and bytes) and a
 * direct counter on a table's entries. */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    counter(8, CounterType.packets_and_bytes) port_counter;
    direct_counter(CounterType.packets_and_bytes) hits;

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
        counters = hits;
    }
    apply {
        port_counter.count((bit<32>)standard_metadata.ingress_port);
        if (hdr.data.isValid()) {
            t.apply();
        } else {
            drop();
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
