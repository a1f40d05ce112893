"""The --entries file for the exact-match benchmark, derived from the
program's P4Info: one entry per key the traffic carries (see traffic.py),
each forwarding to the output port."""

import json
from pathlib import Path

from finsy.proto.p4.config.v1 import p4info_pb2

from testbench.bench.dpdk import BenchError
from testbench.bench.traffic import key_ipv4, key_mac

# Key fields the traffic varies, by bit width: the destination MAC or the
# destination IPv4 address carry the key.
_KEY_FORMATS = {48: key_mac, 32: key_ipv4}
_EGRESS_PORT_BITS = 9


def _load_p4info(path: Path) -> p4info_pb2.P4Info:
    p4info = p4info_pb2.P4Info()
    try:
        p4info.ParseFromString(path.read_bytes())
    except (OSError, ValueError) as e:
        raise BenchError(f"cannot read P4Info {path}: {e}") from e
    return p4info


def _keyed_table(p4info: p4info_pb2.P4Info):
    """The one table matching exactly on a destination address."""
    exact = p4info_pb2.MatchField.EXACT
    candidates = [t for t in p4info.tables
                  if len(t.match_fields) == 1
                  and t.match_fields[0].match_type == exact
                  and t.match_fields[0].bitwidth in _KEY_FORMATS
                  and "dst" in t.match_fields[0].name.lower()]
    if len(candidates) != 1:
        raise BenchError("exact_table.p4 must have exactly one table keyed by one exact destination "
                         "MAC (48 bits) or IPv4 address (32 bits); found "
                         f"{[t.preamble.name for t in candidates] or 'none'}")
    return candidates[0]


def _port_param(action):
    ports = [p for p in action.params if p.bitwidth == _EGRESS_PORT_BITS]
    return ports[0] if len(ports) == 1 else None


def _forward_action(p4info: p4info_pb2.P4Info, table):
    """The table's action taking exactly one egress port parameter."""
    by_id = {a.preamble.id: a for a in p4info.actions}
    candidates = [by_id[ref.id] for ref in table.action_refs
                  if ref.scope != p4info_pb2.ActionRef.DEFAULT_ONLY and _port_param(by_id[ref.id])]
    if len(candidates) != 1:
        raise BenchError(f"table {table.preamble.name} must have exactly one action with one "
                         f"bit<{_EGRESS_PORT_BITS}> port parameter; found "
                         f"{[a.preamble.name for a in candidates] or 'none'}")
    return candidates[0]


def _action_params(action, out_port: int) -> dict:
    """The port parameter sends to out_port; any other parameter (a MAC to
    rewrite, say) gets a fixed non-zero value: the benchmark only needs the
    action's work done, not particular values."""
    port = _port_param(action)
    return {p.name: out_port if p is port else 2 for p in action.params}


def write_exact_entries(p4info_path: Path, n_keys: int, out_port: int, directory: Path) -> Path:
    p4info = _load_p4info(p4info_path)
    table = _keyed_table(p4info)
    if table.size and table.size < n_keys:
        raise BenchError(f"table {table.preamble.name} has size {table.size} < {n_keys} entries")
    field = table.match_fields[0]
    key_format = _KEY_FORMATS[field.bitwidth]
    action = _forward_action(p4info, table)
    params = _action_params(action, out_port)
    commands = [{"cmd": "table_add", "table": table.preamble.name,
                 "match": {field.name: "0x" + _address_hex(key_format(key))},
                 "action": action.preamble.name,
                 "params": params}
                for key in range(n_keys)]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"exact_{n_keys}.json"
    path.write_text(json.dumps(commands, separators=(",", ":")))
    return path


def _address_hex(address: str) -> str:
    if ":" in address:
        return address.replace(":", "")
    return "".join(f"{int(octet):02x}" for octet in address.split("."))
