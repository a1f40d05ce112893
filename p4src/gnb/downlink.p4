/* Downlink, N3 -> radio: GTP-U checks, the DRB lookup, decapsulation, and
 * the SDAP / PDCP / RLC headers of TS 37.324, 38.323 and 38.322 with the
 * per-DRB transmit sequence numbers. */
#ifndef GNB_DOWNLINK_P4
#define GNB_DOWNLINK_P4

#include "headers.p4"
#include "bearer_shim.p4"
#include "drop.p4"

// TS 29.281: only G-PDUs of version 1 with at most one PDU Session
// Container of the shortest form are user-plane traffic the gNB forwards.
control DlGtpValidation(in gnb_headers_t hdr, inout gnb_metadata_t meta,
                        in standard_metadata_t standard_metadata) {
    apply {
        if (hdr.ipv4.version != 4 || hdr.ipv4.ihl < 5) {
            GNB_DROP(meta, DROP_BAD_IPV4);
        } else if (!hdr.gtpu.isValid()) {
            GNB_DROP(meta, DROP_NOT_GTP);
        } else if (hdr.gtpu.version != 1 || hdr.gtpu.pt != 1
                   || hdr.gtpu.msg_type != GTPU_MSG_GPDU) {
            GNB_DROP(meta, DROP_GTP_UNSUPPORTED);
        } else if (hdr.gtpu.ext_flag == 1 && hdr.gtpu_options.next_ext != 0
                   && !hdr.pdu_container.isValid()) {
            GNB_DROP(meta, DROP_GTP_UNSUPPORTED);
        } else if (hdr.pdu_container.isValid()
                   && (hdr.pdu_container.length != 1
                       || hdr.pdu_container.pdu_type != PDU_TYPE_DL
                       || hdr.pdu_container.next_ext != 0)) {
            GNB_DROP(meta, DROP_GTP_UNSUPPORTED);
        } else if (14 + ((bit<32>)hdr.ipv4.ihl << 2) + 8 + 8 + (bit<32>)hdr.gtpu.length
                   > standard_metadata.packet_length) {
            GNB_DROP(meta, DROP_TRUNCATED);
        }
    }
}

control DlDrbLookup(in gnb_headers_t hdr, inout gnb_metadata_t meta) {
    @name(".dl_drb_counter") counter(MAX_DRBS, CounterType.packets_and_bytes) dl_drb_counter;

    @name(".set_dl_drb")
    action set_dl_drb(bit<16> drb_index, bit<16> ue_id, bit<8> lcid, bit<1> rlc_am,
                      bit<1> rlc_sn18, bit<1> pdcp_sn18, bit<6> default_qfi, mac_t ue_mac) {
        meta.drb.drb_index = drb_index;
        meta.drb.ue_id = ue_id;
        meta.drb.lcid = lcid;
        meta.drb.rlc_am = rlc_am;
        meta.drb.rlc_sn18 = rlc_sn18;
        meta.drb.pdcp_sn18 = pdcp_sn18;
        meta.drb.qfi = default_qfi;
        meta.drb.ue_mac = ue_mac;
    }

    @name(".unknown_teid")
    action unknown_teid() {
        GNB_DROP(meta, DROP_UNKNOWN_TEID);
    }

    @name(".dl_drb")
    table dl_drb {
        key = { hdr.gtpu.teid: exact @name("teid"); }
        actions = { set_dl_drb; @defaultonly unknown_teid; }
        default_action = unknown_teid();
        size = MAX_DRBS;
    }

    apply {
        if (dl_drb.apply().hit) {
            dl_drb_counter.count((bit<32>)meta.drb.drb_index);
        }
    }
}

// The QoS flow comes from the PDU Session Container when there is one.
control DlGtpDecap(inout gnb_headers_t hdr, inout gnb_metadata_t meta) {
    apply {
        meta.rqi = 0;
        if (hdr.pdu_container.isValid()) {
            meta.drb.qfi = hdr.pdu_container.qfi;
            meta.rqi = hdr.pdu_container.rqi;
        }
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.gtpu.setInvalid();
        hdr.gtpu_options.setInvalid();
        hdr.pdu_container.setInvalid();
    }
}

// The radio headers of a downlink frame, their SN fields left 0 for
// DlSequenceNumbers.
control DlRadioHeaders(inout gnb_headers_t hdr, in gnb_metadata_t meta) {
    BearerShimFlags() shim_flags;

    apply {
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = meta.drb.ue_mac;
        hdr.ethernet.ether_type = ETHERTYPE_BEARER;

        hdr.shim.setValid();
        hdr.shim.ue_id = meta.drb.ue_id;
        hdr.shim.lcid = meta.drb.lcid;
        shim_flags.apply(meta.drb, hdr.shim.flags);

        if (meta.drb.rlc_am == 0) {
            hdr.rlc_um.setValid();
            hdr.rlc_um = { 0, 0 };
        } else if (meta.drb.rlc_sn18 == 1) {
            hdr.rlc_am18.setValid();
            hdr.rlc_am18 = { 1, 0, 0, 0, 0 };
        } else {
            hdr.rlc_am12.setValid();
            hdr.rlc_am12 = { 1, 0, 0, 0 };
        }
        if (meta.drb.pdcp_sn18 == 1) {
            hdr.pdcp18.setValid();
            hdr.pdcp18 = { 1, 0, 0 };
        } else {
            hdr.pdcp12.setValid();
            hdr.pdcp12 = { 1, 0, 0 };
        }

        hdr.sdap_dl.setValid();
        hdr.sdap_dl = { 0, meta.rqi, meta.drb.qfi };
    }
}

/* The DRB's next SNs into the radio headers a downlink data PDU carries,
 * each modulo its header's SN length (TS 38.323 TX_NEXT, TS 38.322 TX_Next;
 * RLC UM complete SDUs have no SN). The frame may come from DlRadioHeaders
 * or, in nic.p4, from a host that built it with provisional SNs: one
 * instance numbers both, so a DRB's SNs stay continuous wherever it is
 * processed. An RLC AM PDU is also copied to the buffering service. */
control DlSequenceNumbers(inout gnb_headers_t hdr, inout gnb_metadata_t meta) {
    @name(".pdcp_tx_sn") register<bit<32>>(MAX_DRBS) pdcp_tx_sn;
    @name(".rlc_tx_sn") register<bit<32>>(MAX_DRBS) rlc_tx_sn;

    apply {
        bit<32> drb = (bit<32>)meta.drb.drb_index;

        if (hdr.rlc_am12.isValid() || hdr.rlc_am18.isValid()) {
            bit<32> rlc_sn;
            bit<32> rlc_mask = SN12_MASK;
            if (hdr.rlc_am18.isValid()) {
                rlc_mask = SN18_MASK;
            }
            rlc_tx_sn.read(rlc_sn, drb);
            rlc_sn = rlc_sn & rlc_mask;
            rlc_tx_sn.write(drb, (rlc_sn + 1) & rlc_mask);
            if (hdr.rlc_am18.isValid()) {
                hdr.rlc_am18.sn = rlc_sn[17:0];
            } else {
                hdr.rlc_am12.sn = rlc_sn[11:0];
            }
            meta.clone_to_baas = 1;
        }

        bit<32> pdcp_sn;
        bit<32> pdcp_mask = SN12_MASK;
        if (hdr.pdcp18.isValid()) {
            pdcp_mask = SN18_MASK;
        }
        pdcp_tx_sn.read(pdcp_sn, drb);
        pdcp_sn = pdcp_sn & pdcp_mask;
        pdcp_tx_sn.write(drb, (pdcp_sn + 1) & pdcp_mask);
        if (hdr.pdcp18.isValid()) {
            hdr.pdcp18.sn = pdcp_sn[17:0];
        } else {
            hdr.pdcp12.sn = pdcp_sn[11:0];
        }
    }
}

/* nic.p4: a radio frame a host built must be what DlRadioHeaders makes:
 * the parser reaches the SDAP header only behind a complete RLC SDU
 * (TS 38.322 SI = 0) and a PDCP data PDU, and every reserved bit is 0
 * (TS 38.322 6.2.2.3/6.2.2.4 R, TS 38.323 6.2.2.2/6.2.2.3 R, TS 37.324
 * 6.2.2.2 needs none). A faulty host cannot put anything else on the
 * radio. The SDAP DL header reads as sdap_ul here (same octet). */
control DlHostFrameValidation(in gnb_headers_t hdr, inout gnb_metadata_t meta) {
    apply {
        if (!hdr.sdap_ul.isValid()
                || (hdr.rlc_um.isValid() && hdr.rlc_um.reserved != 0)
                || (hdr.rlc_am18.isValid() && hdr.rlc_am18.reserved != 0)
                || (hdr.pdcp12.isValid() && hdr.pdcp12.reserved != 0)
                || (hdr.pdcp18.isValid() && hdr.pdcp18.reserved != 0)) {
            GNB_DROP(meta, DROP_BAD_HOST_FRAME);
        }
    }
}

// RLC AM keeps a copy of every PDU until the UE acknowledges it: the copy
// goes to the buffering service, byte for byte what left on the radio port.
control DlBaasClone(in gnb_metadata_t meta, in standard_metadata_t standard_metadata) {
    apply {
        if (meta.clone_to_baas == 1 && standard_metadata.instance_type == INSTANCE_NORMAL) {
            clone(CloneType.E2E, BAAS_CLONE_SESSION);
        }
    }
}

#endif
