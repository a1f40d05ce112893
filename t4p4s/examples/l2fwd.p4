/* L2 forward, the benchmark's reference program: swap source and
 * destination MAC, send the frame out of the paired port (0 <-> 1,
 * 2 <-> 3, ...). The same work as dpdk-testpmd --forward-mode=macswap. */
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

parser L2Parser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control L2VerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control L2Ingress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        bit<48> destination = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = hdr.ethernet.srcAddr;
        hdr.ethernet.srcAddr = destination;
        standard_metadata.egress_spec = standard_metadata.ingress_port ^ 1;
    }
}

control L2Egress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control L2ComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control L2Deparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(L2Parser(), L2VerifyChecksum(), L2Ingress(), L2Egress(), L2ComputeChecksum(),
         L2Deparser()) main;
