"""Compiler fuzzing (issue 12, part 5): mutated versions of the project's
own P4 programs (a token deleted, two swapped, one repeated, one replaced by
another of the file, the file cut short) must each be compiled to C and
P4Info or rejected with `file:line:col: error: ...`; never a Python
exception of another kind, never an internal compiler error. Seeded, so a
failure names a mutant that can be replayed; the mutant's text is kept."""
from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from t4p4s import driver
from t4p4s.diagnostics import CompileError

REPO = Path(__file__).resolve().parents[3]
# p4src's gNB (mutating the shared blocks, compiling both builds) and every
# program the STF tests and examples compile
PROGRAMS = sorted((REPO / "testbench" / "p4" / "t4p4s").glob("*.p4")) \
    + sorted((REPO / "t4p4s" / "examples").glob("*.p4"))
GNB_FILES = sorted((REPO / "p4src").rglob("*.p4"))
MUTANTS_PER_GNB_FILE = 40
MUTANTS_PER_PROGRAM = 12
TOKEN = re.compile(r"0[xXbBoOdD][0-9a-fA-F_]+|\d+[ws]\d+|\d+|[A-Za-z_]\w*|&&&|\.\.|<<|>>|"
                   r"==|!=|<=|>=|&&|\|\||\+\+|\|\+\||\|-\||\S")
LOCATED = re.compile(r"^.+:\d+:\d+: error: .+$")


def mutate(text: str, rng: random.Random) -> str:
    tokens = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
    if len(tokens) < 2:
        return text
    i = rng.randrange(len(tokens) - 1)
    (s, e), (s2, e2) = tokens[i], tokens[i + 1]
    kind = rng.choice(("delete", "swap", "repeat", "replace", "truncate"))
    if kind == "delete":
        return text[:s] + text[e:]
    if kind == "swap":
        return text[:s] + text[s2:e2] + text[e:s2] + text[s:e] + text[e2:]
    if kind == "repeat":
        return text[:e] + " " + text[s:e] + text[e:]
    if kind == "replace":
        rs, re_ = rng.choice(tokens)
        return text[:s] + text[rs:re_] + text[e:]
    return text[:s]


def check_compiles_or_rejects(p4_path: Path, out_dir: Path, mutant_text: str):
    try:
        driver.compile_program(p4_path, out_dir, build=False)
    except CompileError as error:
        lines = str(error).splitlines()
        assert lines and all(LOCATED.match(line) for line in lines), \
            f"rejected without file:line:col:\n{error}\n--- mutant ---\n{mutant_text}"
        assert "internal compiler error" not in str(error), f"{error}\n--- mutant ---\n{mutant_text}"
    except RecursionError:
        pytest.fail(f"RecursionError\n--- mutant ---\n{mutant_text}")
    except Exception as error:       # noqa: BLE001: any other exception is the bug
        pytest.fail(f"{type(error).__name__}: {error}\n--- mutant ---\n{mutant_text}")


@pytest.mark.parametrize("gnb_file", GNB_FILES, ids=lambda p: str(p.relative_to(REPO / "p4src")))
def test_mutated_gnb_pipeline(gnb_file, tmp_path):
    """One file of p4src/ mutated at a time; host.p4 and nic.p4 compiled."""
    tree = tmp_path / "p4src"
    shutil.copytree(REPO / "p4src", tree)
    target = tree / gnb_file.relative_to(REPO / "p4src")
    original = target.read_text()
    rng = random.Random(f"gnb:{gnb_file.name}")
    for n in range(MUTANTS_PER_GNB_FILE):
        text = mutate(original, rng)
        target.write_text(text)
        for top in ("host.p4", "nic.p4"):
            check_compiles_or_rejects(tree / top, tmp_path / f"out{n}", text)
    target.write_text(original)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_mutated_programs(program, tmp_path):
    original = program.read_text()
    rng = random.Random(f"program:{program.name}")
    mutant_path = tmp_path / program.name
    for n in range(MUTANTS_PER_PROGRAM):
        text = mutate(original, rng)
        mutant_path.write_text(text)
        check_compiles_or_rejects(mutant_path, tmp_path / f"out{n}", text)
