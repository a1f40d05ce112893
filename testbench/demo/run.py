"""`make demo`: compiles t4p4s/examples/l2fwd.p4 into a DPDK executable,
replays scapy-generated traffic through it (net_pcap in and out, single
lcore, no hugepages needed) and shows what came out and what the runtime
counted."""

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.data import DLT_EN10MB
from scapy.utils import PcapWriter, rdpcap

from testbench.bench.compiled import REPO_ROOT, compile_p4
from testbench.bench.dpdk import BenchError, Eal, run_to_exit

REPO_ROOT = Path(__file__).resolve().parents[2]
PROGRAM = REPO_ROOT / "t4p4s" / "examples" / "l2fwd.p4"
N_FRAMES = 1000
N_HOSTS = 16
N_TRUNCATED = 3        # shorter than an Ethernet header: the parser must reject them
RUN_DEADLINE_S = 60


def host_mac(host: int) -> str:
    return f"02:00:00:00:01:{host:02x}"


def write_traffic(path: Path) -> list[bytes]:
    frames = [bytes(Ether(src=host_mac(i % N_HOSTS), dst=host_mac((i + 1) % N_HOSTS))
                    / IP(src=f"10.0.0.{i % N_HOSTS + 1}", dst=f"10.0.1.{(i + 1) % N_HOSTS + 1}")
                    / UDP(sport=10000 + i, dport=2152) / Raw(b"demo" * 8))
              for i in range(N_FRAMES)]
    frames += [bytes.fromhex("0200000001") for _ in range(N_TRUNCATED)]
    path.parent.mkdir(parents=True, exist_ok=True)
    # Raw bytes: re-dissecting a truncated frame with scapy would pad it.
    writer = PcapWriter(str(path), linktype=DLT_EN10MB, sync=False)
    for frame in frames:
        writer.write(frame)
    writer.close()
    return frames


def _stats_tables(stats: dict) -> list[Table]:
    ports = Table(title="ports")
    for column in ("port", "rx", "tx", "rx_dropped", "tx_dropped"):
        ports.add_column(column, justify="right")
    for port in stats.get("ports", []):
        ports.add_row(*(str(port.get(c, "-")) for c in ("port", "rx", "tx", "rx_dropped", "tx_dropped")))
    drops = Table(title="drop and parser-error counters (non-zero)")
    drops.add_column("counter")
    drops.add_column("packets", justify="right")
    counters = [(f"drop: {name}", value) for name, value in stats.get("drops", {}).items()]
    counters += [(f"parser error: {name}", value) for name, value in stats.get("parser_errors", {}).items()]
    for name, value in counters:
        if value:
            drops.add_row(name, str(value))
    if not drops.rows:
        drops.add_row("(all zero)", "0")
    polls = Table(title="poll rounds per rx queue")
    for column in ("lcore", "port", "queue", "polls", "empty polls", "packets"):
        polls.add_column(column, justify="right")
    for lcore in stats.get("lcores", []):
        for queue in lcore.get("queues", []):
            polls.add_row(str(lcore.get("lcore")), *(str(queue.get(c, "-")) for c in
                                                       ("port", "queue", "polls", "empty_polls", "packets")))
    return [ports, drops, polls]


def _traffic_table(sent: list[bytes], outputs: list[Path]) -> Table:
    table = Table(title="first frames in and out (MAC addresses)")
    for column in ("", "port", "src", "dst"):
        table.add_column(column)
    for frame in sent[:3]:
        packet = Ether(frame)
        table.add_row("in", "0", packet.src, packet.dst)
    for port, path in enumerate(outputs):
        for packet in rdpcap(str(path), count=3) if path.stat().st_size > 24 else []:
            table.add_row("out", str(port), packet.src, packet.dst)
    return table


def main() -> int:
    console = Console(width=None if sys.stdout.isatty() else 120)
    work = REPO_ROOT / "build" / "demo"
    try:
        console.print(f"[bold]compiling[/] {PROGRAM.relative_to(REPO_ROOT)}")
        compiled = compile_p4(PROGRAM, work)
        console.print(f"  P4Info: {Path(compiled.p4info_text_path).relative_to(REPO_ROOT)}")
        console.print(f"  C:      {Path(compiled.c_path).relative_to(REPO_ROOT)}")
        console.print(f"  binary: {Path(compiled.executable_path).relative_to(REPO_ROOT)}")

        in_pcap = work / "in.pcap"
        outputs = [work / "port0_out.pcap", work / "port1_out.pcap"]
        sent = write_traffic(in_pcap)
        console.print(f"[bold]traffic[/] {N_FRAMES} UDP frames between {N_HOSTS} hosts "
                      f"+ {N_TRUNCATED} truncated frames -> {in_pcap.relative_to(REPO_ROOT)}")

        stats_path = work / "stats.json"
        vdevs = (f"net_pcap0,rx_pcap={in_pcap},tx_pcap={outputs[0]}", f"net_pcap1,tx_pcap={outputs[1]}")
        command = [str(compiled.executable_path), *Eal(lcores="0", vdevs=vdevs, hugepages=False,
                                                  purpose="demo").args(),
                   "--", "--exit-on-idle", "300", "--governor", "nap", "--stats-json", str(stats_path)]
        console.print(f"[bold]running[/] {' '.join(command)}")
        run_to_exit(command, work / "run.log", RUN_DEADLINE_S)
        stats = json.loads(stats_path.read_text())
    except (BenchError, OSError, ValueError) as e:
        console.print(f"[red]demo failed: {e}[/]")
        return 1

    for table in _stats_tables(stats):
        console.print(table)
    console.print(_traffic_table(sent, outputs))
    received = sum(len(rdpcap(str(p))) for p in outputs if p.stat().st_size > 24)
    console.print(f"[bold]{len(sent)} frames in, {received} frames out[/] "
                  f"(captures: {', '.join(str(p.relative_to(REPO_ROOT)) for p in outputs)})")
    if any(stats.get("parser_errors", {}).get(name) for name in ("PacketTooShort", "HeaderTooShort")):
        console.print("Truncated frames are counted as parser errors; as in v1model, they still go "
                      f"through ingress with standard_metadata.parser_error set, and {PROGRAM.name} "
                      "does not check it.")
    return 0
