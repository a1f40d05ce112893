/* Every header the gNB reads or writes, in wire order (docs/wire-format.md
 * draws them), and the metadata the controls pass each other. */
#ifndef GNB_HEADERS_P4
#define GNB_HEADERS_P4

#include "constants.p4"

typedef bit<48> mac_t;
typedef bit<32> ipv4_addr_t;

header ethernet_t {
    mac_t dst_addr;
    mac_t src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4> version;
    bit<4> ihl;
    bit<6> dscp;
    bit<2> ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

// TS 29.281 5.1, the mandatory part
header gtpu_t {
    bit<3> version;
    bit<1> pt;
    bit<1> spare;
    bit<1> ext_flag;
    bit<1> seq_flag;
    bit<1> npdu_flag;
    bit<8> msg_type;
    bit<16> length;   // octets after these first 8
    bit<32> teid;
}

// TS 29.281 5.1: present when any of E, S, PN is set
header gtpu_options_t {
    bit<16> seq;
    bit<8> npdu;
    bit<8> next_ext;
}

/* TS 29.281 5.2.2.7 carrying TS 38.415 5.5.2.1 (DL) / 5.5.2.2 (UL) in its
 * shortest form. Octet 2 is PPP|RQI|QFI downlink; uplink the two flag bits
 * are N3/N9 Delay Ind and New IE Flag, which the gNB leaves 0. */
header pdu_session_container_t {
    bit<8> length;    // in 4-octet units, 1 here
    bit<4> pdu_type;
    bit<4> flags;     // DL: QMP|SNP|MSNP|spare; UL: QMP|DL Delay|UL Delay|SNP
    bit<1> ppp;
    bit<1> rqi;
    bit<6> qfi;
    bit<8> next_ext;
}

// Our radio-side framing: which bearer, and its formats (SHIM_* flags).
header bearer_shim_t {
    bit<16> ue_id;    // C-RNTI
    bit<8> lcid;
    bit<8> flags;
}

// TS 38.322 6.2.2.4, AM data PDU, 12-bit SN, no SO (complete SDU)
header rlc_am12_t {
    bit<1> dc;
    bit<1> poll;
    bit<2> si;
    bit<12> sn;
}

// TS 38.322 6.2.2.4, AM data PDU, 18-bit SN, no SO
header rlc_am18_t {
    bit<1> dc;
    bit<1> poll;
    bit<2> si;
    bit<2> reserved;
    bit<18> sn;
}

// TS 38.322 6.2.2.3, UM data PDU header for a complete SDU
header rlc_um_t {
    bit<2> si;
    bit<6> reserved;
}

// TS 38.323 6.2.2.2, data PDU for DRBs, 12-bit SN
header pdcp12_t {
    bit<1> dc;
    bit<3> reserved;
    bit<12> sn;
}

// TS 38.323 6.2.2.3, data PDU for DRBs, 18-bit SN
header pdcp18_t {
    bit<1> dc;
    bit<5> reserved;
    bit<18> sn;
}

// TS 37.324 6.2.2.2, downlink data PDU with SDAP header
header sdap_dl_t {
    bit<1> rdi;
    bit<1> rqi;
    bit<6> qfi;
}

// TS 37.324 6.2.2.3, uplink data PDU with SDAP header
header sdap_ul_t {
    bit<1> dc;
    bit<1> reserved;
    bit<6> qfi;
}

struct gnb_headers_t {
    ethernet_t ethernet;
    ipv4_t ipv4;
    udp_t udp;
    gtpu_t gtpu;
    gtpu_options_t gtpu_options;
    pdu_session_container_t pdu_container;
    bearer_shim_t shim;
    rlc_am12_t rlc_am12;
    rlc_am18_t rlc_am18;
    rlc_um_t rlc_um;
    pdcp12_t pdcp12;
    pdcp18_t pdcp18;
    sdap_dl_t sdap_dl;
    sdap_ul_t sdap_ul;
}

// One DRB's radio-side configuration, as the DRB table's action gives it.
struct drb_config_t {
    bit<16> drb_index;
    bit<16> ue_id;
    bit<8> lcid;
    bit<1> rlc_am;
    bit<1> rlc_sn18;
    bit<1> pdcp_sn18;
    bit<6> qfi;
    mac_t ue_mac;
}

// The uplink tunnel of one bearer, as the bearer table's action gives it.
struct gnb_tunnel_t {
    bit<32> teid;
    ipv4_addr_t gnb_ip;
    ipv4_addr_t upf_ip;
    mac_t upf_mac;
}

struct gnb_metadata_t {
    drb_config_t drb;
    bit<1> rqi;
    bit<1> is_rlc_status;     // set by the parser: an RLC STATUS PDU (D/C = 0)
    bit<1> host_built;        // nic.p4: a downlink radio frame a host built, to number
    bit<1> drop;
    drop_reason_t drop_reason;
    bit<1> clone_to_baas;
    bit<1> encapsulated;      // the IPv4 header was (re)written: the uplink's
                              // encapsulation, nic.p4's options removal; checksum it
    bit<32> rlc_sdu_len;      // downlink built from a G-PDU: its RLC SDU's length (the
                              // PDCP PDU), for the poll's byte count (DlSequenceNumbers)
}

#endif
