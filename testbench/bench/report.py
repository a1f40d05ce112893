"""The views of one benchmark run: printed tables, bench.json, bench.png
(the forwarding workloads) and bench_hybrid.png (the hybrid topology by
offload percentage)."""

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from testbench.bench.machine import Machine
from testbench.bench.sample import Measurement

# The speed goals `make bench` checks: (measurement, baseline, least ratio).
SPEED_GOALS = (
    ("l2fwd_null", "testpmd_macswap_null", 0.5),      # our compiled L2 forward
    ("gnb_host_p4", "testpmd_macswap_null", 0.1),     # the full gNB downlink (issue 3)
)


def rate_ratio(measurement: Measurement, baseline: Measurement | None) -> float | None:
    if baseline is None or not measurement.median_pps or not baseline.median_pps:
        return None
    return measurement.median_pps / baseline.median_pps


def ratio_to_baseline(measurement: Measurement, by_name: dict[str, Measurement]) -> float | None:
    return rate_ratio(measurement, by_name.get(measurement.baseline) if measurement.baseline else None)


def _fmt(value: float | None, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


def print_table(measurements: list[Measurement], machine: Machine, console: Console) -> None:
    by_name = {m.name: m for m in measurements}
    table = Table(title=f"one forwarding lcore, {machine.cpu_model}, TSC {machine.tsc_hz / 1e9:.2f} GHz, "
                        f"DPDK {machine.dpdk_version}")
    for column, justify in (("workload", "left"), ("Mpps", "right"), ("cycles/pkt", "right"),
                            ("ratio", "right"), ("baseline", "left"), ("runs", "right")):
        table.add_column(column, justify=justify, no_wrap=True)
    for m in measurements:
        ratio = ratio_to_baseline(m, by_name)
        table.add_row(m.name, _fmt(m.mpps, "{:.2f}"), _fmt(m.cycles_per_packet(machine.tsc_hz), "{:.1f}"),
                      _fmt(ratio, "{:.0%}"), m.baseline or "-", str(len(m.samples)))
    console.print(table)
    for m in measurements:
        console.print(f"  {m.name}: {m.description}")
        if m.skipped:
            console.print(f"    [red]not measured: {m.skipped}[/]")


def speed_verdicts(measurements: list[Measurement]) -> list[dict]:
    """The SPEED_GOALS whose two workloads were both measured."""
    by_name = {m.name: m for m in measurements}
    verdicts = []
    for name, baseline, target in SPEED_GOALS:
        if name not in by_name or baseline not in by_name:
            continue
        ratio = rate_ratio(by_name[name], by_name[baseline])
        verdicts.append({"measurement": name, "baseline": baseline, "target_ratio": target,
                         "ratio": ratio, "met": ratio is not None and ratio >= target})
    return verdicts


def write_json(path: Path, measurements: list[Measurement], machine: Machine, settings: dict,
               peers_not_measured: dict[str, str], sections: dict | None = None) -> None:
    """`sections`: the separately measured parts (drb_load, hybrid), each a
    top-level key."""
    by_name = {m.name: m for m in measurements}
    document = {
        "machine": machine.as_json(),
        "settings": settings,
        "rate_definition": "packets received (and forwarded) per second, summed over all ports, "
                           "by one forwarding lcore; median over the runs",
        "measurements": [{
            "name": m.name,
            "description": m.description,
            "mpps": m.mpps,
            "cycles_per_packet": m.cycles_per_packet(machine.tsc_hz),
            "baseline": m.baseline,
            "ratio_to_baseline": ratio_to_baseline(m, by_name),
            "skipped": m.skipped,
            "runs": [{"mpps": s.pps / 1e6, "cycles_per_packet": s.cycles_per_packet,
                      "command": s.command, **s.detail} for s in m.samples],
        } for m in measurements],
        "speed_goals": speed_verdicts(measurements),
        "peers_not_measured": peers_not_measured,
        **(sections or {}),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")


def write_png(path: Path, measurements: list[Measurement], machine: Machine) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_name = {m.name: m for m in measurements}
    names = [m.name for m in measurements]
    rates = [m.mpps or 0.0 for m in measurements]
    figure, axes = plt.subplots(figsize=(9, 0.8 * len(measurements) + 1.6))
    bars = axes.barh(names, rates, color=["#888888" if m.name.startswith("testpmd") else "#2a6fbb"
                                          for m in measurements])
    axes.invert_yaxis()
    axes.set_xlabel("Mpps, one forwarding lcore (median of runs)")
    axes.set_title(f"{machine.cpu_model}, TSC {machine.tsc_hz / 1e9:.2f} GHz, DPDK {machine.dpdk_version}")
    right = max(rates, default=1.0) or 1.0
    axes.set_xlim(0, right * 1.45)
    for name, baseline, share in SPEED_GOALS:
        reference = by_name.get(baseline)
        if name not in by_name or not (reference and reference.mpps):
            continue
        target = reference.mpps * share
        axes.axvline(target, color="#c0392b", linestyle="--", linewidth=1)
        axes.text(target, 0.01, f" {name} target: {share:.0%} of {baseline}",
                  transform=axes.get_xaxis_transform(), color="#c0392b", fontsize=8, va="bottom",
                  rotation=90)
    for bar, m in zip(bars, measurements):
        if m.mpps is None:
            label = "not measured (the reason is in bench.json)"
        else:
            label = f"{m.mpps:.1f} Mpps, {m.cycles_per_packet(machine.tsc_hz):.0f} cycles/pkt"
            ratio = ratio_to_baseline(m, by_name)
            if ratio is not None:
                label += f", {ratio:.0%} of {m.baseline}"
        axes.text(bar.get_width() + right * 0.01, bar.get_y() + bar.get_height() / 2, label,
                  va="center", fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def print_hybrid_table(hybrid: dict, console: Console) -> None:
    table = Table(title="hybrid topology: radio Mpps by offload % (NIC + host processes)")
    table.add_column("placement", justify="left", no_wrap=True)
    for percent in hybrid["offload_percents"]:
        table.add_column(f"{percent:g}%", justify="right", no_wrap=True)
    for configuration in hybrid["configurations"]:
        table.add_row(configuration["label"], *(f"{point['radio_mpps']:.2f}"
                                                for point in configuration["points"]))
    console.print(table)


def write_hybrid_png(path: Path, hybrid: dict, machine: Machine) -> None:
    """Paper 001 Fig. 9's analog: one line per placement of the host
    processes, x the offload percentage, y the radio rate."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paper = hybrid["paper_001_fig9"]
    figure, axes = plt.subplots(figsize=(8, 5))
    for configuration in hybrid["configurations"]:
        points = configuration["points"]
        axes.plot([p["offload_percent"] for p in points], [p["radio_mpps"] for p in points],
                  marker="o", label=configuration["label"])
    axes.set_xlabel("DRBs offloaded to the host processes (%)")
    axes.set_ylabel("radio frames out of the NIC (Mpps)")
    axes.set_xticks(hybrid["offload_percents"])
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8, loc="lower left")
    axes.set_title(f"hybrid gNB downlink, {machine.online_cpus} cores ({machine.cpu_model})\n"
                   f"paper 001 Fig. 9: {paper['smartnic_alone_mpps']:g} Mpps SmartNIC alone, "
                   f"{paper['offload_100_percent_8_cores_mpps']:g} Mpps at 100% offload "
                   f"with 8 x86 cores", fontsize=9)
    figure.text(0.01, 0.01, "saturated rate under an unbounded net_pcap replay (paper 001: no-drop "
                "rate); per-process rates and drops in bench.json \"hybrid\"", fontsize=7)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def write_baas_png(path: Path, baas: dict, machine: Machine) -> None:
    """The buffering service on one lcore: AMD PDUs (and all frames) per
    second for each mix, next to host.p4's AM copies per lcore in the same
    run and the papers' figures per core; memory per buffered PDU below."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []       # (label, Mpps, colour, annotation)
    for name, mix in baas["mixes"].items():
        lost = "" if not mix["losses"] else ", AM PDUs LOST"
        rows.append((f"BaaS {name}: AMD PDUs", mix["amd_mpps"], "#2a6fbb",
                     f"{mix['amd_mpps']:.2f} Mpps, {mix['cycles_per_amd_pdu']:.0f} cycles/PDU{lost}"))
        rows.append((f"BaaS {name}: AMD + STATUS frames", mix["frames_mpps"], "#8fb3de",
                     f"{mix['frames_mpps']:.2f} Mpps"))
    ring = baas.get("ring", {})
    if "amd_mpps" in ring:
        kept_up = "kept up" if ring["kept_up_every_run"] else "ring full: did not keep up"
        rows.append(("BaaS on host.p4's ring port: AMD PDUs", ring["amd_mpps"], "#1e8449",
                     f"{ring['amd_mpps']:.2f} Mpps of host.p4's {ring['target_mpps']:.2f} "
                     f"(2 lcores), {kept_up}"))
    if baas.get("host_p4_am_mpps") is not None:
        rows.append(("host.p4 AM copies (gnb_host_p4, this run)", baas["host_p4_am_mpps"], "#c0392b",
                     f"{baas['host_p4_am_mpps']:.2f} Mpps"))
    for name, paper in baas["papers"].items():
        per_core = paper["mpps"] / paper["cores"]
        rows.append((f"{name.replace('_', ' ')} (per core)", per_core, "#888888",
                     f"{per_core:.2f} Mpps/core ({paper['note']})"))
    figure, axes = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.9))
    labels = [r[0] for r in rows]
    bars = axes.barh(labels, [r[1] for r in rows], color=[r[2] for r in rows])
    axes.invert_yaxis()
    right = max((r[1] for r in rows), default=1.0) or 1.0
    axes.set_xlim(0, right * 1.75)
    axes.set_xlabel("Mpps, one lcore (median of runs); papers: their rate per core")
    for bar, row in zip(bars, rows):
        axes.text(bar.get_width() + right * 0.01, bar.get_y() + bar.get_height() / 2, row[3],
                  va="center", fontsize=8)
    if baas.get("host_p4_am_mpps") is not None:
        axes.axvline(baas["host_p4_am_mpps"], color="#c0392b", linestyle="--", linewidth=1)
    memory = baas["memory"]
    axes.set_title(f"buffering service, 128 B PDUs, 65,536 DRBs, port and ring attachments"
                   f"\n{machine.cpu_model}, TSC "
                   f"{machine.tsc_hz / 1e9:.2f} GHz, DPDK {machine.dpdk_version}", fontsize=9)
    figure.text(0.01, 0.01, f"memory per buffered PDU: {memory['bytes_per_buffered_pdu']} B "
                f"(mbuf pool element {memory['pool_element_bytes']} B + {memory['slot_bytes']} B "
                f"slot); details in bench.json \"baas\"", fontsize=7)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
