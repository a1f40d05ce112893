"""The offload split on NIC targets (hybrid contract): ratio mode puts
buckets 0 .. round(P * 1024 / 100) - 1 of `offload_bucket` on the hosts;
marker mode offloads the packets whose outer IPv4 Identification is in
`offload_ip_id`; `vf_bucket` spreads what is offloaded over the live hosts.
Every change is one Write per NIC: the diff against what is installed."""
from __future__ import annotations

import math

import finsy as fy

from controller import entities
from controller.errors import GnbctlError, MissingP4Object

OFFLOAD_BUCKETS = 1024
VF_BUCKETS = 64
MODES = {"offload_by_bucket": "ratio", "offload_by_ip_id": "marker"}


def ratio_buckets(percent: float) -> set[int]:
    if not 0 <= percent <= 100:
        raise GnbctlError(f"the offload percentage must be 0..100, not {percent:g}")
    return set(range(math.floor(percent * OFFLOAD_BUCKETS / 100 + 0.5)))


def bucket_host(hosts, bucket: int):
    """The host of VF bucket `bucket`: buckets are dealt round-robin over
    the topology's hosts."""
    return hosts[bucket % len(hosts)]


def vf_assignment(hosts, live: set[str] | None = None,
                  active: tuple[str, ...] | None = None) -> dict[int, int | None]:
    """Bucket -> the NIC port of its host. Buckets are dealt round-robin
    over the topology's hosts, so a bucket's home host never changes; a
    bucket whose host is not live (None) stays on the NIC, and the other
    hosts' load does not move. With `active` (core consolidation,
    controller/consolidate.py) the buckets of a home host outside it are
    dealt round-robin over the active hosts instead; the active hosts keep
    their own, so folding and spreading move only the freed hosts' buckets."""
    if not hosts:
        return {b: None for b in range(VF_BUCKETS)}
    on = [h for h in hosts if active and h.name in active] or list(hosts)

    def owner(bucket: int):
        home = bucket_host(hosts, bucket)
        return home if home in on else on[bucket % len(on)]

    return {b: h.vf_port if live is None or h.name in live else None
            for b, h in ((b, owner(b)) for b in range(VF_BUCKETS))}


def _require(target, table: str):
    if not target.has_table(table):
        raise MissingP4Object(target.name, "table", table)


async def table_entries(target, table: str) -> list[fy.P4TableEntry]:
    """Every entry of `table` on `target`, decoded."""
    return await target.read(fy.P4TableEntry(table))


async def vf_updates(target, assignment: dict[int, int | None]) -> list:
    """The updates that make vf_bucket equal `assignment`."""
    installed = {e.match["bucket"]: e for e in await table_entries(target, "vf_bucket")}
    updates = []
    for bucket, port in assignment.items():
        wanted = entities.vf_bucket(bucket, port)
        current = installed.get(bucket)
        if current is None:
            updates.append(+wanted)
        elif current.action != wanted.action:
            updates.append(~wanted)
    return updates


async def host_return_updates(target, hosts) -> list:
    """host_return_port entries for the hosts' return ports (4 + 2*vf)
    that are not installed yet: their radio frames get the NIC's SNs."""
    _require(target, "host_return_port")
    installed = {e.match["port"] for e in await table_entries(target, "host_return_port")}
    return [+entities.host_return_port(h.vf_port + 1) for h in hosts
            if h.vf_port + 1 not in installed]


async def set_ratio(target, percent: float, hosts, live: set[str] | None = None) -> dict:
    """Ratio mode at `percent`; VF buckets of hosts not in `live` stay on
    the NIC."""
    _require(target, "offload_bucket")
    wanted = ratio_buckets(percent)
    installed = {e.match["bucket"] for e in await table_entries(target, "offload_bucket")}
    updates = [+entities.offload_bucket(b) for b in sorted(wanted - installed)]
    updates += [-entities.offload_bucket(b) for b in sorted(installed - wanted)]
    notes = []
    if target.has_table("offload_mode"):
        updates.append(~entities.offload_mode("ratio"))
    else:
        notes.append(f"{target.name}: this P4 program has no table offload_mode "
                     "(it offloads by bucket only)")
    if not hosts:
        notes.append(f"{target.name}: no host is behind this NIC in the topology: "
                     "offloaded buckets have nowhere to go")
    elif target.has_table("vf_bucket"):
        notes += [f"{h.name} does not answer at {h.address}: its share stays on {target.name}"
                  for h in hosts if live is not None and h.name not in live]
        updates += await vf_updates(target, vf_assignment(hosts, live))
        updates += await host_return_updates(target, hosts)
    else:
        notes.append(f"{target.name}: this P4 program has no table vf_bucket: "
                     "the VF spread is not configured")
    await target.write(updates, _describe)
    return {"target": target.name, "percent": percent, "buckets": len(wanted),
            "inserted": len(wanted - installed), "deleted": len(installed - wanted),
            "updates": len(updates), "notes": notes}


def _describe(update) -> str:
    entry = update
    match = ", ".join(f"{k} {v}" for k, v in (entry.match or {}).items())
    return f"{entry.table_id}" + (f" ({match})" if match else " (default action)")


async def show(target, hosts) -> dict:
    _require(target, "offload_bucket")
    buckets = sorted(e.match["bucket"] for e in await table_entries(target, "offload_bucket"))
    percent = 100 * len(buckets) / OFFLOAD_BUCKETS
    result = {"target": target.name, "buckets": len(buckets), "percent": round(percent, 3),
              "mode": None, "markers": None, "hosts": {}}
    if target.has_table("offload_mode"):
        default = await target.read(fy.P4TableEntry("offload_mode", is_default_action=True))
        if default and default[0].action is not None:
            result["mode"] = MODES.get(default[0].action.name, default[0].action.name)
    if target.has_table("offload_ip_id"):
        result["markers"] = sorted(e.match["identification"]
                                   for e in await table_entries(target, "offload_ip_id"))
    if target.has_table("vf_bucket"):
        by_port: dict[int, int] = {}
        for e in await table_entries(target, "vf_bucket"):
            if e.action is not None and e.action.name == "to_vf":
                port = e.action.args["port"]
                by_port[port] = by_port.get(port, 0) + 1
        for host in hosts:
            share = by_port.get(host.vf_port, 0) / VF_BUCKETS
            result["hosts"][host.name] = {"port": host.vf_port, "vf_buckets":
                                          by_port.get(host.vf_port, 0),
                                          "percent": round(percent * share, 3)}
    return result


async def set_mode(target, mode: str) -> None:
    _require(target, "offload_mode")
    await target.write([~entities.offload_mode(mode)], _describe)


async def marker(target, add: bool, identification: int) -> None:
    _require(target, "offload_ip_id")
    if not 0 <= identification < 1 << 16:
        raise GnbctlError(f"a marker is an IPv4 Identification, 0..65535, not {identification}")
    entry = entities.offload_ip_id(identification)
    await target.write([+entry if add else -entry], _describe)
