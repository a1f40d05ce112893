"""Our compiled pipelines: compile an example with the project's compiler,
run the DPDK executable for a fixed time, read its final statistics."""

import functools
import json
from pathlib import Path

from testbench.bench.dpdk import BenchError, Eal, run_to_exit
from testbench.bench.sample import Sample

REPO_ROOT = Path(__file__).resolve().parents[2]
STARTUP_ALLOWANCE_S = 90    # EAL, ports, pcap preload and up to 65,536 entries
MIN_FORWARDED_SHARE = 0.99  # a run that drops traffic is not a forwarding measurement


@functools.cache
def compile_p4(source: Path, out_dir: Path):
    """Compiles SOURCE into OUT_DIR/STEM (once per run, however many
    workloads use it); returns the driver's CompileResult."""
    if not source.exists():
        raise BenchError(f"{source.relative_to(REPO_ROOT)} does not exist")
    try:
        from t4p4s.diagnostics import CompileError
        from t4p4s.driver import compile_program
    except ImportError as e:
        raise BenchError(f"the t4p4s compiler is not importable: {e}") from e
    try:
        return compile_program(str(source), str(out_dir / source.stem))
    except CompileError as e:
        raise BenchError(f"{source.relative_to(REPO_ROOT)} does not compile:\n{e}") from e


def _port_totals(stats: dict) -> tuple[int, int]:
    ports = stats.get("ports")
    if not isinstance(ports, list) or not ports:
        raise BenchError("--stats-json has no 'ports' list")
    return sum(int(p["rx"]) for p in ports), sum(int(p["tx"]) for p in ports)


def measure_compiled(executable: Path, lcore: int, vdevs: tuple[str, ...], duration_s: int,
                     tsc_hz: float, work_dir: Path, entries: Path | None = None,
                     extra_mbufs: int = 0, options: tuple[str, ...] = ()) -> Sample:
    """OPTIONS: more of the executable's own options (after EAL's `--`)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    stats_path = work_dir / "stats.json"
    stats_path.unlink(missing_ok=True)
    command = [str(executable), *Eal(lcores=str(lcore), vdevs=vdevs).args(), "--",
               "--governor", "busy", "--duration", str(duration_s), "--stats-json", str(stats_path)]
    if entries is not None:
        command += ["--entries", str(entries)]
    if extra_mbufs:
        command += ["--mbufs", str(extra_mbufs)]
    command += options
    finished = run_to_exit(command, work_dir / "run.log", duration_s + STARTUP_ALLOWANCE_S)
    try:
        stats = json.loads(stats_path.read_text())
    except (OSError, ValueError) as e:
        raise BenchError(f"{executable.name} wrote no readable --stats-json ({e}); log: {work_dir / 'run.log'}")
    received, sent = _port_totals(stats)
    if received == 0:
        raise BenchError(f"{executable.name} received no packets in {duration_s} s; log: {work_dir / 'run.log'}")
    if sent < MIN_FORWARDED_SHARE * received:
        raise BenchError(f"{executable.name} forwarded only {sent} of {received} packets "
                         f"(drops: {stats.get('drops')}); not a forwarding measurement")
    pps = received / duration_s
    return Sample(pps=pps, cycles_per_packet=tsc_hz / pps, command=finished.command_line,
                  detail={"rx": received, "tx": sent, "duration_s": duration_s,
                          "drops": stats.get("drops", {})})
