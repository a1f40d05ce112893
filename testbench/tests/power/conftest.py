"""Real targets for the power sidecar's tests: the compiled p4src/host.p4
(or nic.p4) with a control socket and `--governor MODE` on net_null ports (no frames,
or with `traffic` a port whose every poll returns a full burst), and the
sidecar itself (`python -m power`, controller/launch/power.py) on their
control sockets, gRPC on a free TCP port."""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from t4p4s.stf.control import RuntimeProcess, test_eal_args
from controller.launch.power import PowerSidecar, PowerSpec

REPO = Path(__file__).resolve().parents[3]
_runs = itertools.count()


@pytest.fixture(scope="session")
def host_build(compiled):
    return compiled(REPO / "p4src" / "host.p4")


@pytest.fixture(scope="session")
def nic_build(compiled):
    return compiled(REPO / "p4src" / "nic.p4")


@pytest.fixture
def start_target(host_build, tmp_path):
    """start_target(mode, lcores="1", traffic=False, extra=(), build=host
    build) -> a running RuntimeProcess; stopped at the test's end (exit
    status 0 required)."""
    started: list[RuntimeProcess] = []

    def start(mode: str = "adaptive", lcores: str = "1", traffic: bool = False,
              extra=(), build=None) -> RuntimeProcess:
        n = next(_runs)
        eal = test_eal_args(f"power-{os.getpid()}-{n}", lcores=lcores)
        eal += ["--vdev", "net_null0" if traffic else "net_null0,no-rx=1",
                "--vdev", "net_null1,no-rx=1", "--vdev", "net_null2,no-rx=1"]
        runtime = RuntimeProcess((build or host_build).executable_path, eal,
                                 ["--governor", mode, *extra], tmp_path / f"target{n}")
        started.append(runtime)
        return runtime
    yield start
    failures = []
    for runtime in started:
        alive = runtime.alive()
        status = runtime.stop()
        if alive and status != 0:
            failures.append(f"a target exited with {status}:\n{runtime.log_tail()}")
    assert not failures, "\n".join(failures)


@pytest.fixture
def start_sidecar(tmp_path):
    """start_sidecar({name: RuntimeProcess}, period_ms=100, extra=[]) -> a
    running PowerSidecar; stopped at the test's end, exit status 0."""
    started: list[PowerSidecar] = []

    def start(targets: dict, period_ms: int = 100, extra=()) -> PowerSidecar:
        sidecar = PowerSidecar(PowerSpec({n: r.control_path for n, r in targets.items()},
                                         tmp_path / f"power{len(started)}",
                                         period_ms=period_ms, extra=list(extra)))
        started.append(sidecar)
        return sidecar
    yield start
    statuses = [(s.stop(), s) for s in started]
    bad = [f"the sidecar exited with {st}:\n{s.log_text()[-3000:]}" for st, s in statuses
           if st != 0]
    assert not bad, "\n".join(bad)
