/* The bearer shim's flags (docs/wire-format.md) as a DRB's formats name
 * them: the downlink writes them, the uplink requires them. One block, so
 * that what the NIC accepts from a host is exactly what a host writes. */
#ifndef GNB_BEARER_SHIM_P4
#define GNB_BEARER_SHIM_P4

#include "headers.p4"

control BearerShimFlags(in drb_config_t drb, out bit<8> flags) {
    apply {
        flags = 0;
        if (drb.rlc_am == 1) {
            flags = SHIM_RLC_AM;
            if (drb.rlc_sn18 == 1) {
                flags = flags | SHIM_RLC_SN18;
            }
        }
        if (drb.pdcp_sn18 == 1) {
            flags = flags | SHIM_PDCP_SN18;
        }
    }
}

#endif
