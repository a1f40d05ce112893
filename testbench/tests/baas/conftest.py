"""The BaaS as a process for its gRPC API tests (and gnbctl's,
testbench/tests/controller/test_gnbctl_baas.py): controller/launch/
baas.py's start_on_port, a Baas on one port,
`net_null0` (no frames: it receives only empty frames, dropped as
not_bearer), or, with frames, a `net_pcap` port that replays them once at
start, so the BaaS holds those DRBs before the test begins. gRPC on a free
port (`--grpc 127.0.0.1:0`) and the test's options. Stopped with SIGTERM at
the test's end, where its exit status must be 0."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.launch.baas import Baas, build, start_on_port


@pytest.fixture(scope="session")
def baas_executable(dpdk_environment, build_variant) -> Path:
    """The BaaS of pytest's --variant (release, or sanitize: ASan + UBSan)."""
    return build(build_variant)


@pytest.fixture
def start_baas(baas_executable, tmp_path):
    """start_baas(frames=None, options=None) -> a running Baas; each is
    stopped at the test's end, and must exit 0 (a clean stop, its gRPC
    server included)."""
    started: list[Baas] = []

    def start(frames: list[bytes] | None = None, options: list[str] | None = None):
        process = start_on_port(baas_executable, tmp_path / f"baas{len(started)}", frames,
                                     options)
        started.append(process)
        return process
    yield start
    failures = []
    for process in started:
        if not process.alive():
            process.stop()
            continue
        status = process.stop()
        if status != 0:
            failures.append(f"the BaaS exited with {status}:\n{process.log_text()[-2000:]}")
    assert not failures, "\n".join(failures)


@pytest.fixture
def link(baas_executable, tmp_path):
    """A BaaS on a veth pair (baas_link.py), with a t-PollRetransmit long
    enough that only the test's STATUS PDUs make retransmissions."""
    from baas_link import BaasLink
    link = BaasLink(baas_executable, tmp_path / "baas",
                    ["--t-poll-retransmit", "60000", "--max-pdus", "16384"])
    yield link
    link.close()
