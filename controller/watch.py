"""`gnbctl run`: the controller in the foreground, keeping the offload
split on live hosts.

Every interval each host behind a NIC is asked for its P4Runtime
Capabilities with a short deadline. A host where nothing listens any more,
or that misses the deadline three times in a row, is dead:
its VF buckets on the NIC become `no_vf`, so its DRBs are processed by the
NIC again (the other hosts keep their share; the offload ratio itself is
not touched). A host that answers again is provisioned before it gets
traffic: its pipeline is pushed and the NIC's `dl_drb` and `ul_bearer`
entries, the record of which DRBs exist, are copied to it; then its VF
buckets come back and the configured split holds again.

SNs need no care here: the NIC numbers every radio frame (host-built ones
when they come back through it), so frames lost inside a dead host never
got an SN.

The watcher holds no P4Runtime session between changes: other gnbctl
commands (which use the same election id) work while it runs."""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import grpc
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller import offload, pipeline, targets
from controller.errors import GnbctlError

DEFAULT_INTERVAL_S = 0.1
SLOW_PROBES_FOR_DEAD = 3
COPIED_TABLES = ("dl_drb", "ul_bearer")
COPY_BATCH = 8192


@dataclass
class Event:
    """What the watcher did, for its log and --json lines."""
    at: float
    target: str         # the host (or the NIC, for a change that failed)
    what: str           # "watching", "dead", "back", "failed"
    seconds: float      # from detection to the NIC's change written
    detail: str = ""

    def line(self) -> str:
        text = f"{time.strftime('%H:%M:%S', time.localtime(self.at))} {self.target} {self.what}"
        return text + f" ({self.seconds * 1e3:.0f} ms)" + (f": {self.detail}" if self.detail else "")


def _entity_ids(schema, table: str) -> dict:
    info = schema.tables[table]
    return {"table": info.id,
            "fields": {f.name: f.id for f in info.match_fields},
            "actions": {a.name: (schema.actions[a.name].id,
                                 {p.name: p.id for p in schema.actions[a.name].params})
                        for a in info.actions}}


def _id_map(source_schema, dest_schema, table: str):
    """(table id, {field id}, {action id: (action id, {param id})}) from
    the source's ids to the destination's, matched by name (the builds share
    names; ids are equal when both come from our compiler, but need not be)."""
    src, dst = _entity_ids(source_schema, table), _entity_ids(dest_schema, table)
    try:
        fields = {src["fields"][n]: dst["fields"][n] for n in src["fields"]}
        actions = {src["actions"][n][0]: (dst["actions"][n][0],
                                          {src["actions"][n][1][p]: dst["actions"][n][1][p]
                                           for p in src["actions"][n][1]})
                   for n in src["actions"]}
    except KeyError as e:
        raise GnbctlError(f"table {table}: {e.args[0]} is not in both P4Infos") from None
    return dst["table"], fields, actions


def _copied(entry: p4r.TableEntry, ids) -> p4r.TableEntry:
    table_id, fields, actions = ids
    copy = p4r.TableEntry()
    copy.CopyFrom(entry)
    copy.table_id = table_id
    for m in copy.match:
        m.field_id = fields[m.field_id]
    action = copy.action.action
    action.action_id, params = actions[action.action_id]
    for p in action.params:
        p.param_id = params[p.param_id]
    return copy


async def copy_tables(source, dest, tables=COPIED_TABLES) -> int:
    """Every entry of `tables` on target `source` inserted on `dest`."""
    copied = 0
    for table in tables:
        if not (source.has_table(table) and dest.has_table(table)):
            raise GnbctlError(f"table {table} is not in both {source.name}'s and "
                              f"{dest.name}'s pipelines")
        ids = _id_map(source.schema, dest.schema, table)
        found = await source.read_raw(p4r.Entity(table_entry=p4r.TableEntry(
            table_id=source.schema.tables[table].id)))
        for first in range(0, len(found), COPY_BATCH):
            chunk = found[first:first + COPY_BATCH]
            request = p4r.WriteRequest(updates=[
                p4r.Update(type=p4r.Update.INSERT,
                           entity=p4r.Entity(table_entry=_copied(e.table_entry, ids)))
                for e in chunk])
            await dest.write_raw(request.SerializeToString(), len(chunk),
                                 lambda i, base=first: f"{table} entry {base + i} of "
                                                       f"{source.name}")
        copied += len(found)
    return copied


class Watcher:
    def __init__(self, topology, interval: float = DEFAULT_INTERVAL_S, report=print):
        self.topology = topology
        self.interval = interval
        self.report = report
        self.nics = topology.nics()
        self.hosts = {nic.name: topology.hosts_behind(nic.name) for nic in self.nics}
        self.live: dict[str, set[str]] = {}       # NIC -> hosts given traffic
        self.late: dict[str, int] = {}            # host -> late probes in a row

    async def run(self, stop: asyncio.Event):
        """Probes every interval until `stop` is set. A failed change (a NIC
        that does not answer, a write it rejects) is reported and tried
        again in the next round."""
        while not stop.is_set():
            started = time.monotonic()
            for nic in self.nics:
                try:
                    await self._check(nic)
                except GnbctlError as e:
                    self._emit(nic.name, "failed", started, f"{e}; trying again")
            try:
                await asyncio.wait_for(stop.wait(),
                                       max(0.0, self.interval - (time.monotonic() - started)))
            except asyncio.TimeoutError:
                pass

    def _answering(self, probes: dict) -> set[str]:
        """The hosts taken as alive: a host is dead at once when nothing
        listens at its address any more, but only after SLOW_PROBES_FOR_DEAD
        late answers in a row when it is merely slow (on a loaded machine a
        live host can miss one deadline)."""
        for name, failure in probes.items():
            late = failure is not None and failure != grpc.StatusCode.UNAVAILABLE
            self.late[name] = self.late.get(name, 0) + 1 if late else 0
        return {name for name, failure in probes.items()
                if failure is None or (failure != grpc.StatusCode.UNAVAILABLE
                                       and self.late[name] < SLOW_PROBES_FOR_DEAD)}

    async def _check(self, nic):
        hosts = self.hosts[nic.name]
        answering = self._answering(await targets.probe_all(hosts))
        known = self.live.get(nic.name)
        if known is not None and answering == known:
            return
        detected = time.monotonic()
        # at start every answering host is taken as provisioned (gnbctl
        # pipeline push / drb load did that); only a returning one is refilled
        back = answering - known if known is not None else set()
        provisioned = answering - back
        for name in sorted(back):
            try:
                await self._provision(nic, next(h for h in hosts if h.name == name))
                provisioned.add(name)
            except GnbctlError as e:
                self._emit(name, "failed", detected, f"not provisioned, retried: {e}")
        async with targets.session(self.topology, [nic]) as (target,):
            await target.write(await offload.vf_updates(
                target, offload.vf_assignment(hosts, provisioned)))
        for name in sorted((known or set()) - answering):
            self._emit(name, "dead", detected, f"its DRBs are processed by {nic.name}")
        for name in sorted(back & provisioned):
            self._emit(name, "back", detected, "provisioned; its VF buckets restored")
        if known is None:
            self._emit(", ".join(sorted(answering)) or "no host", "watching", detected,
                       f"{len(answering)} of {len(hosts)} hosts behind {nic.name} answer")
        self.live[nic.name] = provisioned

    async def _provision(self, nic_config, host_config):
        await pipeline.push(self.topology, [host_config])
        async with targets.session(self.topology, [nic_config, host_config]) as (nic, host):
            await copy_tables(nic, host)

    def _emit(self, target: str, what: str, detected: float, detail: str):
        self.report(Event(time.time(), target, what, time.monotonic() - detected, detail))
