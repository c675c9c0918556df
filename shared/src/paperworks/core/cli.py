"""The ``paperworks`` command: ``list``, ``reproduce <slug>``, ``report``.

Bad input (unknown slug, unwritable folder, a non-positive seed count) ends with one line on stderr
and exit status 2, before anything is written.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from pathlib import Path

from .experiment import Report
from .gather import load_reports, summary_markdown
from .io import atomic_write_text, check_writable, write_report
from .progress import Progress
from .registry import UnknownSlugError, find_experiments, load_experiment

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
    g = sub.add_parser("report", help="gather saved reports into OUT/summary.md")
    g.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"root folder of the reports ({DEFAULT_OUT})"
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
    write_report(report, folder, figures=exp)
    print(report.claims_table())
    print(f"\n{report.n_holding}/{len(report.claims)} claims hold; report written to {folder}")
    return 0


def _missing_module_message(slug: str, module: str) -> str:
    """One line naming the missing optional module and the extras of the method's distribution."""
    dist = f"paperworks-{slug}"
    try:
        extras = importlib.metadata.metadata(dist).get_all("Provides-Extra") or []
    except importlib.metadata.PackageNotFoundError:
        extras = []
    hint = f"pip install '{dist}[{','.join(extras)}]'" if extras else f"see {dist}'s README"
    return f"{slug}: the experiment needs the optional module '{module}', which is not installed ({hint})"


def _cmd_report(args: argparse.Namespace) -> int:
    if not args.out.is_dir():
        raise _Usage(f"--out: {args.out} is not a folder of reports")
    try:
        reports = load_reports(args.out)
    except ValueError as e:
        raise _Usage(str(e)) from None
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
        return _cmd_report(args)
    except _Usage as e:
        print(f"paperworks: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("paperworks: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
