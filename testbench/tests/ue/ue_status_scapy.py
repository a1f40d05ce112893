"""STATUS PDUs and uplink STATUS frames built with the scapy layers of
testbench/gnb/layers.py, the reference the UE tests compare
testbench/ue/status_pdu.py's octets with."""
from __future__ import annotations

from scapy.layers.l2 import Ether

from testbench.gnb.frames import DlDrb
from testbench.gnb.layers import NackSn12, NackSn18, RlcStatus12, RlcStatus18, UplinkBearerShim
from testbench.ue.status_pdu import Nack, StatusPdu


def scapy_status(status: StatusPdu, sn_bits: int):
    """The STATUS PDU as scapy layers (the E bits set by hand from the list)."""
    nack_class, status_class = (NackSn12, RlcStatus12) if sn_bits == 12 else (NackSn18, RlcStatus18)
    nacks = []
    for position, nack in enumerate(status.nacks):
        fields = {"nack_sn": nack.sn, "e1": int(position < len(status.nacks) - 1),
                  "e2": int(nack.has_so), "e3": int(nack.nack_range is not None)}
        if nack.has_so:
            fields.update(so_start=nack.so_start, so_end=nack.so_end)
        if nack.nack_range is not None:
            fields["nack_range"] = nack.nack_range
        nacks.append(nack_class(**fields))
    return status_class(ack_sn=status.ack_sn, e1=int(bool(nacks)), nacks=nacks)


def from_scapy(packet) -> StatusPdu:
    """A dissected RlcStatus12/18 as a StatusPdu."""
    return StatusPdu(packet.ack_sn, tuple(
        Nack(n.nack_sn, n.so_start if n.e2 else None, n.so_end if n.e2 else None,
             n.nack_range if n.e3 else None) for n in packet.nacks))


def scapy_status_frame(drb: DlDrb, status: StatusPdu, gnb_mac: str) -> bytes:
    """The uplink frame a UE sends for the DRB: to the gNB's MAC from the
    UE's, the DRB's shim (its exact flags), the STATUS PDU."""
    return bytes(Ether(dst=gnb_mac, src=drb.ue_mac, type=0x88B5)
                 / UplinkBearerShim(ue_id=drb.ue_id, lcid=drb.lcid, flags=drb.flags)
                 / scapy_status(status, 18 if drb.rlc_sn18 else 12))
