"""Front-end tests: real programs through compile_frontend, the IR checked;
rejected programs checked for exact file:line:col and message."""
import os
import textwrap

import pytest

from t4p4s.diagnostics import CompileError
from t4p4s.frontend import compile_frontend
from t4p4s.ir import nodes as N
from t4p4s.ir import types as T

from backend_util import PRELUDE, frontend_program

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "p4", "frontend")

INGRESS_LINE = 11          # line of the first line given to frontend_program


def compile_text(tmp_path, text, name="prog.p4"):
    path = tmp_path / name
    path.write_text(text)
    return compile_frontend(str(path)), str(path)


def error_of(tmp_path, text, name="prog.p4"):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(CompileError) as info:
        compile_frontend(str(path))
    message = str(info.value)
    assert "Traceback" not in message and "internal compiler error" not in message
    return message


def ingress(code):
    return frontend_program(textwrap.indent(textwrap.dedent(code).strip("\n"), "    "))


def find(decls, name):
    return next(d for d in decls if getattr(d, "name", None) == name)


# ------------------------------------------------------------------ positive

# How fast they compile is measured by `make bench` (frontend_speed), not
# asserted here: a time limit in a test fails on a loaded machine.
@pytest.mark.parametrize("fixture", ["l2_switch.p4", "router.p4"])
def test_fixture_programs_compile(fixture):
    program = compile_frontend(os.path.join(FIXTURES, fixture))
    assert isinstance(program.find("main"), N.Instantiation)


def test_router_ir_is_resolved_typed_and_folded():
    program = compile_frontend(os.path.join(FIXTURES, "router.p4"))
    folded = program.find("FOLDED").value
    assert isinstance(folded, N.IntLiteral) and folded.value == 16 + 0x0301 - 2
    assert folded.type == T.bits(32)
    headers = program.find("headers")
    mpls = find(headers.fields, "mpls")
    assert mpls.type == T.TypeStack(T.TypeHeader(program.find("mpls_t")), 3)
    pdcp = program.find("pdcp_t")
    assert [f.type.width for f in pdcp.fields] == [1, 5, 18]
    assert program.find("Color").values == {"GREEN": 0, "RED": 2}

    ingress_ = program.find("RIngress")
    lpm = find(ingress_.locals, "ipv4_lpm")
    assert lpm.keys[0].name == "hdr.ipv4.dstAddr" and lpm.keys[0].match_kind == "lpm"
    assert lpm.size == 4096
    assert lpm.default_action.action.name == "drop"
    assert isinstance(lpm.properties["counters"].decl, N.Instantiation)
    acl = find(ingress_.locals, "acl")
    assert acl.default_action_is_const and acl.entries_are_const
    assert [e.priority for e in acl.entries] == [None, 7]
    assert isinstance(acl.entries[0].keys[1], N.Range)
    assert acl.entries[0].keys[1].lo.type == T.bits(8)

    stmts = ingress_.body.statements
    read = stmts[1].call
    assert read.kind == N.CallKind.EXTERN_METHOD and read.callee.name == "read"
    assert list(read.type_bindings.values()) == [T.bits(32)]
    write = stmts[2].call
    saturating = write.args[1].value
    assert saturating.op == N.BinOp.ADD_SAT and saturating.right.type == T.bits(32)
    hash_call = stmts[4].call
    assert hash_call.kind == N.CallKind.EXTERN_FUNCTION
    bound = {tv.name: t for tv, t in hash_call.type_bindings.items()}
    assert bound["O"] == T.bits(16) and bound["M"] == T.bits(32)
    assert bound["D"] == T.TypeTuple((T.bits(32), T.bits(32), T.bits(8)))
    sn_plus = stmts[5].rhs
    assert sn_plus.type == T.bits(12)
    assert stmts[6].rhs.value == -3 and stmts[6].rhs.type == T.bits(8, True)
    pdcp_sn = stmts[8].rhs
    assert isinstance(pdcp_sn, N.Slice) and (pdcp_sn.hi, pdcp_sn.lo) == (23, 6)
    assert pdcp_sn.type == T.bits(18)


def test_router_parser_selects_and_stacks():
    program = compile_frontend(os.path.join(FIXTURES, "router.p4"))
    parser = program.find("RParser")
    states = {s.name: s for s in parser.states}
    assert {"start", "accept", "reject", "parse_mpls"} <= set(states)
    select = states["parse_ipv4"].transition
    assert isinstance(select, N.SelectExpr) and len(select.keys) == 2
    first = select.cases[0]
    assert [k.type for k in first.keyset.elements] == [T.bits(8), T.bits(13)]
    assert first.state.decl is states["parse_pdcp"]
    assert isinstance(select.cases[2].keyset.elements[0], N.Mask)
    assert isinstance(select.cases[3].keyset, N.DefaultExpr)
    mpls_next = states["parse_mpls"].statements[0].call.args[0].value
    assert isinstance(mpls_next, N.Member) and mpls_next.name == "next"
    lookahead = states["parse_pdcp"].transition.keys[0]
    assert lookahead.type == T.bits(4) and lookahead.callee.name == "lookahead"


def test_implicit_casts_literals_and_constants(tmp_path):
    program, _ = compile_text(tmp_path, ingress("""
        const bit<8> K = 8w250 + 10;
        apply {
            hdr.h.a = K;
            hdr.h.b = hdr.h.b + 1;
            hdr.h.a = (bit<8>)(hdr.h.b >> 8);
            meta.m = 12w0x0F0[7:4] ++ 4w0xA;
            if (hdr.h.sn == 4095) { hdr.h.sn = hdr.h.sn |-| 12w1; }
        }
    """))
    body = program.find("I").body.statements
    assert isinstance(body[0].rhs, N.IntLiteral) and body[0].rhs.value == 4      # wraps
    assert body[1].rhs.right.type == T.bits(16) and body[1].rhs.right.value == 1
    assert isinstance(body[2].rhs, N.Cast) and body[2].rhs.type == T.bits(8)
    assert body[3].rhs.value == 0xFA and body[3].rhs.type == T.bits(8)
    assert body[4].cond.right.type == T.bits(12)


def test_header_stack_operations_and_switch_fallthrough(tmp_path):
    program, _ = compile_text(tmp_path, ingress("""
        action a() { hdr.hs.push_front(1); hdr.hs[0].setValid(); }
        action b(bit<8> x) { hdr.h.a = x; }
        table t { key = { hdr.h.a : exact; } actions = { a; b; } default_action = b(3); }
        apply {
            hdr.hs.pop_front(1);
            bit<32> n = hdr.hs.size;
            switch (t.apply().action_run) {
                a:
                b: { hdr.h.setInvalid(); }
            }
            if (t.apply().miss) { exit; }
        }
    """))
    ctl = program.find("I")
    t = find(ctl.locals, "t")
    assert t.default_action.args[0].value.type == T.bits(8)
    body = ctl.body.statements
    assert body[0].call.kind == N.CallKind.STACK_POP_FRONT
    assert body[1].init.value == 2
    switch = body[2]
    assert switch.cases[0].body is None
    assert switch.cases[1].label.decl is find(ctl.locals, "b")


def test_type_names_and_generics_disambiguated(tmp_path):
    # `T` is a type parameter only inside its declaration; `a < b > (c)` is
    # a comparison, `lookahead<T>()` a generic call.
    program, _ = compile_text(tmp_path, PRELUDE + textwrap.dedent("""
        extern Box<T> { Box(T init); T get(); }
        typedef bit<8> byte_t;
        const bool CMP = 8w1 < 8w2;
        struct S { byte_t T; }
    """))
    assert program.find("CMP").value.value is True
    assert program.find("S").fields[0].type == T.bits(8)
    assert program.find("Box").methods[0].return_type == program.find("Box").type_params[0]


# ------------------------------------------------------------------ negative

def test_syntax_error_location_and_expected(tmp_path):
    msg = error_of(tmp_path, ingress("apply { hdr.h.a = ; }"))
    assert msg.startswith(f"{tmp_path}/prog.p4:{INGRESS_LINE}:23: error: syntax error: "
                          "unexpected ';', expected ")


def test_undeclared_name(tmp_path):
    msg = error_of(tmp_path, ingress("apply { hdr.h.a = nothere; }"))
    assert msg == f"{tmp_path}/prog.p4:{INGRESS_LINE}:23: error: undeclared name 'nothere'"


def test_type_mismatch_in_assignment(tmp_path):
    msg = error_of(tmp_path, ingress("apply { hdr.h.a = hdr.h.b; }"))
    assert msg == f"{tmp_path}/prog.p4:{INGRESS_LINE}:23: error: cannot assign bit<16> to bit<8>"


def test_several_errors_reported_at_once(tmp_path):
    msg = error_of(tmp_path, ingress("apply { hdr.h.a = hdr.h.b; hdr.h.zz = 1; }"))
    lines = msg.splitlines()
    assert len(lines) == 2 and lines[1].endswith("error: h_t has no field 'zz'")


def test_unsupported_header_union(tmp_path):
    msg = error_of(tmp_path, PRELUDE + "header a_t { bit<8> x; }\nheader_union u_t { a_t a; }\n")
    assert msg == f"{tmp_path}/prog.p4:4:1: error: unsupported: header_union"


def test_unsupported_value_set(tmp_path):
    text = ingress("apply { }").replace("state start {", "value_set<bit<16>>(4) pvs;\n    state start {")
    msg = error_of(tmp_path, text)
    assert msg == f"{tmp_path}/prog.p4:7:5: error: unsupported: value_set 'pvs'"


def test_missing_include(tmp_path):
    msg = error_of(tmp_path, '#include <core.p4>\n#include "nothere.p4"\n')
    assert msg == f"{tmp_path}/prog.p4:2:10: error: nothere.p4: No such file or directory"


def test_wrong_arity(tmp_path):
    msg = error_of(tmp_path, ingress("apply { mark_to_drop(sm, sm); }"))
    assert msg == (f"{tmp_path}/prog.p4:{INGRESS_LINE}:13: error: wrong number of arguments "
                   "to 'mark_to_drop': expected 0 or 1, got 2")


def test_bad_match_kind(tmp_path):
    msg = error_of(tmp_path, ingress("""
        table t { key = { hdr.h.a : fuzzy; } actions = { NoAction; } }
        apply { t.apply(); }
    """))
    assert msg.startswith(f"{tmp_path}/prog.p4:{INGRESS_LINE}:23: error: unknown match kind 'fuzzy'")


def test_default_action_must_be_listed(tmp_path):
    msg = error_of(tmp_path, ingress("""
        action a() { }
        table t { key = { hdr.h.a : exact; } actions = { NoAction; } default_action = a(); }
        apply { t.apply(); }
    """))
    assert "default_action 'a' is not in the actions list of table 't'" in msg


def test_out_argument_must_be_lvalue(tmp_path):
    msg = error_of(tmp_path, ingress("""
        register<bit<8>>(4) r;
        apply { r.read(8w1, 0); }
    """))
    assert msg.endswith("error: expression is not assignable (not an l-value: only variables "
                        "and out/inout parameters can be written)")


def test_select_keyset_arity(tmp_path):
    text = ingress("apply { }").replace("transition accept; }",
                            "transition select(hdr.h.a) { (1, 2): accept; default: reject; } }")
    msg = error_of(tmp_path, text)
    assert msg.endswith("error: keyset has 2 elements but the select has 1 keys")


def test_duplicate_declaration(tmp_path):
    msg = error_of(tmp_path, PRELUDE + "const bit<8> X = 1;\nconst bit<8> X = 2;\n")
    assert msg.startswith(f"{tmp_path}/prog.p4:4:1: error: duplicate declaration of 'X'")


def test_non_constant_where_constant_required(tmp_path):
    msg = error_of(tmp_path, ingress("apply { hdr.h.a = hdr.h.a[hdr.h.a:0]; }"))
    assert "a slice bound must be a compile-time constant integer" in msg


def test_literal_too_wide(tmp_path):
    msg = error_of(tmp_path, ingress("apply { hdr.h.a = 256; }"))
    assert msg.endswith("error: value 256 does not fit in bit<8>")
