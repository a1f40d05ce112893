/* Shared by most test programs: Ethernet, then (EtherType 0x88b5, the IEEE
 * local experimental type) a 14-byte test header whose fields the programs
 * match on and write to, so expected packets are easy to write by hand:
 *
 *   dst(6) src(6) 88b5 | f1(4) f2(4) h1(2) h2(2) b1(1) b2(1) | payload
 */
#ifndef T4P4S_TEST_DATA_P4
#define T4P4S_TEST_DATA_P4

#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_DATA = 0x88b5;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<32> f1;
    bit<32> f2;
    bit<16> h1;
    bit<16> h2;
    bit<8>  b1;
    bit<8>  b2;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct metadata_t { }

parser DataParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_DATA: parse_data;
            default: accept;
        }
    }
    state parse_data {
        packet.extract(hdr.data);
        transition accept;
    }
}

control NoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control NoComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control NoEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control DataDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.data);
    }
}

#endif
