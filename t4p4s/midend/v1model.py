"""Binds a front-end ``Program`` to the v1model architecture.

v1model programs end with ``V1Switch(p(), vr(), ig(), eg(), ck(), dep()) main;``.
``bind`` finds that instantiation, checks each argument is an instance of
a parser/control declaration of the kind the package expects, and names
the blocks and the types H, M and ``standard_metadata_t`` that the back
ends need.  Another architecture would be another module with its own
``bind`` returning its own bound-program type.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..diagnostics import CompileError
from ..ir import nodes as ir
from ..ir import types as T
from .inline_controls import inline_sub_controls
from .inline_functions import inline_functions

PACKAGE_NAME = "V1Switch"

# (package parameter, expected kind of block, what the error message calls it)
_BLOCK_SLOTS = (
    ("parser", ir.ParserDecl, "parser"),
    ("verify_checksum", ir.ControlDecl, "control (verifyChecksum)"),
    ("ingress", ir.ControlDecl, "control (ingress)"),
    ("egress", ir.ControlDecl, "control (egress)"),
    ("compute_checksum", ir.ControlDecl, "control (computeChecksum)"),
    ("deparser", ir.ControlDecl, "control (deparser)"),
)


@dataclass
class V1ModelProgram:
    program: ir.Program
    main: ir.Instantiation
    parser: ir.ParserDecl
    verify_checksum: ir.ControlDecl
    ingress: ir.ControlDecl
    egress: ir.ControlDecl
    compute_checksum: ir.ControlDecl
    deparser: ir.ControlDecl
    headers_type: T.Type
    metadata_type: T.Type
    standard_metadata_type: T.TypeStruct

    @property
    def controls(self) -> list:
        """The five controls in pipeline order."""
        return [self.verify_checksum, self.ingress, self.egress,
                self.compute_checksum, self.deparser]

    @property
    def blocks(self) -> list:
        return [self.parser] + self.controls

    def error_members(self) -> list:
        """All ``error`` members in declaration order (their C codes)."""
        for d in self.program.declarations:
            if isinstance(d, ir.ErrorDecl):
                return list(d.members)
        return ["NoError"]


def bind(program: ir.Program) -> V1ModelProgram:
    """Also inlines functions (see inline_functions) and sub-control
    instances (see inline_controls): the blocks it returns call no function
    and apply no sub-control."""
    inline_functions(program)
    inline_sub_controls(program)
    main = _find_main(program)
    package = _package_decl(main)
    if package is None or package.name != PACKAGE_NAME:
        name = package.name if package is not None else str(main.type)
        raise CompileError.at(
            main.src, f"unsupported: architecture package '{name}': only "
            f"v1model's {PACKAGE_NAME} is supported")
    if len(main.args) != len(_BLOCK_SLOTS):
        raise CompileError.at(
            main.src, f"{PACKAGE_NAME} takes {len(_BLOCK_SLOTS)} blocks, "
            f"got {len(main.args)}")
    blocks = {}
    for arg, (slot, kind, what) in zip(main.args, _BLOCK_SLOTS):
        decl = _block_decl(arg.value)
        if not isinstance(decl, kind):
            raise CompileError.at(
                arg.src if arg.value is None else arg.value.src,
                f"argument '{slot}' of {PACKAGE_NAME} must be an instance "
                f"of a {what}")
        blocks[slot] = decl
    parser = blocks["parser"]
    if len(parser.params) != 4:
        raise CompileError.at(parser.src, "a v1model parser takes (packet_in, "
                              "out H, inout M, inout standard_metadata_t)")
    headers_type = parser.params[1].type
    metadata_type = parser.params[2].type
    std_type = parser.params[3].type
    if not isinstance(headers_type, T.TypeStruct):
        raise CompileError.at(parser.params[1].src,
                              "the v1model headers type H must be a struct")
    if not isinstance(metadata_type, T.TypeStruct):
        raise CompileError.at(parser.params[2].src,
                              "the v1model metadata type M must be a struct")
    if not isinstance(std_type, T.TypeStruct):
        raise CompileError.at(parser.params[3].src,
                              "expected standard_metadata_t")
    _check_unsupported_constructor_params(blocks.values())
    return V1ModelProgram(program=program, main=main,
                          headers_type=headers_type,
                          metadata_type=metadata_type,
                          standard_metadata_type=std_type, **blocks)


def _find_main(program: ir.Program) -> ir.Instantiation:
    for d in program.declarations:
        if isinstance(d, ir.Instantiation) and d.name == "main":
            return d
    src = program.declarations[-1].src if program.declarations else program.src
    raise CompileError.at(
        src, "no 'main' package instantiation: a v1model program must end "
        "with 'V1Switch(...) main;'")


def _package_decl(main: ir.Instantiation) -> Optional[ir.PackageTypeDecl]:
    decl = getattr(main.type, "decl", None)
    return decl if isinstance(decl, ir.PackageTypeDecl) else None


def _block_decl(value) -> Optional[object]:
    """The parser/control declaration an argument of ``main`` instantiates:
    ``MyParser()`` (a constructor call), or the name of an instance declared
    earlier (``MyParser() p; V1Switch(p, ...)``)."""
    if value is None:
        return None
    if isinstance(value, ir.Instantiation):
        return getattr(value.type, "decl", None)
    if isinstance(value, ir.PathExpr):
        if isinstance(value.decl, ir.Instantiation):
            return getattr(value.decl.type, "decl", None)
        if isinstance(value.decl, (ir.ParserDecl, ir.ControlDecl)):
            return value.decl
    if isinstance(value, ir.MethodCall):
        target = value.callee or getattr(value.target, "decl", None)
        if isinstance(target, (ir.ParserDecl, ir.ControlDecl)):
            return target
        if isinstance(target, ir.Instantiation):
            return getattr(target.type, "decl", None)
    decl = getattr(value.type, "decl", None)
    if isinstance(decl, (ir.ParserDecl, ir.ControlDecl)):
        return decl
    return None


def _check_unsupported_constructor_params(blocks) -> None:
    for block in blocks:
        if block.ctor_params:
            raise CompileError.at(
                block.src, f"unsupported: constructor parameters of "
                f"'{block.name}' (each v1model block is instantiated once "
                f"without arguments)")
