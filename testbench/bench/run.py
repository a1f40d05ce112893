"""`make bench`: every workload measured in the same run on the same lcore,
results printed and written to testbench/results/bench.{json,png}.

Exit status: 0 when every workload was measured and the compiled L2 forward
reaches its target share of testpmd; 1 otherwise."""

import argparse
import sys
from pathlib import Path

from rich.console import Console

from testbench.bench import drb_load
from testbench.bench.dpdk import BenchError
from testbench.bench.machine import describe_machine
from testbench.bench.report import l2fwd_verdict, print_table, write_json, write_png
from testbench.bench.sample import Measurement
from testbench.bench.workloads import ALL_WORKLOADS, PEERS_NOT_MEASURED, Settings

REPO_ROOT = Path(__file__).resolve().parents[2]


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    names = [w.name for w in ALL_WORKLOADS]
    parser = argparse.ArgumentParser(prog="python -m testbench.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="runs per workload; the median is reported")
    parser.add_argument("--duration", type=int, default=5, help="seconds per run of our executables")
    parser.add_argument("--lcore", type=int, default=1, help="the forwarding lcore")
    parser.add_argument("--control-lcore", type=int, default=0, help="testpmd's main (non-forwarding) lcore")
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME",
                        help=f"measure only these workloads ({', '.join(names)})")
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "bench")
    parser.add_argument("--results-dir", type=Path, default=REPO_ROOT / "testbench" / "results")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.duration < 1:
        parser.error("--repeats and --duration must be at least 1")
    if args.lcore == args.control_lcore:
        parser.error("--lcore and --control-lcore must differ")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    # Logs and CI are not terminals; rich would wrap the table at 80 columns.
    console = Console(width=None if sys.stdout.isatty() else 120)
    machine = describe_machine()
    settings = Settings(lcore=args.lcore, control_lcore=args.control_lcore, duration_s=args.duration,
                        tsc_hz=machine.tsc_hz, build_dir=args.build_dir)
    workloads = [w() for w in ALL_WORKLOADS if not args.only or w.name in args.only]
    measurements = {w.name: Measurement(w.name, w.description, [], w.baseline) for w in workloads}

    ready = []
    for workload in workloads:
        console.print(f"[bold]preparing[/] {workload.name}")
        try:
            workload.prepare(settings)
            ready.append(workload)
        except BenchError as e:
            measurements[workload.name].skipped = str(e).splitlines()[0]
            console.print(f"[red]{workload.name}: {e}[/]")

    # Interleaved, so a burst of load from elsewhere on the machine hits
    # every workload rather than all repeats of one.
    for repeat in range(args.repeats):
        for workload in list(ready):
            console.print(f"[bold]run {repeat + 1}/{args.repeats}[/] {workload.name}")
            try:
                sample = workload.measure(settings, repeat)
            except BenchError as e:
                measurements[workload.name].skipped = str(e).splitlines()[0]
                console.print(f"[red]{workload.name}: {e}[/]")
                ready.remove(workload)
                continue
            measurements[workload.name].samples.append(sample)
            console.print(f"    {sample.pps / 1e6:.2f} Mpps, {sample.cycles_per_packet:.1f} cycles/packet")

    console.print("[bold]measuring[/] drb_load (gnbctl, two P4Runtime targets)")
    try:
        control_plane = {"drb_load": drb_load.measure(args.repeats, args.build_dir)}
        console.print(f"    {control_plane['drb_load']['median_seconds']:.3f} s, entries/s per "
                      f"target {control_plane['drb_load']['median_entries_per_s_per_target']}")
    except BenchError as e:
        control_plane = {"drb_load": {"skipped": str(e).splitlines()[0]}}
        console.print(f"[red]drb_load: {e}[/]")

    results = list(measurements.values())
    run_settings = {"forwarding_lcore": args.lcore, "testpmd_main_lcore": args.control_lcore,
                    "repeats": args.repeats, "duration_s": args.duration, "hugepages": True,
                    "frame_bytes": 64}
    print_table(results, machine, console)
    json_path = args.results_dir / "bench.json"
    png_path = args.results_dir / "bench.png"
    write_json(json_path, results, machine, run_settings, PEERS_NOT_MEASURED, control_plane)
    write_png(png_path, results, machine)
    console.print(f"wrote {json_path} and {png_path}")

    all_measured = all(m.samples and not m.skipped for m in results) \
        and "skipped" not in control_plane["drb_load"]
    verdict = l2fwd_verdict(results)
    target_applies = {verdict["measurement"], verdict["baseline"]} <= measurements.keys()
    if verdict["ratio"] is not None:
        style = "green" if verdict["met"] else "red"
        console.print(f"[{style}]{verdict['measurement']} reaches {verdict['ratio']:.0%} of "
                      f"{verdict['baseline']} (target {verdict['target_ratio']:.0%})[/]")
    return 0 if all_measured and (verdict["met"] or not target_applies) else 1
