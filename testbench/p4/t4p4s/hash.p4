/* hash(): crc32, crc16 (also with a base and a modulus) and identity over
 * lists of header fields. */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        if (!hdr.data.isValid()) {
            mark_to_drop(standard_metadata);
        } else {
            bit<32> c32;
            bit<16> c16;
            bit<16> c16_mod;
            bit<32> id32;
            hash(c32, HashAlgorithm.crc32, 32w0, { hdr.data.f1, hdr.data.h1 }, 64w0x100000000);
            hash(c16, HashAlgorithm.crc16, 16w0, { hdr.data.f1, hdr.data.h1 }, 32w0x10000);
            hash(c16_mod, HashAlgorithm.crc16, 16w5, { hdr.data.f1, hdr.data.h1 }, 32w1000);
            hash(id32, HashAlgorithm.identity, 32w0,
                 { hdr.data.h1, hdr.data.b1, hdr.data.b2 }, 64w0x100000000);
            hdr.data.f2 = c32;
            hdr.data.h2 = c16;
            hdr.data.h1 = c16_mod;
            hdr.ethernet.srcAddr = (bit<48>)id32;
            standard_metadata.egress_spec = 1;
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
