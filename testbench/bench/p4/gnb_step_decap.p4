/* Benchmark step "+ GTP decap" (paper 001 Fig. 7/8): the gNB parser, the
 * GTP-U checks and the decapsulation, then out on the radio port. */
#include "gnb_step_common.p4"

control StepIngress(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    DlGtpValidation() dl_validation;
    DlGtpDecap() dl_decap;
    DropAccounting() drops;

    apply {
        dl_validation.apply(hdr, meta, standard_metadata);
        if (meta.drop == 0) {
            dl_decap.apply(hdr, meta, standard_metadata);
            standard_metadata.egress_spec = RADIO_PORT;
        }
        drops.apply(meta, standard_metadata);
    }
}

V1Switch(GnbParser(), GnbVerifyChecksum(), StepIngress(), StepEgressWithoutClone(), GnbComputeChecksum(),
         GnbDeparser()) main;
