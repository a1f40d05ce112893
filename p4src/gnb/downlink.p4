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
// What stays is the T-PDU and any octets after it (Ethernet padding): their
// length starts the RLC SDU's, which DlRadioHeaders completes.
control DlGtpDecap(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                   in standard_metadata_t standard_metadata) {
    apply {
        meta.rqi = 0;
        if (hdr.pdu_container.isValid()) {
            meta.drb.qfi = hdr.pdu_container.qfi;
            meta.rqi = hdr.pdu_container.rqi;
        }
        bit<32> outer_len = ((bit<32>)hdr.ipv4.ihl << 2) + 30;   // + Ethernet, UDP, GTP-U
        if (hdr.gtpu_options.isValid()) { outer_len = outer_len + 4; }
        if (hdr.pdu_container.isValid()) { outer_len = outer_len + 4; }
        meta.rlc_sdu_len = standard_metadata.packet_length - outer_len;
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.gtpu.setInvalid();
        hdr.gtpu_options.setInvalid();
        hdr.pdu_container.setInvalid();
    }
}

// The radio headers of a downlink frame, their SN fields and the RLC poll
// bit left 0 for DlSequenceNumbers; the RLC SDU (the PDCP PDU) is the
// T-PDU behind the PDCP and SDAP headers.
control DlRadioHeaders(inout gnb_headers_t hdr, inout gnb_metadata_t meta) {
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
            meta.rlc_sdu_len = meta.rlc_sdu_len + 4;   // PDCP, SDAP
        } else {
            hdr.pdcp12.setValid();
            hdr.pdcp12 = { 1, 0, 0 };
            meta.rlc_sdu_len = meta.rlc_sdu_len + 3;   // PDCP, SDAP
        }

        hdr.sdap_dl.setValid();
        hdr.sdap_dl = { 0, meta.rqi, meta.drb.qfi };
    }
}

/* The DRB's next SNs into the radio headers a downlink data PDU carries,
 * each modulo its header's SN length (TS 38.323 TX_NEXT, TS 38.322 TX_Next;
 * RLC UM complete SDUs have no SN), and the RLC AM poll bit. The frame may
 * come from DlRadioHeaders or, in nic.p4, from a host that built it with
 * provisional SNs and a poll bit of its own: one instance numbers both and
 * decides their poll bits, so a DRB's SNs stay continuous and its poll
 * counters count every PDU wherever it is processed. An RLC AM PDU is also
 * copied to the buffering service.
 *
 * Poll (TS 38.322 5.3.3.2): every new AMD PDU adds one to PDU_WITHOUT_POLL
 * and its RLC SDU's length (the PDCP PDU: PDCP header, SDAP header, T-PDU
 * and any octets the frame carries after it) to BYTE_WITHOUT_POLL; when
 * either reaches its threshold (pollPDU, pollByte: rlc_poll_config, 0 the
 * default, all ones infinity) the PDU carries P = 1 and both restart from
 * 0. Both counters saturate rather than wrap (a counter whose trigger is
 * off is never reset; a pollByte near 2^32 is not overrun). The other
 * triggers of 5.3.3.2 (both buffers empty, window stall) need the
 * transmission and retransmission buffers, which the pipeline does not
 * see; they and t-PollRetransmit are left to the buffering service. The
 * four registers are indexed by the DRB index the lookahead tables give,
 * so their cells are prefetched (t4p4s backend/c/prefetch.py). */
control DlSequenceNumbers(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                          in standard_metadata_t standard_metadata) {
    @name(".pdcp_tx_sn") register<bit<32>>(MAX_DRBS) pdcp_tx_sn;
    @name(".rlc_tx_sn") register<bit<32>>(MAX_DRBS) rlc_tx_sn;
    @name(".rlc_poll_config") register<bit<64>>(MAX_DRBS) rlc_poll_config;
    @name(".rlc_poll_state") register<bit<64>>(MAX_DRBS) rlc_poll_state;

    apply {
        bit<32> drb = (bit<32>)meta.drb.drb_index;

        if (hdr.rlc_am12.isValid() || hdr.rlc_am18.isValid()) {
            bit<32> rlc_sn;
            bit<32> rlc_mask = SN12_MASK;
            bit<32> rlc_header_len = 2;
            if (hdr.rlc_am18.isValid()) {
                rlc_mask = SN18_MASK;
                rlc_header_len = 3;
            }
            rlc_tx_sn.read(rlc_sn, drb);
            rlc_sn = rlc_sn & rlc_mask;
            rlc_tx_sn.write(drb, (rlc_sn + 1) & rlc_mask);

            // a host's frame: its RLC SDU is everything behind the RLC header
            bit<32> sdu_len = meta.rlc_sdu_len;
            if (meta.host_built == 1) {
                sdu_len = standard_metadata.packet_length - (18 + rlc_header_len);  // Ethernet, shim
            }
            bit<64> config;
            rlc_poll_config.read(config, drb);
            bit<32> poll_pdu = config[31:0];
            bit<32> poll_byte = config[63:32];
            if (poll_pdu == 0) { poll_pdu = POLL_PDU_DEFAULT; }
            if (poll_byte == 0) { poll_byte = POLL_BYTE_DEFAULT; }
            bit<64> state;
            rlc_poll_state.read(state, drb);
            bit<32> pdu_without_poll = state[31:0] |+| 1;
            bit<32> byte_without_poll = state[63:32] |+| sdu_len;
            bit<1> poll = 0;
            if ((poll_pdu != POLL_INFINITY && pdu_without_poll >= poll_pdu)
                    || (poll_byte != POLL_INFINITY && byte_without_poll >= poll_byte)) {
                poll = 1;
                pdu_without_poll = 0;
                byte_without_poll = 0;
            }
            rlc_poll_state.write(drb, byte_without_poll ++ pdu_without_poll);

            if (hdr.rlc_am18.isValid()) {
                hdr.rlc_am18.poll = poll;
                hdr.rlc_am18.sn = rlc_sn[17:0];
            } else {
                hdr.rlc_am12.poll = poll;
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
