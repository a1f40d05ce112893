"""`make fuzz` / `python -m testbench.fuzz [--seconds S] [host] [nic]`:
fuzzes each build for S seconds (default 300; FUZZ_SECONDS in make),
prints libFuzzer's figures and writes them, with the machine, to
testbench/results/fuzz.json (one entry per build: its last run). Exit
status 1 when any build had a finding (its input is in
build/fuzz/BUILD/findings/)."""
import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from testbench.bench.machine import describe_machine
from testbench.fuzz.run import REPO, run_fuzzer
from testbench.fuzz.seeds import TARGETS

RESULTS = REPO / "testbench" / "results" / "fuzz.json"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbench.fuzz", description=__doc__)
    parser.add_argument("builds", nargs="*", metavar="BUILD",
                        help=f"of {', '.join(sorted(TARGETS))} (default: all)")
    parser.add_argument("--seconds", type=float, default=300, help="per build (default 300)")
    args = parser.parse_args(argv)
    unknown = set(args.builds) - set(TARGETS)
    if unknown:
        parser.error(f"unknown build {', '.join(sorted(unknown))}: one of {', '.join(sorted(TARGETS))}")
    console = Console(width=None if sys.stdout.isatty() else 120)
    machine = describe_machine()
    results = []
    for build in args.builds or sorted(TARGETS):
        console.print(f"[bold]fuzzing[/] {build}.p4 for {args.seconds:g} s")
        result = run_fuzzer(build, args.seconds)
        results.append(result)
        if not result.clean:
            console.print(result.log[-6000:], markup=False, highlight=False)

    table = Table(title=f"frame fuzzer on {machine.cpu_model}")
    for column in ("build", "seconds", "runs", "exec/s", "cov edges", "features",
                   "corpus", "peak RSS MB", "findings"):
        table.add_column(column, justify="left" if column in ("build", "findings") else "right")
    for r in results:
        table.add_row(r.build, f"{r.seconds:.0f}", f"{r.runs:,}", f"{r.execs_per_s:,}",
                      str(r.coverage_edges), str(r.features), str(r.corpus_inputs),
                      str(r.peak_rss_mb), ", ".join(r.findings) or
                      ("none" if r.exit_status == 0 else f"exit status {r.exit_status}"))
    console.print(table)
    # one entry per build: runs of single builds (in parallel, too) add up
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    previous = json.loads(RESULTS.read_text()).get("builds", {}) if RESULTS.is_file() else {}
    builds = {**previous, **{r.build: {**r.summary(), "machine": machine.as_json()}
                             for r in results}}
    RESULTS.write_text(json.dumps({"builds": builds}, indent=1))
    console.print(f"written {RESULTS.relative_to(REPO)}")
    return 0 if all(r.clean for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
