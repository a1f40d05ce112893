/* Header stacks: the parser extracts labels with .next until .last.bos is
 * set (a fifth label is StackOutOfBounds); the ingress pops or pushes
 * depending on the first label. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header label_t {
    bit<8> op;
    bit<7> ttl;
    bit<1> bos;
}

struct headers_t {
    ethernet_t ethernet;
    label_t[4] labels;
}

struct metadata_t { }

const bit<8> OP_POP = 1;
const bit<8> OP_PUSH = 2;

parser StackParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8847: parse_label;
            default: accept;
        }
    }
    state parse_label {
        packet.extract(hdr.labels.next);
        transition select(hdr.labels.last.bos) {
            1: accept;
            default: parse_label;
        }
    }
}

control NoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (standard_metadata.parser_error == error.StackOutOfBounds) {
            hdr.ethernet.etherType = 0xdead;
            standard_metadata.egress_spec = 2;
        } else if (hdr.labels[0].isValid()) {
            if (hdr.labels[0].op == OP_POP) {
                hdr.labels.pop_front(1);
            } else if (hdr.labels[0].op == OP_PUSH) {
                hdr.labels.push_front(1);
                hdr.labels[0].setValid();
                hdr.labels[0].op = 0xee;
                hdr.labels[0].ttl = 0x7f;
                hdr.labels[0].bos = 0;
            }
        }
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply { }
}

control NoComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control StackDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.labels);
    }
}

V1Switch(StackParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         StackDeparser()) main;
