/* Expressions: slices (read and write), concatenation, casts (widening,
 * narrowing, signed <-> unsigned with sign extension), wrap-around
 * arithmetic on bit<W>, arithmetic shift and comparison on int<W>. */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        if (!hdr.data.isValid()) {
            mark_to_drop(standard_metadata);
        } else {
            bit<32> f1 = hdr.data.f1;
            // swap the halves: slice ++ slice
            hdr.data.f1 = f1[15:0] ++ f1[31:16];
            // unsigned arithmetic wraps around
            hdr.data.f2 = hdr.data.f2 - 32w0x100;
            hdr.data.h1 = hdr.data.h1 + hdr.data.h2;
            hdr.data.b2 = hdr.data.b2 * 8w100;
            // arithmetic shift of a negative int<8>
            int<8> s = (int<8>)hdr.data.b1;
            s = s >> 1;
            hdr.data.b1 = (bit<8>)s;
            // write to a slice
            hdr.data.h2[15:8] = 8w0xab;
            // 16 + 32 bits concatenated into a 48-bit field
            hdr.ethernet.srcAddr = 16w0xbeef ++ f1;
            // signed difference, sign-extended to 48 bits
            int<16> diff = (int<16>)hdr.data.h1 - 16s3;
            hdr.ethernet.dstAddr = (bit<48>)(int<48>)diff;
            if (diff < 0) {
                standard_metadata.egress_spec = 1;
            } else {
                standard_metadata.egress_spec = 2;
            }
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
