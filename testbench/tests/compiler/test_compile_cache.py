"""The compile cache's fingerprint covers every source the executable is
built from: an edit to any of them must give a new build directory, or the
tests would silently run a stale executable (issue 12: an edit to the
P4Runtime server's .cc files was not tested until the cache was cleared)."""
import shutil
from pathlib import Path

from t4p4s.stf import compile_cache

EXAMPLE = compile_cache.PACKAGE_DIR / "examples" / "l2fwd.p4"


def test_every_runtime_source_is_fingerprinted():
    covered = set(compile_cache._compiler_files())
    runtime = compile_cache.PACKAGE_DIR / "runtime"
    sources = [path for path in runtime.rglob("*")
               if path.is_file() and "__pycache__" not in path.parts]
    assert any(path.suffix == ".cc" for path in sources)
    missing = [str(path.relative_to(runtime)) for path in sources if path not in covered]
    assert missing == []


def test_editing_a_p4runtime_source_changes_the_fingerprint(tmp_path, monkeypatch):
    package = tmp_path / "t4p4s"
    shutil.copytree(compile_cache.PACKAGE_DIR, package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(compile_cache, "PACKAGE_DIR", package)
    program = package / "examples" / "l2fwd.p4"
    before = compile_cache.fingerprint(program)
    for name in ("runtime/p4runtime/service.cc", "runtime/p4runtime/status.h",
                 "runtime/src/ports.c", "runtime/Makefile", "backend/c/controls.py"):
        source = package / name
        original = source.read_bytes()
        source.write_bytes(original + b"\n// edited\n")
        assert compile_cache.fingerprint(program) != before, name
        source.write_bytes(original)
    assert compile_cache.fingerprint(program) == before


def test_a_relative_cache_root_gives_absolute_paths(tmp_path, monkeypatch):
    """The cache's marker keeps the paths it returns: given relative to one
    working directory, a later caller elsewhere (gnbctl reading a topology
    file's P4Info path) would not find them."""
    monkeypatch.chdir(tmp_path)
    first = compile_cache.compile_cached(EXAMPLE, Path("cache"), build=False)
    monkeypatch.chdir(Path("/"))
    again = compile_cache.compile_cached(EXAMPLE, tmp_path / "cache", build=False)
    for build in (first, again):
        assert build.p4info_text_path.is_absolute() and build.p4info_text_path.is_file()
    assert again == first
