/* Frames shorter than an Ethernet header, down to 0 bytes, in and out of
 * the pipeline unchanged (the STF runner's ring ports carry them; veths
 * cannot). A 3-byte header: a complete one is counted up in `a` and goes
 * out port 1, a frame too short for it (PacketTooShort) out port 2 as it
 * came. */
#include <core.p4>
#include <v1model.p4>

header tiny_t {
    bit<8>  a;
    bit<16> b;
}

struct headers_t {
    tiny_t tiny;
}

struct metadata_t { }

parser TinyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.tiny);
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
            hdr.tiny.a = hdr.tiny.a + 1;
            standard_metadata.egress_spec = 1;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            standard_metadata.egress_spec = 2;
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

control TinyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.tiny);
    }
}

V1Switch(TinyParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         TinyDeparser()) main;
