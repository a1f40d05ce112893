/* The ports on which hosts send back the downlink radio frames they built
 * (their radio side). Such a frame is marked meta.host_built; GnbIngress
 * looks its bearer up by (UE id, LCID), overwrites its provisional SNs with
 * the DRB's next ones and sends it to the radio port. A frame on any other
 * port past the three PFs is dropped as WRONG_PORT. */
#ifndef NIC_HOST_RETURN_P4
#define NIC_HOST_RETURN_P4

#include "../gnb/headers.p4"

const bit<32> HOST_RETURN_PORTS = 64;

control HostReturnPort(inout gnb_metadata_t meta, in standard_metadata_t standard_metadata) {
    @name(".from_host")
    action from_host() {
        meta.host_built = 1;
    }

    @name(".host_return_port")
    table host_return_port {
        key = { standard_metadata.ingress_port: exact @name("port"); }
        actions = { from_host; @defaultonly NoAction; }
        default_action = NoAction();
        size = HOST_RETURN_PORTS;
    }

    apply {
        host_return_port.apply();
    }
}

#endif
