"""The views of one benchmark run: printed tables, bench.json, bench.png
(the forwarding workloads), bench_hybrid.png (the hybrid topology by
offload percentage), bench_baas.png (the buffering service),
bench_latency.png (the gNB downlink's latency and loss by offered load) and
bench_power.png (its CPU time, latency and modelled power by load per
power governor mode)."""

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


def _save(figure, path: Path, footnote: str) -> None:
    """Writes FIGURE to PATH with FOOTNOTE in small print under it."""
    import matplotlib.pyplot as plt
    figure.text(0.01, 0.01, footnote, fontsize=7)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


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
    _save(figure, path, "saturated rate under an unbounded net_pcap replay (paper 001: no-drop "
                "rate); per-process rates and drops in bench.json \"hybrid\"")


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
    _save(figure, path, f"memory per buffered PDU: {memory['bytes_per_buffered_pdu']} B "
                f"(mbuf pool element {memory['pool_element_bytes']} B + {memory['slot_bytes']} B "
                f"slot); details in bench.json \"baas\"")


_PERCENTILE_LABELS = {"p50_us": "p50", "p90_us": "p90", "p99_us": "p99", "p99_9_us": "p99.9",
                      "max_us": "max"}


def print_offered_load_table(offered_load: dict, console: Console) -> None:
    """Latency by load, under the no-drop and saturated rates."""
    rates = ", ".join(f"{key} loss {entry['mpps']:.2f} Mpps ({entry['share_of_saturated']:.0%}"
                      + (", not confirmed)" if entry["confirmed"] is False else ")")
                      for key, entry in offered_load["no_drop"].items())
    table = Table(title=f"host.p4 step 5 under offered load: no-drop rate {rates} of saturated "
                        f"{offered_load['saturated_mpps']:.2f} Mpps; latency (us) on the radio port")
    for column in ("load", "pattern", "Mpps", "loss", *_PERCENTILE_LABELS.values()):
        table.add_column(column, justify="left" if column == "pattern" else "right", no_wrap=True)
    for point in offered_load["latency"]["points"]:
        table.add_row(f"{point['load_share']:.0%}", point["pattern"], f"{point['rate_pps'] / 1e6:.2f}",
                      f"{point['loss_share']:.2%}",
                      *(_fmt(point[key], "{:.1f}") for key in _PERCENTILE_LABELS))
    console.print(table)


def write_latency_png(path: Path, offered_load: dict, machine: Machine) -> None:
    """Left: latency percentiles on the radio port by offered load (constant
    gaps as lines, Poisson arrivals as open markers); right: each trial's
    loss share by offered rate, with the no-drop and saturated rates."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = offered_load["latency"]["points"]
    constant = sorted((p for p in points if p["pattern"] == "constant"), key=lambda p: p["rate_pps"])
    poisson = [p for p in points if p["pattern"] == "poisson"]
    colours = dict(zip(_PERCENTILE_LABELS, ("#2a6fbb", "#1e8449", "#d68910", "#c0392b", "#555555")))
    figure, (latency, loss) = plt.subplots(1, 2, figsize=(12, 5))
    for key, label in _PERCENTILE_LABELS.items():
        latency.plot([p["rate_pps"] / 1e6 for p in constant], [p[key] for p in constant],
                     marker="o", color=colours[key], label=f"{label} (constant)")
        if poisson:
            latency.plot([p["rate_pps"] / 1e6 for p in poisson], [p[key] for p in poisson],
                         linestyle="none", marker="s", markerfacecolor="none", color=colours[key],
                         label=f"{label} (Poisson)")
    for p in constant:
        latency.annotate(f"{p['load_share']:.0%}", (p["rate_pps"] / 1e6, p["p50_us"]),
                         textcoords="offset points", xytext=(0, -14), ha="center", fontsize=7)
    latency.set_yscale("log")
    latency.set_xlim(left=0)
    latency.set_xlabel("offered load (Mpps); % of the no-drop rate at 0.1% loss")
    latency.set_ylabel("latency, arrival to tx burst (us)")
    latency.grid(True, which="both", alpha=0.3)
    latency.legend(fontsize=7, ncol=2)
    latency.set_title("latency percentiles by load (radio port)", fontsize=9)

    trials = sorted(offered_load["trials"], key=lambda t: t["rate_pps"])
    for pattern, marker in (("constant", "o"), ("poisson", "s")):
        shown = [t for t in trials if t["pattern"] == pattern]
        if shown:
            loss.plot([t["rate_pps"] / 1e6 for t in shown], [t["loss_share"] * 100 for t in shown],
                      linestyle="none", marker=marker, label=f"trials ({pattern})")
    loss.set_yscale("symlog", linthresh=0.01)
    loss.set_xlim(left=0)
    loss.set_xlabel("offered load (Mpps)")
    loss.set_ylabel("loss (% of arrivals in the window)")
    loss.axvline(offered_load["saturated_mpps"], color="#888888", linestyle=":", linewidth=1)
    loss.text(offered_load["saturated_mpps"], 0.98, " saturated", transform=loss.get_xaxis_transform(),
              fontsize=7, va="top", rotation=90, color="#888888")
    for (key, entry), colour in zip(offered_load["no_drop"].items(), ("#c0392b", "#1e8449")):
        loss.axvline(entry["mpps"], color=colour, linestyle="--", linewidth=1)
        again = " (failed again)" if entry["confirmed"] is False else ""
        loss.text(entry["mpps"], 0.02, f" no-drop ({key} loss) {entry['mpps']:.2f} Mpps{again}",
                  transform=loss.get_xaxis_transform(), fontsize=7, va="bottom", rotation=90,
                  color=colour)
    loss.grid(True, alpha=0.3)
    loss.legend(fontsize=7, loc="upper left")
    loss.set_title("loss by offered load (every trial of the searches and latency points)",
                   fontsize=9)
    ratio = offered_load.get("ratio_to_testpmd_macswap_null")
    reference = (f"; saturated {ratio['saturated']:.1%} of testpmd macswap "
                 f"({offered_load['testpmd_macswap_null_mpps']:.2f} Mpps)" if ratio else "")
    figure.suptitle(f"host.p4 (gNB step 5, 65,536 DRBs) under offered load, one lcore, "
                    f"{offered_load['settings']['ring']}-descriptor modelled rx ring{reference}\n{machine.cpu_model}, TSC {machine.tsc_hz / 1e9:.2f} GHz, "
                    f"DPDK {machine.dpdk_version}", fontsize=9)
    _save(figure, path, "paced --rx-replay with --latency in every trial; details in "
                "bench.json \"offered_load\"")


def print_power_table(power: dict, console: Console) -> None:
    """The governor sweep: one row per mode and load (shares of the window:
    CPU the thread's CPU time, pause and sleep the governor's accounting;
    MHz the mean simulated or real P-state; W power/model.py's estimate)."""
    from rich import box
    reference = power["reference"]
    table = Table(title=f"host.p4 step 5 by --governor mode and load (% of busy mode's no-drop "
                        f"rate {reference['mpps']:.2f} Mpps; 0% = {power['settings']['load_0']}); "
                        f"latency on the radio port; {power['cpu_model']}",
                  box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False)
    for column in ("mode", "load", "Mpps", "loss", "CPU", "busy", "pause", "sleep", "MHz",
                   "p50 us", "p99 us", "max us", "W"):
        table.add_column(column, justify="left" if column == "mode" else "right", no_wrap=True)
    for p in sorted(power["points"], key=lambda p: (p["mode"], p["load_share"])):
        model = p.get("modelled_power") or {}
        table.add_row(p["mode"], f"{p['load_share']:.0%}", f"{p['delivered_mpps']:.2f}",
                      f"{p['loss_share']:.2%}", _fmt(p["cpu_time_share"], "{:.0%}"),
                      _fmt(p["busy_share"], "{:.0%}"), _fmt(p["paused_share"], "{:.0%}"),
                      _fmt(p["asleep_share"], "{:.0%}"), _fmt(p["mean_freq_mhz"], "{:.0f}"),
                      _fmt(p["p50_us"], "{:.1f}"), _fmt(p["p99_us"], "{:.1f}"),
                      _fmt(p["max_us"], "{:.0f}"), _fmt(model.get("watts"), "{:.1f}"))
    console.print(table)
    for mode, why in power["not_measured"].items():
        console.print(f"  {mode}: not measured ({why})")
    for note in power.get("notes", []):
        console.print(f"  {note}")


def _nan(value: float | None) -> float:
    return float("nan") if value is None else value


def write_power_png(path: Path, power: dict, machine: Machine) -> None:
    """Paper 000 Fig. 3/4's analog: per --governor mode, the forwarding
    thread's CPU time share by load, p99 latency by load and, when
    power/model.py was there, the modelled power by load."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = list(dict.fromkeys(p["mode"] for p in power["points"]))
    by_mode = {m: sorted((p for p in power["points"] if p["mode"] == m),
                         key=lambda p: p["load_share"]) for m in modes}
    # the loads evenly spaced (0%, 1% and 10% would crowd a linear axis)
    loads_seen = sorted({p["load_share"] for p in power["points"]})
    at = {load: i for i, load in enumerate(loads_seen)}
    modelled = any(p.get("modelled_power") for p in power["points"])
    panels = 3 if modelled else 2
    figure, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 5))
    cpu, latency = axes[0], axes[1]
    for mode, points in by_mode.items():
        loads = [at[p["load_share"]] for p in points]
        style = {"marker": "o", "label": mode, "linestyle": "--" if mode == "busy" else "-"}
        cpu.plot(loads, [(p["cpu_time_share"] or 0) * 100 for p in points], **style)
        latency.plot(loads, [_nan(p["p99_us"]) for p in points], **style)
        if modelled:
            axes[2].plot(loads, [_nan((p.get("modelled_power") or {}).get("watts")) for p in points],
                         **style)
    goals = power["goals"]
    for key, goal in goals.items():
        if key.startswith("cpu_at_") and goal.get("busy_cpu_time_share"):
            if goal["load_share"] not in at:
                continue
            limit = goal["cpu_ratio_limit"] * goal["busy_cpu_time_share"] * 100
            cpu.plot([at[goal["load_share"]]], [limit], marker="v", color="#c0392b",
                     linestyle="none")
            cpu.annotate(f"goal {goal['cpu_ratio_limit']:.0%} of busy", (at[goal["load_share"]], limit),
                         textcoords="offset points", xytext=(4, -10), fontsize=7, color="#c0392b")
    cpu.set_ylabel("forwarding thread's CPU time (% of the window)")
    cpu.set_ylim(0, 105)
    cpu.set_title("polling-thread CPU time by load", fontsize=9)
    latency.set_yscale("log")
    latency.set_ylabel("p99 latency, arrival to tx burst (us)")
    latency.set_title("p99 latency (radio port) by load", fontsize=9)
    if modelled:
        axes[2].set_ylabel("modelled power of the lcore's core (W above idle)")
        axes[2].set_ylim(bottom=0)
        axes[2].set_title("power/model.py estimate (paper 002's constants)", fontsize=9)
    for axis in axes:
        axis.set_xticks(range(len(loads_seen)), [f"{load:.0%}" for load in loads_seen])
        axis.set_xlabel("offered load (% of busy mode's no-drop rate)")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    wakeup = power["wakeup_cost"]
    cost = (f"; one {wakeup['nap_ns'] / 1000:g} us nap costs {wakeup['cpu_us_per_sleep']:.1f} us of CPU "
            f"on this machine" if "cpu_us_per_sleep" in wakeup else "")
    backends = power.get("backends") or {}
    figure.suptitle(f"host.p4 (gNB step 5, 65,536 DRBs) by power governor mode, one lcore, "
                    f"reference {power['reference']['mpps']:.2f} Mpps{cost}\n{machine.cpu_model}; "
                    f"frequency {backends.get('frequency', '?')}, pause "
                    f"{backends.get('pause', '?')}, sleep {backends.get('sleep', '?')}", fontsize=9)
    not_measured = ", ".join(power["not_measured"]) or "none"
    _save(figure, path, f"load 0% = {power['settings']['load_0']}; CPU time measured (thread "
                f"clock), watts modelled, no meter; not measured: {not_measured}; details in "
                "bench.json \"power\"")


def print_consolidation_table(results: dict, console: Console) -> None:
    """Core consolidation off and on, per governor mode: per process, the
    polling thread's CPU time share (measured) and the model's watts; the
    traffic."""
    from rich import box
    s = results["settings"]
    table = Table(title=f"core consolidation, hybrid topology at {s['rate_pps']:,} pps, "
                        f"{s['offload_percent']}% offloaded; {results['cpu_model']}",
                  box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False)
    for column in ("governor", "consolidation", "process", "CPU", "busy", "pause", "sleep",
                   "sleeps/s", "W"):
        table.add_column(column, justify="left" if column in ("governor", "consolidation",
                                                              "process") else "right",
                         no_wrap=True)
    for governor, r in results["governors"].items():
        for state in ("off", "on"):
            for name, p in r[state]["processes"].items():
                table.add_row(governor, state, name, f"{p['cpu_share']:.0%}",
                              f"{p['busy_share']:.0%}", f"{p['paused_share']:.0%}",
                              f"{p['asleep_share']:.0%}", f"{p['sleeps_per_s']:.0f}",
                              _fmt(p["modelled_watts"], "{:.1f}"))
    console.print(table)
    for governor, r in results["governors"].items():
        for state in ("off", "on"):
            w = r[state]
            console.print(f"  {governor}, {state}: offered {w['offered_pps'] / 1e3:.0f} kpps, "
                          f"delivered {w['delivered_pps'] / 1e3:.0f} kpps, lost "
                          f"{w['replay_lost']}, to the hosts "
                          f"{', '.join(f'{x / 1e3:.0f}' for x in w['to_hosts_pps'])} kpps")
        console.print(f"  {governor}, folded: {r['folded']}")


def write_consolidation_png(path: Path, results: dict, machine: Machine) -> None:
    """Per governor mode and process, CPU time share with consolidation
    off and on."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    governors = list(results["governors"])
    figure, axes = plt.subplots(1, len(governors), figsize=(6 * len(governors), 4.5),
                                squeeze=False)
    width = 0.38
    for axis, governor in zip(axes[0], governors):
        r = results["governors"][governor]
        names = list(r["off"]["processes"])
        for offset, state in ((-width / 2, "off"), (width / 2, "on")):
            shares = [r[state]["processes"][n]["cpu_share"] * 100 for n in names]
            axis.bar([i + offset for i in range(len(names))], shares, width,
                     label=f"consolidation {state} (hosts {r[state]['hosts_cpu_share']:.2f} CPUs)")
        axis.set_xticks(range(len(names)), names)
        axis.set_ylabel("polling thread's CPU time (% of the window)")
        axis.set_ylim(0, 105)
        axis.set_title(f"--governor {governor}", fontsize=9)
        axis.grid(True, axis="y", alpha=0.3)
        axis.legend(fontsize=8)
    s = results["settings"]
    figure.suptitle(f"core consolidation: hybrid topology, {s['rate_pps']:,} pps, "
                    f"{s['offload_percent']}% offloaded\n{machine.cpu_model}", fontsize=9)
    _save(figure, path, f"placement {s['placement']}; CPU time measured (thread clock); "
                        "details in bench.json \"consolidation\"")
