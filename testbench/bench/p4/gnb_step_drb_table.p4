/* Benchmark step "+ 65,536-entry DRB table": the whole downlink of
 * host.p4 except the clone to the buffering service. */
#include "gnb_step_common.p4"

control StepIngress(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    DlGtpValidation() dl_validation;
    DlDrbLookup() dl_lookup;
    DlGtpDecap() dl_decap;
    DlRadioHeaders() dl_radio_headers;
    DlSequenceNumbers() dl_sequence_numbers;
    DropAccounting() drops;

    apply {
        dl_validation.apply(hdr, meta, standard_metadata);
        if (meta.drop == 0) {
            dl_lookup.apply(hdr, meta);
        }
        if (meta.drop == 0) {
            dl_decap.apply(hdr, meta, standard_metadata);
            dl_radio_headers.apply(hdr, meta);
            dl_sequence_numbers.apply(hdr, meta, standard_metadata);
            standard_metadata.egress_spec = RADIO_PORT;
        }
        drops.apply(meta, standard_metadata);
    }
}

V1Switch(GnbParser(), GnbVerifyChecksum(), StepIngress(), StepEgressWithoutClone(), GnbComputeChecksum(),
         GnbDeparser()) main;
