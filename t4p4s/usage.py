"""One-line usage errors for the project's command lines (`t4p4s`,
`gnbctl`): argparse prints its whole usage and exits 2; these parsers
raise UsageError with one line that names the --help to read, and the
exit code the command documents for a bad command line."""
from __future__ import annotations

import argparse


class UsageError(SystemExit):
    """A bad command line, as argparse words it. A SystemExit with the
    parser's exit code, as argparse's own error is one, for callers that
    do not catch it."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(exit_code)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code
    `usage_exit_code` (a subclass sets its own). Subcommand parsers are of
    the same class (add_subparsers makes them of the parent's class)."""
    usage_exit_code = 2     # argparse's own

    def error(self, message: str):
        raise UsageError(f"{self.prog}: error: {message} (see {self.prog} --help)",
                         self.usage_exit_code)
