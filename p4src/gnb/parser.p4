/* One parser for both directions: GTP-U from N3, bearer frames from the
 * radio side. It only recognises formats; what to do with a frame (and
 * which port it may arrive on) is the ingress's decision, so every drop is
 * counted in one place under its reason. */
#ifndef GNB_PARSER_P4
#define GNB_PARSER_P4

#include "headers.p4"

parser GnbParser(packet_in packet, out gnb_headers_t hdr, inout gnb_metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_BEARER: parse_bearer_shim;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.version, hdr.ipv4.ihl) {
            (4, 5): parse_ipv4_payload;
            (4, 6 .. 15): skip_ipv4_options;
            default: accept;      // the ingress drops it as BAD_IPV4
        }
    }

    // The gNB decapsulates: options are skipped, never forwarded.
    state skip_ipv4_options {
        packet.advance(((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition parse_ipv4_payload;
    }

    state parse_ipv4_payload {
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            GTPU_UDP_PORT: parse_gtpu;
            default: accept;
        }
    }

    state parse_gtpu {
        packet.extract(hdr.gtpu);
        transition select(hdr.gtpu.ext_flag, hdr.gtpu.seq_flag, hdr.gtpu.npdu_flag) {
            (0, 0, 0): accept;
            default: parse_gtpu_options;
        }
    }

    // TS 29.281 5.1: the next-extension type counts only when E is set.
    state parse_gtpu_options {
        packet.extract(hdr.gtpu_options);
        transition select(hdr.gtpu.ext_flag, hdr.gtpu_options.next_ext) {
            (1, GTPU_EXT_PDU_SESSION_CONTAINER): parse_pdu_session_container;
            default: accept;
        }
    }

    state parse_pdu_session_container {
        packet.extract(hdr.pdu_container);
        transition accept;
    }

    state parse_bearer_shim {
        packet.extract(hdr.shim);
        transition select(hdr.shim.flags & SHIM_RLC_AM) {
            SHIM_RLC_AM: parse_rlc_am;
            default: parse_rlc_um;
        }
    }

    state parse_rlc_am {
        transition select(packet.lookahead<bit<1>>(), hdr.shim.flags & SHIM_RLC_SN18) {
            (0, _): rlc_status_pdu;
            (1, SHIM_RLC_SN18): parse_rlc_am18;
            (1, _): parse_rlc_am12;
        }
    }

    // Forwarded unchanged to the buffering service: nothing more to read.
    state rlc_status_pdu {
        meta.is_rlc_status = 1;
        transition accept;
    }

    state parse_rlc_am12 {
        packet.extract(hdr.rlc_am12);
        transition select(hdr.rlc_am12.si) {
            0: parse_pdcp;
            default: accept;      // a segment: the ingress drops it
        }
    }

    state parse_rlc_am18 {
        packet.extract(hdr.rlc_am18);
        transition select(hdr.rlc_am18.si) {
            0: parse_pdcp;
            default: accept;
        }
    }

    state parse_rlc_um {
        packet.extract(hdr.rlc_um);
        transition select(hdr.rlc_um.si) {
            0: parse_pdcp;
            default: accept;
        }
    }

    state parse_pdcp {
        transition select(hdr.shim.flags & SHIM_PDCP_SN18) {
            SHIM_PDCP_SN18: parse_pdcp18;
            default: parse_pdcp12;
        }
    }

    state parse_pdcp12 {
        packet.extract(hdr.pdcp12);
        transition select(hdr.pdcp12.dc) {
            1: parse_sdap_ul;
            default: accept;      // a PDCP control PDU
        }
    }

    state parse_pdcp18 {
        packet.extract(hdr.pdcp18);
        transition select(hdr.pdcp18.dc) {
            1: parse_sdap_ul;
            default: accept;
        }
    }

    state parse_sdap_ul {
        packet.extract(hdr.sdap_ul);
        transition accept;
    }
}

#endif
