"""The errors gnbctl reports to its user, each with the exit code the CLI
returns for it (docs/operations.md, "Exit codes", lists them all).

Codes 0-5 are gnbctl's own; the usage and internal-error codes are the
BSD sysexits.h ones, so that a usage error never reads as a bad topology
(argparse's default, 2)."""
from __future__ import annotations

EXIT_USAGE = 64         # EX_USAGE: a bad command line (unknown command, option or value)
EXIT_INTERNAL = 70      # EX_SOFTWARE: gnbctl itself failed (a bug to report)


class GnbctlError(Exception):
    """A failure the user can act on; str() is the whole message."""
    exit_code = 1


class TopologyError(GnbctlError):
    exit_code = 2


class TargetUnreachable(GnbctlError):
    exit_code = 3


class WriteLockBusy(GnbctlError):
    """Another gnbctl command held the topology's write lock for longer
    than the topology's timeout (controller/write_lock.py)."""
    exit_code = 5


class WriteRejected(GnbctlError):
    """The target refused some updates of a Write: `failures` lists one
    (what, gRPC status name, message) per rejected update."""
    exit_code = 4

    def __init__(self, target: str, failures: list[tuple[str, str, str]], total: int):
        self.target = target
        self.failures = failures
        shown = "\n".join(f"  {what}: {code}: {message}"
                          for what, code, message in failures[:20])
        more = f"\n  ... and {len(failures) - 20} more" if len(failures) > 20 else ""
        super().__init__(f"{target}: the target rejected {len(failures)} of {total} "
                         f"updates:\n{shown}{more}")


class PipelineRejected(GnbctlError):
    """A target refused a P4Info (SetForwardingPipelineConfig)."""
    exit_code = 4


class MissingP4Object(GnbctlError):
    def __init__(self, target: str, kind: str, name: str):
        super().__init__(f"{target}: this P4 program has no {kind} {name}")
