"""The `t4p4s` command line: compile, stf, run, p4info, check.

Every failure the user can cause (a bad program, a failing STF test, a
missing file, a bad option) ends in a message on stderr and a non-zero
exit, never in a Python traceback. Exit codes: 0 done, 1 failed (the
program was rejected, an STF test failed, a file could not be read or
written), 2 a bad command line, 70 an internal error (a bug to report;
T4P4S_TRACEBACK=1 shows where). `t4p4s run` replaces itself with the
compiled executable, whose exit code is the target's own.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from t4p4s.stf.compile_cache import DEFAULT_CACHE_ROOT, compile_cached, p4info_cached
from t4p4s.usage import OneLineParser, UsageError

EXIT_FAILURE = 1
EXIT_INTERNAL = 70      # sysexits.h EX_SOFTWARE, as gnbctl's
TRACEBACK_ENV = "T4P4S_TRACEBACK"


def _compile(args) -> int:
    from t4p4s import driver
    if args.p4info_only:
        result = driver.compile_p4info(args.program, args.output,
                                       include_dirs=args.include or None)
        print(f"P4Info (binary): {result.p4info_binary_path}")
        print(f"P4Info (text):   {result.p4info_text_path}")
        return 0
    result = driver.compile_program(args.program, args.output,
                                    include_dirs=args.include or None, build=not args.no_build)
    print(f"P4Info (binary): {result.p4info_binary_path}")
    print(f"P4Info (text):   {result.p4info_text_path}")
    print(f"C source:        {result.c_path}")
    if not args.no_build:
        print(f"executable:      {result.executable_path}")
    return 0


def _stf(args) -> int:
    from t4p4s.stf.runner import run_stf_file
    outcome = run_stf_file(args.program, args.test, cache_root=args.output,
                           include_dirs=args.include, verbose=args.verbose, keep=args.keep,
                           ports=args.ports)
    if outcome.passed:
        print(f"PASS {args.test}")
        return 0
    print(f"FAIL {args.test}", file=sys.stderr)
    for failure in outcome.failures:
        print(failure, file=sys.stderr)
    return EXIT_FAILURE


def _run(args) -> int:
    build = compile_cached(args.program, args.output, args.include)
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    executable = str(build.executable_path)
    sys.stdout.flush()
    os.execv(executable, [executable, *options])


def _p4info(args) -> int:
    # the release build's P4Info if it is cached, else the front end only
    p4info = p4info_cached(args.program, args.output, args.include)
    sys.stdout.write(Path(p4info.p4info_text_path).read_text())
    return 0


def _check(args) -> int:
    import json

    from t4p4s.targets import check_program
    report = check_program(args.target, args.program, args.include)
    for diagnostic in report.diagnostics:
        print(diagnostic, file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        from rich.console import Console
        report.render(Console())
    return 0 if report.ok else EXIT_FAILURE


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="t4p4s", description="P4-16 (v1model) compiler to DPDK executables, and its test tools.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name, handler, help_text):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("program", metavar="PROGRAM.p4")
        sub.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                         help="add DIR to the #include search path (repeatable)")
        sub.set_defaults(handler=handler)
        return sub

    sub = add("compile", _compile, "compile a program: P4Info, C, and the DPDK executable")
    sub.add_argument("-o", dest="output", required=True, metavar="DIR", help="output directory")
    what = sub.add_mutually_exclusive_group()
    what.add_argument("--no-build", action="store_true", help="write P4Info and C only")
    what.add_argument("--p4info-only", action="store_true",
                     help="write the P4Info only (front end, no C, no build: under a second)")

    sub = add("stf", _stf, "run an STF test against the compiled program")
    sub.add_argument("test", metavar="TEST.stf")
    sub.add_argument("-o", dest="output", default=DEFAULT_CACHE_ROOT, metavar="DIR",
                     help=f"build cache directory (default {DEFAULT_CACHE_ROOT})")
    sub.add_argument("-v", dest="verbose", action="store_true",
                     help="print every command and packet as it runs")
    sub.add_argument("--keep", action="store_true",
                     help="keep the run directory (runtime log, captured pcaps)")
    sub.add_argument("--ports", choices=("ring", "veth"), default="ring",
                     help="ring (default): in-process ports fed over the control socket, "
                          "any frame length; veth: veth pairs, the kernel path (frames "
                          "under 14 bytes padded)")

    sub = add("run", _run, "compile if needed, then run the executable with the given options")
    sub.add_argument("-o", dest="output", default=DEFAULT_CACHE_ROOT, metavar="DIR",
                     help=f"build cache directory (default {DEFAULT_CACHE_ROOT})")
    sub.add_argument("options", nargs=argparse.REMAINDER,
                     help="-- then EAL options, -- and application options")

    sub = add("p4info", _p4info, "print the program's P4Info (text format)")
    sub.add_argument("-o", dest="output", default=DEFAULT_CACHE_ROOT, metavar="DIR",
                     help=f"build cache directory (default {DEFAULT_CACHE_ROOT})")

    from t4p4s.targets import TARGET_NAMES
    sub = add("check", _check, "check a program against a hardware target's limits and "
              "estimate its memory use there")
    sub.add_argument("--target", required=True, choices=TARGET_NAMES,
                     help="the target profile (netronome: Agilio CX, docs/netronome.md)")
    sub.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def main(argv=None) -> int:
    try:
        args = _parser().parse_args(argv)
    except UsageError as error:
        print(error, file=sys.stderr)
        return error.exit_code
    from t4p4s.stf.parser import StfError
    try:
        from t4p4s.diagnostics import CompileError
    except ImportError as missing:
        print(f"t4p4s: the compiler is not installed completely: {missing}", file=sys.stderr)
        return EXIT_FAILURE
    try:
        return args.handler(args)
    except CompileError as error:
        print(str(error), file=sys.stderr)
    except StfError as error:
        print(f"t4p4s: {error}", file=sys.stderr)
    except OSError as error:
        # a missing program (compile_cache's own words), or a file or an
        # output or cache directory the system refused (PermissionError,
        # FileExistsError for a file where a directory goes, ...)
        said = f"{error.filename}: {error.strerror}" if error.filename else f"{error}"
        print(f"t4p4s: {said}", file=sys.stderr)
    except KeyboardInterrupt:
        print("t4p4s: interrupted", file=sys.stderr)
    except Exception as error:
        # the last resort: every failure a user can cause is handled above
        if os.environ.get(TRACEBACK_ENV):
            raise
        message = " ".join(str(error).split()) or "(no message)"
        print(f"t4p4s: internal error: {type(error).__name__}: {message}; this is a t4p4s "
              f"bug, please report it with the command line ({TRACEBACK_ENV}=1 shows "
              "where it happened)", file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_FAILURE
