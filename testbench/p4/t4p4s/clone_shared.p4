/* Egress-to-egress clones that are the original's bytes go out as the
 * original's mbuf once more, with no copy (t4p4s/backend/c/shared_clone.py):
 * egress does nothing for a clone, and computeChecksum either reads headers
 * only (h1 over f1: the same for the clone) or is skipped by clones (h2 over
 * f2, for packets ingress marks in metadata, which clones do not keep).
 * A marked original is copied instead, so that its clone keeps the h2 egress
 * left; so are clones to a truncating session and clones of originals that
 * egress drops.  b1 bit 0: mark, bit 1: truncating session, bit 2: drop. */
#include <core.p4>
#include <v1model.p4>

const bit<32> SHARED_SESSION = 6;
const bit<32> TRUNCATING_SESSION = 7;

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

struct metadata_t {
    bit<1> sum_f2;
}

parser DataParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_data;
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

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.data.isValid()) {
            meta.sum_f2 = hdr.data.b1[0:0];
        }
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == 0 && hdr.data.isValid()) {
            hdr.data.b2 = 0xee;      // before the clone: E2E clones have it
            if (hdr.data.b1[1:1] == 1) {
                clone(CloneType.E2E, TRUNCATING_SESSION);
            } else {
                clone(CloneType.E2E, SHARED_SESSION);
            }
            if (hdr.data.b1[2:2] == 1) {
                mark_to_drop(standard_metadata);
            }
        }
    }
}

control Checksums(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.data.isValid(), { hdr.data.f1 }, hdr.data.h1, HashAlgorithm.csum16);
        update_checksum(hdr.data.isValid() && meta.sum_f2 == 1, { hdr.data.f2 }, hdr.data.h2,
                        HashAlgorithm.csum16);
    }
}

control DataDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.data);
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), egress(), Checksums(),
         DataDeparser()) main;
