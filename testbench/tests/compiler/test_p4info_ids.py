"""P4Info ids are p4c's (issue 18 item 7): one P4Info drives our targets and
any p4c-built one.

The expected values come from p4c itself: the P4Info files its test suite
ships (p4test --p4runtime-files, p4c v1.2.4.8), vendored with their programs
in testbench/p4/p4c_samples/.
"""
from pathlib import Path

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import text_format

from t4p4s.backend import p4info_ids
from t4p4s.backend.p4info_ids import (PREFIX_ACTION, PREFIX_COUNTER,
                                      PREFIX_DIRECT_COUNTER, PREFIX_REGISTER,
                                      PREFIX_TABLE, IdError, assign_ids,
                                      hashed_id, name_hash)
from t4p4s.diagnostics import CompileError
from t4p4s.driver import compile_p4info

from backend_util import REPO, p4info_of, write_program

SAMPLES = REPO / "testbench" / "p4" / "p4c_samples"
KINDS = {"tables": PREFIX_TABLE, "actions": PREFIX_ACTION,
         "counters": PREFIX_COUNTER, "direct_counters": PREFIX_DIRECT_COUNTER,
         "registers": PREFIX_REGISTER}

# What p4c's P4Info has and ours lacks: actions called directly from a
# control's apply block (never from a table) get a P4Info entry from p4c,
# not from us.  A known gap in the object set, not in the ids.
P4C_ONLY = {"control-hs-index-test5": {("actions", "ingress.add")}}


# (prefix, name, id) as p4c's expected outputs give them, one per kind.
P4C_IDS = [
    (PREFIX_ACTION, "NoAction", 21257015),
    (PREFIX_ACTION, "ingress._drop", 19344232),
    (PREFIX_ACTION, "my_drop", 32609675),
    (PREFIX_TABLE, "ingress.ecmp_group", 38446407),
    (PREFIX_TABLE, "egress.send_frame", 49367184),
    (PREFIX_COUNTER, "ingress.stats", 304134966),
    (PREFIX_DIRECT_COUNTER, "ingress.ipv4_da_lpm_stats", 323801931),
    (PREFIX_REGISTER, "ingress.flowlet_id", 384519412),
    (PREFIX_REGISTER, "ingress.registerRound", 373634406),
]


@pytest.mark.parametrize("prefix,name,expected", P4C_IDS,
                         ids=[n for _, n, _ in P4C_IDS])
def test_hashed_id_is_p4cs(prefix, name, expected):
    assert hashed_id(prefix, name) == expected


def test_hash_is_jenkins_one_at_a_time():
    # Published values of Bob Jenkins' one-at-a-time hash.
    assert p4info_ids.jenkins_one_at_a_time(b"a") == 0xca2e9442
    assert p4info_ids.jenkins_one_at_a_time(
        b"The quick brown fox jumps over the lazy dog") == 0x519e91f5
    assert p4info_ids.jenkins_one_at_a_time(b"") == 0


def _objects(info) -> dict:
    """(kind, name) -> the ids the object carries, its own and those it
    refers to, and its alias."""
    found = {}
    for kind in KINDS:
        for o in getattr(info, kind):
            refs = ()
            if kind == "tables":
                refs = (sorted(a.id for a in o.action_refs),
                        list(o.direct_resource_ids), o.const_default_action_id)
            elif kind == "direct_counters":
                refs = (o.direct_table_id,)
            found[(kind, o.preamble.name)] = (o.preamble.id, o.preamble.alias,
                                              refs)
    return found


def _expected(program: Path):
    text = program.with_name(program.name + ".p4info.txtpb").read_text()
    return text_format.Parse(text, p4info_pb2.P4Info(), allow_unknown_field=True)


@pytest.mark.parametrize("program", sorted(SAMPLES.glob("*.p4")),
                         ids=lambda p: p.stem)
def test_p4c_sample_has_p4cs_ids(program, tmp_path):
    ours = _objects(p4info_of(_copy(program, tmp_path)))
    theirs = _objects(_expected(program))
    assert ours, "the sample has control-plane objects"
    assert set(theirs) - set(ours) == P4C_ONLY.get(program.stem, set())
    assert set(ours) <= set(theirs)
    for key in ours:
        assert ours[key] == theirs[key], key


def _copy(program: Path, tmp_path: Path) -> Path:
    """The sample under its own name in tmp_path (p4info_of needs nothing
    else, and no output lands in the repo)."""
    copy = tmp_path / program.name
    copy.write_text(program.read_text())
    return copy


# Two names whose hashes agree in the low 24 bits (found by search).
FIRST, SECOND = "a3661", "a601"       # strcmp order: "I.a3661" < "I.a601"
COLLIDING = f"""
    action {SECOND}() {{ }}
    action {FIRST}() {{ }}
    table t {{ key = {{ hdr.eth.dst : exact; }} actions = {{ {SECOND}; {FIRST}; }} }}
    apply {{ t.apply(); }}
"""


def test_the_colliding_names_collide():
    assert name_hash(f"I.{FIRST}") & 0xFFFFFF == name_hash(f"I.{SECOND}") & 0xFFFFFF
    assert name_hash(f"I.{FIRST}") != name_hash(f"I.{SECOND}")


def _action_ids(info) -> dict:
    return {a.preamble.name: a.preamble.id for a in info.actions}


def test_collision_probes_in_name_order(tmp_path):
    """The name first in byte order keeps its hash, the other takes the next
    free id, whatever the declaration order."""
    ids = _action_ids(p4info_of(write_program(tmp_path, COLLIDING)))
    base = hashed_id(PREFIX_ACTION, f"I.{FIRST}")
    assert ids[f"I.{FIRST}"] == base
    assert ids[f"I.{SECOND}"] == base + 1


def test_at_id_wins_and_pushes_hashed_names_on(tmp_path):
    """An @id taking a name's hashed id keeps it; the name probes past it."""
    base = hashed_id(PREFIX_ACTION, f"I.{FIRST}")
    body = COLLIDING.replace(f"action {SECOND}()", f"@id({base & 0xFFFFFF:#x}) "
                             f"action {SECOND}()")
    ids = _action_ids(p4info_of(write_program(tmp_path, body)))
    assert ids[f"I.{SECOND}"] == base          # prefix added to a bare @id
    assert ids[f"I.{FIRST}"] == base + 1


def test_at_id_on_table_wins(tmp_path):
    body = COLLIDING.replace("table t", "@id(0x02000042) table t")
    info = p4info_of(write_program(tmp_path, body))
    assert [t.preamble.id for t in info.tables] == [0x02000042]


def test_at_id_of_another_kind_is_an_error(tmp_path):
    body = COLLIDING.replace("table t", "@id(0x01000042) table t")
    with pytest.raises(CompileError, match=r"prog\.p4:\d+:\d+: error: @id "
                       r"0x01000042 of 'I\.t' has the wrong resource prefix"):
        p4info_of(write_program(tmp_path, body))


def test_assign_ids_probe_wraps_the_low_24_bits():
    """p4c increments the 32-bit hash and masks: past 0xFFFFFF comes 0."""
    name = "x"
    taken = name_hash(name) & 0xFFFFFF
    explicit = {f"y{i}": (taken + i) & 0xFFFFFF for i in range(3)}
    ids = assign_ids(PREFIX_TABLE, [name, *explicit], explicit)
    assert ids[name] == PREFIX_TABLE << 24 | (taken + 3) & 0xFFFFFF
    with pytest.raises(IdError, match="already used"):
        assign_ids(PREFIX_TABLE, ["p", "q"], {"p": 5, "q": 0x02000005})


@pytest.mark.parametrize("top", ["host", "nic"])
def test_gnb_programs_have_p4cs_ids(top, tmp_path):
    """host.p4 and nic.p4 carry no @id: every id is the hashed name's, as
    p4c would give it, and no two collide."""
    result = compile_p4info(REPO / "p4src" / f"{top}.p4", tmp_path)
    info = p4info_pb2.P4Info.FromString(result.p4info_binary_path.read_bytes())
    assert "@id" not in "".join(p.read_text() for p in (REPO / "p4src").rglob("*.p4"))
    seen = []
    for kind, prefix in KINDS.items():
        for o in getattr(info, kind):
            assert o.preamble.id == hashed_id(prefix, o.preamble.name), o.preamble.name
            seen.append(o.preamble.id)
    assert len(seen) == len(set(seen)) > 10
    names = {o.preamble.name for o in info.tables}
    assert {"dl_drb", "ul_bearer"} <= names
