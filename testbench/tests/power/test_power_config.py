"""gnbctl's side of the configuration: the topology's [power] table (as
[baas]: an address, an optional name, nothing else), the power source
`status` names, and `power thresholds`'s NAME=VALUE arguments."""
from __future__ import annotations

import pytest

from controller import cli, topology
from controller.errors import TopologyError
from controller.power import power_source

TARGET = '[[targets]]\nname = "h0"\nrole = "host"\naddress = "127.0.0.1:1"\n'


def load(tmp_path, text: str):
    path = tmp_path / "t.toml"
    path.write_text(TARGET + text)
    return topology.load(path)


def test_power_table(tmp_path):
    assert load(tmp_path, "").power is None
    config = load(tmp_path, '[power]\naddress = "unix:/run/p.grpc"\n').power
    assert (config.address, config.name) == ("unix:/run/p.grpc", "power")
    assert load(tmp_path, '[power]\naddress = "127.0.0.1:9"\nname = "gov"\n').power.name == "gov"
    for text, message in (('[power]\nname = "p"\n', "'address'"),
                          ('[power]\naddress = "x"\nport = 1\n', "unknown keys port"),
                          ('[power]\naddress = ""\n', "non-empty"),
                          ('[power]\naddress = "x"\nname = "h0"\n', "also a target's")):
        with pytest.raises(TopologyError, match=message):
            load(tmp_path, text)


def test_power_source_is_the_best_meter_else_the_model():
    assert power_source(["model", "cpu_time"]) == "model"
    assert power_source(["hwmon", "model", "cpu_time"]) == "hwmon"
    assert power_source(["rapl", "acpi_power_meter", "model", "cpu_time"]) == "rapl"


def test_threshold_arguments():
    args = cli._parser().parse_args(["power", "thresholds", "idle_short_us=10",
                                     "trend_limit=0x10", "--lcore", "3"])
    assert (args.values, args.lcore) == ([("idle_short_us", 10), ("trend_limit", 16)], 3)
    for bad in ("idle_short_us", "=5", "x=-1", "x=ten"):
        with pytest.raises(SystemExit):
            cli._parser().parse_args(["power", "thresholds", bad])
