/* Registers: a per-port packet count (read-modify-write, written into the
 * packet) and an 8-bit register that wraps around. */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    register<bit<32>>(8) per_port;
    register<bit<8>>(1) wrap8;

    apply {
        if (!hdr.data.isValid()) {
            mark_to_drop(standard_metadata);
        } else {
            bit<32> count;
            per_port.read(count, (bit<32>)standard_metadata.ingress_port);
            count = count + 1;
            per_port.write((bit<32>)standard_metadata.ingress_port, count);
            hdr.data.f1 = count;

            bit<8> small;
            wrap8.read(small, 0);
            small = small + 1;
            wrap8.write(0, small);
            hdr.data.b2 = small;

            standard_metadata.egress_spec = standard_metadata.ingress_port ^ 1;
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;
