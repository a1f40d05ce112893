/* Benchmark step "+ SDAP/PDCP/RLC": as gnb_step_decap.p4, and the radio
 * headers with per-DRB sequence numbers; the DRB is the TEID's low 16 bits
 * with a fixed configuration (RLC AM, 18-bit SNs), no table yet. */
#include "gnb_step_common.p4"

control StepIngress(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    DlGtpValidation() dl_validation;
    DlGtpDecap() dl_decap;
    DlRadioHeaders() dl_radio_headers;
    DlSequenceNumbers() dl_sequence_numbers;
    DropAccounting() drops;

    apply {
        dl_validation.apply(hdr, meta, standard_metadata);
        if (meta.drop == 0) {
            meta.drb = { hdr.gtpu.teid[15:0], hdr.gtpu.teid[15:0], 4, 1, 1, 1, 9,
                         (bit<32>)0x02000000 ++ hdr.gtpu.teid[15:0] };
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
