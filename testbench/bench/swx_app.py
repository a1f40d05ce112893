"""DPDK's own P4 target, the SWX pipeline example app (DPDK's
examples/pipeline), built from Debian packages alone, once per DPDK
version, under BUILD_DIR/VERSION:

- the app's source and its .spec/.cli examples come from `dpdk-doc`
  (/usr/share/dpdk/examples/pipeline) and build against libdpdk-dev with
  the example's own Makefile;
- at run time the app turns a .spec into C (`pipeline codegen`) and
  compiles it with gcc (`pipeline libbuild`); that C includes the SWX
  pipeline's internal headers (rte_swx_pipeline_internal.h,
  rte_swx_pipeline_spec.h), which libdpdk-dev does not install, so they
  come from Debian's source package, fetched by `apt-get source` through an
  apt state of our own (its own deb-src entries and lists under
  BUILD_DIR/VERSION/apt): the system's apt configuration and lists stay as
  they are.

Every piece has the installed libdpdk-dev's exact version: the generated C
reads the library's internal structures directly."""

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from testbench.bench.dpdk import BenchError

LIBRARY_PACKAGE = "libdpdk-dev"
DOC_PACKAGE = "dpdk-doc"
EXAMPLE = Path("/usr/share/dpdk/examples/pipeline")
INTERNAL_HEADER = Path("lib") / "pipeline" / "rte_swx_pipeline_internal.h"
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
APT_TIMEOUT_S = 900
MAKE_TIMEOUT_S = 600


@dataclass(frozen=True)
class SwxApp:
    executable: Path        # the example app (upstream's dpdk-pipeline)
    examples: Path          # its .spec, .cli and .io files
    rte_install_dir: Path   # what `pipeline libbuild` takes for a DPDK source tree (RTE_INSTALL_DIR)


def _tool(command: list[str], what: str, timeout_s: float, cwd: Path | None = None,
          env: dict[str, str] | None = None) -> str:
    """Runs a build or packaging tool; its failure is a BenchError whose
    first line says what failed and why: the tool's first line that looks
    like a cause (apt's "E:", a compiler's "error"), else its last line."""
    try:
        done = subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BenchError(f"{what} failed: {e}") from e
    if done.returncode != 0:
        lines = done.stdout.strip().splitlines() or ["no output"]
        causes = [line for line in lines if re.search(r"^E:|error|failed|cannot", line, re.IGNORECASE)]
        cause = causes[0] if causes else lines[-1]
        raise BenchError(f"{what} failed: {cause.strip()}\n$ {shlex.join(command)}\n"
                         + "\n".join(lines[-15:]))
    return done.stdout


def _installed(package: str, field: str = "Version") -> str | None:
    """A dpkg field of an installed package (None when it is not installed)."""
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f", f"${{Status}}\t${{{field}}}", package],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    status, _, value = done.stdout.partition("\t")
    return value if done.returncode == 0 and status == "install ok installed" else None


def _apt_install(package: str, version: str) -> None:
    if os.geteuid() != 0:
        raise BenchError(f"{package} {version} is not installed and installing it needs root")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    _tool(["apt-get", "update", "-q"], "apt-get update", APT_TIMEOUT_S, env=env)
    _tool(["apt-get", "install", "-y", "-q", "--no-install-recommends", f"{package}={version}"],
          f"apt-get install {package}={version}", APT_TIMEOUT_S, env=env)


def _codename() -> str:
    found = re.search(r"^VERSION_CODENAME=(\w+)", Path("/etc/os-release").read_text(), re.M)
    if found is None:
        raise BenchError("/etc/os-release names no VERSION_CODENAME: not a Debian release")
    return found.group(1)


def _private_apt(directory: Path) -> list[str]:
    """apt-get options for an apt state of our own with the release's
    deb-src entries: the main archive (point releases) and the security
    archive, where Debian's DPDK updates come from."""
    parts = directory / "sources.list.d"
    for sub in (parts, directory / "lists" / "partial", directory / "cache" / "archives" / "partial"):
        sub.mkdir(parents=True, exist_ok=True)
    codename = _codename()
    (parts / "debian-src.sources").write_text("".join(
        f"Types: deb-src\nURIs: {uri}\nSuites: {suite}\nComponents: main\nSigned-By: {DEBIAN_KEYRING}\n\n"
        for uri, suite in (("http://deb.debian.org/debian", codename),
                           ("http://deb.debian.org/debian-security", f"{codename}-security"))))
    return ["-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={parts}",
            "-o", f"Dir::State::Lists={directory / 'lists'}", "-o", f"Dir::Cache={directory / 'cache'}",
            # apt's unprivileged download user may not write into our build tree
            "-o", "APT::Sandbox::User=root"]


def _unpacked(destination: Path) -> Path | None:
    """The source tree `apt-get source` unpacked into DESTINATION, if any."""
    found = sorted(destination.glob(f"*/{INTERNAL_HEADER}"))
    return found[0].parents[len(INTERNAL_HEADER.parts) - 1] if found else None


def _source_tree(package: str, version: str, directory: Path) -> Path:
    """The unpacked (patched) Debian source of PACKAGE=VERSION, fetched
    into DIRECTORY/source the first time."""
    destination = directory / "source"
    if (tree := _unpacked(destination)) is not None:
        return tree
    if shutil.which("dpkg-source") is None:
        raise BenchError("dpkg-source not found (apt package dpkg-dev); it unpacks DPDK's source package")
    apt = _private_apt(directory / "apt")
    # --error-on=any: an archive out of reach fails here, not later as a
    # puzzling "unable to find a source package".
    _tool(["apt-get", *apt, "update", "-q", "--error-on=any"], "apt-get update (deb-src)", APT_TIMEOUT_S)
    # Unpacked beside, then renamed: an interrupted fetch leaves no tree
    # that looks complete.
    partial = directory / "source.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    _tool(["apt-get", *apt, "source", "-q", "--only-source", f"{package}={version}"],
          f"apt-get source {package}={version}", APT_TIMEOUT_S, cwd=partial)
    shutil.rmtree(destination, ignore_errors=True)
    partial.rename(destination)
    if (tree := _unpacked(destination)) is None:
        raise BenchError(f"{package} {version}'s source has no {INTERNAL_HEADER}")
    return tree


def _build_app(app_dir: Path) -> Path:
    executable = app_dir / "build" / "pipeline"
    if not executable.exists():
        shutil.copytree(EXAMPLE, app_dir, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        _tool(["make", "shared"], "building DPDK's pipeline example (make shared)", MAKE_TIMEOUT_S, cwd=app_dir)
    return executable


def _installed_include_dir(header: str) -> Path:
    """The directory of libdpdk-dev's pkg-config include path that holds HEADER."""
    flags = _tool(["pkg-config", "--cflags-only-I", "libdpdk"], "pkg-config libdpdk", 30)
    for flag in flags.split():
        if flag.startswith("-I") and (Path(flag[2:]) / header).exists():
            return Path(flag[2:]).resolve()
    raise BenchError(f"{header} is in none of libdpdk's include directories ({flags.strip()})")


def _replace_symlink(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(target)


def _rte_install_dir(directory: Path, source: Path) -> Path:
    """A tree in the layout `pipeline libbuild` expects of a DPDK source
    checkout, made of the source package's lib/pipeline (for its internal
    headers) and libdpdk-dev's installed headers: libbuild's -I config
    finds rte_config.h there and its -I build every public header."""
    _replace_symlink(directory / "lib" / "pipeline", source / "lib" / "pipeline")
    _replace_symlink(directory / "config", _installed_include_dir("rte_build_config.h"))
    _replace_symlink(directory / "build", _installed_include_dir("rte_swx_pipeline.h"))
    return directory


def prepare_swx_app(build_dir: Path) -> SwxApp:
    version = _installed(LIBRARY_PACKAGE)
    if version is None:
        raise BenchError(f"{LIBRARY_PACKAGE} is not installed (run make setup)")
    # The version names directories that end up in the app's CLI commands
    # and gcc command lines, which split at spaces and mind shell characters.
    directory = build_dir / re.sub(r"[^\w.-]", "_", version)
    if _installed(DOC_PACKAGE) != version or not (EXAMPLE / "main.c").exists():
        _apt_install(DOC_PACKAGE, version)
    source = _source_tree(_installed(LIBRARY_PACKAGE, "source:Package"),
                          _installed(LIBRARY_PACKAGE, "source:Version"), directory)
    app_dir = directory / "app"
    executable = _build_app(app_dir)
    return SwxApp(executable, app_dir / "examples", _rte_install_dir(directory / "rte", source))
