/* Parser select: tuples, don't-care (_), masks (&&&), ranges (..), default,
 * lookahead and advance. The ingress writes which parser path the packet
 * took into sel.path. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header sel_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> path;
}

struct headers_t {
    ethernet_t ethernet;
    sel_t      sel;
}

struct metadata_t {
    bit<16> path;
}

parser SelectParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_sel;
            default: accept;
        }
    }
    state parse_sel {
        packet.extract(hdr.sel);
        transition select(hdr.sel.a, hdr.sel.b) {
            (0x01, 0x01): tuple_exact;
            (0x02, _): tuple_dont_care;
            (0x10 &&& 0xf0, 0x00 &&& 0x00): masked;
            (0x20 .. 0x2f, _): ranged;
            default: other;
        }
    }
    state tuple_exact {
        meta.path = 1;
        transition accept;
    }
    state tuple_dont_care {
        meta.path = 2;
        transition accept;
    }
    state masked {
        meta.path = 3;
        transition accept;
    }
    state ranged {
        meta.path = 4;
        transition accept;
    }
    state other {
        meta.path = 5;
        transition select(packet.lookahead<bit<8>>()) {
            0xff: skip_marker;
            default: accept;
        }
    }
    state skip_marker {
        packet.advance(8);
        meta.path = 6;
        transition accept;
    }
}

control NoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.sel.isValid()) {
            hdr.sel.path = meta.path;
        }
        standard_metadata.egress_spec = 1;
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply { }
}

control NoComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control SelectDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.sel);
    }
}

V1Switch(SelectParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         SelectDeparser()) main;
