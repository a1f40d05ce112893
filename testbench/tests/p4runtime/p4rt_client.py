"""A small P4Runtime client for the tests, on grpcio and finsy's generated
stubs: a StreamChannel session with arbitration, Write/Read, pipeline
config, and P4Info-name helpers to build entities. Every call has a
deadline; errors come back as grpc.RpcError, and write_errors() unpacks
the per-update p4.v1.Error details of a failed batch."""
from __future__ import annotations

import queue
import threading
from pathlib import Path

import grpc
from finsy.proto.google.rpc import status_pb2
from finsy.proto.p4.config.v1 import p4info_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from google.protobuf import text_format

TIMEOUT = 30.0


def load_p4info(text_path) -> p4info_pb2.P4Info:
    return text_format.Parse(Path(text_path).read_text(), p4info_pb2.P4Info())


def status_details(error: grpc.RpcError) -> bytes | None:
    """A failed call's google.rpc.Status, serialized, if the server sent one."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            return value
    return None


def write_errors(error: grpc.RpcError) -> list[p4r.Error]:
    """The p4.v1.Error of each update (or read request) of a failed batch."""
    details = status_details(error)
    if details is None:
        return []
    errors = []
    for detail in status_pb2.Status.FromString(details).details:
        e = p4r.Error()
        assert detail.Unpack(e), detail.type_url
        errors.append(e)
    return errors


def proc_status_bytes(pid: int, key: str) -> int:
    """A size from /proc/PID/status (VmRSS, VmHWM, ...), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) << 10
    raise AssertionError(f"no {key} in /proc/{pid}/status")


class Names:
    """P4Info names -> ids, and entity builders by name."""

    def __init__(self, p4info: p4info_pb2.P4Info):
        self.p4info = p4info
        self.tables = {t.preamble.name: t for t in p4info.tables}
        self.actions = {a.preamble.name: a for a in p4info.actions}
        self.counters = {c.preamble.name: c for c in p4info.counters}
        self.direct_counters = {c.preamble.name: c for c in p4info.direct_counters}
        self.registers = {r.preamble.name: r for r in p4info.registers}

    def action(self, name: str, **params) -> p4r.Action:
        info = self.actions[name]
        action = p4r.Action(action_id=info.preamble.id)
        by_name = {p.name: p for p in info.params}
        for pname, value in params.items():
            p = by_name[pname]
            action.params.add(param_id=p.id, value=encode(value, p.bitwidth))
        return action

    def table_entry(self, table: str, match: dict | None = None, action=None,
                    priority: int = 0, default: bool = False) -> p4r.TableEntry:
        """match: {field name: value} for exact/optional, (value, mask) for
        ternary, (value, prefix_len) for lpm, (low, high) for range; values
        are ints (encoded canonically) or bytes (sent as given)."""
        info = self.tables[table]
        entry = p4r.TableEntry(table_id=info.preamble.id, priority=priority,
                               is_default_action=default)
        fields = {f.name: f for f in info.match_fields}
        kinds = p4info_pb2.MatchField.MatchType
        for fname, value in (match or {}).items():
            f = fields[fname]
            m = entry.match.add(field_id=f.id)
            w = f.bitwidth
            if f.match_type == kinds.EXACT:
                m.exact.value = encode(value, w)
            elif f.match_type == kinds.OPTIONAL:
                m.optional.value = encode(value, w)
            elif f.match_type == kinds.TERNARY:
                m.ternary.value, m.ternary.mask = encode(value[0], w), encode(value[1], w)
            elif f.match_type == kinds.LPM:
                m.lpm.value, m.lpm.prefix_len = encode(value[0], w), value[1]
            elif f.match_type == kinds.RANGE:
                m.range.low, m.range.high = encode(value[0], w), encode(value[1], w)
        if action is not None:
            entry.action.action.CopyFrom(action)
        return entry


def encode(value, bitwidth: int) -> bytes:
    """Canonical P4Runtime bytes of an int (bytes pass through unchanged)."""
    if isinstance(value, bytes):
        return value
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def update(kind: str, **entity) -> p4r.Update:
    """update("INSERT", table_entry=...)"""
    return p4r.Update(type=p4r.Update.Type.Value(kind), entity=p4r.Entity(**entity))


class Client:
    """One controller: a channel, and (after arbitrate()) a StreamChannel."""

    def __init__(self, address: str, device_id: int = 1):
        self.device_id = device_id
        self.channel = grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", 64 << 20),
                              ("grpc.max_send_message_length", 256 << 20)])
        grpc.channel_ready_future(self.channel).result(timeout=TIMEOUT)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.election_id = (0, 0)
        self._requests: queue.Queue = queue.Queue()
        self.responses: queue.Queue = queue.Queue()
        self._stream = None
        self.stream_error: grpc.RpcError | None = None

    def _request_iterator(self):
        while True:
            request = self._requests.get()
            if request is None:
                return
            yield request

    def _read_stream(self):
        try:
            for response in self._stream:
                self.responses.put(response)
        except grpc.RpcError as e:
            self.stream_error = e
        self.responses.put(None)

    def open_stream(self):
        self._stream = self.stub.StreamChannel(self._request_iterator())
        threading.Thread(target=self._read_stream, daemon=True).start()

    def send_arbitration(self, election_id=(0, 1), device_id=None, role=None):
        if self._stream is None:
            self.open_stream()
        self.election_id = election_id
        update = p4r.MasterArbitrationUpdate(
            device_id=self.device_id if device_id is None else device_id)
        if election_id is not None:
            update.election_id.high, update.election_id.low = election_id
        if role is not None:
            update.role.name = role
        self._requests.put(p4r.StreamMessageRequest(arbitration=update))

    def next_response(self, timeout: float = TIMEOUT):
        """The next StreamMessageResponse (None once the stream ended)."""
        return self.responses.get(timeout=timeout)

    def arbitrate(self, election_id=(0, 1), **kwargs) -> p4r.MasterArbitrationUpdate:
        self.send_arbitration(election_id, **kwargs)
        response = self.next_response()
        assert response is not None, f"stream closed: {self.stream_error}"
        return response.arbitration

    def send_stream(self, request: p4r.StreamMessageRequest):
        self._requests.put(request)

    def write(self, updates, atomicity=0, election_id=None, device_id=None):
        high, low = election_id or self.election_id
        request = p4r.WriteRequest(
            device_id=self.device_id if device_id is None else device_id,
            updates=updates, atomicity=atomicity)
        request.election_id.high, request.election_id.low = high, low
        return self.stub.Write(request, timeout=TIMEOUT)

    def read(self, *entities: p4r.Entity, device_id=None) -> list[p4r.Entity]:
        request = p4r.ReadRequest(
            device_id=self.device_id if device_id is None else device_id,
            entities=list(entities))
        found = []
        for response in self.stub.Read(request, timeout=TIMEOUT):
            found.extend(response.entities)
        return found

    def set_pipeline(self, action: str, p4info=None, device_config=b"", cookie=None):
        request = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            action=p4r.SetForwardingPipelineConfigRequest.Action.Value(action))
        request.election_id.high, request.election_id.low = self.election_id
        if p4info is not None:
            request.config.p4info.CopyFrom(p4info)
            request.config.p4_device_config = device_config
            if cookie is not None:
                request.config.cookie.cookie = cookie
        return self.stub.SetForwardingPipelineConfig(request, timeout=TIMEOUT)

    def get_pipeline(self, response_type: str = "ALL") -> p4r.ForwardingPipelineConfig:
        request = p4r.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4r.GetForwardingPipelineConfigRequest.ResponseType.Value(
                response_type))
        return self.stub.GetForwardingPipelineConfig(request, timeout=TIMEOUT)

    def close(self):
        self._requests.put(None)
        self.channel.close()
