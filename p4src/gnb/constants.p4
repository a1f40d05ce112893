/* Port roles, protocol numbers, drop reasons and the BaaS clone session:
 * the numbers the control plane and the tests share with the pipeline
 * (docs/wire-format.md lists them with their 3GPP references). */
#ifndef GNB_CONSTANTS_P4
#define GNB_CONSTANTS_P4

typedef bit<9> port_t;
const port_t N3_PORT = 0;      // towards the UPF (GTP-U over IPv4/UDP)
const port_t RADIO_PORT = 1;   // towards the DU / UEs (bearer frames)
const port_t BAAS_PORT = 2;    // the buffering service (RLC AM copies, STATUS PDUs out;
                               // retransmissions in)

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_BEARER = 0x88B5;   // IEEE 802 local experimental
const bit<8> IP_PROTO_UDP = 17;
const bit<16> GTPU_UDP_PORT = 2152;        // TS 29.281 4.4.2.3
const bit<8> GTPU_MSG_GPDU = 0xFF;         // TS 29.281 6.1
const bit<8> GTPU_EXT_PDU_SESSION_CONTAINER = 0x85;  // TS 29.281 5.2.1
const bit<4> PDU_TYPE_DL = 0;              // TS 38.415 5.5.3.1
const bit<4> PDU_TYPE_UL = 1;

// Bearer shim flags: the formats of the bearer, so the frame describes itself.
const bit<8> SHIM_RLC_AM = 0x01;
const bit<8> SHIM_RLC_SN18 = 0x02;
const bit<8> SHIM_PDCP_SN18 = 0x04;

const bit<32> SN12_MASK = 0xFFF;
const bit<32> SN18_MASK = 0x3FFFF;

/* RLC AM poll triggers (TS 38.322 5.3.3.2), per DRB. Register rlc_poll_config
 * holds the controller's pollPDU in bits 31..0 and pollByte in bits 63..32;
 * rlc_poll_state holds PDU_WITHOUT_POLL in bits 31..0 and BYTE_WITHOUT_POLL
 * in bits 63..32. A config field of 0 takes its default: TS 38.331 gives a
 * DRB none (its SRB default, infinity for both, would leave the transmitter
 * without feedback), so these are common deployment values, PollPDU p64 and
 * PollByte kB125 (1 kB = 1000 bytes). A field of all ones is infinity: that
 * trigger is off. */
const bit<32> POLL_PDU_DEFAULT = 64;
const bit<32> POLL_BYTE_DEFAULT = 125000;
const bit<32> POLL_INFINITY = 0xFFFFFFFF;

const bit<32> BAAS_CLONE_SESSION = 1;
const bit<32> INSTANCE_NORMAL = 0;

// Index into drop_counter: one reason per dropped packet.
typedef bit<8> drop_reason_t;
const drop_reason_t DROP_TRUNCATED = 0;
const drop_reason_t DROP_NOT_GTP = 1;
const drop_reason_t DROP_BAD_IPV4 = 2;
const drop_reason_t DROP_GTP_UNSUPPORTED = 3;
const drop_reason_t DROP_UNKNOWN_TEID = 4;
const drop_reason_t DROP_UL_SEGMENTED = 5;
const drop_reason_t DROP_UL_CONTROL_PDU = 6;
const drop_reason_t DROP_UNKNOWN_BEARER = 7;
const drop_reason_t DROP_WRONG_PORT = 8;
const drop_reason_t DROP_BAD_HOST_FRAME = 9;   // nic.p4: not a complete downlink data PDU,
                                               // or reserved bits set
const drop_reason_t DROP_BEARER_FORMAT = 10;   // shim flags other than the bearer's formats
const drop_reason_t DROP_BAD_BAAS_FRAME = 11;  // on the BaaS port: a bearer frame that is not
                                               // a complete RLC AM data PDU
const bit<32> DROP_REASONS = 16;

const bit<32> MAX_DRBS = 65536;

#endif
