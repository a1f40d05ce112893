"""testbench/bench/offered_load.py without DPDK: the no-drop rate search
against simulated trials (the threshold found within the resolution, loss
at every rate, none at any rate, noise above a failure, thresholds sharing
trials, the confirmation), a trial's window counts from two `stats`
replies, a descheduled lcore told from a slow one, and a workload's
command made paced."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from testbench.bench.offered_load import Trial, lcore_was_away, no_drop_rate, window_counts

SATURATED = 10_000_000.0


def simulated(loss_at) -> tuple[callable, list[float]]:
    """A trial function whose loss share at a rate is loss_at(rate), over
    one second of arrivals; and the rates it was asked for."""
    asked = []

    def trial_at(rate: float) -> Trial:
        asked.append(rate)
        arrived = int(rate)
        return Trial(rate_pps=rate, arrived=arrived, lost=math.ceil(loss_at(rate) * arrived))
    return trial_at, asked


def knee(capacity: float):
    """A queue: nothing lost up to its capacity, the excess lost above."""
    return lambda rate: max(0.0, (rate - capacity) / rate)


@pytest.mark.parametrize("capacity", [1_234_567.0, 5_000_000.0, 9_950_000.0, 123_456.0])
def test_finds_the_threshold_within_the_resolution(capacity):
    trial_at, asked = simulated(knee(capacity))
    search = no_drop_rate(trial_at, SATURATED, loss_share=0.0)
    assert search.no_drop_pps <= capacity < search.lowest_failing_pps
    assert search.lowest_failing_pps - search.no_drop_pps <= 0.01 * SATURATED
    assert capacity - search.no_drop_pps <= 0.01 * SATURATED
    assert asked[0] == SATURATED                  # the saturated rate first
    assert len(asked) <= 1 + math.ceil(math.log2(100))
    assert all(r == round(r) for r in asked)      # whole frames per second


def test_the_loss_share_allowed_raises_the_rate():
    """Above the knee the loss grows with the rate: 0.1% allowed is the rate
    where the excess is 0.1% of the arrivals."""
    capacity = 4_000_000.0
    trial_at, _ = simulated(knee(capacity))
    search = no_drop_rate(trial_at, SATURATED, loss_share=0.001, resolution_pps=1000)
    exact = capacity / (1 - 0.001)
    assert search.no_drop_pps <= exact < search.lowest_failing_pps
    assert exact - search.no_drop_pps <= 1000
    assert search.no_drop_pps > capacity


def test_loss_at_every_rate_gives_zero():
    trial_at, asked = simulated(lambda rate: 0.5)
    search = no_drop_rate(trial_at, SATURATED)
    assert search.no_drop_pps == 0
    assert 0 < search.lowest_failing_pps <= 0.01 * SATURATED
    assert all(not t.passes(search.loss_share) for t in search.trials)
    assert len(asked) <= 1 + math.ceil(math.log2(100))


def test_no_loss_at_any_rate_gives_the_saturated_rate_in_one_trial():
    trial_at, asked = simulated(lambda rate: 0.0)
    search = no_drop_rate(trial_at, SATURATED, loss_share=0.0)
    assert search.no_drop_pps == SATURATED
    assert search.lowest_failing_pps is None
    assert asked == [SATURATED]


def test_loss_within_the_share_passes_and_no_arrivals_fail():
    assert Trial(1000, arrived=1000, lost=1).passes(0.001)
    assert not Trial(1000, arrived=1000, lost=2).passes(0.001)
    assert Trial(1000, arrived=1000, lost=0).passes(0.0)
    assert not Trial(1000, arrived=1000, lost=1).passes(0.0)
    assert not Trial(1000, arrived=0, lost=0).passes(0.5)


def test_a_second_share_reuses_the_first_shares_trials():
    """The 0-loss search starts from the 0.1% search's trials: a rate that
    lost more than 0.1% also fails 0, one that lost nothing passes both;
    it runs only the trials that split what remains."""
    zero_capacity, share_capacity = 3_000_000.0, 6_000_000.0

    def loss_at(rate):
        if rate <= zero_capacity:
            return 0.0
        return 0.0005 if rate <= share_capacity else 0.01
    trial_at, asked = simulated(loss_at)
    first = no_drop_rate(trial_at, SATURATED, loss_share=0.001)
    n_first = len(asked)
    second = no_drop_rate(trial_at, SATURATED, loss_share=0.0, earlier=first.trials)
    assert first.no_drop_pps <= share_capacity < first.lowest_failing_pps
    assert second.no_drop_pps <= zero_capacity < second.lowest_failing_pps
    assert second.lowest_failing_pps - second.no_drop_pps <= 0.01 * SATURATED
    assert SATURATED not in asked[n_first:]       # known to fail already
    assert len(second.trials) == len(asked) - n_first
    assert len(set(asked)) == len(asked)          # no rate tried twice


def test_a_pass_above_a_failure_is_noise():
    """A spurious loss (another process took the lcore) at the first
    halving: the search goes on below it; a pass above a failure (here
    given as an earlier trial) does not lift the result over it."""
    def loss_at(rate):
        return 0.01 if rate > 8_000_000 or rate == SATURATED / 2 else 0.0
    trial_at, asked = simulated(loss_at)
    search = no_drop_rate(trial_at, SATURATED, loss_share=0.0, resolution_pps=100_000)
    assert asked[:2] == [SATURATED, SATURATED / 2]
    assert search.lowest_failing_pps == SATURATED / 2
    assert SATURATED / 2 - 100_000 <= search.no_drop_pps < SATURATED / 2

    trial_at, asked = simulated(loss_at)
    earlier = [Trial(7_000_000, arrived=7_000_000, lost=0), Trial(5_000_000, arrived=5_000_000, lost=1),
               Trial(4_950_000, arrived=4_950_000, lost=0)]
    search = no_drop_rate(trial_at, SATURATED, loss_share=0.0, resolution_pps=100_000, earlier=earlier)
    assert asked == []
    assert (search.no_drop_pps, search.lowest_failing_pps) == (4_950_000, 5_000_000)


def test_confirmation_tries_the_result_again():
    """Trials at one rate that pass, then fail (a lucky first trial): the
    search's result stands, its confirmation says it did not pass again."""
    seen = set()

    def loss_at(rate):
        if rate <= 5_000_000 or rate not in seen:
            seen.add(rate)
            return 0.0 if rate <= 7_000_000 else 0.01
        return 0.01
    trial_at, asked = simulated(loss_at)
    search = no_drop_rate(trial_at, SATURATED, loss_share=0.0, confirm=True)
    assert search.confirmation is not None and search.confirmation.rate_pps == search.no_drop_pps
    assert asked[-1] == search.no_drop_pps and search.confirmation not in search.trials
    assert 7_000_000 - 0.01 * SATURATED <= search.no_drop_pps <= 7_000_000
    assert search.confirmed is False
    assert search.as_json()["confirmation"]["passed"] is False

    trial_at, asked = simulated(lambda rate: 0.5)
    search = no_drop_rate(trial_at, SATURATED, confirm=True)
    assert search.no_drop_pps == 0 and search.confirmation is None and search.confirmed is None


def test_bad_arguments():
    trial_at, _ = simulated(lambda rate: 0.0)
    with pytest.raises(ValueError):
        no_drop_rate(trial_at, 0)
    with pytest.raises(ValueError):
        no_drop_rate(trial_at, SATURATED, resolution_pps=0)


def _stats(arrived, overflow, in_ring, radio_tx, baas_tx, pipeline=0, tx_full=0, radio_dropped=0):
    replay = {"rate_pps": 1e6, "pattern": "constant", "ring": 1024, "arrived": arrived,
              "delivered": arrived - overflow - in_ring, "ring_overflow": overflow,
              "in_ring": in_ring, "no_mbuf": 0, "foreign": 0}
    return {"ports": [{"port": 0, "rx": 0, "tx": 0, "rx_dropped": 0, "tx_dropped": 0,
                       "rx_replay": replay},
                      {"port": 1, "rx": 0, "tx": radio_tx, "rx_dropped": 0, "tx_dropped": radio_dropped},
                      {"port": 2, "rx": 0, "tx": baas_tx, "rx_dropped": 0, "tx_dropped": 0}],
            "drops": {"pipeline": pipeline, "bad_port": 0, "tx_full": tx_full}}


def test_window_counts_loss_where_it_happens():
    first = _stats(arrived=1_000, overflow=10, in_ring=5, radio_tx=980, baas_tx=985)
    second = _stats(arrived=101_000, overflow=110, in_ring=37, radio_tx=100_700, baas_tx=100_760,
                    pipeline=50, tx_full=30, radio_dropped=30)
    counts = window_counts(first, second, (1, 2))
    assert counts["arrived"] == 100_000
    assert counts["ring_overflow"] == 100
    assert counts["pipeline_drops"] == {"pipeline": 50}
    assert counts["tx_dropped"] == {"1": 30, "2": 0}
    assert counts["lost"] == 100 + 50 + 30          # tx_full is the ports' tx drops, counted once
    assert counts["delivered"] == {"1": 99_720, "2": 99_775}
    # arrivals - frames newly waiting in the ring - lost - delivered: in flight at the edges
    assert counts["unaccounted"] == {"1": 100_000 - 32 - 180 - 99_720, "2": 100_000 - 32 - 180 - 99_775}


def test_a_descheduled_lcore_is_told_from_a_slow_one():
    """1 Mpps into 1,024 descriptors: the ring covers 1,024 us. A 5 ms
    absence shows in the max only; a lcore too slow keeps the ring full."""
    def trial(p90_us, max_us):
        return Trial(1e6, arrived=10**6, lost=1000,
                     detail={"ring_fill_us": 1024.0,
                             "latency": {"1": {"p90_us": p90_us, "max_us": max_us}, "2": None}})
    assert lcore_was_away(trial(p90_us=0.6, max_us=5000))
    assert not lcore_was_away(trial(p90_us=1000, max_us=1100))      # overloaded
    assert not lcore_was_away(trial(p90_us=0.6, max_us=500))        # within the ring
    assert not lcore_was_away(Trial(1e6, arrived=10, lost=1))


class _Stub:
    """What paced_setup reads of a prepared CompiledWorkload."""

    def __init__(self, vdevs, options, entries=None):
        self.name, self._vdevs, self._options, self._entries = "stub", vdevs, options, entries
        self.compiled = type("Compiled", (), {"executable_path": "/x/prog"})()

    def vdevs(self, settings):
        return self._vdevs

    def options(self, settings):
        return self._options

    def entries(self):
        return self._entries


SETTINGS = type("Settings", (), {"lcore": 1})()


def test_paced_setup_from_an_rx_replay_workload():
    from testbench.bench.offered_load import paced_setup
    from testbench.bench.workloads import GNB_DOWNLINK_REPLAY_VDEVS, rx_replay_options
    stub = _Stub(GNB_DOWNLINK_REPLAY_VDEVS, rx_replay_options(Path("/t/dl.pcap")), Path("/t/drbs.json"))
    setup = paced_setup(stub, SETTINGS, output_ports=(1, 2))
    assert setup.vdevs == ("net_null0,no-rx=1", "net_null1,no-rx=1", "net_null2,no-rx=1")
    assert setup.pcap == Path("/t/dl.pcap")
    assert setup.options == ("--entries", "/t/drbs.json")
    assert setup.output_ports == (1, 2) and setup.lcore == 1


def test_paced_setup_from_a_net_pcap_workload():
    """net_pcap's port 0 becomes a net_null whose name the other ports do
    not use already."""
    from testbench.bench.offered_load import paced_setup
    stub = _Stub(("net_pcap0,rx_pcap=/t/keys.pcap,infinite_rx=1", "net_null0,no-rx=1"), ())
    setup = paced_setup(stub, SETTINGS)
    assert setup.vdevs == ("net_null1,no-rx=1", "net_null0,no-rx=1")
    assert setup.pcap == Path("/t/keys.pcap") and setup.options == ()


def test_a_workload_without_a_pcap_cannot_be_paced():
    from testbench.bench.dpdk import BenchError
    from testbench.bench.offered_load import paced_setup
    with pytest.raises(BenchError, match="nothing to pace"):
        paced_setup(_Stub(("net_null0", "net_null1"), ()), SETTINGS)
