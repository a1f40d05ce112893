"""Fixtures for the gNB pipeline tests: both builds of the pipeline
(p4src/host.p4 and p4src/nic.p4, each compiled once per session) and a run
helper that replays frames on the three ports, then reads the counters and
registers the tests check."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from testbench.gnb.frames import BAAS_PORT, DROP_REASONS, N3_PORT, RADIO_PORT

P4SRC = Path(__file__).resolve().parents[3] / "p4src"


@pytest.fixture(scope="session", params=["host.p4", "nic.p4"], ids=["host", "nic"])
def gnb_build(request, compiled):
    return compiled(P4SRC / request.param)


@dataclass
class GnbRunResult:
    """What one run of the pipeline produced: frames per output port, and
    the control plane's view after the last input frame."""
    n3: list[bytes]
    radio: list[bytes]
    baas: list[bytes]
    drops: dict[str, dict]          # reason -> {"packets", "bytes"}
    counters: dict[str, dict[int, dict]]    # name -> DRB index -> {"packets", "bytes"}
    registers: dict[str, dict[int, int]]    # name -> DRB index -> value (the SN and poll registers)
    stats: dict

    def dropped_packets(self) -> dict[str, int]:
        return {reason: value["packets"] for reason, value in self.drops.items()
                if value["packets"]}


def _counter_cell(run, name: str, index: int) -> dict:
    reply = run.request({"cmd": "counter_read", "counter": name, "index": index})
    return {"packets": reply["packets"], "bytes": reply["bytes"]}


def _register_cell(run, name: str, index: int) -> int:
    value = run.request({"cmd": "register_read", "register": name, "index": index})["value"]
    return int(value, 0) if isinstance(value, str) else value


def _drb_indices(entries) -> list[int]:
    """The DRB cells a run's configuration touches (65,536 cells are too
    many to read whole)."""
    indices = {entry["params"]["drb_index"] for entry in entries if entry["cmd"] == "table_add"}
    indices |= {entry["index"] for entry in entries if entry["cmd"] == "register_write"}
    return sorted(indices)


@pytest.fixture
def run_gnb(gnb_build, pcap_runtime):
    """run_gnb(n3=[frames], radio=[frames], baas=[frames], entries=[commands],
    clones_without_session=N) -> GnbRunResult; the runtime must stay alive,
    exit cleanly and make exactly N clone requests to a session that does
    not exist."""
    def run(n3=(), radio=(), baas=(), entries=(), clones_without_session=0) -> GnbRunResult:
        inputs = [[], [], []]
        inputs[N3_PORT], inputs[RADIO_PORT], inputs[BAAS_PORT] = list(n3), list(radio), list(baas)
        runtime = pcap_runtime(gnb_build, inputs, entries=list(entries))
        stats = runtime.wait_received()
        drop_values = runtime.request({"cmd": "counter_read", "counter": "drop_counter"})["values"]
        drops = {reason: drop_values[index] for index, reason in enumerate(DROP_REASONS)}
        assert all(value["packets"] == 0 for value in drop_values[len(DROP_REASONS):]), \
            f"drops under no known reason: {drop_values}"
        # nothing dropped silently: every pipeline drop is in drop_counter, and
        # the runtime lost nothing on its own (ports, clones, tx queues)
        runtime_drops = dict(stats["drops"])
        assert runtime_drops.pop("pipeline") == sum(value["packets"] for value in drop_values)
        assert runtime_drops.pop("clone_no_session") == clones_without_session, stats["drops"]
        assert not any(runtime_drops.values()), stats["drops"]
        indices = _drb_indices(entries)
        counters = {name: {index: _counter_cell(runtime, name, index) for index in indices}
                    for name in ("dl_drb_counter", "ul_drb_counter", "baas_retx_counter")}
        counters["ul_status_counter"] = {0: _counter_cell(runtime, "ul_status_counter", 0)}
        registers = {name: {index: _register_cell(runtime, name, index) for index in indices}
                     for name in ("pdcp_tx_sn", "rlc_tx_sn", "rlc_poll_config", "rlc_poll_state")}
        assert runtime.runtime.alive(), runtime.runtime.log_tail()
        outputs = runtime.stop()
        assert runtime.exit_status == 0, runtime.runtime.log_tail()
        outputs += [[]] * (3 - len(outputs))
        return GnbRunResult(n3=outputs[N3_PORT], radio=outputs[RADIO_PORT],
                            baas=outputs[BAAS_PORT], drops=drops, counters=counters,
                            registers=registers, stats=stats)
    return run
