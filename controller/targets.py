"""Connections to the targets, two kinds:

- session(): for writes. A finsy Switch per target (the StreamChannel
  that holds the primary role, the P4Info, every ordinary read and write),
  plus one raw grpc.aio channel per target for the bulk-write hot path
  (`bulk.py`: finsy's per-entity encoding is ~40x too slow for 131,072
  updates). It holds the topology's write lock (write_lock.py) while it
  lasts, so that two gnbctl commands never arbitrate with one election id
  at once.
- reading(): for reads. P4Runtime answers Read and
  GetForwardingPipelineConfig from any client, without arbitration, so a
  Reader per target gets the P4Info the target runs and reads on a plain
  channel: it takes no lock, claims no primary and disturbs no writer.

Every connection has a deadline; a target that cannot be reached, or where
another controller is primary, is a clear error naming the target."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

import finsy as fy
import grpc
from finsy import p4entity
from finsy.grpcutil import GRPCStatusCode
from finsy.p4client import P4ClientError, P4RpcStatus
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller import write_lock
from controller.errors import GnbctlError, TargetUnreachable, TopologyError, WriteRejected
from controller.topology import TargetConfig, Topology

_CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 256 << 20),
                    # the per-update errors of a rejected batch come as metadata
                    ("grpc.max_metadata_size", 64 << 20),
                    ("grpc.max_send_message_length", 256 << 20)]
_WRITE_METHOD = "/p4.v1.P4Runtime/Write"
RPC_TIMEOUT = 60.0
WRITES_IN_FLIGHT = 2
PROBE_TIMEOUT_S = 0.25
# a new channel per probe: a kept channel to a target that died waits out
# gRPC's reconnect backoff (up to minutes) before it sees the target again
_PROBE_CHANNEL_OPTIONS = [("grpc.initial_reconnect_backoff_ms", 50),
                          ("grpc.max_reconnect_backoff_ms", 200)]
# a stream the last holder of the write lock closed may still be live on
# the server for a moment: our election id is retried this long
ELECTION_ID_RETRY_S = 0.5


class _Readable:
    """What a Target and a Reader share: the target's topology entry
    (`config`) and a P4Info (`schema`)."""
    config: TargetConfig
    schema: fy.P4Schema

    @property
    def name(self) -> str:
        return self.config.name

    def has_table(self, name: str) -> bool:
        return self.schema.tables.get(name) is not None

    async def read_raw(self, entity) -> list[p4r.Entity]:
        """A Read without finsy's per-entity decoding (for whole tables):
        one p4r.Entity or a list of them, in one ReadRequest."""
        entities = entity if isinstance(entity, (list, tuple)) else [entity]
        return await _read(self.channel, self.config, list(entities), RPC_TIMEOUT)

    def read_chunks(self, entity: p4r.Entity):
        """The serialized ReadResponses of one Read, undecoded: what a scan
        for one entry among many filters before it parses (drb_keys.py)."""
        return _read_chunks(self.channel, self.config, [entity], RPC_TIMEOUT)

    async def count(self, entity: p4r.Entity) -> int:
        """How many entities a Read returns (nothing decoded in Python)."""
        total = 0
        async for chunk in self.read_chunks(entity):
            total += len(p4r.ReadResponse.FromString(chunk).entities)
        return total


@dataclass
class Target(_Readable):
    config: TargetConfig
    switch: fy.Switch
    channel: grpc.aio.Channel
    election_id: int

    @property
    def schema(self) -> fy.P4Schema:
        return self.switch.p4info

    async def write(self, updates: list, describe=None) -> None:
        """One Write of finsy update objects (+entry, -entry, ~entry); a
        rejected update raises WriteRejected, described by describe(update)."""
        if not updates:
            return
        try:
            await self.switch.write(updates)
        except P4ClientError as e:
            raise _rejected(self.name, e.code.name, e.message, e.details, updates,
                            describe) from None

    async def write_raw(self, updates_bytes: bytes, count: int, describe) -> None:
        """One Write whose updates are already serialized (field 2 of
        WriteRequest, repeated); describe(i) names update i in errors."""
        header = p4r.WriteRequest(device_id=self.config.device_id)
        header.election_id.high = self.election_id >> 64
        header.election_id.low = self.election_id & ((1 << 64) - 1)
        # Concatenated protobuf encodings merge; repeated fields append.
        request = header.SerializeToString() + updates_bytes
        write = self.channel.unary_unary(
            _WRITE_METHOD, request_serializer=None,
            response_deserializer=p4r.WriteResponse.FromString)
        try:
            await write(request, timeout=RPC_TIMEOUT)
        except grpc.aio.AioRpcError as e:
            status = P4RpcStatus.from_rpc_error(e)
            raise _rejected(self.name, status.code.name, status.message, status.details,
                            range(count), describe) from None

    async def read(self, entities) -> list:
        try:
            return [e async for e in self.switch.read(entities)]
        except P4ClientError as e:
            raise GnbctlError(f"{self.name}: read failed: {e.code.name}: {e.message}") \
                from None


async def _read_chunks(channel: grpc.aio.Channel, config: TargetConfig,
                       entities: list[p4r.Entity], timeout: float):
    """Each serialized ReadResponse of one streamed Read on `channel`; a
    failed Read is an error naming the target."""
    read = channel.unary_stream(
        "/p4.v1.P4Runtime/Read", request_serializer=p4r.ReadRequest.SerializeToString,
        response_deserializer=None)
    try:
        async for chunk in read(p4r.ReadRequest(device_id=config.device_id,
                                                entities=entities), timeout=timeout):
            yield chunk
    except grpc.aio.AioRpcError as e:
        raise GnbctlError(f"{config.name}: read failed: {e.code().name}: {e.details()}") \
            from None


async def _read(channel: grpc.aio.Channel, config: TargetConfig, entities: list[p4r.Entity],
                timeout: float) -> list[p4r.Entity]:
    """One streamed Read on `channel`, every Entity of every response; a
    failed Read is an error naming the target."""
    read = channel.unary_stream(
        "/p4.v1.P4Runtime/Read", request_serializer=p4r.ReadRequest.SerializeToString,
        response_deserializer=p4r.ReadResponse.FromString)
    found = []
    try:
        async for response in read(p4r.ReadRequest(device_id=config.device_id,
                                                   entities=entities),
                                   timeout=timeout):
            found.extend(response.entities)
    except grpc.aio.AioRpcError as e:
        raise GnbctlError(f"{config.name}: read failed: {e.code().name}: {e.details()}") \
            from None
    return found


def _rejected(target: str, code: str, message: str, details: dict, updates, describe):
    if not details:
        return WriteRejected(target, [("the whole batch", code, message)], len(updates))
    updates = list(updates)
    failures = [(describe(updates[i]) if describe else str(i), error.canonical_code.name,
                 error.message) for i, error in sorted(details.items())]
    return WriteRejected(target, failures, len(updates))


async def _connect(config: TargetConfig, topology: Topology) -> Target:
    # no P4Info: finsy reads the target's; pipeline.py pushes pipelines
    options = fy.SwitchOptions(device_id=config.device_id,
                               initial_election_id=topology.election_id)
    retry_until = time.monotonic() + ELECTION_ID_RETRY_S
    while True:
        switch = fy.Switch(config.name, config.address, options)
        try:
            await asyncio.wait_for(switch.__aenter__(), topology.timeout)
            break
        except P4ClientError as e:
            if _election_id_used(e) and time.monotonic() < retry_until:
                await asyncio.sleep(0.05)
                continue
            raise _refused(config, topology, e) from None
        except (asyncio.TimeoutError, OSError) as e:
            reason = (f"no answer within {topology.timeout:g} s"
                      if isinstance(e, asyncio.TimeoutError) else f"{e}")
            raise TargetUnreachable(f"{config.name}: cannot reach the P4Runtime server at "
                                    f"{config.address} (device id {config.device_id}): "
                                    f"{reason}") from None
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling():
                raise       # we are being cancelled
            # finsy cancelled the connection because one of its requests
            # failed (it logs which: _FinsyFailures kept it)
            failure = _FINSY_FAILURES.last.pop(config.name, None)
            raise TargetUnreachable(
                f"{config.name}: the P4Runtime session with {config.address} (device id "
                f"{config.device_id}) failed while it was set up: "
                f"{_describe_failure(failure)}; retry, and check the target's log") from None
    if not switch.is_primary:
        # read before __aexit__, which resets them
        primary_id, ours = switch.primary_id, switch.election_id
        await switch.__aexit__(None, None, None)
        raise GnbctlError(f"{config.name}: another controller is primary (election id "
                          f"{primary_id}, ours {ours}); "
                          "raise election_id in the topology to take over")
    channel = grpc.aio.insecure_channel(config.address, options=_CHANNEL_OPTIONS)
    return Target(config, switch, channel, switch.election_id)


class _FinsyFailures(logging.Handler):
    """finsy logs a task of a Switch that failed (with its exception) at
    CRITICAL, with a traceback, then cancels the Switch's other tasks:
    this keeps the exception, by switch name, for _connect's one line
    instead of the traceback."""

    def __init__(self):
        super().__init__(logging.CRITICAL)
        self.last: dict[str, BaseException] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None and record.args:
            task = str(record.args[0])          # "fy:NAME|coroutine"
            self.last[task.removeprefix("fy:").split("|")[0]] = record.exc_info[1]


_FINSY_FAILURES = _FinsyFailures()


def _quiet_finsy() -> None:
    logger = logging.getLogger("finsy")
    logger.setLevel(logging.CRITICAL)
    logger.propagate = False
    if _FINSY_FAILURES not in logger.handlers:
        logger.addHandler(_FINSY_FAILURES)


def _describe_failure(failure: BaseException | None) -> str:
    if failure is None:
        return "cancelled (no cause logged)"
    if isinstance(failure, P4ClientError):
        return f"{failure.code.name}: {failure.message}"
    return f"{type(failure).__name__}: {' '.join(str(failure).split())}"


def _election_id_used(e: P4ClientError) -> bool:
    # P4Runtime: INVALID_ARGUMENT for an election id another live stream
    # holds (finsy's is_election_id_used misses our runtime's wording)
    return e.is_election_id_used or (e.code == GRPCStatusCode.INVALID_ARGUMENT
                                     and "election id" in e.message.lower())


def _refused(config: TargetConfig, topology: Topology, e: P4ClientError) -> GnbctlError:
    """The one-line error for a server that answered the arbitration with an
    error status: what it means here and what to change."""
    where = f"{config.name}: the P4Runtime server at {config.address}"
    said = f"{e.code.name}: {e.message}"
    if e.code == GRPCStatusCode.NOT_FOUND:
        # the runtime serves one device, its --device-id
        return TopologyError(f"{where} has no device id {config.device_id} ({said}); set "
                             "device_id in the topology to the target's --device-id")
    if _election_id_used(e):
        # not a gnbctl of this topology: those take turns (write_lock.py)
        return GnbctlError(f"{where}: another controller is connected with our election "
                           f"id {topology.election_id} ({said}): a program other than "
                           "gnbctl, or gnbctl with another topology file naming this "
                           "target; stop it, or give this topology another election_id")
    if e.code == GRPCStatusCode.UNAVAILABLE:
        return TargetUnreachable(f"{config.name}: cannot reach the P4Runtime server at "
                                 f"{config.address} (device id {config.device_id}): {said}")
    return TargetUnreachable(f"{where} (device id {config.device_id}) refused the "
                             f"arbitration: {said}")


def _raise_first_failure(attempts: list) -> None:
    """Raises the first failure (in the order of the targets) of attempts
    gathered with return_exceptions: every attempt has ended by then, so
    what the others opened can be closed."""
    for attempt in attempts:
        if isinstance(attempt, BaseException):
            raise attempt


@contextlib.asynccontextmanager
async def session(topology: Topology, configs: list[TargetConfig]):
    """Connected, primary Targets (in the order of configs), closed on
    exit; the topology's write lock held meanwhile (write_lock.py)."""
    # finsy logs a failed stream task with its traceback at CRITICAL; _connect
    # turns the same failure into gnbctl's one-line error
    _quiet_finsy()
    async with write_lock.held(topology):
        attempts = await asyncio.gather(*(_connect(c, topology) for c in configs),
                                        return_exceptions=True)
        connected = [t for t in attempts if isinstance(t, Target)]
        try:
            _raise_first_failure(attempts)
            yield connected
        finally:
            for target in connected:
                await target.channel.close()
                await target.switch.__aexit__(None, None, None)


async def write_batches(target, batches, total: int, on_written=None) -> None:
    """Writes of already serialized updates on `target`, WRITES_IN_FLIGHT
    at a time (the target applies one while the next arrives). Each batch
    is (encode, count, describe): encode() gives the updates bytes when the
    Write goes out, count and describe as write_raw takes them. Every batch
    is written; then one WriteRejected lists the rejected updates of all of
    them, of `total`. on_written(count) follows each Write, rejected or not."""
    in_flight = asyncio.Semaphore(WRITES_IN_FLIGHT)
    failures = []

    async def write(encode, count: int, describe):
        async with in_flight:
            try:
                await target.write_raw(encode(), count, describe)
            except WriteRejected as e:
                failures.extend(e.failures)
        if on_written:
            on_written(count)

    await asyncio.gather(*(write(*batch) for batch in batches))
    if failures:
        raise WriteRejected(target.name, failures, total)


async def on_every(targets, action) -> list:
    """action(target) on every target concurrently; every failure reported."""
    outcomes = await asyncio.gather(*(action(t) for t in targets), return_exceptions=True)
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    for e in errors:
        if not isinstance(e, GnbctlError):
            raise e
    if errors:
        error = GnbctlError("\n".join(str(e) for e in errors))
        error.exit_code = max(e.exit_code for e in errors)
        raise error
    return outcomes


@dataclass(frozen=True)
class Probe:
    """What one probe found: `failure` None when the target answered in
    time, else why not (UNAVAILABLE: nothing listens at its address, the
    process is gone; DEADLINE_EXCEEDED: it is only slow); `committed`
    whether a pipeline has been pushed to it (`pipeline push` sets the
    cookie, a process that has just started has none: it was restarted)."""
    failure: grpc.StatusCode | None
    committed: bool = False

    @property
    def answered(self) -> bool:
        return self.failure is None


async def probe(config: TargetConfig, timeout: float = PROBE_TIMEOUT_S) -> Probe:
    """One GetForwardingPipelineConfig (cookie only) on a fresh channel: no
    session, no arbitration, so it disturbs no other controller; it tells
    both whether the target's P4Runtime server answers and whether the
    process still has the pipeline pushed to it."""
    request = p4r.GetForwardingPipelineConfigRequest(
        device_id=config.device_id,
        response_type=p4r.GetForwardingPipelineConfigRequest.COOKIE_ONLY)
    async with grpc.aio.insecure_channel(config.address, options=_PROBE_CHANNEL_OPTIONS) as ch:
        get_config = ch.unary_unary(
            "/p4.v1.P4Runtime/GetForwardingPipelineConfig",
            request_serializer=p4r.GetForwardingPipelineConfigRequest.SerializeToString,
            response_deserializer=p4r.GetForwardingPipelineConfigResponse.FromString)
        try:
            response = await get_config(request, timeout=timeout)
        except grpc.aio.AioRpcError as e:
            return Probe(e.code())
    return Probe(None, response.config.HasField("cookie"))


async def probe_all(configs: list[TargetConfig]) -> dict[str, Probe]:
    """probe() of every target, concurrently, by name."""
    answers = await asyncio.gather(*(probe(c) for c in configs))
    return {c.name: answer for c, answer in zip(configs, answers)}


async def live_hosts(hosts: list[TargetConfig]) -> set[str]:
    """The names of the hosts that answer now."""
    return {name for name, found in (await probe_all(hosts)).items() if found.answered}


async def read_unarbitrated(config: TargetConfig, entities: list[p4r.Entity],
                            timeout: float = 2.0) -> list[p4r.Entity]:
    """A Read on a fresh channel, without a session (Read needs no
    arbitration): what `gnbctl run` uses to keep its copy of a NIC's split
    while other gnbctl commands hold sessions."""
    options = _CHANNEL_OPTIONS + _PROBE_CHANNEL_OPTIONS
    async with grpc.aio.insecure_channel(config.address, options=options) as ch:
        return await _read(ch, config, entities, timeout)


class Reader(_Readable):
    """A target read without a session: no arbitration, no write lock.
    With a channel (reading()), its reads share it; without (`gnbctl run`,
    which keeps a NIC's copy with the P4Info its topology entry names),
    each read opens a fresh one (read_unarbitrated)."""

    def __init__(self, config: TargetConfig, schema: fy.P4Schema,
                 channel: grpc.aio.Channel | None = None):
        self.config = config
        self.schema = schema
        self.channel = channel

    async def read_raw(self, entity) -> list[p4r.Entity]:
        if self.channel is not None:
            return await _Readable.read_raw(self, entity)
        entities = entity if isinstance(entity, (list, tuple)) else [entity]
        return await read_unarbitrated(self.config, list(entities), RPC_TIMEOUT)

    async def read_chunks(self, entity: p4r.Entity):
        if self.channel is not None:
            async for chunk in _Readable.read_chunks(self, entity):
                yield chunk
            return
        options = _CHANNEL_OPTIONS + _PROBE_CHANNEL_OPTIONS
        async with grpc.aio.insecure_channel(self.config.address, options=options) as ch:
            async for chunk in _read_chunks(ch, self.config, [entity], RPC_TIMEOUT):
                yield chunk

    async def read(self, entities) -> list:
        """A Read of finsy entities (one, or a list), decoded as Target.read
        decodes them."""
        if isinstance(entities, p4entity.P4Entity):
            entities = [entities]
        found = await self.read_raw(p4entity.encode_entities(entities, self.schema))
        return [p4entity.decode_entity(e, self.schema) for e in found]


async def _get_p4info(config: TargetConfig, channel: grpc.aio.Channel,
                      timeout: float) -> p4r.GetForwardingPipelineConfigResponse:
    """GetForwardingPipelineConfig (P4Info and cookie); a target that does
    not answer, or has no such device id, is gnbctl's one-line error."""
    get_config = channel.unary_unary(
        "/p4.v1.P4Runtime/GetForwardingPipelineConfig",
        request_serializer=p4r.GetForwardingPipelineConfigRequest.SerializeToString,
        response_deserializer=p4r.GetForwardingPipelineConfigResponse.FromString)
    request = p4r.GetForwardingPipelineConfigRequest(
        device_id=config.device_id,
        response_type=p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
    try:
        return await get_config(request, timeout=timeout)
    except grpc.aio.AioRpcError as e:
        said = f"{e.code().name}: {e.details()}"
        if e.code() == grpc.StatusCode.NOT_FOUND:
            raise TopologyError(f"{config.name}: the P4Runtime server at {config.address} "
                                f"has no device id {config.device_id} ({said}); set "
                                "device_id in the topology to the target's --device-id") \
                from None
        if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            said = f"no answer within {timeout:g} s"
        raise TargetUnreachable(f"{config.name}: cannot reach the P4Runtime server at "
                                f"{config.address} (device id {config.device_id}): "
                                f"{said}") from None


async def _reader(config: TargetConfig, channel: grpc.aio.Channel, timeout: float) -> Reader:
    response = await _get_p4info(config, channel, timeout)
    if not response.config.HasField("p4info"):
        raise GnbctlError(f"{config.name}: the target at {config.address} reports no P4Info "
                          "(no pipeline): gnbctl pipeline push")
    return Reader(config, fy.P4Schema(response.config.p4info), channel)


@contextlib.asynccontextmanager
async def reading(topology: Topology, configs: list[TargetConfig]):
    """Readers of the targets (in the order of configs), each with the
    P4Info its target reports and a channel of its own, closed on exit:
    what read-only commands use. No stream, no arbitration, no write lock,
    so they work beside a writer, `gnbctl run` and other controllers."""
    channels = [grpc.aio.insecure_channel(c.address, options=_CHANNEL_OPTIONS)
                for c in configs]
    try:
        attempts = await asyncio.gather(
            *(_reader(c, ch, topology.timeout) for c, ch in zip(configs, channels)),
            return_exceptions=True)
        _raise_first_failure(attempts)
        yield attempts
    finally:
        for channel in channels:
            await channel.close()


@dataclass(frozen=True)
class Primary:
    """Who is primary on a target, as a backup stream learns it: `exists`
    whether a controller holds primary now, `election_id` the highest
    election id the target has seen (the primary's when one exists)."""
    exists: bool
    election_id: int | None


async def primary(reader: Reader, timeout: float) -> Primary:
    """Opens a StreamChannel and arbitrates WITHOUT an election id: the
    target answers it as a backup controller (P4Runtime 1.3+: no id, no
    primary) with the current primary's election id, and nobody else is
    told anything. The stream is closed at once."""
    stream = reader.channel.stream_stream(
        "/p4.v1.P4Runtime/StreamChannel",
        request_serializer=p4r.StreamMessageRequest.SerializeToString,
        response_deserializer=p4r.StreamMessageResponse.FromString)
    call = stream(timeout=timeout)
    try:
        await call.write(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
            device_id=reader.config.device_id)))
        while True:
            response = await call.read()
            if response is grpc.aio.EOF:
                raise GnbctlError(f"{reader.name}: the target closed the stream without "
                                  "an arbitration answer")
            if response.HasField("arbitration"):
                break
    except grpc.aio.AioRpcError as e:
        raise GnbctlError(f"{reader.name}: arbitration as a backup failed: "
                          f"{e.code().name}: {e.details()}") from None
    finally:
        call.cancel()
    answer = response.arbitration
    has_id = answer.HasField("election_id")
    election_id = (answer.election_id.high << 64 | answer.election_id.low) if has_id else None
    return Primary(answer.status.code == GRPCStatusCode.ALREADY_EXISTS.value, election_id)
