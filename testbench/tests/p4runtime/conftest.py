"""Targets with the P4Runtime server: the real executable of
testbench/p4/p4runtime/p4rt_objects.p4 on a net_ring port (no traffic
unless a test brings its own vdevs), --p4runtime on a free port that the
target picks and prints."""
from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from p4rt_client import Client, Names, load_p4info  # noqa: E402
from t4p4s.stf.control import RuntimeProcess, test_eal_args  # noqa: E402

P4_DIR = Path(__file__).resolve().parents[2] / "p4" / "p4runtime"
OBJECTS_P4 = P4_DIR / "p4rt_objects.p4"
LARGE_COUNTER_P4 = P4_DIR / "p4rt_large_counter.p4"
_runs = itertools.count()


@pytest.fixture(scope="session")
def objects_build(compiled):
    return compiled(OBJECTS_P4)


@pytest.fixture(scope="session")
def names(objects_build) -> Names:
    return Names(load_p4info(objects_build.p4info_text_path))


@pytest.fixture(scope="session")
def large_counter_build(compiled):
    return compiled(LARGE_COUNTER_P4)


class Target:
    """A running target and its P4Runtime address."""

    def __init__(self, runtime: RuntimeProcess, address: str):
        self.runtime = runtime
        self.address = address
        self.clients: list[Client] = []

    def client(self, device_id: int = 1) -> Client:
        c = Client(self.address, device_id)
        self.clients.append(c)
        return c

    def primary(self, election_id=(0, 1)) -> Client:
        """A client that is primary (asserted)."""
        c = self.client()
        update = c.arbitrate(election_id)
        assert update.status.code == 0, update
        return c

    def stop(self):
        for c in self.clients:
            c.close()
        return self.runtime.stop()


@pytest.fixture
def start_target(objects_build, cache_root):
    """start_target(vdevs=None, app_args=(), build=None) -> Target; stopped
    at the end of the test."""
    started: list[Target] = []

    def start(vdevs=None, app_args=(), build=None, device_id=None):
        run_dir = cache_root / "runs" / f"p4rt-{os.getpid()}-{next(_runs)}"
        eal = test_eal_args(run_dir.name)
        for vdev in vdevs or ["net_ring0"]:
            eal += ["--vdev", vdev]
        app = ["--governor", "nap", "--p4runtime", "127.0.0.1:0", *app_args]
        if device_id is not None:
            app += ["--device-id", str(device_id)]
        runtime = RuntimeProcess((build or objects_build).executable_path, eal, app,
                                 run_dir)
        target = Target(runtime, runtime.p4runtime_address())
        started.append(target)
        return target

    yield start
    for target in started:
        target.stop()


@pytest.fixture
def target(start_target) -> Target:
    return start_target()
