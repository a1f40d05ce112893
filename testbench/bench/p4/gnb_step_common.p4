/* What the benchmark steps share: the gNB blocks, and an egress that does
 * nothing (the clone to the buffering service is the last step). */
#include "../../../p4src/gnb/pipeline.p4"

control StepEgressWithoutClone(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                               inout standard_metadata_t standard_metadata) {
    apply { }
}
