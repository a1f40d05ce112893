"""Helpers for the compiler tests: P4 text for the front-end tests; P4 text
-> bound program / P4Info / C for the back-end tests."""
from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from t4p4s.backend import resources
from t4p4s.backend.c import generate_c
from t4p4s.backend.p4info import build_p4info
from t4p4s.frontend import compile_frontend
from t4p4s.midend import v1model

REPO = Path(__file__).resolve().parents[3]
STF_PROGRAMS = sorted((REPO / "testbench" / "p4" / "t4p4s").glob("*.p4"))
RUNTIME_INCLUDE = REPO / "t4p4s" / "runtime" / "include"

PRELUDE = "#include <core.p4>\n#include <v1model.p4>\n"

# A v1model program for the front-end tests: header h_t with the fields
# given, a stack of two, the declarations given from line 6 (each ending in a
# newline), the ingress control's body given on the line after "control I".
FRONTEND_SKELETON = PRELUDE + """header h_t {{ {fields} }}
struct H {{ h_t h; h_t[2] hs; }}
struct M {{ bit<8> m; }}
{declarations}parser P(packet_in p, out H hdr, inout M meta, inout standard_metadata_t sm) {{
    state start {{ p.extract(hdr.h); transition accept; }}
}}
control V(inout H hdr, inout M meta) {{ apply {{ }} }}
control I(inout H hdr, inout M meta, inout standard_metadata_t sm) {{
{ingress}
}}
control E(inout H hdr, inout M meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout H hdr, inout M meta) {{ apply {{ }} }}
control D(packet_out p, in H hdr) {{ apply {{ p.emit(hdr.h); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def frontend_program(ingress: str, fields: str = "bit<8> a; bit<16> b; bit<12> sn;",
                     declarations: str = "") -> str:
    return FRONTEND_SKELETON.format(fields=fields, declarations=declarations, ingress=ingress)


def functions_program(functions: str, apply: str) -> str:
    """`functions` declared from line 6 (a blank line when there are none),
    `apply` the ingress control's apply block, on line 12 after one line of
    functions; h_t's fields a and b both bit<8>."""
    return frontend_program(f"    apply {{ {apply} }}", fields="bit<8> a; bit<8> b;",
                            declarations=textwrap.dedent(functions).strip("\n") + "\n")


# A v1model program: Ethernet and a wide header, the ingress control's body
# given, the parser extracting and the deparser emitting the headers named.
SKELETON = PRELUDE + """
header eth_t {{ bit<48> dst; bit<48> src; bit<16> type; }}
header wide_t {{ bit<128> addr; bit<8> x; }}
struct H {{ eth_t eth; wide_t w; }}
struct M {{ bit<32> m; bit<128> big; }}
parser P(packet_in p, out H hdr, inout M meta, inout standard_metadata_t sm) {{
    state start {{ {extracts} transition accept; }}
}}
control V(inout H hdr, inout M meta) {{ apply {{ }} }}
control I(inout H hdr, inout M meta, inout standard_metadata_t sm) {{
{ingress}
}}
control E(inout H hdr, inout M meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout H hdr, inout M meta) {{ apply {{ }} }}
control D(packet_out p, in H hdr) {{ apply {{ {emits} }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def program_text(ingress_body: str, headers=("eth",)) -> str:
    return SKELETON.format(ingress=textwrap.dedent(ingress_body),
                           extracts=" ".join(f"p.extract(hdr.{h});" for h in headers),
                           emits=" ".join(f"p.emit(hdr.{h});" for h in headers))


def write_program(tmp_path: Path, ingress_body: str, name: str = "prog",
                  headers=("eth",)) -> Path:
    path = tmp_path / f"{name}.p4"
    path.write_text(program_text(ingress_body, headers))
    return path


def bind(path: Path):
    return v1model.bind(compile_frontend(str(path)))


def p4info_of(path: Path):
    bound = bind(path)
    return build_p4info(resources.collect(bound), path.stem)


def c_of(path: Path) -> str:
    bound = bind(path)
    res = resources.collect(bound)
    return generate_c(bound, res, path.stem, str(path), "/nonexistent.p4info")


def gcc_syntax_check(c_file: Path) -> subprocess.CompletedProcess:
    cflags = subprocess.run(["pkg-config", "--cflags", "libdpdk"], check=True,
                            capture_output=True, text=True).stdout.split()
    return subprocess.run(["gcc", "-fsyntax-only", "-std=gnu11", "-Wall",
                           "-Werror=implicit-function-declaration",
                           "-Wno-unused-function", f"-I{RUNTIME_INCLUDE}",
                           *cflags, str(c_file)],
                          capture_output=True, text=True)
