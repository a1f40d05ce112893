"""The SmartNIC build's (p4src/nic.p4) ports and the control commands
(--entries / control socket JSON) that configure its offloading, shared by
the NIC tests and the fuzz harness: ports 0 N3, 1 radio side, 2 BaaS,
then per host i the port 3 + 2i that carries offloaded G-PDUs to it and
the port 4 + 2i on which its radio frames come back."""
from __future__ import annotations

from testbench.gnb.frames import DlDrb, UlBearer

HOSTS = 2
PORTS = 3 + 2 * HOSTS
OFFLOAD_BUCKETS = 1024
VF_BUCKETS = 64


def to_host_port(host: int) -> int:
    """The NIC port whose frames the host receives on its port 0 (N3 side)."""
    return 3 + 2 * host


def return_port(host: int) -> int:
    """The NIC port on which the host's port 1 (radio side) sends."""
    return 4 + 2 * host


def offload_buckets(buckets) -> list[dict]:
    return [{"cmd": "table_add", "table": "offload_bucket", "match": {"bucket": bucket},
             "action": "offload_to_host", "params": {}} for bucket in sorted(set(buckets))]


def offload_by_ip_id() -> dict:
    return {"cmd": "table_set_default", "table": "offload_mode", "action": "offload_by_ip_id",
            "params": {}}


def offload_ip_ids(identifications) -> list[dict]:
    return [{"cmd": "table_add", "table": "offload_ip_id",
             "match": {"identification": identification}, "action": "offload_to_host",
             "params": {}} for identification in identifications]


def vf_buckets_round_robin(hosts=range(HOSTS)) -> list[dict]:
    """Every VF bucket to a host, in turn, as the controller spreads them."""
    hosts = list(hosts)
    return [{"cmd": "table_add", "table": "vf_bucket", "match": {"bucket": bucket},
             "action": "to_vf", "params": {"port": to_host_port(hosts[bucket % len(hosts)])}}
            for bucket in range(VF_BUCKETS)]


def host_return_ports(hosts=range(HOSTS)) -> list[dict]:
    return [{"cmd": "table_add", "table": "host_return_port", "match": {"port": return_port(h)},
             "action": "from_host", "params": {}} for h in hosts]


def bearer_of(drb: DlDrb, teid: int | None = None) -> UlBearer:
    """The DRB's uplink bearer: the same (UE id, LCID), DRB index and formats."""
    return UlBearer(ue_id=drb.ue_id, lcid=drb.lcid, drb_index=drb.drb_index,
                    teid=teid if teid is not None else 0x20000 + drb.drb_index,
                    rlc_am=drb.rlc_am, rlc_sn18=drb.rlc_sn18, pdcp_sn18=drb.pdcp_sn18)


def drb_entries(drbs) -> list[dict]:
    """dl_drb and ul_bearer entries of these DRBs."""
    return [entry for drb in drbs for entry in (drb.table_entry(), bearer_of(drb).table_entry())]
