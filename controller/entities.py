"""Readable builders of the gNB's P4Runtime entities, by P4Info name (the
names are global `@name(".x")` in p4src/, the same in both builds)."""
from __future__ import annotations

import finsy as fy

from controller.drb_keys import DL_ACTION, UL_ACTION
from controller.drbs import Drb

BAAS_CLONE_SESSION = 1
BAAS_PORT = 2


def dl_drb(drb: Drb, with_action: bool = True) -> fy.P4TableEntry:
    action = fy.P4TableAction(
        DL_ACTION, drb_index=drb.drb, ue_id=drb.ue_id, lcid=drb.lcid,
        rlc_am=int(drb.rlc == "am"), rlc_sn18=int(drb.rlc_sn == 18),
        pdcp_sn18=int(drb.pdcp_sn == 18), default_qfi=drb.qfi, ue_mac=drb.ue_mac)
    return fy.P4TableEntry("dl_drb", match=fy.P4TableMatch(teid=drb.teid),
                           action=action if with_action else None)


def ul_bearer(drb: Drb, with_action: bool = True) -> fy.P4TableEntry:
    action = fy.P4TableAction(
        UL_ACTION, drb_index=drb.drb, rlc_am=int(drb.rlc == "am"),
        rlc_sn18=int(drb.rlc_sn == 18), pdcp_sn18=int(drb.pdcp_sn == 18), teid=drb.ul_teid, gnb_ip=drb.gnb_ip,
        upf_ip=drb.upf_ip, upf_mac=drb.upf_mac)
    return fy.P4TableEntry("ul_bearer", match=fy.P4TableMatch(ue_id=drb.ue_id, lcid=drb.lcid),
                           action=action if with_action else None)


def baas_clone_session() -> fy.P4CloneSessionEntry:
    return fy.P4CloneSessionEntry(session_id=BAAS_CLONE_SESSION, replicas=[(BAAS_PORT, 0)])


def offload_bucket(bucket: int) -> fy.P4TableEntry:
    return fy.P4TableEntry("offload_bucket", match=fy.P4TableMatch(bucket=bucket),
                           action=fy.P4TableAction("offload_to_host"))


def offload_ip_id(identification: int) -> fy.P4TableEntry:
    return fy.P4TableEntry("offload_ip_id", match=fy.P4TableMatch(identification=identification),
                           action=fy.P4TableAction("offload_to_host"))


def vf_bucket(bucket: int, port: int | None) -> fy.P4TableEntry:
    """port None: the bucket's host is gone; its packets stay on the NIC."""
    action = fy.P4TableAction("no_vf") if port is None else fy.P4TableAction("to_vf", port=port)
    return fy.P4TableEntry("vf_bucket", match=fy.P4TableMatch(bucket=bucket), action=action)


def offload_mode(mode: str) -> fy.P4TableEntry:
    action = {"ratio": "offload_by_bucket", "marker": "offload_by_ip_id"}[mode]
    return fy.P4TableEntry("offload_mode", is_default_action=True,
                           action=fy.P4TableAction(action))


def host_return_port(port: int) -> fy.P4TableEntry:
    return fy.P4TableEntry("host_return_port", match=fy.P4TableMatch(port=port),
                           action=fy.P4TableAction("from_host"))
