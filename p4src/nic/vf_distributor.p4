/* Spreads offloaded packets over the hosts' virtual functions by a hash of
 * the TEID into VF_BUCKETS, so one DRB always reaches the same VF (and so
 * the same host lcore). The controller points each bucket at a VF; a
 * bucket that points nowhere (a host gone, or none configured) keeps its
 * packets on the NIC. */
#ifndef NIC_VF_DISTRIBUTOR_P4
#define NIC_VF_DISTRIBUTOR_P4

#include "../gnb/headers.p4"
#include "offload.p4"

const bit<32> VF_BUCKETS = 64;      // the top 6 bits of the TEID's crc16
const bit<32> CRC16_RANGE = 65536;  // as hash()'s max: the whole CRC

control VfDistributor(in gnb_headers_t hdr, inout offload_metadata_t offload,
                      inout standard_metadata_t standard_metadata) {
    @name(".to_vf")
    action to_vf(port_t port) {
        standard_metadata.egress_spec = port;
    }

    @name(".no_vf")
    action no_vf() {
        offload.to_host = 0;
    }

    @name(".vf_bucket")
    table vf_bucket {
        key = { offload.vf_bucket: exact @name("bucket"); }
        actions = { to_vf; no_vf; }
        default_action = no_vf();
        size = VF_BUCKETS;
    }

    apply {
        // Another CRC than the offload bucket's, so the DRBs of any set of
        // offload buckets spread over all VF buckets; its top bits, as
        // there: CRC-16's low 6 bits take 2 values over 1,000 sequential TEIDs.
        bit<16> teid_crc;
        hash(teid_crc, HashAlgorithm.crc16, (bit<16>)0, { hdr.gtpu.teid }, CRC16_RANGE);
        offload.vf_bucket = (bit<16>)teid_crc[15:10];
        vf_bucket.apply();
    }
}

/* The gNB's parser skips the outer IPv4 options (it decapsulates, and
 * never forwards them), so the deparser does not emit them: an offloaded
 * packet leaves on the VF without them, and its header must say so (IHL
 * 5, the total length and checksum of what is sent), or the host reads
 * its UDP header at the wrong offset. */
control VfIpv4Options(inout gnb_headers_t hdr, inout gnb_metadata_t meta) {
    apply {
        if (hdr.ipv4.ihl != 5) {
            hdr.ipv4.total_len = hdr.ipv4.total_len - (((bit<16>)hdr.ipv4.ihl - 5) << 2);
            hdr.ipv4.ihl = 5;
            meta.encapsulated = 1;
        }
    }
}

#endif
