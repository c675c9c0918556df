"""The ``paperworks`` command: ``list``, ``reproduce <slug>``, ``bench <slug>``, ``report``.

Bad input (unknown slug, unwritable folder, a non-positive seed count) ends with one line on stderr
and exit status 2, before anything is written.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from pathlib import Path

from .experiment import Report
from .gather import ReportError, load_reports, summary_markdown
from .io import atomic_write_text, check_writable, write_report
from .progress import Progress
from .registry import UnknownSlugError, find_experiments, load_experiment
from .report import verdict_line

DEFAULT_OUT = Path("paperworks-reports")


class _Usage(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise _Usage(f"{message} (see '{self.prog} --help')")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="paperworks", description="Find, run and report the paperworks methods.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="every installed method, its paper and its claims")
    r = sub.add_parser("reproduce", help="run a method's headline experiment and write its report")
    r.add_argument("slug", help="the method's slug, as `paperworks list` shows it")
    r.add_argument("--quick", action="store_true", help="the laptop-minute version (under 30 s)")
    r.add_argument(
        "--seeds", type=_positive_int, default=None, help="number of seeds (default: the method's)"
    )
    r.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"root folder; the report goes to OUT/<slug> (default: {DEFAULT_OUT})",
    )
    b = sub.add_parser(
        "bench", help="run a method's benchmarks (from a source checkout) into its benchmarks/"
    )
    b.add_argument("slug", help="the method's slug, as `paperworks list` shows it")
    b.add_argument("--quick", action="store_true", help="small sizes, few repeats (results not written)")
    g = sub.add_parser("report", help="gather saved reports into OUT/summary.md")
    g.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"root folder of the reports ({DEFAULT_OUT})"
    )
    g.add_argument(
        "--skip-bad",
        action="store_true",
        help="leave out unreadable reports (named on stderr) instead of stopping",
    )
    return p


def _cmd_list() -> int:
    found = find_experiments()
    if not found:
        print("no paperworks methods installed")
        return 0
    for slug in found:
        try:
            exp = load_experiment(slug)
        except Exception as e:  # a broken package must not hide the others
            print(f"{slug}: cannot be loaded ({type(e).__name__}: {e})")
            continue
        print(f"{slug}: {exp.paper.citation}")
        for c in exp.claims:
            print(f"    - {c.key}: {c.statement}  [{c.predicate}]")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    try:
        exp = load_experiment(args.slug)
    except UnknownSlugError as e:
        raise _Usage(str(e)) from None
    folder = args.out / args.slug
    try:
        check_writable(folder)
    except OSError as e:
        raise _Usage(f"--out: cannot write the report folder {folder} ({e.strerror or e})") from None
    progress = Progress()
    try:
        report: Report = exp.run(quick=args.quick, seeds=args.seeds, progress=progress)
    except ModuleNotFoundError as e:
        if not e.name or e.name.split(".")[0] in ("paperworks", "__main__"):
            raise
        raise _Usage(_missing_module_message(args.slug, e.name)) from None
    try:
        write_report(report, folder, figures=exp)
    except OSError as e:
        raise _Usage(f"cannot write the report to {folder} ({e.strerror or e}); {_rescue(report)}") from None
    print(report.claims_table())
    print(f"\n{verdict_line([c.to_dict() for c in report.claims])}; report written to {folder}")
    return 0


def _rescue(report: Report) -> str:
    """Keep the measured results somewhere when the report folder cannot be written."""
    import json
    import tempfile

    try:
        fd, path = tempfile.mkstemp(prefix=f"paperworks-{report.slug}-", suffix=".json")
        with open(fd, "w") as f:
            json.dump(report.to_dict(), f, default=str)
    except OSError:
        return "the results could not be kept anywhere"
    return f"the results were kept in {path}"


def _missing_module_message(slug: str, module: str) -> str:
    """One line naming the missing optional module and the extras of the method's distribution."""
    dist = f"paperworks-{slug}"
    try:
        extras = importlib.metadata.metadata(dist).get_all("Provides-Extra") or []
    except importlib.metadata.PackageNotFoundError:
        extras = []
    hint = f"pip install '{dist}[{','.join(extras)}]'" if extras else f"see {dist}'s README"
    return f"{slug}: the experiment needs the optional module '{module}', which is not installed ({hint})"


def benchmark_scripts(slug: str) -> list[Path]:
    """The ``benchmarks/bench_*.py`` scripts of an installed method's source checkout."""
    try:
        exp = load_experiment(slug)
    except UnknownSlugError as e:
        raise _Usage(str(e)) from None
    module = sys.modules[type(exp).__module__]
    # packages/<slug>/src/paperworks/<snake>/experiments.py -> packages/<slug>
    pkg_root = Path(module.__file__).resolve().parents[3]
    scripts = sorted((pkg_root / "benchmarks").glob("bench_*.py"))
    if not scripts:
        raise _Usage(
            f"{slug}: no benchmarks/bench_*.py beside the installed package ({pkg_root}); benchmarks ship "
            "with the source checkout, not the wheel"
        )
    return scripts


def _cmd_bench(args: argparse.Namespace) -> int:
    import subprocess

    for script in benchmark_scripts(args.slug):
        cmd = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        print(f"paperworks: running {script.name}{' --quick' if args.quick else ''}", file=sys.stderr)
        done = subprocess.run(cmd, cwd=script.parent.parent)
        if done.returncode != 0:
            print(f"paperworks: error: {script.name} exited with status {done.returncode}", file=sys.stderr)
            return done.returncode
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    if not args.out.is_dir():
        raise _Usage(f"--out: {args.out} is not a folder of reports")
    try:
        reports, problems = load_reports(args.out, skip_bad=args.skip_bad)
    except ReportError as e:
        raise _Usage(f"{e} (use --skip-bad to summarise the others)") from None
    for p in problems:
        print(f"paperworks: skipped {p}", file=sys.stderr)
    target = args.out / "summary.md"
    try:
        atomic_write_text(target, summary_markdown(reports))
    except OSError as e:
        raise _Usage(f"--out: cannot write {target} ({e.strerror or e})") from None
    print(f"{len(reports)} reports gathered into {target}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "list":
            return _cmd_list()
        if args.command == "reproduce":
            return _cmd_reproduce(args)
        if args.command == "bench":
            return _cmd_bench(args)
        return _cmd_report(args)
    except _Usage as e:
        print(f"paperworks: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("paperworks: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
