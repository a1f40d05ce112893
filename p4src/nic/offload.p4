/* The SmartNIC's offload manager: which downlink DRBs the host processes.
 * A DRB is placed by its bucket (a hash of its TEID into OFFLOAD_BUCKETS), so
 * all its packets go to one target at a time; the controller fills
 * `offload_bucket` with the buckets that belong to the host. An empty table
 * (the default) keeps everything on the NIC. */
#ifndef NIC_OFFLOAD_P4
#define NIC_OFFLOAD_P4

#include "../gnb/headers.p4"

const bit<32> OFFLOAD_BUCKETS = 1024;

struct offload_metadata_t {
    bit<16> bucket;
    bit<1> to_host;
}

control OffloadManager(in gnb_headers_t hdr, inout offload_metadata_t offload,
                       in standard_metadata_t standard_metadata) {
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

    apply {
        offload.to_host = 0;
        if (standard_metadata.ingress_port == N3_PORT && hdr.gtpu.isValid()
                && standard_metadata.parser_error == error.NoError) {
            hash(offload.bucket, HashAlgorithm.crc32, (bit<16>)0, { hdr.gtpu.teid },
                 OFFLOAD_BUCKETS);
            offload_bucket.apply();
        }
    }
}

#endif
