"""C back end: the generated C of every test program is the C the STF
tests build and run, unsupported constructs are clear errors, and compiled
programs forward packets as their P4 says."""
import json
import subprocess
from pathlib import Path

import pytest
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

from t4p4s.diagnostics import CompileError
from t4p4s.driver import compile_program

from backend_util import REPO, STF_PROGRAMS, c_of, gcc_syntax_check, program_text, write_program
from pcap_frames import read_pcap_frames


@pytest.mark.dpdk
@pytest.mark.parametrize("program", STF_PROGRAMS, ids=lambda p: p.stem)
def test_generated_c_is_what_the_stf_tests_run(tmp_path, program, compiled):
    """The C compile_program writes for each test program is, byte for byte
    apart from its own paths, the C of the executable that test_stf_programs
    runs on that program's packets (built by the compile cache): so every
    generated file here is compiled for real and its results compared."""
    result = compile_program(program, tmp_path, build=False)
    c = result.c_path.read_text()
    assert "t4p4s_pipeline_process(struct t4p4s_lcore *lc" in c
    assert "const struct t4p4s_program t4p4s_program" in c
    assert f"/* {program.name}:" in c, "blocks name their P4 source line"
    build = compiled(program)
    built = Path(build.c_path).read_text()
    assert c.replace(str(result.p4info_binary_path), "P4INFO") == \
        built.replace(str(build.p4info_binary_path), "P4INFO")
    assert Path(build.executable_path).stat().st_mtime >= Path(build.c_path).stat().st_mtime


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


WIDE_FIELDS_INGRESS = """
    action set(bit<128> v) { meta.big = v; hdr.w.addr = meta.big; }
    table t { key = { hdr.w.addr : exact; } actions = { set; NoAction; } default_action = NoAction(); }
    apply {
        sm.egress_spec = 1;
        t.apply();
        if (hdr.w.addr == meta.big) { hdr.eth.src = (bit<48>)hdr.w.addr[31:0]; }
    }
"""


def test_wide_fields_copy_compare_and_key_generate_the_wide_helpers(tmp_path):
    path = write_program(tmp_path, WIDE_FIELDS_INGRESS, "wide", headers=("eth", "w"))
    c = c_of(path)
    assert "t4p4s_copy_bits(" in c and "p4_bits_equal(" in c


@pytest.mark.dpdk
def test_wide_fields_copy_compare_and_key(tmp_path, compiled, pcap_runtime):
    """A 128-bit key, action parameter, copy through metadata, comparison
    and slice, on packets: a hit rewrites addr from the entry and, addr now
    equal to meta.big, writes its low 32 bits into eth.src; a miss leaves
    meta.big 0, so only an all-zero addr compares equal."""
    path = write_program(tmp_path, WIDE_FIELDS_INGRESS, "wide", headers=("eth", "w"))
    key = bytes.fromhex("0102030405060708090a0b0c0d0e0f10")
    value = bytes.fromhex("f0e0d0c0b0a0908070605040" "deadbeef")
    eth = bytes.fromhex("0a0000000001" "0a0000000002" "88b6")

    def frame(addr: bytes, src: bytes = eth[6:12]) -> bytes:
        return eth[:6] + src + eth[12:] + addr + b"\x55" + b"payload"

    hit, miss, zero = frame(key), frame(bytes(range(16))), frame(bytes(16))
    run = pcap_runtime(compiled(path), [[hit, miss, zero], []], entries=[
        {"cmd": "table_add", "table": "I.t", "match": {"hdr.w.addr": "0x" + key.hex()},
         "action": "I.set", "params": {"v": "0x" + value.hex()}}])
    run.wait_received()
    outputs = run.stop()
    assert run.exit_status == 0
    assert [o.hex() for o in outputs[1]] == [
        frame(value, src=bytes(2) + value[12:]).hex(), miss.hex(), frame(bytes(16), src=bytes(6)).hex()]


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
def test_compiled_l2_switch_forwards_by_destination(tmp_path):
    """The executable the driver builds (not the test cache's), fed by
    --rx-replay on a net_null port: every frame for a known destination
    leaves its entry's port unchanged, the unknown one is dropped."""
    program = [p for p in STF_PROGRAMS if p.stem == "l2_switch"][0]
    result = compile_program(program, tmp_path / "out")
    to_port_1 = bytes(Ether(dst="00:00:00:00:00:0a", src="00:00:00:00:00:0b") / IP() / Raw(b"one"))
    to_port_2 = bytes(Ether(dst="00:00:00:00:00:0b", src="00:00:00:00:00:0a") / IP() / Raw(b"two"))
    unknown = bytes(Ether(dst="00:00:00:00:00:0c", src="00:00:00:00:00:0a") / IP() / Raw(b"none"))
    replay = tmp_path / "replay.pcap"
    wrpcap(str(replay), [Ether(f) for f in (to_port_1, unknown, to_port_2)])
    entries = tmp_path / "entries.json"
    entries.write_text(json.dumps([
        {"cmd": "table_add", "table": "ingress.dmac", "match": {"hdr.ethernet.dstAddr": dst},
         "action": "ingress.forward", "params": {"port": port}} for dst, port in ((0x0a, 1), (0x0b, 2))]))
    stats, sent = tmp_path / "stats.json", tmp_path / "out1.pcap"
    proc = subprocess.run(
        ["timeout", "20", str(result.executable_path), "--no-huge", "-m", "256",
         "--no-pci", "-l", "0", "--file-prefix", f"backend_{tmp_path.name}",
         "--vdev", "net_null0", "--vdev", f"net_pcap1,tx_pcap={sent}", "--vdev", "net_null2,no-rx=1",
         "--", "--duration", "0.1", "--stats-json", str(stats), "--entries", str(entries),
         "--rx-replay", f"0:{replay}"],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    s = json.loads(stats.read_text())
    rx = s["ports"][0]["rx"]
    frames = read_pcap_frames(sent)
    assert rx > 30 and set(frames) == {to_port_1}
    # the replay repeats the three frames in order: a third of them each
    assert len(frames) in (rx // 3, rx // 3 + 1)
    assert s["ports"][2]["tx"] in (rx // 3, rx // 3 + 1)
    assert s["drops"]["pipeline"] == rx - len(frames) - s["ports"][2]["tx"]


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


_GUARDED_BY_ANOTHER_TABLE = """
        counter(1024, CounterType.packets) hits;
        counter(1024, CounterType.packets) marked;
        action set_index(bit<32> index) { meta.m = index; }
        action mark() { meta.flag = 1; }
        table t { key = { hdr.eth.type : exact; } actions = { set_index; NoAction; }
                  default_action = NoAction(); }
        table other { key = { sm.ingress_port : exact; } actions = { mark; NoAction; }
                      default_action = NoAction(); }
        apply {
            if (sm.ingress_port == 0) {
                hdr.eth.src = 0;
            } else {
                other.apply();
            }
            %s
            if (sm.ingress_port == 0) {
                t.apply();
            }
            hits.count(meta.m);
            if (meta.flag == 1 && meta.m != 7) {
                marked.count(meta.m);
            }
        }
"""


def _guarded_program(tmp_path, extra: str) -> Path:
    """_GUARDED_BY_ANOTHER_TABLE with a metadata field for the flag."""
    path = tmp_path / "guarded.p4"
    text = program_text(_GUARDED_BY_ANOTHER_TABLE % extra)
    struct = "struct M { bit<32> m; bit<128> big; }"
    assert struct in text
    path.write_text(text.replace(struct, "struct M { bit<32> m; bit<128> big; bit<8> flag; }"))
    return path


def _prefetch_stage(c: str) -> str:
    stage = c[c.index("prefetch_cells(struct t4p4s_lcore *lc, const struct packet_state *p)"):]
    return stage[:stage.index("\n}\n")]


def test_no_prefetch_under_a_flag_only_a_table_of_other_packets_sets(tmp_path):
    """nic.p4's host_return_counter: counted when meta.host_built == 1,
    which only host_return_port's action sets, on frames of other ports
    than the N3 frames dl_drb looks up (two ifs on the ingress port, which
    nothing writes); metadata starts at 0."""
    stage = _prefetch_stage(c_of(_guarded_program(tmp_path, "")))
    assert "t4p4s_counter_prefetch(lc, t4p4s_counters[0], (uint32_t)d->index);" in stage
    assert "t4p4s_counters[1]" not in stage


@pytest.mark.parametrize("extra", [
    "meta.flag = (bit<8>)meta.m;",            # the flag written otherwise
    "mark();",                                # the action run outside its table
    "other.apply();",                         # its table on every packet
    "sm.ingress_port = 1;",                   # the port the two ifs test is written
])
def test_prefetch_kept_when_the_flag_may_be_set_on_the_tables_packets(tmp_path, extra):
    stage = _prefetch_stage(c_of(_guarded_program(tmp_path, extra)))
    assert "t4p4s_counter_prefetch(lc, t4p4s_counters[1], (uint32_t)d->index);" in stage


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
