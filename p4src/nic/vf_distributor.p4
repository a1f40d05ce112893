/* Spreads offloaded packets over the host's virtual functions by a hash of
 * the TEID, so one DRB always reaches the same VF (and host lcore). The
 * controller says which ports are VFs; with none configured nothing can be
 * offloaded and the packet stays on the NIC. */
#ifndef NIC_VF_DISTRIBUTOR_P4
#define NIC_VF_DISTRIBUTOR_P4

#include "../gnb/headers.p4"
#include "offload.p4"

control VfDistributor(in gnb_headers_t hdr, inout offload_metadata_t offload,
                      inout standard_metadata_t standard_metadata) {
    @name(".set_vf_ports")
    action set_vf_ports(port_t first_vf, bit<16> vf_count) {
        hash(standard_metadata.egress_spec, HashAlgorithm.crc16, first_vf,
             { hdr.gtpu.teid }, (bit<32>)vf_count);
    }

    @name(".no_vf_ports")
    action no_vf_ports() {
        offload.to_host = 0;
    }

    @name(".vf_ports")
    table vf_ports {
        key = { }
        actions = { set_vf_ports; no_vf_ports; }
        default_action = no_vf_ports();
    }

    apply {
        vf_ports.apply();
    }
}

#endif
