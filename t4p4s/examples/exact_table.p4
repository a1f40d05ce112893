/* Exact match on the IPv4 destination with room for 65,536 entries, the
 * benchmark's table program: a hit sets the egress port and rewrites the
 * destination MAC; a miss drops. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

struct metadata_t { }

parser ExactParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control ExactVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ExactIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(bit<9> port, bit<48> dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dstAddr = dmac;
    }
    table ipv4_exact {
        key = { hdr.ipv4.dstAddr : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 65536;
    }
    apply {
        if (hdr.ipv4.isValid()) {
            ipv4_exact.apply();
        } else {
            drop();
        }
    }
}

control ExactEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply { }
}

control ExactComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ExactDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(ExactParser(), ExactVerifyChecksum(), ExactIngress(), ExactEgress(),
         ExactComputeChecksum(), ExactDeparser()) main;
