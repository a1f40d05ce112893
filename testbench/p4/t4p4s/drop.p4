/* Dropping: mark_to_drop in ingress, mark_to_drop in egress, and
 * egress_spec set to the v1model drop port 511. */
#include "common/data.p4"

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.data.b1 == 0xd1) {
            mark_to_drop(standard_metadata);
        } else if (hdr.data.b1 == 0xd2) {
            standard_metadata.egress_spec = 511;
        }
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.data.b2 == 0xd3) {
            mark_to_drop(standard_metadata);
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         DataDeparser()) main;
