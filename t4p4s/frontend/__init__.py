"""The P4-16 front end: ``compile_frontend(p4_path) -> ir.nodes.Program``.

Passes, in order (one module each):

* ``preprocess.py``: system ``cpp`` with ``p4include/``, line markers
  mapped back to real files and lines;
* ``parser.py`` + ``grammar.lark``: LALR parse to IR with source locations
  (type names disambiguated by a postlexer);
* ``typecheck.py`` (+ ``scopes.py``, ``constfold.py``): name resolution,
  type checking and inference, implicit casts, constant folding.

Every rejected program raises :class:`t4p4s.diagnostics.CompileError`;
an unexpected failure inside the front end is reported as an
``internal compiler error`` diagnostic, never as a Python traceback.
"""
from __future__ import annotations

import traceback

from ..diagnostics import CompileError
from ..ir import nodes as N
from .parser import parse
from .preprocess import preprocess
from .typecheck import Checker


def compile_frontend(p4_path: str, include_dirs=()) -> N.Program:
    text, smap = preprocess(str(p4_path), include_dirs)
    try:
        program = parse(text, smap)
        return Checker().run(program)
    except CompileError:
        raise
    except RecursionError:
        raise CompileError.at(N.SrcInfo(str(p4_path), 0, 0),
                              "program nests too deeply for the compiler")
    except Exception as e:  # a front-end bug: report it with the failing spot
        tb = traceback.extract_tb(e.__traceback__)[-1]
        raise CompileError.at(N.SrcInfo(str(p4_path), 0, 0),
                              f"internal compiler error: {type(e).__name__}: {e} "
                              f"(at {tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})")
