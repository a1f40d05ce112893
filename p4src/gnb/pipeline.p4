/* The gNB as v1model blocks: host.p4 runs them as they are, nic.p4 puts
 * its offload manager in front of the same ingress and marks the frames
 * hosts send back (meta.host_built) for it to number. */
#ifndef GNB_PIPELINE_P4
#define GNB_PIPELINE_P4

#include <core.p4>
#include <v1model.p4>
#include "headers.p4"
#include "parser.p4"
#include "drop.p4"
#include "downlink.p4"
#include "uplink.p4"
#include "baas_retx.p4"

/* Every instance is applied once (the compiler then works on the packet's
 * own headers, no copies): the bearer lookup serves the uplink, the
 * host-built downlink frames and the BaaS's retransmissions, the SN
 * assignment every downlink data PDU, so their branches meet before and
 * after them. */
control GnbIngress(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    DlGtpValidation() dl_validation;
    DlDrbLookup() dl_lookup;
    DlGtpDecap() dl_decap;
    DlRadioHeaders() dl_radio_headers;
    DlSequenceNumbers() dl_sequence_numbers;
    UlStatusToBaas() ul_status;
    UlRadioValidation() ul_validation;
    DlHostFrameValidation() host_frame_validation;
    BaasRetxValidation() baas_retx_validation;
    BaasRetxForward() baas_retx;
    BearerLookup() bearer_lookup;
    BearerFormatCheck() bearer_format_check;
    UlGtpEncap() ul_encap;
    DropAccounting() drops;

    apply {
        bool to_radio = false;    // a downlink data PDU, numbered at the end
        if (standard_metadata.parser_error != error.NoError) {
            GNB_DROP(meta, DROP_TRUNCATED);
        } else if (standard_metadata.ingress_port == N3_PORT) {
            if (hdr.shim.isValid()) {
                GNB_DROP(meta, DROP_WRONG_PORT);
            } else if (!hdr.ipv4.isValid()) {
                GNB_DROP(meta, DROP_NOT_GTP);
            } else {
                dl_validation.apply(hdr, meta, standard_metadata);
                if (meta.drop == 0) {
                    dl_lookup.apply(hdr, meta);
                }
                if (meta.drop == 0) {
                    dl_decap.apply(hdr, meta, standard_metadata);
                    dl_radio_headers.apply(hdr, meta);
                    to_radio = true;
                }
            }
        } else if (standard_metadata.ingress_port == RADIO_PORT || meta.host_built == 1
                   || standard_metadata.ingress_port == BAAS_PORT) {
            // nic.p4 never marks a frame of the BaaS port host-built
            bool from_baas = standard_metadata.ingress_port == BAAS_PORT;
            if (hdr.gtpu.isValid()) {
                GNB_DROP(meta, DROP_WRONG_PORT);
            } else if (!hdr.shim.isValid()) {
                if (from_baas) {
                    GNB_DROP(meta, DROP_WRONG_PORT);
                } else {
                    GNB_DROP(meta, DROP_NOT_GTP);
                }
            } else if (meta.host_built == 0 && !from_baas && meta.is_rlc_status == 1) {
                ul_status.apply(standard_metadata);
            } else {
                if (meta.host_built == 1) {
                    host_frame_validation.apply(hdr, meta);
                } else if (from_baas) {
                    baas_retx_validation.apply(hdr, meta);
                } else {
                    ul_validation.apply(hdr, meta, standard_metadata);
                }
                gnb_tunnel_t tunnel;
                if (meta.drop == 0) {
                    bearer_lookup.apply(hdr, meta, tunnel);
                }
                if (meta.drop == 0) {
                    bearer_format_check.apply(hdr, meta);
                }
                if (meta.drop == 0) {
                    if (meta.host_built == 1) {
                        to_radio = true;
                    } else if (from_baas) {
                        baas_retx.apply(meta, standard_metadata);
                    } else {
                        ul_encap.apply(hdr, meta, standard_metadata, tunnel);
                    }
                }
            }
        } else {
            GNB_DROP(meta, DROP_WRONG_PORT);
        }
        if (to_radio) {
            dl_sequence_numbers.apply(hdr, meta, standard_metadata);
            standard_metadata.egress_spec = RADIO_PORT;
        }
        drops.apply(meta, standard_metadata);
    }
}

control GnbEgress(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    DlBaasClone() baas_clone;

    apply {
        baas_clone.apply(meta, standard_metadata);
    }
}

control GnbVerifyChecksum(inout gnb_headers_t hdr, inout gnb_metadata_t meta) {
    apply { }
}

control GnbComputeChecksum(inout gnb_headers_t hdr, inout gnb_metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid() && meta.encapsulated == 1,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control GnbDeparser(packet_out packet, in gnb_headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.gtpu);
        packet.emit(hdr.gtpu_options);
        packet.emit(hdr.pdu_container);
        packet.emit(hdr.shim);
        packet.emit(hdr.rlc_am12);
        packet.emit(hdr.rlc_am18);
        packet.emit(hdr.rlc_um);
        packet.emit(hdr.pdcp12);
        packet.emit(hdr.pdcp18);
        packet.emit(hdr.sdap_dl);
        packet.emit(hdr.sdap_ul);
    }
}

#endif
