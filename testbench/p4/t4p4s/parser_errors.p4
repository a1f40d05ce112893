/* Parser errors reach the ingress in standard_metadata.parser_error:
 * PacketTooShort (truncated header), NoMatch (select without default), and
 * a program-defined error raised by verify(). */
#include <core.p4>
#include <v1model.p4>

error { BadValue }

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

parser CheckingParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_data;
            0x0800: accept;
        }
    }
    state parse_data {
        packet.extract(hdr.data);
        verify(hdr.data.b1 != 0xff, error.BadValue);
        transition accept;
    }
}

control NoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error == error.NoError) {
            standard_metadata.egress_spec = 1;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            standard_metadata.egress_spec = 2;
        } else if (standard_metadata.parser_error == error.BadValue) {
            standard_metadata.egress_spec = 3;
        } else if (standard_metadata.parser_error == error.NoMatch) {
            standard_metadata.egress_spec = 4;
        } else {
            mark_to_drop(standard_metadata);
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

control DataDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.data);
    }
}

V1Switch(CheckingParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         DataDeparser()) main;
