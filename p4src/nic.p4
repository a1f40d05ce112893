/* The SmartNIC build of the gNB: the offload manager sends the DRBs the
 * controller chose to the host through the VFs, and runs the very same gNB
 * blocks (p4src/gnb/) on everything else. Ports: 0 N3, 1 radio side,
 * 2 buffering service, then the VFs the controller names. */
#include "gnb/pipeline.p4"
#include "nic/offload.p4"
#include "nic/vf_distributor.p4"

control NicIngress(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    OffloadManager() offload_manager;
    VfDistributor() vf_distributor;
    GnbIngress() gnb;

    apply {
        offload_metadata_t offload;
        offload_manager.apply(hdr, offload, standard_metadata);
        if (offload.to_host == 1) {
            vf_distributor.apply(hdr, offload, standard_metadata);
        }
        if (offload.to_host == 0) {
            gnb.apply(hdr, meta, standard_metadata);
        }
    }
}

V1Switch(GnbParser(), GnbVerifyChecksum(), NicIngress(), GnbEgress(), GnbComputeChecksum(),
         GnbDeparser()) main;
