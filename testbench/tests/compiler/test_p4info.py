"""P4Info: ids (P4Runtime prefixes, stable, @id), names, widths, formats."""
from pathlib import Path

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import text_format

from t4p4s.backend.p4info import write_p4info
from t4p4s.diagnostics import CompileError

from backend_util import REPO, bind, p4info_of, write_program

TABLES = """
    direct_counter(CounterType.packets_and_bytes) hits;
    counter(64, CounterType.packets) per_port;
    register<bit<16>>(128) last_type;
    action forward(bit<9> port) { sm.egress_spec = port; }
    @id(0x0100abcd) action set_big(bit<128> v) { meta.big = v; }
    action drop() { mark_to_drop(sm); }
    table dmac {
        key = { hdr.eth.dst : exact; hdr.eth.type : ternary @name("etype"); }
        actions = { forward; @tableonly set_big; @defaultonly drop; }
        const default_action = drop();
        counters = hits;
        size = 4096;
    }
    table routes {
        key = { meta.m : lpm; }
        actions = { forward; }
    }
    apply {
        dmac.apply();
        routes.apply();
        per_port.count((bit<32>)sm.ingress_port);
        last_type.write(0, hdr.eth.type);
    }
"""


@pytest.fixture(scope="module")
def info(tmp_path_factory):
    return p4info_of(write_program(tmp_path_factory.mktemp("p4info"), TABLES))


def by_name(items, name):
    found = [x for x in items if x.preamble.name == name]
    assert found, f"{name} not in {[x.preamble.name for x in items]}"
    return found[0]


def test_pkg_info_is_v1model(info):
    assert info.pkg_info.arch == "v1model"


def test_ids_carry_the_resource_type_prefix(info):
    prefixes = [(info.tables, 0x02), (info.actions, 0x01), (info.counters, 0x12),
                (info.direct_counters, 0x13), (info.registers, 0x16)]
    for items, prefix in prefixes:
        assert items, "every kind of resource is present"
        for x in items:
            assert x.preamble.id >> 24 == prefix, x.preamble.name
            assert x.preamble.id & 0xFFFFFF != 0


def test_ids_are_unique(info):
    ids = [x.preamble.id for group in (info.tables, info.actions, info.counters,
                                       info.direct_counters, info.registers)
           for x in group]
    assert len(ids) == len(set(ids))


def test_at_id_annotation_is_honoured(info):
    assert by_name(info.actions, "I.set_big").preamble.id == 0x0100abcd


def test_ids_are_stable_from_run_to_run(tmp_path, info):
    again = p4info_of(write_program(tmp_path, TABLES))
    assert again.SerializeToString(deterministic=True) == \
        info.SerializeToString(deterministic=True)


def test_table_names_match_fields_and_action_refs(info):
    dmac = by_name(info.tables, "I.dmac")
    assert dmac.preamble.alias == "dmac"
    assert dmac.size == 4096
    fields = [(f.id, f.name, f.bitwidth, f.match_type) for f in dmac.match_fields]
    assert fields == [(1, "hdr.eth.dst", 48, p4info_pb2.MatchField.EXACT),
                      (2, "etype", 16, p4info_pb2.MatchField.TERNARY)]
    actions = {a.preamble.id: a for a in info.actions}
    scopes = {actions[r.id].preamble.name: r.scope for r in dmac.action_refs}
    assert scopes == {"I.forward": p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
                      "I.set_big": p4info_pb2.ActionRef.TABLE_ONLY,
                      "I.drop": p4info_pb2.ActionRef.DEFAULT_ONLY}
    assert dmac.const_default_action_id == by_name(info.actions, "I.drop").preamble.id
    hits = by_name(info.direct_counters, "I.hits")
    assert list(dmac.direct_resource_ids) == [hits.preamble.id]
    assert hits.direct_table_id == dmac.preamble.id
    assert hits.spec.unit == p4info_pb2.CounterSpec.BOTH


def test_table_without_default_gets_noaction_default_only(info):
    routes = by_name(info.tables, "I.routes")
    assert routes.size == 1024
    assert routes.match_fields[0].match_type == p4info_pb2.MatchField.LPM
    noaction = by_name(info.actions, "NoAction")
    ref = [r for r in routes.action_refs if r.id == noaction.preamble.id]
    assert ref and ref[0].scope == p4info_pb2.ActionRef.DEFAULT_ONLY


def test_action_params_and_extern_sizes(info):
    params = [(p.id, p.name, p.bitwidth) for p in by_name(info.actions, "I.set_big").params]
    assert params == [(1, "v", 128)]
    assert by_name(info.counters, "I.per_port").size == 64
    assert by_name(info.counters, "I.per_port").spec.unit == p4info_pb2.CounterSpec.PACKETS
    reg = by_name(info.registers, "I.last_type")
    assert reg.size == 128
    assert reg.type_spec.bitstring.bit.bitwidth == 16


def test_binary_and_text_round_trip(tmp_path, info):
    binary, text = write_p4info(info, tmp_path, "prog")
    from_binary = p4info_pb2.P4Info.FromString(binary.read_bytes())
    from_text = text_format.Parse(text.read_text(), p4info_pb2.P4Info())
    assert from_binary == info
    assert from_text == info


def test_duplicate_at_id_is_an_error(tmp_path):
    path = write_program(tmp_path, """
        @id(7) action a() { }
        @id(7) action b() { }
        table t { key = { hdr.eth.dst : exact; } actions = { a; b; } }
        apply { t.apply(); }
    """)
    with pytest.raises(CompileError, match=r"prog\.p4:\d+:\d+: error: @id 0x01000007"):
        p4info_of(path)


def test_program_without_main_is_rejected(tmp_path):
    path = tmp_path / "nomain.p4"
    path.write_text((REPO / "testbench/p4/t4p4s/l2_switch.p4").read_text()
                    .split("V1Switch(")[0])
    with pytest.raises(CompileError, match="no 'main' package instantiation"):
        bind(path)
