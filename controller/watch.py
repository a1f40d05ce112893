"""`gnbctl run`: the controller in the foreground, keeping the offload
split on live hosts and restoring a NIC that restarted.

Every interval each NIC and each host behind it is asked for its pipeline
cookie (GetForwardingPipelineConfig, cookie only) with a short deadline:
the answer says whether the process is there and whether it still holds
the pipeline pushed to it; a process that has just started holds none.

Hosts. A host where nothing listens any more, or that misses the deadline
three times in a row, is dead: its VF buckets on the NIC become `no_vf`
(parked), so its DRBs are processed by the NIC again (the other hosts keep
their share; the offload ratio itself is not touched). A host that answers
again, or one that answers without a pipeline (it restarted between two
probes), is provisioned before it gets traffic: its pipeline is pushed and
the NIC's `dl_drb` entries copied to it, which is all its downlink uses;
then its VF buckets come back, and the NIC's `ul_bearer` entries follow
(uplink never reaches a hybrid host, but every host holds the whole DRB
record: a restarted NIC is restored from it). Provisioning runs beside the
probes, so another host's failure is handled meanwhile.

When the watcher starts it takes a host as provisioned only when it holds a
pipeline and the NIC does not keep its buckets parked: a watcher killed
while it provisioned a host left it parked, and the new one provisions it
again instead of sending traffic to a half-filled host.

NIC. When a NIC answers without a pipeline (it restarted), the watcher
restores it from what survived: its pipeline is pushed, the BaaS clone
session written (before any DRB: a radio frame must not go out without its
copy), the host-return ports and `no_vf` for every VF bucket, the DRBs
copied from a host that holds them, and the split (`offload_mode`,
`offload_bucket`, `offload_ip_id`) put back as the watcher last read it (it
reads it every SPLIT_REFRESH_S without a session, so a split changed less
than that before the NIC died comes back as it was before). The hosts that
were up meanwhile stay parked: their memif VFs went down with the NIC and
DPDK 22.11's memif client does not reconnect, so a host gets its share back
once it has restarted and been provisioned again. The NIC's SN registers
are not the watcher's to restore: a NIC started with `--registers-file`
(the testbench's topology starts it so) finds them in the file, mapped
again, and the pipeline push keeps them, so every DRB's PDCP and RLC SNs
continue where the killed NIC stopped (the SNs it gave frames that died
with it are skipped). A NIC without a registers file numbers every DRB
from 0 again, which needs the bearers re-established with new keys (not
done here). A NIC without a pipeline while no
host holds the DRBs (all restarted, or nothing pushed yet) is left to
`gnbctl pipeline push` and `drb load`.

SNs need no care for hosts: the NIC numbers every radio frame (host-built
ones when they come back through it), so frames lost inside a dead host
never got an SN.

Consolidation. With a [power] sidecar in the topology, every
CONSOLIDATION_PERIOD_S the watcher reads the sidecar's consolidation policy
and the hosts' lcore work, decides per NIC which live hosts get the VF
buckets (controller/consolidate.py) and writes the difference; it also puts
back an assignment something else changed (`offload set` deals the buckets
over every live host). A dead host's buckets are parked as above whether
or not it was active; the next decision deals them over the live hosts.
A freed host's lcores that poll or wake often on an empty queue (busy,
nap, proportional) are set to adaptive through the sidecar once their buckets have left, and get their
modes back before buckets return to them. A watcher stopped while hosts
are folded leaves them so; the next one decides again but cannot know
the modes the last one changed.

The watcher holds no P4Runtime session between changes and reads without
one: other gnbctl commands (which use the same election id) work while it
runs. Each change it writes holds the topology's write lock for as long as
its session lasts (controller/write_lock.py), so another command's write
waits for at most that change, and the watcher's for the other command."""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import grpc
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller import consolidate, drbs, offload, pipeline, power, table_copy, targets
from controller.errors import GnbctlError

DEFAULT_INTERVAL_S = 0.1
SLOW_PROBES_FOR_DEAD = 3
COPIED_TABLES = ("dl_drb", "ul_bearer")    # the record of which DRBs exist
DOWNLINK_TABLES = ("dl_drb",)               # what a host's downlink uses
RECORD_ONLY_TABLES = ("ul_bearer",)
SPLIT_TABLES = ("offload_mode", "offload_bucket", "offload_ip_id")
SPLIT_REFRESH_S = 1.0


@dataclass
class Event:
    """What the watcher did, for its log and --json lines."""
    at: float
    target: str         # the host, or the NIC
    what: str           # "watching", "dead", "restarted", "provisioning", "back",
                        # "nic down", "nic restored", "nic not pushed", "failed",
                        # "consolidated", "spread", "consolidation paused"
    seconds: float      # from detection to the change written
    detail: str = ""

    def line(self) -> str:
        text = f"{time.strftime('%H:%M:%S', time.localtime(self.at))} {self.target} {self.what}"
        return (text + f" ({self.seconds * 1e3:.0f} ms)"
                + (f": {self.detail}" if self.detail else ""))


@dataclass
class _Provisioning:
    task: asyncio.Task = None
    detected: float = 0.0
    serving: bool = False       # its dl_drb is complete: it can take traffic
    given: bool = False         # it has its VF buckets back


class Watcher:
    def __init__(self, topology, interval: float = DEFAULT_INTERVAL_S, report=print):
        self.topology = topology
        self.interval = interval
        self.report = report
        self.nics = topology.nics()
        self.hosts = {nic.name: topology.hosts_behind(nic.name) for nic in self.nics}
        self.live: dict[str, set[str]] = {}       # NIC -> hosts given traffic
        self.ready: dict[str, set[str]] = {}      # NIC -> hosts provisioned, not yet given traffic
        self.late: dict[str, int] = {}            # host -> late probes in a row
        self.provisioning: dict[str, _Provisioning] = {}   # host -> its provisioning
        self.vf_lost: dict[str, set[str]] = {}    # NIC -> hosts that were up when it restarted
        self.split: dict[str, list[p4r.Entity]] = {}       # NIC -> its split, last read
        self.split_read_at: dict[str, float] = {}
        self.nic_state: dict[str, str] = {}       # NIC -> "up", "down", "not pushed"
        self.restoring: set[str] = set()          # NICs whose restore has not completed
        self.returned_at: dict[str, float] = {}   # host -> when its return was detected
        self._schemas: dict = {}
        self.consolidators = {nic.name: consolidate.Consolidator([h.name for h in hosts])
                              for nic, hosts in ((n, self.hosts[n.name]) for n in self.nics)}
        self.work = consolidate.WorkMeter()
        self.policy = consolidate.Policy()        # the sidecar's, as last read
        self.policy_error: str | None = None      # why it could not be read, as last reported
        self.freed_modes: dict[str, dict[int, str]] = {}   # host -> lcore -> its mode before
                                                            # consolidation freed it
        self.consolidated_at = 0.0

    async def run(self, stop: asyncio.Event):
        """Probes every interval until `stop` is set. A failed change (a NIC
        that does not answer, a write it rejects) is reported and tried
        again in the next round."""
        try:
            while not stop.is_set():
                started = time.monotonic()
                for nic in self.nics:
                    try:
                        await self._check(nic)
                    except GnbctlError as e:
                        self._emit(nic.name, "failed", started, f"{e}; trying again")
                if self.topology.power is not None and \
                        started - self.consolidated_at >= consolidate.CONSOLIDATION_PERIOD_S:
                    self.consolidated_at = started
                    await self._consolidate(started)
                try:
                    await asyncio.wait_for(stop.wait(),
                                           max(0.0, self.interval - (time.monotonic() - started)))
                except asyncio.TimeoutError:
                    pass
        finally:
            for provisioning in self.provisioning.values():
                provisioning.task.cancel()

    async def _check(self, nic):
        hosts = self.hosts[nic.name]
        probes = await targets.probe_all([nic, *hosts])
        if not await self._nic_ready(nic, probes.pop(nic.name), probes):
            return
        await self._check_hosts(nic, hosts, probes)
        try:
            await self._refresh_split(nic)
        except GnbctlError:
            pass        # the copy it has stays; read again in the next round

    # ---- the NIC -----------------------------------------------------------

    async def _nic_ready(self, nic, probe: targets.Probe, host_probes) -> bool:
        """Whether the NIC takes writes now; restores it first when it lost
        its pipeline (it restarted)."""
        detected = time.monotonic()
        if probe.failure == grpc.StatusCode.UNAVAILABLE:
            if self.nic_state.get(nic.name) != "down":
                self.nic_state[nic.name] = "down"
                self._emit(nic.name, "nic down", detected,
                           "nothing listens at its address; restored when it returns")
            return False
        if probe.failure is not None:
            return True         # only slow: its writes may still go through
        if probe.committed and nic.name not in self.restoring:
            self.nic_state[nic.name] = "up"
            return True
        source = self._drb_source(nic, host_probes)
        if source is None and nic.name not in self.restoring:
            if self.nic_state.get(nic.name) != "not pushed":
                self.nic_state[nic.name] = "not pushed"
                self._emit(nic.name, "nic not pushed", detected,
                           "it holds no pipeline and no host behind it holds the DRBs: "
                           "gnbctl pipeline push and drb load provision it")
            return False
        if source is None:
            raise GnbctlError(f"{nic.name}: its restore did not complete and no host "
                              "behind it holds the DRBs any more")
        await self._restore_nic(nic, source, host_probes, detected)
        return True

    def _drb_source(self, nic, host_probes):
        """A host that holds the DRBs: one that answers with its pipeline,
        provisioned as far as the watcher knows (not being provisioned)."""
        known = self.live.get(nic.name)
        candidates = [h for h in self.hosts[nic.name]
                      if host_probes[h.name].answered and host_probes[h.name].committed
                      and h.name not in self.provisioning]
        preferred = [h for h in candidates if known is None or h.name in known]
        return (preferred or candidates or [None])[0]

    async def _restore_nic(self, nic, source, host_probes, detected: float):
        hosts = self.hosts[nic.name]
        for host in hosts:      # their source of DRBs is gone
            provisioning = self.provisioning.pop(host.name, None)
            if provisioning is not None:
                provisioning.task.cancel()
        if nic.name not in self.restoring:      # a first attempt (a failed one is retried)
            self.restoring.add(nic.name)
            self.live[nic.name] = set()
            self.ready[nic.name] = set()
            # a host cannot start while its NIC is down (its memif client
            # fails to connect), so every host that answers was up before
            self.vf_lost[nic.name] = {h.name for h in hosts if host_probes[h.name].answered}
        await pipeline.push(self.topology, [nic])
        async with targets.session(self.topology, [nic, source]) as (target, host):
            # the clone session first: a radio frame without its BaaS copy is a loss
            if nic.baas_clone:
                await drbs.ensure_clone_session(target)
            updates = []
            if target.has_table("vf_bucket"):
                updates += await offload.vf_updates(target, offload.vf_assignment(hosts, set()))
            if target.has_table("host_return_port"):
                updates += await offload.host_return_updates(target, hosts)
            await target.write(updates)
            copied = await table_copy.copy_tables(host, target, COPIED_TABLES)
            split = self.split.get(nic.name)
            if split:
                request = p4r.WriteRequest(updates=table_copy.restore_updates(split))
                await target.write_raw(request.SerializeToString(), len(split),
                                       lambda i: f"split entry {i}")
        self.restoring.discard(nic.name)
        self.nic_state[nic.name] = "up"
        buckets = sum(1 for e in split or () if not e.table_entry.is_default_action
                      and e.table_entry.table_id == self._table_id(nic, "offload_bucket"))
        parked = sorted(self.vf_lost[nic.name])
        self._emit(nic.name, "nic restored", detected,
                   f"pipeline pushed, {copied} DRB entries copied from {source.name}, "
                   + (f"split restored ({buckets} offload buckets)" if split is not None
                      else "no split known (everything stays on the NIC)")
                   + "; SNs as the NIC's registers file kept them (without one, from 0)"
                   + (f"; {', '.join(parked)} get traffic again once restarted (their VFs "
                      "went down with the NIC)" if parked else ""))

    def _table_id(self, nic, table: str) -> int | None:
        schema = self._schema(nic)
        info = schema.tables.get(table) if schema is not None else None
        return info.id if info is not None else None

    def _schema(self, nic):
        if nic.name not in self._schemas:
            self._schemas[nic.name] = pipeline.topology_schema(nic)
        return self._schemas[nic.name]

    async def _refresh_split(self, nic):
        """The watcher's copy of the NIC's split, read without a session
        at most every SPLIT_REFRESH_S."""
        now = time.monotonic()
        if nic.name in self.split_read_at and \
                now - self.split_read_at[nic.name] < SPLIT_REFRESH_S:
            return
        self.split_read_at[nic.name] = now
        self.split[nic.name] = await targets.read_unarbitrated(
            nic, table_copy.read_request(self._schema(nic), SPLIT_TABLES))

    # ---- the hosts ---------------------------------------------------------

    def _state(self, name: str, probe: targets.Probe) -> str:
        """"dead", "fresh" (answers without a pipeline: it restarted) or
        "up" (answers with one, or is late fewer than SLOW_PROBES_FOR_DEAD
        times in a row: on a loaded machine a live host can miss a deadline)."""
        late = probe.failure is not None and probe.failure != grpc.StatusCode.UNAVAILABLE
        self.late[name] = self.late.get(name, 0) + 1 if late else 0
        if probe.failure == grpc.StatusCode.UNAVAILABLE or \
                self.late[name] >= SLOW_PROBES_FOR_DEAD:
            return "dead"
        return "fresh" if probe.answered and not probe.committed else "up"

    async def _check_hosts(self, nic, hosts, probes):
        detected = time.monotonic()
        state = {h.name: self._state(h.name, probes[h.name]) for h in hosts}
        lost = self.vf_lost.setdefault(nic.name, set())
        lost -= {name for name, s in state.items() if s != "up"}   # restarted: VFs reconnected
        ready = self.ready.setdefault(nic.name, set())
        known = self.live.get(nic.name)
        if known is None:
            parked = await self._parked(nic, hosts)
            keep = {n for n, s in state.items() if s == "up" and n not in parked | lost}
        else:
            keep = {n for n in known if state[n] == "up"}
        serving, broken = self._collect_provisioned(hosts, state)
        ready |= serving
        ready -= {n for n, s in state.items() if s != "up"}
        keep = (keep - broken) | ready
        for host in hosts:
            if state[host.name] != "dead" and host.name not in keep | lost \
                    and host.name not in self.provisioning:
                self._start_provisioning(nic, host, detected)
        if known is not None and keep == known:
            return
        async with targets.session(self.topology, [nic]) as (target,):
            await target.write(await offload.vf_updates(
                target, offload.vf_assignment(hosts, keep, self._active(nic))))
        for name in sorted((known or set()) - keep):
            what = "restarted" if state[name] == "fresh" else "dead"
            self._emit(name, what, detected, f"its DRBs are processed by {nic.name}")
        for name in sorted(ready):
            if name in self.provisioning:
                self.provisioning[name].given = True
            self._emit(name, "back", self.returned_at.pop(name, detected),
                       "provisioned; its VF buckets restored")
        if known is None:
            answering = sorted(n for n, s in state.items() if s != "dead")
            self._emit(", ".join(answering) or "no host", "watching", detected,
                       f"{len(answering)} of {len(hosts)} hosts behind {nic.name} answer, "
                       f"{len(keep)} provisioned")
        ready.clear()
        self.live[nic.name] = keep

    async def _parked(self, nic, hosts) -> set[str]:
        """Hosts whose VF buckets the NIC keeps on `no_vf` (what a watcher
        leaves for a host that is dead or not provisioned yet)."""
        if not hosts:
            return set()
        async with targets.reading(self.topology, [nic]) as (target,):
            if not target.has_table("vf_bucket"):
                return set()
            entries = await offload.table_entries(target, "vf_bucket")
        parked = set()
        for entry in entries:
            if entry.action is not None and entry.action.name == "no_vf":
                parked.add(offload.bucket_host(hosts, entry.match["bucket"]).name)
        return parked

    def _start_provisioning(self, nic, host, detected: float):
        self._emit(host.name, "provisioning", detected,
                   f"pipeline push, then the DRBs from {nic.name}")
        provisioning = _Provisioning(detected=detected)
        provisioning.task = asyncio.create_task(self._provision(nic, host, provisioning))
        self.provisioning[host.name] = provisioning
        self.returned_at[host.name] = detected

    def _collect_provisioned(self, hosts, state) -> tuple[set[str], set[str]]:
        """The hosts that can take traffic since the last round (their
        dl_drb is complete), and those that had it back but whose
        provisioning then failed (to be parked and provisioned again). A
        provisioning whose host died is dropped (it starts again when the
        host returns), a failed one is reported and started again."""
        serving, broken = set(), set()
        for host in hosts:
            provisioning = self.provisioning.get(host.name)
            if provisioning is None:
                continue
            if state[host.name] == "dead":
                provisioning.task.cancel()
                del self.provisioning[host.name]
                continue
            if provisioning.task.done():
                del self.provisioning[host.name]
                error = provisioning.task.exception()
                if error is not None:
                    self._emit(host.name, "failed", provisioning.detected,
                               f"not provisioned, retried: {error}")
                    if provisioning.given:
                        broken.add(host.name)
                    continue
            if provisioning.serving and not provisioning.given:
                serving.add(host.name)
        return serving, broken

    async def _provision(self, nic_config, host_config, provisioning: _Provisioning):
        """Pipeline push, then dl_drb, which is all a host's downlink needs
        (the host may take traffic from then on), then ul_bearer (uplink
        never reaches a hybrid host, but a host must hold the whole DRB
        record: a restarted NIC is restored from it)."""
        await pipeline.push(self.topology, [host_config])
        # the NIC is read without a session: the watcher's own writes to it
        # (another host's failure meanwhile) need the session
        nic = targets.Reader(nic_config, self._schema(nic_config))
        async with targets.session(self.topology, [host_config]) as (host,):
            await table_copy.copy_tables(nic, host, DOWNLINK_TABLES)
            provisioning.serving = True
            await table_copy.copy_tables(nic, host, RECORD_ONLY_TABLES)

    # ---- consolidation -----------------------------------------------------

    def _active(self, nic) -> tuple[str, ...] | None:
        return self.consolidators[nic.name].active or None

    async def _consolidate(self, started: float):
        """One decision per NIC with the sidecar's policy and telemetry;
        without them (it does not answer) the hosts are spread."""
        try:
            async with power.connect(self.topology, consolidate.CONSOLIDATION_PERIOD_S) \
                    as client:
                self.policy = consolidate.Policy.from_sidecar(await client.get_consolidation())
                telemetry = await client.telemetry()
                self.policy_error = None
                await self._consolidate_nics(started, client, telemetry)
                return
        except GnbctlError as e:
            if self.policy_error != str(e):
                self.policy_error = str(e)
                self._emit(self.topology.power.name, "consolidation paused", started,
                           f"{e}; the hosts are spread until it answers")
        await self._consolidate_nics(started, None, None)

    async def _consolidate_nics(self, started: float, client, telemetry: dict | None):
        for nic in self.nics:
            hosts = self.hosts[nic.name]
            live = self.live.get(nic.name)
            if not hosts or live is None or self.nic_state.get(nic.name) != "up" \
                    or nic.name in self.restoring:
                continue
            loads = (self.work.loads(telemetry, [h.name for h in hosts])
                     if telemetry is not None else None)
            consolidator = self.consolidators[nic.name]
            before, was = consolidator.active, consolidator.effective(live)
            decision = consolidator.decide(self.policy, list(live), loads, started)
            now = consolidator.effective(live)
            # modes back before traffic, sleep only after it has gone
            await self._restore_modes(client, now, started)
            try:
                # read without a session: a session each period would claim
                # primary every second and refuse other gnbctl commands
                updates = await offload.vf_updates(
                    targets.Reader(nic, self._schema(nic)),
                    offload.vf_assignment(hosts, live, decision.active or None))
                if updates:
                    async with targets.session(self.topology, [nic]) as (target,):
                        await target.write(updates)
            except GnbctlError as e:
                consolidator.active = before        # decided again next period
                self._emit(nic.name, "failed", started, f"consolidation: {e}; trying again")
                continue
            asleep = await self._let_sleep(client, telemetry, was - now, started)
            if now != was or updates:
                what = "consolidated" if decision.active else "spread"
                self._emit(nic.name, what, started,
                           f"VF buckets on {', '.join(sorted(now)) or 'no host'} "
                           f"({len(updates)} moved): {decision.reason}"
                           + ("" if now != was else " (put back: another command changed them)")
                           + (f"; {', '.join(asleep)} set to {consolidate.SLEEPING_MODE}"
                              if asleep else ""))

    async def _let_sleep(self, client, telemetry, freed: set[str], started: float) -> list[str]:
        """The freed hosts' polling lcores to SLEEPING_MODE; their modes
        kept to put back. The hosts switched."""
        switched = []
        for host in sorted(freed):
            modes = consolidate.modes_to_switch(telemetry, host)
            if client is None or not modes:
                continue
            self.freed_modes.setdefault(host, {}).update(modes)
            try:
                for lcore in modes:
                    await client.set_mode(host, consolidate.SLEEPING_MODE, lcore)
            except GnbctlError as e:
                self._emit(host, "failed", started, f"consolidation: its lcores keep their "
                           f"mode: {e}")
                continue
            switched.append(host)
        return switched

    async def _restore_modes(self, client, active: set[str], started: float):
        """The modes the watcher changed, back on the hosts that hold
        buckets now, then WAKE_S for a sleeping lcore to take it."""
        back = [h for h in sorted(self.freed_modes) if h in active]
        if client is None or not back:
            return
        for host in back:
            try:
                for lcore, mode in self.freed_modes[host].items():
                    await client.set_mode(host, mode, lcore)
                del self.freed_modes[host]
            except GnbctlError as e:
                self._emit(host, "failed", started, f"consolidation: its modes not put back "
                           f"(tried again next period): {e}")
        await asyncio.sleep(consolidate.WAKE_S)

    def _emit(self, target: str, what: str, detected: float, detail: str):
        self.report(Event(time.time(), target, what, time.monotonic() - detected, detail))
