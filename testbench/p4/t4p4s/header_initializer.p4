/* Whole-header assignment from a list: every field of the right-hand side
 * is read before the header is written (so swapping two fields works), and
 * an invalid header becomes valid. The back end writes headers of at most
 * 64 bits with one store, which is what this checks byte for byte. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header small_t { bit<4> a; bit<4> b; bit<8> c; bit<16> d; }
header word_t { bit<32> x; bit<32> y; }
header tag_t { bit<3> p; bit<13> q; }

struct headers_t { ethernet_t ethernet; tag_t tag; small_t small; word_t word; }
struct metadata_t { }

parser Parse(packet_in packet, out headers_t hdr, inout metadata_t meta,
             inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.small);
        packet.extract(hdr.word);
        transition accept;
    }
}

control SwapIngress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        hdr.small = { hdr.small.b, hdr.small.a, hdr.small.c + 1, hdr.small.d };
        hdr.word = { hdr.word.y, hdr.word.x };
        hdr.tag = { 5, (bit<13>)hdr.small.c };
    }
}

control NoVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }
control NoCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }
control NoEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control Deparse(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.tag);
        packet.emit(hdr.small);
        packet.emit(hdr.word);
    }
}

V1Switch(Parse(), NoVerify(), SwapIngress(), NoEgress(), NoCompute(), Deparse()) main;
