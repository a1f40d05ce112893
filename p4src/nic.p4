/* The SmartNIC build of the gNB: the offload manager sends the downlink
 * DRBs the controller chose to the hosts through the VFs, and the very same
 * gNB blocks (p4src/gnb/) process everything else, including the radio
 * frames the hosts send back, whose SNs the NIC assigns (it owns every
 * DRB's pdcp_tx_sn and rlc_tx_sn). Ports: 0 N3, 1 radio side, 2 buffering
 * service, then per host i: 3 + 2i to the host, 4 + 2i back from it. */
#include "gnb/pipeline.p4"
#include "nic/offload.p4"
#include "nic/vf_distributor.p4"
#include "nic/host_return.p4"

control NicIngress(inout gnb_headers_t hdr, inout gnb_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    OffloadManager() offload_manager;
    VfDistributor() vf_distributor;
    VfIpv4Options() vf_ipv4_options;
    HostReturnPort() host_return;
    GnbIngress() gnb;

    // Host-built frames the NIC numbered and forwarded, per DRB (bytes as the
    // host sent them); dl_drb_counter counts only what the NIC processed.
    @name(".host_return_counter")
    counter(MAX_DRBS, CounterType.packets_and_bytes) host_return_counter;

    apply {
        offload_metadata_t offload;
        offload.to_host = 0;
        if (standard_metadata.ingress_port == N3_PORT) {
            offload_manager.apply(hdr, offload, standard_metadata);
            if (offload.to_host == 1) {
                vf_distributor.apply(hdr, offload, standard_metadata);
            }
            if (offload.to_host == 1) {
                vf_ipv4_options.apply(hdr, meta);
            }
        } else if (standard_metadata.ingress_port != RADIO_PORT
                   && standard_metadata.ingress_port != BAAS_PORT) {
            host_return.apply(meta, standard_metadata);
        }
        if (offload.to_host == 0) {
            gnb.apply(hdr, meta, standard_metadata);
            if (meta.host_built == 1 && meta.drop == 0) {
                host_return_counter.count((bit<32>)meta.drb.drb_index);
            }
        }
    }
}

V1Switch(GnbParser(), GnbVerifyChecksum(), NicIngress(), GnbEgress(), GnbComputeChecksum(),
         GnbDeparser()) main;
