"""Fuzzing of the P4Runtime server of a real target (p4rt_objects.p4,
every kind of object the server handles) with well over 100,000 malformed
or mutated requests: Writes with wrong ids, widths, prefixes, masks,
missing fields and the wrong scope, huge batches, duplicate updates,
INSERT of existing and MODIFY/DELETE of missing entries, Reads with bogus
ids, random and mangled bytes as request bodies, writes from clients that
are not the primary, garbage pipeline configs and arbitration messages.

Every answer must carry the status the P4Runtime specification requires
(request_mutations.py says which, case by case, and marks the few where
the spec names none and the server's choice is checked): per update or
read request a p4.v1.Error in the UNKNOWN status's details (OK for those
that succeeded), or one status for the RPC; a body that does not parse is
INTERNAL, gRPC's code for it. Valid writes are mixed in from a
seeded generator (P4RT_FUZZ_SEED to repeat a run); a model keeps what they
left, and at checkpoints and at the end a wildcard Read of every table,
default entry, direct counter, counter, register and clone session must
return exactly the model's contents. Each RPC has a deadline, the target
must be alive at the end, and its resident memory may grow by at most
RSS_GROWTH_LIMIT from the end of the warm-up to the end. A summary line
gives the requests sent, the statuses checked per code, the time taken and
the memory figures (P4RT_FUZZ_CATEGORIES=1 adds the count per category)."""
from __future__ import annotations

import collections
import os
import random
import threading
import time

import grpc
import pytest
from finsy.proto.google.rpc import status_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc

from p4rt_client import proc_status_bytes, status_details, write_errors
from request_mutations import (
    ALREADY_EXISTS, CODE_NAMES, OK, SERVICE, UNKNOWN, Batch, CallCase, Case, Group, Model,
    Mutator, Schema, Sessions, Stored, key_of, normalized, outcomes)
from testbench.bench.machine import describe_machine

pytestmark = pytest.mark.dpdk

SEED = int(os.environ.get("P4RT_FUZZ_SEED", "4242"))
DEVICE, PRIMARY, BACKUP = 1, 1000, 500       # device id, election ids (low)
DEADLINE = 20.0            # seconds, every RPC
ROUNDS = 200
WARMUP_ROUNDS = 25         # RSS is measured after these
CHECKPOINT_EVERY = 25
WRITE_BATCH = 400          # updates per ordinary Write
READ_BATCH = 100           # entities per Read
HUGE_BATCH = 20000         # updates per huge Write
# Huge batches go in the warm-up, one at a time and BURST at once: the
# server's allocator keeps the memory a huge batch needed in the arena of
# the worker thread that served it (glibc raises its trim threshold after
# a large free), and reuses it for the next one there. Repeated huge
# batches level off (no leak), but one on a thread that had none yet adds
# ~20 MB. So RSS is compared over the steady phase, which runs the same
# code on ordinary batches. The burst's updates all fail: nothing changes
# while they are in flight.
HUGE_ROUNDS = {4, 8, 12, 16}
BURST_ROUNDS = {20}
BURST = 4
CALLS_PER_ROUND = 30       # whole-RPC cases (raw bytes, sessions, pipeline)
IN_FLIGHT = 32             # of those, sent ahead as futures
STREAMS_EVERY = 10         # rounds; each time STREAMS scenarios
STREAMS = 8
RSS_GROWTH_LIMIT = 30 << 20
MIN_REQUESTS = 100_000

CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 256 << 20),
    # the details of a huge batch's status (one p4.v1.Error per update)
    # exceed gRPC's default 8 KB of metadata (spec, "gRPC Metadata Maximum
    # Size")
    ("grpc.max_metadata_size", 64 << 20),
    ("grpc.absolute_max_metadata_size", 64 << 20),
]


def vm_rss(pid: int) -> int:
    return proc_status_bytes(pid, "VmRSS")


class Fuzz:
    """Sends the cases, checks every status, keeps the tallies."""

    def __init__(self, target, names):
        self.target = target
        self.schema = Schema(names.p4info)
        self.model = Model(self.schema)
        self.rng = random.Random(SEED)
        self.mut = Mutator(self.schema, self.model, self.rng)
        self.sessions = Sessions(self.mut, DEVICE, PRIMARY, BACKUP)
        self.channel = grpc.insecure_channel(target.address, options=CHANNEL_OPTIONS)
        grpc.channel_ready_future(self.channel).result(timeout=DEADLINE)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.malformed = 0          # malformed or mutated requests sent
        self.valid = 0              # valid ones mixed in
        self.rpcs = 0
        self.codes = collections.Counter()        # statuses checked, per code
        self.categories = collections.Counter()
        self.mismatches: dict[str, list] = {}     # category -> [count, first example]
        self.in_flight: collections.deque = collections.deque()
        self.rss: list[int] = []                  # the target's, at each checkpoint

    # -- bookkeeping

    def tally(self, category: str, valid: bool, code: int):
        self.categories[category] += 1
        self.codes[code] += 1
        if valid:
            self.valid += 1
        else:
            self.malformed += 1

    def mismatch(self, category: str, example: str):
        entry = self.mismatches.setdefault(category, [0, example])
        entry[0] += 1

    # -- Write batches

    def write(self, updates) -> tuple[int, grpc.RpcError | None]:
        request = p4r.WriteRequest(device_id=DEVICE, updates=updates)
        request.election_id.low = PRIMARY
        self.rpcs += 1
        try:
            self.stub.Write(request, timeout=DEADLINE)
            return OK, None
        except grpc.RpcError as error:
            return error.code().value[0], error

    def run_write_batch(self, batch: Batch):
        self.check_write(batch, *self.write([c.message for c in batch.flat()]))

    def run_concurrent_batches(self, batches: list[Batch]):
        """Batches none of whose updates may succeed (nothing changes),
        all in flight at once."""
        futures = []
        for batch in batches:
            request = p4r.WriteRequest(device_id=DEVICE, updates=[c.message for c in batch.flat()])
            request.election_id.low = PRIMARY
            futures.append(self.stub.Write.future(request, timeout=DEADLINE))
            self.rpcs += 1
        for batch, future in zip(batches, futures):
            error = future.exception()
            self.check_write(batch, OK if error is None else error.code().value[0], error)

    def check_batch_status(self, what: str, code: int, error: grpc.RpcError | None,
                           codes: list[int]) -> bool:
        """spec, "Error Reporting" (Write) and "Batch Processing" (Read):
        OK when every element succeeded, else UNKNOWN with one p4.v1.Error
        per element in a google.rpc.Status whose code and message are the
        gRPC status's own ("Error Reporting Messages")."""
        self.codes[code] += 1
        if code == OK:
            return True
        details = status_pb2.Status.FromString(status_details(error) or b"")
        if (details.code, details.message) != (UNKNOWN, error.details()):
            self.mismatch(f"{what} status details", f"google.rpc.Status {details.code} "
                                                     f"{details.message!r} for gRPC "
                                                     f"{error.code()} {error.details()!r}")
        if len(codes) != len(details.details):
            self.mismatch(f"{what} details", f"{len(details.details)} p4.v1.Error for "
                                             f"{len(codes)} elements: {error.details()}")
            return False
        if all(c == OK for c in codes):
            self.mismatch(f"{what} status", "UNKNOWN though every element succeeded")
        return True

    def check_write(self, batch: Batch, code: int, error: grpc.RpcError | None):
        cases = batch.flat()
        if code == OK:
            observed = [(OK, "")] * len(cases)
            self.check_batch_status("write batch", code, error, [])
        elif code == UNKNOWN:
            errors = write_errors(error)
            if not self.check_batch_status("write batch", code, error,
                                           [e.canonical_code for e in errors]):
                self.checkpoint("after a batch without details")
                return
            if len(errors) != len(cases):
                self.mismatch("write batch details", f"{len(errors)} p4.v1.Error for "
                                                     f"{len(cases)} updates")
                self.checkpoint("after a batch without details")
                return
            observed = [(e.canonical_code, e.message) for e in errors]
            for e in errors:
                # spec, "Error Reporting": an update that succeeded has code
                # OK and no other field
                if e.canonical_code == OK and (e.message or e.space or e.code):
                    self.mismatch("OK update with error fields", str(e))
        else:
            self.mismatch("batch status", f"{CODE_NAMES.get(code)}: {error.details()}")
            self.checkpoint("after a batch refused as a whole")
            return
        diverged = False
        i = 0
        for item in batch.items:
            if isinstance(item, Group):
                n = len(item.cases)
                diverged |= not self.check_group(item, observed[i:i + n])
                i += n
            else:
                diverged |= not self.check_case(item, *observed[i])
                i += 1
        if diverged:
            self.checkpoint("after unexpected statuses")

    def check_case(self, case: Case, code: int, message: str) -> bool:
        self.tally(case.category, case.valid, code)
        if code != case.expected:
            self.mismatch(case.category,
                          f"expected {CODE_NAMES[case.expected]}, got {CODE_NAMES.get(code)}"
                          f" ({message!r}) for {case.message}")
            return False
        if case.step is not None:
            states = [self.model.get(s) for s in case.slots]
            _, new = case.step(states)
            for slot, state in zip(case.slots, new):
                self.model.set(slot, state)
        return True

    def check_group(self, group: Group, observed) -> bool:
        codes = [c for c, _ in observed]
        for case, code in zip(group.cases, codes):
            self.tally(group.category, False, code)
        finals = [state for seen, state in outcomes(group, self.model) if seen == codes]
        if not finals:
            self.mismatch(group.category,
                          f"{[CODE_NAMES.get(c) for c in codes]} fits no order of "
                          f"{[str(c.message) for c in group.cases]}")
            return False
        slot = group.cases[0].slots[0]
        distinct = {self.state_bytes(s): s for s in finals}
        if len(distinct) > 1:
            # both orders are allowed and end differently: ask the target
            found = self.read_slot(slot)
            if self.state_bytes(found) not in distinct:
                self.mismatch(group.category, f"{found} is the outcome of no order")
                return False
            self.model.set(slot, found)
        else:
            self.model.set(slot, finals[0])
        return True

    @staticmethod
    def state_bytes(state) -> bytes:
        if isinstance(state, Stored):
            return normalized(state.entry) + repr(state.counter).encode()
        return repr(state).encode()

    def read_slot(self, slot):
        if slot[0] == "clone":
            q = p4r.Entity()
            q.packet_replication_engine_entry.clone_session_entry.session_id = slot[1]
            found = self.read([q])
            if not found:
                return None
            s = found[0].packet_replication_engine_entry.clone_session_entry
            return (s.replicas[0].egress_port, s.packet_length_bytes)
        _, table_id, key = slot
        q = p4r.Entity()
        self.mut.fill_match(q.table_entry, self.schema.table[table_id], key)
        q.table_entry.table_id = table_id
        if self.schema.table[table_id].direct_counter:
            q.table_entry.counter_data.SetInParent()
        found = self.read([q])
        if not found:
            return None
        return self.stored_of(found[0].table_entry)

    def stored_of(self, entry: p4r.TableEntry) -> Stored:
        counter = None
        if self.schema.table[entry.table_id].direct_counter:
            counter = (entry.counter_data.packet_count, entry.counter_data.byte_count)
            entry = p4r.TableEntry.FromString(entry.SerializeToString())
            entry.ClearField("counter_data")
        return Stored(entry, counter)

    # -- Reads

    def read(self, entities) -> list[p4r.Entity]:
        """A Read that must succeed."""
        self.rpcs += 1
        found = []
        for response in self.stub.Read(p4r.ReadRequest(device_id=DEVICE, entities=entities),
                                       timeout=DEADLINE):
            found.extend(response.entities)
        return found

    def run_read_batch(self, cases: list[Case]):
        self.rpcs += 1
        found = []
        code, error = OK, None
        try:
            for response in self.stub.Read(p4r.ReadRequest(
                    device_id=DEVICE, entities=[c.message for c in cases]), timeout=DEADLINE):
                found.extend(response.entities)
        except grpc.RpcError as e:
            code, error = e.code().value[0], e
        if code == OK:
            observed = [OK] * len(cases)
            self.check_batch_status("read batch", code, error, [])
        elif code == UNKNOWN:
            observed = [e.canonical_code for e in write_errors(error)]
            if not self.check_batch_status("read batch", code, error, observed):
                return
            if len(observed) != len(cases):
                self.mismatch("read batch details", f"{len(observed)} p4.v1.Error for "
                                                    f"{len(cases)} read requests")
                return
        else:
            self.mismatch("read status", f"{CODE_NAMES.get(code)}: {error.details()}")
            return
        expected = []
        for case, seen in zip(cases, observed):
            self.tally(case.category, case.valid, seen)
            if seen != case.expected:
                self.mismatch(case.category, f"expected {CODE_NAMES[case.expected]}, got "
                                             f"{CODE_NAMES.get(seen)} for {case.message}")
            if seen == OK:
                expected.extend(normalized(e) for e in case.read_back)
        got = sorted(normalized(e) for e in found)
        if got != sorted(expected):
            extra = collections.Counter(got) - collections.Counter(expected)
            missing = collections.Counter(expected) - collections.Counter(got)
            example = next(iter(extra or missing))
            self.mismatch("read results", f"{sum(extra.values())} entities too many, "
                                          f"{sum(missing.values())} missing, e.g. "
                                          f"{p4r.Entity.FromString(example)}")

    # -- whole RPCs, several in flight

    def submit(self, case: CallCase):
        path = SERVICE + case.method
        if case.method == "Read":
            call = self.channel.unary_stream(path)(case.body, timeout=DEADLINE)
        else:
            call = self.channel.unary_unary(path).future(case.body, timeout=DEADLINE)
        self.rpcs += 1
        self.in_flight.append((case, call))
        while len(self.in_flight) > IN_FLIGHT:
            self.finish_one()

    def finish_one(self):
        case, call = self.in_flight.popleft()
        code, error = OK, None
        try:
            if case.method == "Read":
                entities = sum(len(p4r.ReadResponse.FromString(r).entities) for r in call)
                if entities:
                    self.mismatch(case.category, f"{entities} entities read")
            else:
                call.result()
        except grpc.RpcError as e:
            code, error = e.code().value[0], e
        self.tally(case.category, case.valid, code)
        if code != case.expected:
            self.mismatch(case.category, f"expected {CODE_NAMES[case.expected]}, got "
                                         f"{CODE_NAMES.get(code)} "
                                         f"({error.details() if error else ''!r}) for "
                                         f"{case.body[:80]!r}")
        elif error is not None and code != UNKNOWN and status_details(error) is not None:
            # spec, "Write RPC" / "Error Reporting": an error before any
            # update is attempted has no error details
            self.mismatch(case.category + " (details set)", error.details())

    def drain(self):
        while self.in_flight:
            self.finish_one()

    # -- StreamChannel

    def run_stream(self, category: str, messages: list[bytes], backups: int, end: int):
        done = threading.Event()

        def requests():
            yield from messages
            done.wait(DEADLINE)      # the server must end the stream

        call = self.channel.stream_stream(SERVICE + "StreamChannel")(requests(),
                                                                   timeout=DEADLINE)
        self.rpcs += 1
        responses, code = [], OK
        try:
            for raw in call:
                responses.append(p4r.StreamMessageResponse.FromString(raw))
        except grpc.RpcError as e:
            code = e.code().value[0]
        finally:
            done.set()
            call.cancel()
        arbitration = [(r.arbitration.status.code, r.arbitration.election_id.low)
                       for r in responses]
        self.tally(category, False, code)
        for status, _ in arbitration:
            self.codes[status] += 1
        if (arbitration, code) != ([(ALREADY_EXISTS, PRIMARY)] * backups, end):
            self.mismatch(category, f"expected {[('ALREADY_EXISTS', PRIMARY)] * backups} "
                                    f"then {CODE_NAMES[end]}, got "
                                    f"{[(CODE_NAMES.get(c), e) for c, e in arbitration]} "
                                    f"then {CODE_NAMES.get(code)}")

    # -- the model against a wildcard Read of everything

    def everything(self) -> list[p4r.Entity]:
        entities = [p4r.Entity(table_entry=p4r.TableEntry())]
        entities += [p4r.Entity(table_entry=p4r.TableEntry(table_id=t.id,
                                                           is_default_action=True))
                     for t in self.schema.tables]
        entities.append(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry()))
        entities.append(p4r.Entity(counter_entry=p4r.CounterEntry()))
        entities.append(p4r.Entity(register_entry=p4r.RegisterEntry()))
        clones = p4r.Entity()
        clones.packet_replication_engine_entry.clone_session_entry.SetInParent()
        entities.append(clones)
        return self.read(entities)

    def init_model(self):
        """The state before the first write: the program's default entries
        and const entries, counters and registers at 0, no clone session."""
        for e in self.everything():
            which = e.WhichOneof("entity")
            if which == "table_entry" and e.table_entry.is_default_action:
                self.model.defaults[e.table_entry.table_id] = e.table_entry
                self.model.program_defaults[e.table_entry.table_id] = e.table_entry
            elif which == "table_entry":
                assert e.table_entry.is_const, e
                self.model.set(("entry", e.table_entry.table_id,
                                key_of(self.schema, e.table_entry)),
                               Stored(e.table_entry, None))
        assert len(self.model.defaults) == len(self.schema.tables)
        self.compare("initial state")

    def compare(self, label: str) -> bool:
        found = self.everything()
        by_kind = collections.defaultdict(list)
        for e in found:
            which = e.WhichOneof("entity")
            if which == "table_entry" and e.table_entry.is_default_action:
                which = "default_entry"
            by_kind[which].append(e)
        m = self.model
        wanted = {
            "table_entry": m.table_entries(),
            "default_entry": m.default_entries(),
            "direct_counter_entry": m.direct_counter_entries(),
            "counter_entry": m.counter_entries(),
            "register_entry": m.register_entries(),
            "packet_replication_engine_entry": m.clone_entries(),
        }
        same = True
        for kind, expected in wanted.items():
            got = sorted(normalized(e.table_entry if kind in ("table_entry", "default_entry")
                                    else e) for e in by_kind[kind])
            if got != expected:
                same = False
                extra = collections.Counter(got) - collections.Counter(expected)
                missing = collections.Counter(expected) - collections.Counter(got)
                show = lambda b: p4r.Entity.FromString(b)  # noqa: E731
                self.mismatch(f"{label}: {kind}s",
                              f"{sum(extra.values())} read but not in the model "
                              f"(e.g. {show(next(iter(extra))) if extra else '-'}), "
                              f"{sum(missing.values())} in the model but not read "
                              f"(e.g. {show(next(iter(missing))) if missing else '-'})")
        if not same:
            self.resync(by_kind)
        return same

    def resync(self, by_kind):
        """After a mismatch: the model becomes what the target holds, so
        that one wrong status does not make every later check fail."""
        m = self.model
        counters = {normalized(p4r.Entity(table_entry=e.direct_counter_entry.table_entry)):
                    e.direct_counter_entry.data for e in by_kind["direct_counter_entry"]}
        for entries in m.entries.values():
            for key in list(entries.keys):
                entries.remove(key)
        for e in by_kind["table_entry"]:
            entry = e.table_entry
            stored = Stored(entry, None)
            if self.schema.table[entry.table_id].direct_counter:
                key_only = p4r.TableEntry(table_id=entry.table_id, match=entry.match,
                                          priority=entry.priority)
                data = counters.get(normalized(p4r.Entity(table_entry=key_only)))
                stored = Stored(entry, (data.packet_count, data.byte_count) if data else (0, 0))
            m.set(("entry", entry.table_id, key_of(self.schema, entry)), stored)
        for e in by_kind["default_entry"]:
            m.defaults[e.table_entry.table_id] = e.table_entry
        for e in by_kind["counter_entry"]:
            c = e.counter_entry
            m.counters[c.counter_id][c.index.index] = (c.data.packet_count, c.data.byte_count)
        for e in by_kind["register_entry"]:
            r = e.register_entry
            m.registers[r.register_id][r.index.index] = int.from_bytes(r.data.bitstring, "big")
        for key in list(m.clones.keys):
            m.clones.remove(key)
        for e in by_kind["packet_replication_engine_entry"]:
            s = e.packet_replication_engine_entry.clone_session_entry
            m.clones.set(s.session_id, (s.replicas[0].egress_port, s.packet_length_bytes))

    def checkpoint(self, label: str):
        self.drain()
        assert self.target.runtime.alive(), \
            f"the target died ({label}):\n{self.target.runtime.log_tail()}"
        self.compare(label)
        self.rss.append(vm_rss(self.target.runtime.process.pid))

    def report(self) -> str:
        lines = [f"{n} x {category}: {example[:1500]}"
                 for category, (n, example) in sorted(self.mismatches.items())]
        return "\n".join(lines)


def test_mutated_requests_get_the_status_the_spec_requires(target, names, capsys):
    started = time.monotonic()
    primary = target.primary((0, PRIMARY))
    backup = target.client()
    assert backup.arbitrate((0, BACKUP)).status.code == ALREADY_EXISTS
    fuzz = Fuzz(target, names)
    pid = target.runtime.process.pid
    fuzz.init_model()

    rss_warm = None
    for round_ in range(1, ROUNDS + 1):
        size = HUGE_BATCH if round_ in HUGE_ROUNDS else WRITE_BATCH
        batch = fuzz.mut.write_batch(size)
        for case in fuzz.sessions.call_cases(CALLS_PER_ROUND // 2):
            fuzz.submit(case)
        fuzz.run_write_batch(batch)
        for case in fuzz.sessions.call_cases(CALLS_PER_ROUND - CALLS_PER_ROUND // 2):
            fuzz.submit(case)
        fuzz.run_read_batch(fuzz.mut.read_batch(READ_BATCH))
        if round_ in BURST_ROUNDS:
            fuzz.drain()
            fuzz.run_concurrent_batches([fuzz.mut.failing_batch(HUGE_BATCH)
                                         for _ in range(BURST)])
        if round_ % STREAMS_EVERY == 0:
            fuzz.drain()
            for _ in range(STREAMS):
                fuzz.run_stream(*fuzz.sessions.stream_scenario())
        if round_ % CHECKPOINT_EVERY == 0:
            fuzz.checkpoint(f"checkpoint after round {round_}")
        if round_ == WARMUP_ROUNDS:
            rss_warm = vm_rss(pid)
    fuzz.checkpoint("the end")
    # the primary is still the primary, its stream still open
    primary.write([])
    assert primary.stream_error is None
    assert target.runtime.alive()
    rss_end = vm_rss(pid)
    elapsed = time.monotonic() - started

    codes = ", ".join(f"{CODE_NAMES[c]} {n}" for c, n in sorted(fuzz.codes.items(),
                                                                key=lambda kv: -kv[1]))
    summary = (f"P4Runtime fuzz (seed {SEED}): {fuzz.malformed} malformed or mutated "
               f"requests and {fuzz.valid} valid ones in {fuzz.rpcs} RPCs, "
               f"{sum(fuzz.codes.values())} statuses checked, per update, read request "
               f"and RPC ({codes}), {len(fuzz.categories)} categories, {elapsed:.1f} s "
               f"on {os.cpu_count()} x {describe_machine().cpu_model}; target VmRSS "
               f"{rss_warm / 2**20:.1f} MB after warm-up, {rss_end / 2**20:.1f} MB "
               f"at the end ({(rss_end - rss_warm) / 2**20:+.1f} MB)")
    rss = ", ".join(f"{r / 2**20:.0f}" for r in fuzz.rss)
    with capsys.disabled():
        print(f"\n{summary}\ntarget VmRSS at the checkpoints (MB): {rss}")
        if os.environ.get("P4RT_FUZZ_CATEGORIES"):
            for category, n in sorted(fuzz.categories.items()):
                print(f"{n:8} {category}")
    assert not fuzz.mismatches, f"{summary}\n{fuzz.report()}"
    assert fuzz.malformed >= MIN_REQUESTS, summary
    assert rss_end - rss_warm <= RSS_GROWTH_LIMIT, summary
