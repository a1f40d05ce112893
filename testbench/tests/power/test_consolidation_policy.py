"""The core consolidation policy the sidecar holds (GetConsolidation,
SetConsolidation; --consolidate and --consolidate-thresholds at start),
through a real sidecar process and real gRPC: the defaults, a round trip,
a partial set changing only the fields given, every rule refused with
INVALID_ARGUMENT naming the field and the rule while nothing changes, and
the start options good and bad (one line, exit 2). The policy needs no
target doing work: the sidecar governs a control socket that answers the
recorded `power` reply (recorded_runtime.py). What gnbctl makes of it:
test_gnbctl_power.py; what `gnbctl run` does with it:
testbench/tests/hybrid/test_hybrid_consolidation.py."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import grpc
import pytest

from controller.grpc_stubs import to_dict
from power.service import stubs
from recorded_runtime import RecordedRuntime
from controller.launch.power import REPO

pb2, _ = stubs()
TIMEOUT = 10
DEFAULTS = {"consolidate_below": 0.5, "spread_above": 0.8, "hold_s": 3, "min_hosts": 1}
FILL_RULE = "0 < consolidate_below < spread_above <= 1"


@pytest.fixture
def start_recorded(tmp_path, start_sidecar):
    """start_recorded(extra=()) -> a sidecar (its options `extra`) governing
    one control socket that answers the recording."""
    runtime = RecordedRuntime(tmp_path / "control.sock")

    def start(extra=()):
        return start_sidecar({"host0": SimpleNamespace(control_path=runtime.path)},
                             extra=extra)
    yield start
    runtime.close()


def get(stub) -> dict:
    return to_dict(stub.GetConsolidation(pb2.GetConsolidationRequest(), timeout=TIMEOUT))


def set_(stub, **fields) -> dict:
    return to_dict(stub.SetConsolidation(pb2.SetConsolidationRequest(**fields),
                                         timeout=TIMEOUT))


def test_defaults_round_trip_and_partial_sets(start_recorded):
    started = time.time_ns()
    stub = start_recorded().stub()
    policy = get(stub)
    assert (policy["enabled"], policy["thresholds"]) == (False, DEFAULTS)
    assert started <= policy["changed_ns"] <= time.time_ns()     # the start, before a Set

    on = set_(stub, enabled=True)
    assert (on["enabled"], on["thresholds"]) == (True, DEFAULTS)
    assert policy["changed_ns"] < on["changed_ns"] <= time.time_ns()
    assert get(stub) == on

    # only the fields present change: enabled stays on
    partial = set_(stub, spread_above=0.9, hold_s=10)
    assert partial["enabled"] is True
    assert partial["thresholds"] == {**DEFAULTS, "spread_above": 0.9, "hold_s": 10}
    assert partial["changed_ns"] > on["changed_ns"]
    assert get(stub) == partial

    every = set_(stub, enabled=False, consolidate_below=0.25, spread_above=1.0, hold_s=3600,
                 min_hosts=64)
    assert every["enabled"] is False
    assert every["thresholds"] == {"consolidate_below": 0.25, "spread_above": 1.0,
                                   "hold_s": 3600, "min_hosts": 64}
    # the edges of the rules are allowed: spread_above 1, a tiny consolidate_below
    tiny = set_(stub, consolidate_below=1e-5, spread_above=2e-5, hold_s=1, min_hosts=1)
    assert tiny["thresholds"] == {"consolidate_below": 1e-5, "spread_above": 2e-5,
                                  "hold_s": 1, "min_hosts": 1}
    assert get(stub) == tiny


@pytest.mark.parametrize("fields, message", [
    ({"consolidate_below": 0.0}, f"consolidate_below 0: must be {FILL_RULE} "
                                 "(spread_above is 0.8)"),
    ({"consolidate_below": -0.1}, f"consolidate_below -0.1: must be {FILL_RULE}"),
    ({"consolidate_below": 0.8}, f"consolidate_below 0.8: must be {FILL_RULE}"),
    ({"consolidate_below": math.nan}, f"consolidate_below nan: must be {FILL_RULE}"),
    ({"spread_above": 1.01}, f"spread_above 1.01: must be {FILL_RULE} "
                             "(consolidate_below is 0.5)"),
    ({"spread_above": 0.5}, f"spread_above 0.5: must be {FILL_RULE}"),
    ({"spread_above": math.inf}, f"spread_above inf: must be {FILL_RULE}"),
    # both given, crossed: the first named
    ({"consolidate_below": 0.7, "spread_above": 0.6}, "consolidate_below 0.7: must be"),
    ({"hold_s": 0}, "hold_s 0: must be 1 <= hold_s <= 3600"),
    ({"hold_s": 3601}, "hold_s 3601: must be 1 <= hold_s <= 3600"),
    ({"min_hosts": 0}, "min_hosts 0: must be 1 <= min_hosts <= 64"),
    ({"min_hosts": 65}, "min_hosts 65: must be 1 <= min_hosts <= 64"),
    # all or nothing: enabled does not change either
    ({"enabled": True, "hold_s": 0}, "hold_s 0: must be"),
    ({}, "no consolidation field given"),
])
def test_a_field_off_its_rule_is_refused_and_nothing_changes(start_recorded, fields, message):
    stub = start_recorded().stub()
    before = get(stub)
    with pytest.raises(grpc.RpcError) as failed:
        set_(stub, **fields)
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in failed.value.details()
    assert get(stub) == before


def test_start_options(start_recorded):
    sidecar = start_recorded(extra=["--consolidate", "on", "--consolidate-thresholds",
                                    "consolidate_below=0.3, hold_s=7,min_hosts=2"])
    policy = get(sidecar.stub())
    assert policy["enabled"] is True
    assert policy["thresholds"] == {**DEFAULTS, "consolidate_below": 0.3, "hold_s": 7,
                                    "min_hosts": 2}
    assert "power: consolidation on (consolidate_below 0.3, spread_above 0.8, hold_s 7, " \
           "min_hosts 2)" in sidecar.log_text()
    off = start_recorded(extra=["--consolidate", "off"])
    assert get(off.stub())["enabled"] is False


@pytest.mark.parametrize("options, message", [
    (["--consolidate", "yes"], "--consolidate 'yes': give on or off"),
    (["--consolidate-thresholds", "hold_s=0"],
     "--consolidate-thresholds: hold_s 0: must be 1 <= hold_s <= 3600"),
    (["--consolidate-thresholds", "hold_s=2.5"], "--consolidate-thresholds: hold_s '2.5': "
                                                 "not an integer"),
    (["--consolidate-thresholds", "spread_above=0.4"],
     f"--consolidate-thresholds: spread_above 0.4: must be {FILL_RULE}"),
    (["--consolidate-thresholds", "consolidate_below=half"],
     "consolidate_below 'half': not a number"),
    (["--consolidate-thresholds", "min_hosts=65"], "min_hosts 65: must be 1 <= min_hosts"),
    (["--consolidate-thresholds", "fill=0.5"], "no consolidation threshold 'fill'"),
    (["--consolidate-thresholds", "hold_s"], "'hold_s': give NAME=VALUE"),
    (["--consolidate-thresholds", "hold_s=2,hold_s=3"], "hold_s is given twice"),
])
def test_bad_start_options_are_one_line_and_exit_2(tmp_path, options, message):
    done = subprocess.run([sys.executable, "-m", "power", "--target",
                           f"host0={tmp_path / 'control.sock'}", *options],
                          capture_output=True, text=True, timeout=60, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("power: error: "), done.stderr
    assert message in done.stderr
    assert done.stdout == ""
