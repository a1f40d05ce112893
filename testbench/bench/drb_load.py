"""The control-plane figure of `make bench`: how long `gnbctl drb load
--count 65536` takes to install every DRB's dl_drb and ul_bearer entries
(131,072 updates per target) on two real targets, a NIC and a host build
of p4src/, each on its own lcore. The time is the one gnbctl itself
reports in its --json output (encoding and every Write acknowledged);
each run starts from an empty pipeline (`gnbctl pipeline push`)."""
from __future__ import annotations

import json
import statistics
import subprocess
from pathlib import Path

from t4p4s.stf.compile_cache import compile_cached
from t4p4s.stf.control import RuntimeProcess, StfError, test_eal_args
from testbench.bench.dpdk import BenchError

REPO_ROOT = Path(__file__).resolve().parents[2]
GNBCTL = REPO_ROOT / "controller" / "bin" / "gnbctl"
DRBS = 65536


def _p4runtime_address(runtime: RuntimeProcess) -> str:
    try:
        return runtime.p4runtime_address()
    except StfError as e:
        raise BenchError(str(e)) from None


def _gnbctl(topology: Path, *args) -> dict:
    done = subprocess.run([str(GNBCTL), "--json", "--topology", str(topology), *args],
                          capture_output=True, text=True, timeout=300)
    try:
        output = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise BenchError(f"gnbctl {' '.join(args)}: {done.stderr.strip()}") from None
    if not output["ok"]:
        raise BenchError(f"gnbctl {' '.join(args)}: {output['error']}")
    return output["result"]


def measure(repeats: int, build_dir: Path) -> dict:
    build_dir = build_dir.resolve()
    builds = {role: compile_cached(REPO_ROOT / "p4src" / f"{role}.p4", build_dir / "cache")
              for role in ("nic", "host")}
    runtimes = []
    try:
        lines = ["timeout = 10.0"]
        for lcore, role in enumerate(("nic", "host")):
            eal = test_eal_args(f"bench-drb-{role}", lcores=str(lcore)) + \
                ["--vdev", f"net_ring{lcore}"]
            runtime = RuntimeProcess(builds[role].executable_path, eal,
                                     ["--governor", "nap", "--p4runtime", "127.0.0.1:0"],
                                     build_dir / "runs" / f"drb-load-{role}")
            runtimes.append(runtime)
            lines += ["[[targets]]", f'name = "{role}0"', f'role = "{role}"',
                      f'address = "{_p4runtime_address(runtime)}"',
                      f'p4info = "{builds[role].p4info_text_path}"']
        topology = build_dir / "drb_load_topology.toml"
        topology.write_text("\n".join(lines) + "\n")
        runs = []
        for _ in range(repeats):
            _gnbctl(topology, "pipeline", "push")
            runs.append(_gnbctl(topology, "drb", "load", "--count", str(DRBS)))
    finally:
        for runtime in runtimes:
            runtime.stop()
    median = statistics.median(r["seconds"] for r in runs)
    return {
        "description": f"gnbctl drb load --count {DRBS}: dl_drb + ul_bearer entries "
                       "(2 per DRB) to a NIC and a host target concurrently, one lcore each",
        "drbs": DRBS, "targets": 2, "updates_per_target": 2 * DRBS,
        "median_seconds": median,
        "median_entries_per_s_per_target": {
            name: statistics.median(r["targets"][name]["entries_per_s"] for r in runs)
            for name in runs[0]["targets"]},
        "runs": runs,
    }
