"""The compiler's front end on the test fixture programs: how long
compile_frontend (preprocess, parse, names, types, constant folding) takes
for each, the median of the repeats. The goal is the one a unit test used
to assert, where a loaded machine made it flake: each under 2 s."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "testbench" / "p4" / "frontend"
PROGRAMS = ("l2_switch.p4", "router.p4")
GOAL_SECONDS = 2.0


def measure(repeats: int) -> dict:
    from t4p4s.frontend import compile_frontend
    seconds = {}
    for name in PROGRAMS:
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            compile_frontend(str(FIXTURES / name))
            runs.append(time.perf_counter() - start)
        seconds[name] = runs
    medians = {name: statistics.median(runs) for name, runs in seconds.items()}
    return {
        "description": "t4p4s compile_frontend on testbench/p4/frontend's programs, seconds per program",
        "median_seconds": medians,
        "runs_seconds": seconds,
        "goal": {"seconds_per_program": GOAL_SECONDS,
                 "met": all(s < GOAL_SECONDS for s in medians.values())},
    }
