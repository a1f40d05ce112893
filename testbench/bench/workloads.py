"""What `make bench` measures. Each workload prepares once (compile, write
traffic and entries) and is then measured once per repeat; the repeats are
interleaved across workloads so that background load on the machine hits
every workload alike."""

from dataclasses import dataclass
from pathlib import Path

from testbench.bench.compiled import REPO_ROOT, compile_p4, measure_compiled
from testbench.bench.gnb_entries import write_drb_entries
from testbench.bench.gnb_traffic import downlink_pcap
from testbench.bench.exact_entries import write_exact_entries
from testbench.bench.sample import Sample
from testbench.bench.swx import measure_swx
from testbench.bench.swx_app import prepare_swx_app
from testbench.bench.testpmd import measure_testpmd
from testbench.bench.traffic import distinct_keys_pcap

N_EXACT_ENTRIES = 65_536
NULL_PORTS = ("net_null0", "net_null1")


@dataclass(frozen=True)
class Settings:
    lcore: int              # the one lcore that forwards, in every workload
    control_lcore: int      # testpmd's main lcore (it only prints statistics)
    duration_s: int         # run time of our executables
    tsc_hz: float
    build_dir: Path


def _pcap_into_null_ports(pcap: Path) -> tuple[str, ...]:
    # Port 0 replays the pcap forever (preloaded into mbufs, so disk reads
    # do not limit the rate; its tx is dropped); port 1 only transmits.
    return (f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null0,no-rx=1")


# net_pcap's infinite_rx holds every frame of its pcap in mbufs of our pool.
PCAP_REPLAY_MBUFS = N_EXACT_ENTRIES + 1024
# testpmd's own rings and per-lcore caches, on top of the replay's
TESTPMD_OWN_MBUFS = 16384


def gnb_downlink_vdevs(pcap: Path) -> tuple[str, ...]:
    """The gNB's ports with net_pcap as the source: N3 (0) replays the pcap
    forever, the radio (1) and buffering-service (2) ports only transmit."""
    return (f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null0,no-rx=1", "net_null1,no-rx=1")


# The gNB steps' source: N3 (0) is a net_null port whose every received
# mbuf the runtime's --rx-replay overwrites with the pcap's next frame
# (t4p4s/runtime/src/rx_replay.c), about 20 cycles a packet where net_pcap's
# infinite_rx takes about 50; radio (1) and buffering service (2) as above.
GNB_DOWNLINK_REPLAY_VDEVS = ("net_null0", "net_null1,no-rx=1", "net_null2,no-rx=1")


def rx_replay_options(pcap: Path) -> tuple[str, ...]:
    return ("--rx-replay", f"0:{pcap}")


class Workload:
    name: str
    description: str
    baseline: str | None = None

    def prepare(self, settings: Settings) -> None:
        """One-time work before the first repeat (compiling, traffic)."""

    def measure(self, settings: Settings, repeat: int) -> Sample:
        raise NotImplementedError


class TestpmdMacswapNull(Workload):
    name = "testpmd_macswap_null"
    description = "dpdk-testpmd --forward-mode=macswap, 2 x net_null (reference)"

    def measure(self, settings: Settings, repeat: int) -> Sample:
        log = settings.build_dir / "logs" / f"{self.name}.{repeat}.log"
        return measure_testpmd(settings.lcore, settings.control_lcore, NULL_PORTS, settings.tsc_hz, log)


EXAMPLES = REPO_ROOT / "t4p4s" / "examples"
GNB_STEPS = REPO_ROOT / "testbench" / "bench" / "p4"


class CompiledWorkload(Workload):
    program: Path
    extra_mbufs = 0         # mbufs a vdev keeps for itself (net_pcap's replay copy)

    def prepare(self, settings: Settings) -> None:
        self.compiled = compile_p4(self.program, settings.build_dir / "programs")

    def vdevs(self, settings: Settings) -> tuple[str, ...]:
        raise NotImplementedError

    def entries(self) -> Path | None:
        return None

    def options(self, settings: Settings) -> tuple[str, ...]:
        return ()

    def measure(self, settings: Settings, repeat: int) -> Sample:
        return measure_compiled(Path(self.compiled.executable_path), settings.lcore,
                                self.vdevs(settings), settings.duration_s, settings.tsc_hz,
                                settings.build_dir / "runs" / f"{self.name}.{repeat}",
                                entries=self.entries(), extra_mbufs=self.extra_mbufs,
                                options=self.options(settings))


class L2fwdNull(CompiledWorkload):
    name = "l2fwd_null"
    description = "t4p4s l2fwd.p4 (MAC swap), 2 x net_null"
    baseline = TestpmdMacswapNull.name
    program = EXAMPLES / "l2fwd.p4"

    def vdevs(self, settings: Settings) -> tuple[str, ...]:
        return NULL_PORTS


class SwxL2fwdMacswpNull(Workload):
    """DPDK's own P4 target as a peer: its SWX pipeline example app running
    the example's l2fwd_macswp.spec (MAC swap, port 0 <-> 1) unchanged."""
    name = "swx_l2fwd_macswp_null"
    description = "DPDK SWX pipeline example, l2fwd_macswp.spec, 2 x net_null"
    baseline = TestpmdMacswapNull.name

    def prepare(self, settings: Settings) -> None:
        self.app = prepare_swx_app(settings.build_dir / "swx")

    def measure(self, settings: Settings, repeat: int) -> Sample:
        return measure_swx(self.app, "l2fwd_macswp.spec", settings.lcore, settings.control_lcore,
                           NULL_PORTS, settings.duration_s, settings.tsc_hz,
                           settings.build_dir / "runs" / f"{self.name}.{repeat}")


class PcapReplayWorkload(CompiledWorkload):
    """A compiled program fed with N_EXACT_ENTRIES distinct frames that
    net_pcap replays from memory into a net_null port."""
    extra_mbufs = PCAP_REPLAY_MBUFS

    def vdevs(self, settings: Settings) -> tuple[str, ...]:
        return _pcap_into_null_ports(distinct_keys_pcap(settings.build_dir / "traffic", N_EXACT_ENTRIES))


class L2fwdPcap(PcapReplayWorkload):
    name = "l2fwd_pcap"
    description = f"t4p4s l2fwd.p4, {N_EXACT_ENTRIES} distinct frames from net_pcap into net_null"
    baseline = TestpmdMacswapNull.name
    program = EXAMPLES / "l2fwd.p4"


class ExactTablePcap(PcapReplayWorkload):
    name = "exact_65536_pcap"
    description = f"t4p4s exact_table.p4, {N_EXACT_ENTRIES} entries, each hit once per pass, net_pcap into net_null"
    baseline = L2fwdPcap.name
    program = EXAMPLES / "exact_table.p4"

    def prepare(self, settings: Settings) -> None:
        super().prepare(settings)
        self.entries_path = write_exact_entries(Path(self.compiled.p4info_binary_path), N_EXACT_ENTRIES,
                                                out_port=1, directory=settings.build_dir / "entries")

    def entries(self) -> Path | None:
        return self.entries_path


class GnbDownlinkStep(CompiledWorkload):
    """One step of the downlink (paper 001 Fig. 7/8): N_EXACT_ENTRIES DRBs'
    128-byte GTP-U frames replayed into the N3 port (0) by --rx-replay; the
    radio port (1) and the buffering-service port (2) are net_null."""
    baseline = "gnb_l2fwd"
    with_drbs = False

    def prepare(self, settings: Settings) -> None:
        super().prepare(settings)
        self.entries_path = (write_drb_entries(N_EXACT_ENTRIES, settings.build_dir / "entries")
                             if self.with_drbs else None)

    def vdevs(self, settings: Settings) -> tuple[str, ...]:
        return GNB_DOWNLINK_REPLAY_VDEVS

    def options(self, settings: Settings) -> tuple[str, ...]:
        return rx_replay_options(downlink_pcap(settings.build_dir / "traffic", N_EXACT_ENTRIES))

    def entries(self) -> Path | None:
        return self.entries_path


class TestpmdMacswapGnbPcap(Workload):
    """What the gNB steps' traffic source costs by itself: testpmd's macswap
    fed by the same net_pcap replay, so a step's rate can be read against
    the most any program can do with that source on one lcore."""
    name = "testpmd_macswap_gnb_pcap"
    description = "dpdk-testpmd --forward-mode=macswap, the gNB downlink pcap replay into net_null"
    baseline = TestpmdMacswapNull.name

    def measure(self, settings: Settings, repeat: int) -> Sample:
        log = settings.build_dir / "logs" / f"{self.name}.{repeat}.log"
        pcap = downlink_pcap(settings.build_dir / "traffic", N_EXACT_ENTRIES)
        return measure_testpmd(settings.lcore, settings.control_lcore,
                               gnb_downlink_vdevs(pcap)[:2], settings.tsc_hz, log,
                               total_mbufs=PCAP_REPLAY_MBUFS + TESTPMD_OWN_MBUFS)


class GnbL2fwd(GnbDownlinkStep):
    name = "gnb_l2fwd"
    description = "step 1: l2fwd.p4 (MAC swap) on the gNB downlink frames"
    baseline = TestpmdMacswapNull.name
    program = EXAMPLES / "l2fwd.p4"


class GnbDecap(GnbDownlinkStep):
    name = "gnb_gtp_decap"
    description = "step 2: + GTP-U checks and decapsulation"
    program = GNB_STEPS / "gnb_step_decap.p4"


class GnbRadioHeaders(GnbDownlinkStep):
    name = "gnb_radio_headers"
    description = "step 3: + SDAP/PDCP/RLC AM headers, per-DRB SN registers"
    program = GNB_STEPS / "gnb_step_radio_headers.p4"


class GnbDrbTable(GnbDownlinkStep):
    name = "gnb_drb_table"
    description = f"step 4: + the DRB table, {N_EXACT_ENTRIES} entries"
    program = GNB_STEPS / "gnb_step_drb_table.p4"
    with_drbs = True


class GnbFullDownlink(GnbDownlinkStep):
    name = "gnb_host_p4"
    description = "step 5: + clone to the buffering service: p4src/host.p4 (radio + BaaS frames)"
    program = REPO_ROOT / "p4src" / "host.p4"
    with_drbs = True


class GnbFullDownlinkNetPcap(GnbFullDownlink):
    """Step 5 with net_pcap as its source, as every step had before
    --rx-replay existed: what that source costs the whole pipeline."""
    name = "gnb_host_p4_net_pcap"
    description = "step 5 with net_pcap's infinite_rx as the N3 source instead of --rx-replay"
    baseline = GnbFullDownlink.name
    extra_mbufs = PCAP_REPLAY_MBUFS

    def vdevs(self, settings: Settings) -> tuple[str, ...]:
        return gnb_downlink_vdevs(downlink_pcap(settings.build_dir / "traffic", N_EXACT_ENTRIES))

    def options(self, settings: Settings) -> tuple[str, ...]:
        return ()


class GnbNicNothingOffloaded(GnbFullDownlink):
    """p4src/nic.p4 with nothing offloaded (its offload and VF tables
    empty, no VF ports) on step 5's source and DRBs: what the NIC build's
    offload manager costs the downlink by itself, against host.p4 in the
    same run (issue 16: within 10%)."""
    name = "gnb_nic_p4"
    description = "p4src/nic.p4 at 0% offload (no VF ports), step 5's source and DRBs"
    baseline = GnbFullDownlink.name
    program = REPO_ROOT / "p4src" / "nic.p4"


GNB_STEPS_WORKLOADS = (TestpmdMacswapGnbPcap, GnbL2fwd, GnbDecap, GnbRadioHeaders, GnbDrbTable, GnbFullDownlink,
                       GnbFullDownlinkNetPcap, GnbNicNothingOffloaded)
ALL_WORKLOADS = (TestpmdMacswapNull, L2fwdNull, SwxL2fwdMacswpNull, L2fwdPcap, ExactTablePcap, *GNB_STEPS_WORKLOADS)

# Peers considered for the comparison and why they are not measured
# (recorded in bench.json so that a reader sees the omission).
PEERS_NOT_MEASURED: dict[str, str] = {}
