#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_IPV4 = 0x800;
typedef bit<48> mac_t;

header ethernet_t {
    mac_t dstAddr;
    mac_t srcAddr;
    bit<16> etherType;
}
struct headers { ethernet_t ethernet; }
struct metadata { bit<12> sn; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType, packet.lookahead<bit<8>>()) {
            (TYPE_IPV4, 0x45 &&& 0xff): accept;
            (0x8100 .. 0x8200, _): accept;
            default: reject;
        }
    }
}
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) {
    register<bit<32>>(1024) r;
    action fwd(PortId_t port) { standard_metadata.egress_spec = port; }
    action drop() { mark_to_drop(standard_metadata); }
    table l2 {
        key = { hdr.ethernet.dstAddr : exact @name("dst"); }
        actions = { fwd; drop; @defaultonly NoAction; }
        default_action = drop();
        size = 1024;
        const entries = {
            0x000000000001 : fwd(1);
            priority = 3 : 0x2 : fwd(2);
        }
    }
    apply {
        bit<32> x = 3;
        r.read(x, 0);
        x = x >> 2 + (bit<32>)meta.sn;
        if (x < 5 && hdr.ethernet.isValid()) { l2.apply(); }
        switch (l2.apply().action_run) { fwd: { } drop: default: { exit; } }
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) { apply { packet.emit(hdr.ethernet); } }
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
