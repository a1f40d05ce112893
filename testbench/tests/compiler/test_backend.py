"""C back end: generated C compiles for every test program, unsupported
constructs are clear errors, and a compiled program runs on DPDK."""
import json
import subprocess

import pytest

from t4p4s.diagnostics import CompileError
from t4p4s.driver import compile_program

from backend_util import REPO, STF_PROGRAMS, c_of, gcc_syntax_check, write_program


@pytest.mark.parametrize("program", STF_PROGRAMS, ids=lambda p: p.stem)
def test_generated_c_compiles(tmp_path, program):
    result = compile_program(program, tmp_path, build=False)
    check = gcc_syntax_check(result.c_path)
    assert check.returncode == 0, check.stderr[-3000:]
    c = result.c_path.read_text()
    assert "t4p4s_pipeline_process(struct t4p4s_lcore *lc" in c
    assert "const struct t4p4s_program t4p4s_program" in c
    assert f"/* {program.name}:" in c, "blocks name their P4 source line"


def test_sub_control_applied_once_uses_alias_free_arguments_in_place(tmp_path):
    """sub_control_in_place.stf checks the semantics; this checks that the
    copies are gone where they cannot be observed, and kept where they can."""
    program = next(p for p in STF_PROGRAMS if p.stem == "sub_control_in_place")
    c = compile_program(program, tmp_path, build=False).c_path.read_text()
    assert "ingress_in_place_hdr" not in c and "ingress_in_place_meta" not in c
    assert "ingress_overlapping_hdr" in c and "ingress_overlapping_amount" in c


def test_only_tables_keyed_on_the_parsed_headers_are_looked_up_ahead(tmp_path):
    """A sub-control applied twice works on a copy of the headers made at
    its apply: right after parsing that copy holds nothing yet (reading it
    crashed sub_control.stf); tables on the parsed headers stay looked up
    ahead."""
    programs = {p.stem: p for p in STF_PROGRAMS}
    copied = compile_program(programs["sub_control"], tmp_path / "a", build=False)
    assert "_lookahead" not in copied.c_path.read_text()
    in_place = compile_program(programs["table_exact"], tmp_path / "b", build=False)
    assert "_lookahead_key(&s[i]" in in_place.c_path.read_text()


def test_e2e_clones_share_the_original_only_when_they_are_its_bytes(tmp_path):
    """clone_shared.stf and clone.stf check the bytes either way; this
    checks which programs get the shared path: the gNB (egress only asks
    for the clone, computeChecksum's update is skipped by clones) and
    clone_shared, not clone.p4, whose egress writes a header for clones."""
    programs = {p.stem: p for p in STF_PROGRAMS}
    host_p4 = REPO / "p4src" / "host.p4"
    for program, shared in ((host_p4, True), (programs["clone_shared"], True),
                            (programs["clone"], False)):
        c = compile_program(program, tmp_path / program.stem, build=False).c_path.read_text()
        assert ("t4p4s_clone_share(s->m)" in c) == shared, program
        assert "copy_clone_e2e(s, port, truncate);" in c, "the copy path stays for the other cases"
    gnb = (tmp_path / "host" / "host.c").read_text()
    check = gnb[gnb.index("clone_shares_bytes(struct packet_state *s)"):]
    assert "s->meta.encapsulated" in check[:check.index("return true;")]


def test_output_is_deterministic(tmp_path):
    program = STF_PROGRAMS[0]
    a = compile_program(program, tmp_path / "a", build=False).c_path.read_text()
    b = compile_program(program, tmp_path / "b", build=False).c_path.read_text()
    assert a.replace(str(tmp_path / "a"), "") == b.replace(str(tmp_path / "b"), "")


def test_wide_fields_copy_compare_and_key(tmp_path):
    path = write_program(tmp_path, """
        action set(bit<128> v) { meta.big = v; hdr.w.addr = meta.big; }
        table t { key = { hdr.w.addr : exact; } actions = { set; } }
        apply {
            t.apply();
            if (hdr.w.addr == meta.big) { meta.m = hdr.w.addr[31:0]; }
        }
    """)
    c = c_of(path)
    assert "t4p4s_copy_bits(" in c and "p4_bits_equal(" in c
    c_file = tmp_path / "wide.c"
    c_file.write_text(c)
    check = gcc_syntax_check(c_file)
    assert check.returncode == 0, check.stderr[-3000:]


@pytest.mark.parametrize("body, message", [
    ("apply { meta.big = meta.big + 1; }",
     r"unsupported: arithmetic on bit<128>"),
    ("meter(8, MeterType.packets) m;\n apply { }",
     r"unsupported: extern meter"),
    ("apply { resubmit_preserving_field_list(0); }",
     r"unsupported: extern 'resubmit_preserving_field_list'"),
    ("apply { recirculate_preserving_field_list(0); }",
     r"unsupported: extern 'recirculate_preserving_field_list'"),
    ("apply { digest(1, hdr.eth.dst); }", r"unsupported: extern 'digest'"),
])
def test_unsupported_constructs_name_their_location(tmp_path, body, message):
    path = write_program(tmp_path, body)
    with pytest.raises(CompileError, match=r"prog\.p4:\d+:\d+: error: " + message):
        c_of(path)


@pytest.mark.dpdk
def test_compiled_l2_switch_runs_on_net_null(tmp_path):
    program = [p for p in STF_PROGRAMS if p.stem == "l2_switch"][0]
    result = compile_program(program, tmp_path / "out")
    stats = tmp_path / "stats.json"
    proc = subprocess.run(
        ["timeout", "20", str(result.executable_path), "--no-huge", "-m", "256",
         "--no-pci", "-l", "0", "--file-prefix", f"backend_{tmp_path.name}",
         "--vdev", "net_null0", "--vdev", "net_null1",
         "--", "--duration", "2", "--stats-json", str(stats)],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    s = json.loads(stats.read_text())
    rx = sum(p["rx"] for p in s["ports"])
    assert rx > 0
    # net_null frames are all-zero: no dmac entry, so the default drop()
    assert s["drops"]["pipeline"] == rx


def test_prefetch_hints_follow_action_data_to_extern_indices(tmp_path):
    """The burst prefetches the cells an entry's action data will index
    (through metadata and an initialised local), not those of a branch the
    table's packets never take."""
    path = write_program(tmp_path, """
        register<bit<32>>(1024) sn;
        counter(1024, CounterType.packets) hits;
        counter(1024, CounterType.packets) other_branch;
        action set_index(bit<32> index) { meta.m = index; }
        table t { key = { hdr.eth.type : exact; } actions = { set_index; NoAction; }
                  default_action = NoAction(); }
        apply {
            if (hdr.eth.isValid()) {
                t.apply();
                bit<32> i = meta.m;
                bit<32> v;
                sn.read(v, i);
                sn.write(i, v + 1);
                hits.count(meta.m);
            } else {
                other_branch.count(meta.m);
            }
        }
    """)
    c = c_of(path)
    stage = c[c.index("prefetch_cells(struct t4p4s_lcore *lc, const struct packet_state *p)"):]
    stage = stage[:stage.index("\n}\n")]
    assert "t4p4s_register_prefetch(t4p4s_registers[0], (uint32_t)d->index);" in stage
    assert "t4p4s_counter_prefetch(lc, t4p4s_counters[0], (uint32_t)d->index);" in stage
    assert "t4p4s_counters[1]" not in stage
    burst = c[c.index("t4p4s_pipeline_process_burst(struct"):]
    assert "prefetch_cells(lc, &s[i + 8]);" in burst, "packets ahead of the one that runs"
    c_file = tmp_path / "prefetch.c"
    c_file.write_text(c)
    check = gcc_syntax_check(c_file)
    assert check.returncode == 0, check.stderr[-3000:]


def test_no_prefetch_when_the_index_may_change_after_the_table(tmp_path):
    path = write_program(tmp_path, """
        counter(1024, CounterType.packets) hits;
        action set_index(bit<32> index) { meta.m = index; }
        table t { key = { hdr.eth.type : exact; } actions = { set_index; } }
        apply {
            t.apply();
            bit<32> i = meta.m;
            i = i + 1;
            hits.count(i);
        }
    """)
    assert "t4p4s_counter_prefetch" not in c_of(path)
