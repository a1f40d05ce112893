"""P4-16 functions: what the front end rejects (each at its exact
file:line:col) and what the mid end leaves for the back end (no function,
no call of one). How inlined functions behave on packets is tested by
testbench/p4/t4p4s/functions.stf (test_stf_programs)."""
import pytest

from t4p4s.diagnostics import CompileError
from t4p4s.frontend import compile_frontend
from t4p4s.ir import flow
from t4p4s.ir import nodes as N
from t4p4s.midend import v1model

from backend_util import functions_program

FUNCTIONS_LINE = 6           # first line of the spliced function declarations


def error_of(tmp_path, text: str) -> str:
    path = tmp_path / "prog.p4"
    path.write_text(text)
    with pytest.raises(CompileError) as info:
        v1model.bind(compile_frontend(str(path)))
    message = str(info.value)
    assert "Traceback" not in message and "internal compiler error" not in message
    return message


def at(tmp_path, line: int, col: int, message: str) -> str:
    return f"{tmp_path}/prog.p4:{line}:{col}: error: {message}"


def test_recursion_is_rejected_at_the_call(tmp_path):
    msg = error_of(tmp_path, functions_program("""
        bit<8> f(in bit<8> x) {
            return f(x - 1);
        }
    """, "hdr.h.a = f(hdr.h.a);"))
    assert msg == at(tmp_path, FUNCTIONS_LINE + 1, 12,
                     "recursive call of function 'f': P4 does not allow recursion")


def test_a_path_without_return_is_rejected_at_the_closing_brace(tmp_path):
    msg = error_of(tmp_path, functions_program("""
        bit<8> f(in bit<8> x) {
            if (x == 0) {
                return 1;
            }
        }
    """, "hdr.h.a = f(hdr.h.a);"))
    assert msg == at(tmp_path, FUNCTIONS_LINE + 4, 1,
                     "function 'f' does not return a value on every path (it returns bit<8>)")


def test_returns_on_both_branches_and_after_a_switch_with_default_are_enough(tmp_path):
    path = tmp_path / "prog.p4"
    path.write_text(functions_program("""
        bit<8> f(in bit<8> x) {
            if (x == 0) { return 1; } else { return 2; }
        }
        bit<8> g(in bit<8> x) {
            switch (x) {
                1: { return 10; }
                2:
                default: { return 20; }
            }
        }
    """, "hdr.h.a = f(hdr.h.a) + g(hdr.h.b);"))
    v1model.bind(compile_frontend(str(path)))


def test_out_argument_that_is_not_an_lvalue(tmp_path):
    msg = error_of(tmp_path, functions_program("""
        void g(out bit<8> y) { y = 1; }
    """, "g(hdr.h.a + 1);"))
    assert msg == at(tmp_path, 12, 15, "expression is not assignable (not an l-value: only "
                     "variables and out/inout parameters can be written)")


@pytest.mark.parametrize("functions,apply,line,col,message", [
    ("bit<8> f(in bit<8> x) { x = 1; return x; }", "hdr.h.a = f(1);", 6, 25,
     "expression is not assignable (not an l-value: only variables and out/inout "
     "parameters can be written)"),
    ("void g(inout bit<8> y) { }\nvoid f(in bit<8> x) { g(x); }", "f(1);", 7, 25,
     "expression is not assignable (not an l-value: only variables and out/inout "
     "parameters can be written)"),
    # without a direction a parameter is `in` (as p4c takes it): read-only
    ("bit<8> f(bit<8> x) { x = 1; return x; }", "hdr.h.a = f(1);", 6, 22,
     "expression is not assignable (not an l-value: only variables and out/inout "
     "parameters can be written)"),
    ("void f(in bit<8> x) { return x; }", "f(1);", 6, 30,
     "function 'f' returns void: 'return' takes no value"),
    ("bit<8> f(in bit<8> x) { return; }", "hdr.h.a = f(1);", 6, 25,
     "function 'f' must return a bit<8> value"),
    ("bit<8> f(in bit<8> x) { return 16w1; }", "hdr.h.a = f(1);", 6, 32,
     "cannot return bit<16> from a function returning bit<8>"),
    ("void f(in bit<8> x) { exit; }", "f(1);", 6, 23,
     "'exit' is not allowed in a function ('f')"),
    ("bit<8> f(in bit<8> x) { return x; }", "hdr.h.a = f;", 12, 23,
     "function 'f' used as a value (call it: f(...))"),
    ("void f(in bit<8> x) { }", "hdr.h.a = f(1);", 12, 23,
     "cannot assign void to bit<8>"),
    ("bit<8> f(in bit<8> x) { return x; }", "hdr.h.a = f(1, 2);", 12, 23,
     "wrong number of arguments to function 'f': expected 1, got 2"),
    ("T f<T>(in T x) { return x; }", "hdr.h.a = f(hdr.h.a);", 6, 1,
     "unsupported: generic function 'f'"),
])
def test_rejected_functions(tmp_path, functions, apply, line, col, message):
    assert error_of(tmp_path, functions_program(functions, apply)) == at(tmp_path, line, col, message)


def test_a_call_in_a_table_key_is_rejected_as_unsupported(tmp_path):
    text = functions_program("bit<8> f(in bit<8> x) { return x; }", "t.apply();").replace(
        "    apply { t.apply(); }",
        "    table t { key = { f(hdr.h.a) : exact; } actions = { NoAction; } }\n"
        "    apply { t.apply(); }")
    msg = error_of(tmp_path, text)
    assert msg == at(tmp_path, 12, 23, "unsupported: calling function 'f' here (only in "
                     "statements, conditions and the expressions they contain)")


def test_back_ends_see_no_function_and_no_call_of_one(tmp_path):
    path = tmp_path / "prog.p4"
    path.write_text(functions_program("""
        bit<8> inc(in bit<8> x) { return x + 1; }
        bit<8> twice(inout bit<8> x) { x = inc(x); if (x == 3) { return x; } return inc(x); }
    """, "if (twice(hdr.h.a) == twice(hdr.h.b)) { hdr.h.a = 0; }"))
    bound = v1model.bind(compile_frontend(str(path)))
    assert not any(isinstance(d, N.FunctionDecl) for d in bound.program.declarations)
    calls = [n for n in flow.walk(bound.program)
             if isinstance(n, N.MethodCall) and n.kind == N.CallKind.FUNCTION]
    assert calls == []
    returns = [n for n in flow.walk(bound.ingress.body) if isinstance(n, N.ReturnStmt)]
    assert returns == []
