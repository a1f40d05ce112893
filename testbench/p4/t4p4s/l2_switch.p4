/* L2 forwarding: destination MAC -> port; unknown destinations dropped. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t {
    ethernet_t ethernet;
}

struct metadata_t { }

parser EthernetParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control NoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table dmac {
        key = { hdr.ethernet.dstAddr : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 4096;
    }
    apply {
        dmac.apply();
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply { }
}

control NoComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control EthernetDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(EthernetParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         EthernetDeparser()) main;
