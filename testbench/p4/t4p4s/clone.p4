/* clone(): ingress-to-egress (the clone carries the packet as received)
 * and egress-to-egress (the clone carries the packet as the egress
 * deparsed it); each clone goes through egress again, telling itself apart
 * by standard_metadata.instance_type (1: I2E clone, 2: E2E clone). */
#include "common/data.p4"

const bit<32> I2E_SESSION = 5;
const bit<32> E2E_SESSION = 6;
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE = 2;

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.data.isValid() && hdr.data.b1 == 1) {
            clone(CloneType.I2E, I2E_SESSION);
            // after the clone() call: the clone must not see this
            hdr.ethernet.srcAddr = 0xaaaaaaaaaaaa;
        }
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE) {
            hdr.data.b2 = 0xc1;
        } else if (standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            hdr.data.b2 = 0xc2;
        } else if (hdr.data.isValid()) {
            hdr.data.h2 = 0x0e0e;
            if (hdr.data.b1 == 2) {
                clone(CloneType.E2E, E2E_SESSION);
            }
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         DataDeparser()) main;
