/* The SmartNIC's offload manager: which downlink packets the host
 * processes, in one of two modes the controller selects with the keyless
 * `offload_mode` table:
 *   by bucket (the default): a DRB is placed by its bucket, a hash of its
 *     TEID into OFFLOAD_BUCKETS (crc32, top 10 bits), so all its packets go
 *     to one target at a time; `offload_bucket` lists the buckets that belong to the host;
 *   by IPv4 Identification: the UPF marks each packet; `offload_ip_id`
 *     lists the outer Identification values that mean the host.
 * Empty tables (the default) keep everything on the NIC. Uplink is never
 * offloaded. */
#ifndef NIC_OFFLOAD_P4
#define NIC_OFFLOAD_P4

#include "../gnb/headers.p4"

const bit<32> OFFLOAD_BUCKETS = 1024;   // the top 10 bits of the TEID's crc32
const bit<32> OFFLOAD_IP_IDS = 65536;
// As hash()'s max: the whole 32-bit CRC, no modulo.
const bit<64> CRC32_RANGE = 0x100000000;

struct offload_metadata_t {
    bit<16> bucket;       // OFFLOAD_BUCKETS
    bit<16> vf_bucket;    // VF_BUCKETS (vf_distributor.p4)
    bit<1> to_host;
}

control OffloadManager(in gnb_headers_t hdr, inout offload_metadata_t offload,
                       in standard_metadata_t standard_metadata) {
    @name(".offload_by_bucket")
    action offload_by_bucket() { }

    @name(".offload_by_ip_id")
    action offload_by_ip_id() { }

    @name(".offload_mode")
    table offload_mode {
        key = { }
        actions = { offload_by_bucket; offload_by_ip_id; }
        default_action = offload_by_bucket();
    }

    @name(".offload_to_host")
    action offload_to_host() {
        offload.to_host = 1;
    }

    @name(".keep_on_nic")
    action keep_on_nic() {
        offload.to_host = 0;
    }

    @name(".offload_bucket")
    table offload_bucket {
        key = { offload.bucket: exact @name("bucket"); }
        actions = { offload_to_host; @defaultonly keep_on_nic; }
        default_action = keep_on_nic();
        size = OFFLOAD_BUCKETS;
    }

    @name(".offload_ip_id")
    table offload_ip_id {
        key = { hdr.ipv4.identification: exact @name("identification"); }
        actions = { offload_to_host; @defaultonly keep_on_nic; }
        default_action = keep_on_nic();
        size = OFFLOAD_IP_IDS;
    }

    apply {
        offload.to_host = 0;
        // Anything else stays on the NIC, whose gNB drops it under its reason.
        if (standard_metadata.ingress_port == N3_PORT && hdr.gtpu.isValid()
                && standard_metadata.parser_error == error.NoError) {
            switch (offload_mode.apply().action_run) {
                offload_by_ip_id: {
                    offload_ip_id.apply();
                }
                offload_by_bucket: {
                    // The top bits: a CRC's low bits hardly change with the low
                    // bits of sequential TEIDs (100 of them would all share
                    // the lower half of the buckets).
                    bit<32> teid_crc;
                    hash(teid_crc, HashAlgorithm.crc32, (bit<32>)0, { hdr.gtpu.teid },
                         CRC32_RANGE);
                    offload.bucket = (bit<16>)teid_crc[31:22];
                    offload_bucket.apply();
                }
            }
        }
    }
}

#endif
