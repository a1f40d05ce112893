/* Retransmissions from the buffering service (TS 38.322 5.3.2): the BaaS
 * keeps the copies of the RLC AM PDUs (DlBaasClone) and sends back on its
 * port those the UE's STATUS PDUs NACK, as complete bearer frames. The gNB
 * checks that one is an RLC AM data PDU of a known bearer in the bearer's
 * formats and forwards it to the radio port unchanged: its SNs and poll bit
 * are the BaaS's (a retransmission is no new PDU: no SN, no poll count),
 * and no copy goes back to the BaaS. */
#ifndef GNB_BAAS_RETX_P4
#define GNB_BAAS_RETX_P4

#include "headers.p4"
#include "drop.p4"

/* A complete RLC AM data PDU (D/C = 1, SI = 00): the parser extracted an
 * AM data header only behind the shim's AM flag and D/C = 1; a STATUS PDU,
 * an RLC UM PDU or a segment is none. The R bits and what follows the RLC
 * header are the BaaS's, not checked (TS 38.322 6.2.3: a receiver ignores
 * R bits). */
control BaasRetxValidation(in gnb_headers_t hdr, inout gnb_metadata_t meta) {
    apply {
        if (!((hdr.rlc_am12.isValid() && hdr.rlc_am12.si == 0)
              || (hdr.rlc_am18.isValid() && hdr.rlc_am18.si == 0))) {
            GNB_DROP(meta, DROP_BAD_BAAS_FRAME);
        }
    }
}

// Forwarded retransmissions per DRB (the bearer's index), bytes as received.
control BaasRetxForward(in gnb_metadata_t meta, inout standard_metadata_t standard_metadata) {
    @name(".baas_retx_counter")
    counter(MAX_DRBS, CounterType.packets_and_bytes) baas_retx_counter;

    apply {
        baas_retx_counter.count((bit<32>)meta.drb.drb_index);
        standard_metadata.egress_spec = RADIO_PORT;
    }
}

#endif
