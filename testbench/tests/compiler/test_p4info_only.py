"""P4Info without a build (issue 17 item 5): the compiler's P4Info-only
path writes the same bytes as a full compile, the cache serves it from the
directory the release build will use (which then keeps those files), and a
gnbctl command on a topology that names `p4 = ...` compiles that far only,
saying so on stderr once."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from t4p4s import driver
from t4p4s.stf import compile_cache

REPO = compile_cache.REPO_ROOT
P4SRC = REPO / "p4src"
EXAMPLE = compile_cache.PACKAGE_DIR / "examples" / "l2fwd.p4"
P4INFO_FILES = {"binpb", "txtpb"}


def _p4info_files(directory: Path, stem: str) -> dict[str, bytes]:
    return {kind: (directory / f"{stem}.p4info.{kind}").read_bytes() for kind in P4INFO_FILES}


@pytest.mark.parametrize("program", ["nic", "host"])
def test_p4info_only_is_the_full_compiles_p4info_byte_for_byte(program, compiled, tmp_path):
    build = compiled(P4SRC / f"{program}.p4")
    full = _p4info_files(build.p4info_text_path.parent, program)
    only = driver.compile_p4info(P4SRC / f"{program}.p4", tmp_path / "only")
    assert sorted(p.name for p in (tmp_path / "only").iterdir()) == \
        [f"{program}.p4info.binpb", f"{program}.p4info.txtpb"]
    assert _p4info_files(only.p4info_text_path.parent, program) == full
    cached = compile_cache.p4info_cached(P4SRC / f"{program}.p4", tmp_path / "cache")
    assert _p4info_files(cached.p4info_text_path.parent, program) == full
    # no C and no executable: the P4Info, its twin and the marker
    assert sorted(p.name for p in cached.p4info_text_path.parent.iterdir()) == \
        [f"{program}.p4info.binpb", f"{program}.p4info.txtpb", compile_cache.P4INFO_MARKER]


def test_a_later_build_keeps_the_p4info_files_and_their_paths(dpdk_environment, tmp_path):
    notes = []
    first = compile_cache.p4info_cached(EXAMPLE, tmp_path, on_compile=lambda: notes.append(1))
    assert notes == [1]
    before = {p: p.stat() for p in (first.p4info_binary_path, first.p4info_text_path)}
    build = compile_cache.compile_cached(EXAMPLE, tmp_path)
    # the build went into the P4Info's directory and kept its files: a
    # controller holding the path reads the same file throughout
    assert build.p4info_text_path == first.p4info_text_path
    assert build.p4info_binary_path == first.p4info_binary_path
    assert build.executable_path.is_file()
    for path, stat in before.items():
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    # the build's marker answers from now on, without a compile
    again = compile_cache.p4info_cached(EXAMPLE, tmp_path, on_compile=lambda: notes.append(2))
    assert notes == [1]
    assert again.p4info_text_path == build.p4info_text_path


def test_an_interrupted_build_keeps_the_p4info_but_not_its_leftovers(tmp_path):
    p4info = compile_cache.p4info_cached(EXAMPLE, tmp_path)
    entry = p4info.p4info_text_path.parent
    (entry / "l2fwd.c").write_text("half written")
    (entry / "l2fwd").write_text("half linked")
    compile_cache._clear_partial_build(entry)
    assert sorted(p.name for p in entry.iterdir()) == \
        ["l2fwd.p4info.binpb", "l2fwd.p4info.txtpb", compile_cache.P4INFO_MARKER]


# gnbctl with the compile cache at a directory of the test's: the command
# line is gnbctl's own (controller.cli.main), only the cache root differs
_GNBCTL_WITH_CACHE = textwrap.dedent("""
    import sys
    from pathlib import Path
    from t4p4s.stf import compile_cache
    compile_cache.DEFAULT_CACHE_ROOT = Path(sys.argv[1])
    from controller.cli import main
    sys.exit(main(sys.argv[2:]))
""")


def test_a_topology_command_on_a_cold_cache_builds_nothing(tmp_path):
    cache = tmp_path / "cache"
    topology = tmp_path / "topology.toml"
    # nobody listens on these ports: the push stops at "unreachable" (3),
    # after both P4Infos were needed (each is checked against its role first)
    topology.write_text(textwrap.dedent(f"""
        timeout = 0.5
        [[targets]]
        name = "nic0"
        role = "nic"
        address = "127.0.0.1:1"
        p4 = "{P4SRC / 'nic.p4'}"
        [[targets]]
        name = "host0"
        role = "host"
        address = "127.0.0.1:2"
        p4 = "{P4SRC / 'host.p4'}"
    """))

    def gnbctl():
        return subprocess.run(
            [sys.executable, "-c", _GNBCTL_WITH_CACHE, str(cache), "--topology", str(topology),
             "pipeline", "push"],
            capture_output=True, text=True, timeout=120, cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)})

    done = gnbctl()
    assert done.returncode == 3, done.stderr
    notes = [line for line in done.stderr.splitlines() if "for its P4Info" in line]
    assert notes == ["gnbctl: compiling p4src/nic.p4 for its P4Info ...",
                     "gnbctl: compiling p4src/host.p4 for its P4Info ..."], done.stderr
    entries = {p.name.rsplit("-", 1)[0]: sorted(f.name for f in p.iterdir())
               for p in cache.iterdir() if p.is_dir()}
    assert entries == {role: [f"{role}.p4info.binpb", f"{role}.p4info.txtpb",
                              compile_cache.P4INFO_MARKER] for role in ("nic", "host")}
    # the entries are those of the release builds `t4p4s run` would make
    for role in ("nic", "host"):
        key = compile_cache.fingerprint(P4SRC / f"{role}.p4")
        assert (cache / f"{role}-{key}" / compile_cache.P4INFO_MARKER).is_file()

    again = gnbctl()
    assert again.returncode == 3, again.stderr
    assert "for its P4Info" not in again.stderr
