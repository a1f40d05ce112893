"""Compound assignment (P4-16 1.2.5): desugared by the parser to
``a = a op b``; what the front end makes of it and what it rejects. Packet
behaviour: testbench/p4/t4p4s/compound_assignment.stf."""
import pytest

from t4p4s.diagnostics import CompileError
from t4p4s.frontend import compile_frontend
from t4p4s.ir import nodes as N

from backend_util import functions_program


def compile_apply(tmp_path, apply: str):
    path = tmp_path / "prog.p4"
    path.write_text(functions_program("", apply))
    return compile_frontend(str(path))


@pytest.mark.parametrize("op,binop", [
    ("+=", "+"), ("-=", "-"), ("*=", "*"), ("/=", "/"), ("%=", "%"), ("|+|=", "|+|"),
    ("|-|=", "|-|"), ("<<=", "<<"), (">>=", ">>"), ("&=", "&"), ("|=", "|"), ("^=", "^")])
def test_every_operator_becomes_an_assignment_of_the_binary_operation(tmp_path, op, binop):
    program = compile_apply(tmp_path, f"hdr.h.a {op} 3;")
    ingress = program.find("I")
    (stmt,) = ingress.body.statements
    assert isinstance(stmt, N.AssignStmt) and isinstance(stmt.rhs, N.Binary)
    assert stmt.rhs.op.value == binop
    assert isinstance(stmt.rhs.left, N.Member) and stmt.rhs.left.name == "a"
    assert stmt.rhs.left is not stmt.lhs
    assert isinstance(stmt.rhs.right, N.IntLiteral) and stmt.rhs.right.value == 3
    # the constant takes the target's type, except a shift amount (P4 leaves it untyped)
    assert str(stmt.rhs.right.type) == ("int" if binop in ("<<", ">>") else "bit<8>")


@pytest.mark.parametrize("apply,col,message", [
    ("hdr.h.a += 16w1;", 13, "type mismatch: '+' on bit<8> and bit<16>"),
    ("sm.ingress_port += 1; hdr.h.isValid() += 1;", 35,
     "expression is not assignable (not an l-value: only variables and out/inout parameters "
     "can be written)"),
    ("bit<8> x = 1; x &&= 1;", 29, "syntax error: unexpected '&&', expected '(', '.', ';', "
     "'<', '=', '[', compound assignment"),
])
def test_rejected(tmp_path, apply, col, message):
    path = tmp_path / "prog.p4"
    path.write_text(functions_program("", apply))
    with pytest.raises(CompileError) as info:
        compile_frontend(str(path))
    assert str(info.value) == f"{path}:12:{col}: error: {message}"
