"""`make bench`: every workload measured in the same run on the same lcore,
then the sections measured apart (offered_load: the gNB step 5's no-drop
rate and latency by offered load, next to its saturated rate and
testpmd's; power: the same by --governor mode and load, CPU time, P-state
residency, modelled power and latency against busy polling; consolidation:
the hybrid topology at a low load with core consolidation off and on; baas:
the buffering service on the same lcore, next to the gNB
step 5's AM rate, and attached to host.p4's ring port on the other lcore;
drb_load: gnbctl's DRB load; hybrid: the hybrid topology by offload
percentage; p4runtime_write: the P4Runtime server's write rate;
frontend_speed: the compiler's front end);
results printed and written to testbench/results/bench.{json,png},
bench_latency.png, bench_power.png, bench_consolidation.png, bench_baas.png
and bench_hybrid.png.

Exit status: 0 when everything selected was measured, the compiled
programs reach their target shares of their baselines and the sections with
a goal meet it; 1 otherwise."""

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from testbench.bench import (baas, baas_ring, drb_load, frontend_speed, gnb_offered_load, gnb_power,
                             hybrid, hybrid_power, p4runtime_write)
from testbench.bench.dpdk import BenchError
from testbench.bench.machine import describe_machine
from testbench.bench.report import (speed_verdicts, print_consolidation_table,
                                    print_hybrid_table, print_offered_load_table,
                                    print_power_table, print_table, write_baas_png,
                                    write_consolidation_png, write_hybrid_png, write_json,
                                    write_latency_png, write_png, write_power_png)
from testbench.bench.sample import Measurement
from testbench.bench.workloads import ALL_WORKLOADS, PEERS_NOT_MEASURED, Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
# measured apart from the forwarding workloads
SECTIONS = ("offered_load", "power", "consolidation", "baas", "drb_load", "hybrid", "p4runtime_write", "frontend_speed")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    names = [w.name for w in ALL_WORKLOADS] + list(SECTIONS)
    parser = argparse.ArgumentParser(prog="python -m testbench.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="runs per workload; the median is reported")
    parser.add_argument("--duration", type=int, default=5, help="seconds per run of our executables")
    parser.add_argument("--lcore", type=int, default=1, help="the forwarding lcore")
    parser.add_argument("--control-lcore", type=int, default=0, help="testpmd's main (non-forwarding) lcore")
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME",
                        help=f"measure only these workloads and sections ({', '.join(names)})")
    parser.add_argument("--build-dir", type=Path, default=REPO_ROOT / "build" / "bench")
    parser.add_argument("--results-dir", type=Path, default=REPO_ROOT / "testbench" / "results")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.duration < 1:
        parser.error("--repeats and --duration must be at least 1")
    if args.lcore == args.control_lcore:
        parser.error("--lcore and --control-lcore must differ")
    return args


def _measure_section(name: str, description: str, measure: Callable[[], dict], console: Console,
                     summary: Callable[[dict], str] | None = None) -> dict:
    """The section's results, or {"skipped": why} when it could not be
    measured; summary(results) is printed under the section's name."""
    console.print(f"[bold]measuring[/] {name} ({description})")
    try:
        results = measure()
    except BenchError as e:
        console.print(f"[red]{name}: {e}[/]")
        return {"skipped": str(e).splitlines()[0]}
    if summary is not None:
        console.print(f"    {summary(results)}")
    return results


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    # Logs and CI are not terminals; rich would wrap the table at 80 columns.
    console = Console(width=None if sys.stdout.isatty() else 120)
    machine = describe_machine()
    settings = Settings(lcore=args.lcore, control_lcore=args.control_lcore, duration_s=args.duration,
                        tsc_hz=machine.tsc_hz, build_dir=args.build_dir)

    def selected(name: str) -> bool:
        return not args.only or name in args.only

    workloads = [w() for w in ALL_WORKLOADS if selected(w.name)]
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

    sections = {}
    if selected("offered_load"):
        # the saturated rates of this run, when measured: host.p4's bounds the
        # search, testpmd's is the reference
        host_p4, testpmd = measurements.get("gnb_host_p4"), measurements.get("testpmd_macswap_null")
        sections["offered_load"] = _measure_section(
            "offered_load", "host.p4 step 5 under a paced --rx-replay: no-drop rate, latency by load",
            lambda: gnb_offered_load.measure(settings, machine.cpu_model,
                                             host_p4.median_pps if host_p4 else None,
                                             testpmd.median_pps if testpmd else None),
            console, gnb_offered_load.summary)
    if selected("power"):
        # busy mode's 0.1% no-drop rate of the offered_load section is the
        # reference when it ran; else the section searches it (bounded by
        # gnb_host_p4's saturated rate of this run when measured)
        host_p4 = measurements.get("gnb_host_p4")
        sections["power"] = _measure_section(
            "power", "host.p4 step 5 by --governor mode and offered load: CPU time, P-states, "
            "modelled power, latency",
            lambda: gnb_power.measure(settings, machine.cpu_model, sections.get("offered_load"),
                                      host_p4.median_pps if host_p4 else None),
            console, gnb_power.summary)
    if selected("consolidation"):
        sections["consolidation"] = _measure_section(
            "consolidation", "the hybrid topology at a low load, core consolidation off and on",
            lambda: hybrid_power.measure(args.build_dir, machine.cpu_model), console,
            hybrid_power.summary)
    if selected("baas"):
        # host.p4 copies every frame it takes (all AM DRBs) to the BaaS port once
        host_p4 = measurements.get("gnb_host_p4")
        sections["baas"] = _measure_section(
            "baas", "the buffering service on one lcore, --rx-replay into net_null",
            lambda: baas.measure(args.repeats, args.duration, args.lcore, machine.tsc_hz,
                                 args.build_dir, host_p4.mpps if host_p4 else None),
            console, baas.summary)
        if "skipped" not in sections["baas"]:
            # the ring attachment: host.p4 on --lcore, the BaaS on --control-lcore
            sections["baas"]["ring"] = _measure_section(
                "baas ring", "host.p4's ring port, the BaaS a secondary process",
                lambda: baas_ring.measure(args.repeats, args.duration, args.lcore,
                                          args.control_lcore, machine.tsc_hz, args.build_dir),
                console, baas_ring.summary)
            sections["baas"]["attachments"]["ring"] = (
                "measured (\"ring\")" if "skipped" not in sections["baas"]["ring"]
                else f"not measured: {sections['baas']['ring']['skipped']}")
    if selected("drb_load"):
        sections["drb_load"] = _measure_section(
            "drb_load", "gnbctl, two P4Runtime targets",
            lambda: drb_load.measure(args.repeats, args.build_dir), console,
            lambda r: f"{r['median_seconds']:.3f} s, entries/s per target "
                      f"{r['median_entries_per_s_per_target']}")
    if selected("hybrid"):
        sections["hybrid"] = _measure_section(
            "hybrid", "NIC + host processes, offload "
            f"{', '.join(f'{p}%' for p in hybrid.OFFLOAD_PERCENTS)}",
            lambda: hybrid.measure(args.build_dir), console)
    if selected("p4runtime_write"):
        sections["p4runtime_write"] = _measure_section(
            "p4runtime_write", f"{p4runtime_write.ENTRIES} entries to two targets",
            lambda: p4runtime_write.measure(args.repeats, args.build_dir), console,
            lambda r: f"{r['median_seconds']:.3f} s, {r['median_entries_per_s']:,.0f} entries/s")
    if selected("frontend_speed"):
        sections["frontend_speed"] = _measure_section(
            "frontend_speed", "compile_frontend",
            lambda: frontend_speed.measure(args.repeats), console)
        for program, seconds in sections["frontend_speed"].get("median_seconds", {}).items():
            console.print(f"    {program}: {seconds:.3f} s")

    results = list(measurements.values())
    run_settings = {"forwarding_lcore": args.lcore, "testpmd_main_lcore": args.control_lcore,
                    "repeats": args.repeats, "duration_s": args.duration, "hugepages": True,
                    "frame_bytes": 64}
    if results:
        print_table(results, machine, console)
    json_path = args.results_dir / "bench.json"
    write_json(json_path, results, machine, run_settings, PEERS_NOT_MEASURED, sections)
    written = [json_path]
    if results:
        written.append(args.results_dir / "bench.png")
        write_png(written[-1], results, machine)
    # each measured section: its table (if it prints one) and its plot
    for name, print_section, plot, write_plot in (
            ("offered_load", print_offered_load_table, "bench_latency.png", write_latency_png),
            ("power", print_power_table, "bench_power.png", write_power_png),
            ("consolidation", print_consolidation_table, "bench_consolidation.png",
             write_consolidation_png),
            ("baas", None, "bench_baas.png", write_baas_png),
            ("hybrid", print_hybrid_table, "bench_hybrid.png", write_hybrid_png)):
        if name not in sections or "skipped" in sections[name]:
            continue
        if print_section is not None:
            print_section(sections[name], console)
        written.append(args.results_dir / plot)
        write_plot(written[-1], sections[name], machine)
    console.print(f"wrote {', '.join(map(str, written))}")

    all_measured = all(m.samples and not m.skipped for m in results) \
        and not any("skipped" in section for section in sections.values())
    verdicts = speed_verdicts(results)
    for verdict in verdicts:
        style = "green" if verdict["met"] else "red"
        reached = "-" if verdict["ratio"] is None else f"{verdict['ratio']:.1%}"
        console.print(f"[{style}]{verdict['measurement']} reaches {reached} of "
                      f"{verdict['baseline']} (target {verdict['target_ratio']:.0%})[/]")
    section_goals_met = True
    for name, section in sections.items():
        if "goal" in section:
            met = section["goal"]["met"]
            console.print(f"[{'green' if met else 'red'}]{name}: goal {'met' if met else 'missed'} "
                          f"({section['goal']})[/]")
            section_goals_met &= met
    return 0 if all_measured and section_goals_met and all(v["met"] for v in verdicts) else 1
