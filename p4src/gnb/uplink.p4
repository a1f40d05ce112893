/* Uplink, radio -> N3: RLC / PDCP / SDAP checks, the bearer lookup and the
 * GTP-U encapsulation of TS 29.281 with the UL PDU Session Container of
 * TS 38.415. STATUS PDUs go to the buffering service. */
#ifndef GNB_UPLINK_P4
#define GNB_UPLINK_P4

#include "headers.p4"
#include "bearer_shim.p4"
#include "drop.p4"

// Sizes of what the encapsulation adds, in octets.
const bit<16> IPV4_HEADER_LEN = 20;
const bit<16> UDP_HEADER_LEN = 8;
const bit<16> GTPU_HEADER_LEN = 8;
const bit<16> GTPU_OPTIONS_LEN = 4;
const bit<16> PDU_CONTAINER_LEN = 4;

control UlStatusToBaas(inout standard_metadata_t standard_metadata) {
    @name(".ul_status_counter") counter(1, CounterType.packets_and_bytes) ul_status_counter;

    apply {
        ul_status_counter.count(0);
        standard_metadata.egress_spec = BAAS_PORT;
    }
}

control UlRadioValidation(in gnb_headers_t hdr, inout gnb_metadata_t meta,
                          in standard_metadata_t standard_metadata) {
    apply {
        if ((hdr.rlc_am12.isValid() && hdr.rlc_am12.si != 0)
                || (hdr.rlc_am18.isValid() && hdr.rlc_am18.si != 0)
                || (hdr.rlc_um.isValid() && hdr.rlc_um.si != 0)) {
            GNB_DROP(meta, DROP_UL_SEGMENTED);
        } else if ((hdr.pdcp12.isValid() && hdr.pdcp12.dc == 0)
                   || (hdr.pdcp18.isValid() && hdr.pdcp18.dc == 0)
                   || (hdr.sdap_ul.isValid() && hdr.sdap_ul.dc == 0)) {
            GNB_DROP(meta, DROP_UL_CONTROL_PDU);
        }
    }
}

/* (UE id, LCID) -> the bearer: its DRB index, radio formats and uplink tunnel. The uplink
 * looks up the frames from the DU; nic.p4 also the downlink frames hosts
 * built, whose SNs the DRB index numbers (so a bearer's drb_index here is
 * its index in dl_drb too). The caller counts: which counter depends on
 * the direction. */
control BearerLookup(in gnb_headers_t hdr, inout gnb_metadata_t meta, out gnb_tunnel_t tunnel) {
    @name(".set_ul_bearer")
    action set_ul_bearer(bit<16> drb_index, bit<1> rlc_am, bit<1> rlc_sn18, bit<1> pdcp_sn18,
                         bit<32> teid, ipv4_addr_t gnb_ip, ipv4_addr_t upf_ip, mac_t upf_mac) {
        meta.drb.drb_index = drb_index;
        meta.drb.rlc_am = rlc_am;
        meta.drb.rlc_sn18 = rlc_sn18;
        meta.drb.pdcp_sn18 = pdcp_sn18;
        tunnel = { teid, gnb_ip, upf_ip, upf_mac };
    }

    @name(".unknown_bearer")
    action unknown_bearer() {
        GNB_DROP(meta, DROP_UNKNOWN_BEARER);
    }

    @name(".ul_bearer")
    table ul_bearer {
        key = {
            hdr.shim.ue_id: exact @name("ue_id");
            hdr.shim.lcid: exact @name("lcid");
        }
        actions = { set_ul_bearer; @defaultonly unknown_bearer; }
        default_action = unknown_bearer();
        size = MAX_DRBS;
    }

    apply {
        ul_bearer.apply();
    }
}

/* The shim's flags must be exactly the bearer's formats (RLC AM/UM, SN
 * lengths), reserved flag bits 0: the parser read the RLC and PDCP headers
 * the flags named, so a frame that names others than the bearer's would
 * be forwarded misread, or numbered in the wrong SN space. */
control BearerFormatCheck(in gnb_headers_t hdr, inout gnb_metadata_t meta) {
    BearerShimFlags() shim_flags;

    apply {
        bit<8> formats;
        shim_flags.apply(meta.drb, formats);
        if (hdr.shim.flags != formats) {
            GNB_DROP(meta, DROP_BEARER_FORMAT);
        }
    }
}

// Every uplink packet that gets here is forwarded, so it is counted here.
control UlGtpEncap(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                   inout standard_metadata_t standard_metadata, in gnb_tunnel_t tunnel) {
    @name(".ul_drb_counter") counter(MAX_DRBS, CounterType.packets_and_bytes) ul_drb_counter;

    apply {
        ul_drb_counter.count((bit<32>)meta.drb.drb_index);

        bit<16> radio_headers_len = 14 + 4 + 1;    // Ethernet, shim, SDAP
        if (hdr.rlc_am12.isValid()) { radio_headers_len = radio_headers_len + 2; }
        if (hdr.rlc_am18.isValid()) { radio_headers_len = radio_headers_len + 3; }
        if (hdr.rlc_um.isValid()) { radio_headers_len = radio_headers_len + 1; }
        if (hdr.pdcp12.isValid()) { radio_headers_len = radio_headers_len + 2; }
        if (hdr.pdcp18.isValid()) { radio_headers_len = radio_headers_len + 3; }
        bit<16> sdu_len = (bit<16>)standard_metadata.packet_length - radio_headers_len;
        bit<16> gtpu_len = GTPU_OPTIONS_LEN + PDU_CONTAINER_LEN + sdu_len;

        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = tunnel.upf_mac;
        hdr.ethernet.ether_type = ETHERTYPE_IPV4;

        hdr.ipv4.setValid();
        hdr.ipv4 = { 4, 5, 0, 0, IPV4_HEADER_LEN + UDP_HEADER_LEN + GTPU_HEADER_LEN + gtpu_len,
                     0, 0, 0, 64, IP_PROTO_UDP, 0, tunnel.gnb_ip, tunnel.upf_ip };
        hdr.udp.setValid();
        hdr.udp = { GTPU_UDP_PORT, GTPU_UDP_PORT, UDP_HEADER_LEN + GTPU_HEADER_LEN + gtpu_len, 0 };
        hdr.gtpu.setValid();
        hdr.gtpu = { 1, 1, 0, 1, 0, 0, GTPU_MSG_GPDU, gtpu_len, tunnel.teid };
        hdr.gtpu_options.setValid();
        hdr.gtpu_options = { 0, 0, GTPU_EXT_PDU_SESSION_CONTAINER };
        hdr.pdu_container.setValid();
        hdr.pdu_container = { 1, PDU_TYPE_UL, 0, 0, 0, hdr.sdap_ul.qfi, 0 };

        hdr.shim.setInvalid();
        hdr.rlc_am12.setInvalid();
        hdr.rlc_am18.setInvalid();
        hdr.rlc_um.setInvalid();
        hdr.pdcp12.setInvalid();
        hdr.pdcp18.setInvalid();
        hdr.sdap_ul.setInvalid();
        meta.encapsulated = 1;
        standard_metadata.egress_spec = N3_PORT;
    }
}

#endif
