"""The ``paperworks`` command: ``list``, ``show``, ``reproduce``, ``sweep``, ``bench``, ``report``.

``list`` and ``show`` read each experiment's declarations from its source without importing it
(:mod:`paperworks.core.declarations`). ``reproduce`` runs one experiment in this process; ``sweep``
runs slugs x ``--set`` values x seeds on the local or the Ray engine (:mod:`paperworks.core.sweep`).
Both write each finished seed to ``OUT/<folder>/seeds/<seed>.json``, leave a report marked
incomplete on Ctrl-C (exit status 130) and reuse finished seeds with ``--resume``.

Bad input (unknown slug, malformed seeds, an unknown ``--set`` key or a bad value, an unwritable
folder, a missing engine, a resume of another config) ends with one line on stderr and exit status
2, before anything is written.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("paperworks-reports")


class _Usage(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise _Usage(f"{message} (see '{self.prog} --help')")


def _seed_spec(text: str) -> list[int]:
    from .seeds import SeedSpecError, parse_seed_spec

    try:
        return parse_seed_spec(text)
    except SeedSpecError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("seeds: ").removeprefix("seeds ")) from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _core_version() -> str:
    try:
        return importlib.metadata.version("paperworks-core")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


SEEDS_HELP = "a count N (seeds 0..N-1), a list 0,3,7, or a range 10:20 (half-open); default: the method's"
SET_HELP = (
    "override a config field, typed by its annotation (repeatable; `paperworks show SLUG` lists the "
    "fields); nested fields as outer.inner"
)


def _run_options(p: argparse.ArgumentParser, *, sweep: bool) -> None:
    p.add_argument("--quick", action="store_true", help="the laptop-minute version (under 30 s)")
    p.add_argument("--seeds", type=_seed_spec, default=None, metavar="SPEC", help=SEEDS_HELP)
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="overrides",
        help=SET_HELP
        + (
            "; in a sweep a key given several times, or a number/bool field given a,b,c, is a grid "
            "axis, and SLUG:KEY=VALUE applies to one method only"
            if sweep
            else ""
        ),
    )
    p.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default=None,
        help="where torch experiments run (sets PAPERWORKS_DEVICE; default: auto)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"root folder; reports go to OUT/<slug> (default: {DEFAULT_OUT})",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="reuse the finished seeds in OUT/<slug>/seeds of the same config and code; run the rest",
    )
    p.add_argument("--json", action="store_true", help="print the report record(s) as JSON on stdout")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="paperworks", description="Find, run and report the paperworks methods.")
    p.add_argument("--version", action="version", version=f"paperworks-core {_core_version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="every installed method, its paper and its claims")
    s = sub.add_parser("show", help="one method: its paper, claims, seeds and config fields")
    s.add_argument("slug", help="the method's slug, as `paperworks list` shows it")
    s.add_argument("--json", action="store_true", help="print the declarations as JSON")
    r = sub.add_parser("reproduce", help="run a method's headline experiment and write its report")
    r.add_argument("slug", help="the method's slug, as `paperworks list` shows it")
    _run_options(r, sweep=False)
    w = sub.add_parser(
        "sweep",
        help="run methods x configs x seeds on the local or the Ray engine",
        description="Run the cartesian product of SLUGs, --set values and seeds. Each method and config "
        "gets its report folder: OUT/<slug> without overrides, OUT/<slug>@<key=value,...> with them.",
    )
    w.add_argument("slugs", nargs="+", metavar="SLUG", help="the methods' slugs")
    _run_options(w, sweep=True)
    w.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local: one seed after the other in this process (default); ray: one seed per Ray task",
    )
    w.add_argument("--address", default=None, help="Ray: the cluster to connect to (default: start one here)")
    w.add_argument(
        "--num-cpus", type=_positive_int, default=None, help="Ray: CPUs of the local instance (default: all)"
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


# -- list and show: declarations, read without importing ------------------------------------------


def _note(message: str) -> None:
    print(f"paperworks: {message}", file=sys.stderr)


def _cmd_list() -> int:
    from .registry import describe, find_experiments

    found = find_experiments()
    if not found:
        print("no paperworks methods installed")
        return 0
    for slug, ep in found.items():
        try:
            d = describe(slug, ep)
        except Exception as e:  # a broken package must not hide the others
            print(f"{slug}: cannot be loaded ({type(e).__name__}: {e})")
            continue
        if d.source == "import":
            _note(f"{slug}: read by importing it (the static read stopped at: {d.why_imported})")
        print(f"{slug}: {d.paper.citation}")
        for c in d.claims:
            print(f"    - {c.key}: {c.statement}  [{c.predicate}]")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from .registry import UnknownSlugError, describe

    try:
        d = describe(args.slug)
    except UnknownSlugError as e:
        raise _Usage(str(e)) from None
    if d.source == "import":
        _note(f"{args.slug}: read by importing it (the static read stopped at: {d.why_imported})")
    if args.json:
        print(json.dumps(d.to_dict(), indent=2))
        return 0
    dist = f"{d.distribution} {d.version}" if d.distribution else "(distribution unknown)"
    lines = [f"{d.slug}: {d.paper.citation}", f"  distribution: {dist}"]
    if d.paper.note:
        lines.append(f"  paper note: {d.paper.note}")
    quick = d.quick_seeds if d.quick_seeds is not None else d.default_seeds
    lines.append(
        f"  seeds: {d.default_seeds} (quick: {quick})" + (f"; {d.seeds_note}" if d.seeds_note else "")
    )
    lines += ["", f"claims ({len(d.claims)}):"]
    for c in d.claims:
        kind = "exact" if c.exact else c.kind
        lines.append(f"  - {c.key} [{kind}]: {c.statement}")
        extra = f"; paper: {c.paper_value}" if c.paper_value is not None else ""
        lines.append(f"      predicate: {c.predicate}{extra}")
        if c.note:
            lines.append(f"      note: {c.note}")
    lines.append("")
    if d.config_fields is None:
        lines.append(f"config: none{f' ({d.config_note})' if d.config_note else ''}")
    else:
        lines.append(f"config ({d.config_class}; override with --set KEY=VALUE):")
        width = max((len(f.name) for f in d.config_fields), default=0)
        for f in d.config_fields:
            quick_part = "" if f.quick is None or f.quick == f.default else f"  (quick: {f.quick})"
            lines.append(f"  {f.name:<{width}} : {f.annotation} = {f.default}{quick_part}")
            if f.help:
                lines.append(f"  {'':<{width}}   {f.help}")
        if d.config_note:
            lines.append(f"  note: {d.config_note}")
    print("\n".join(lines))
    return 0


# -- reproduce and sweep -----------------------------------------------------------------------------


def _load(slug: str) -> Any:
    from .registry import UnknownSlugError, load_experiment

    try:
        return load_experiment(slug)
    except UnknownSlugError as e:
        raise _Usage(str(e)) from None


def _set_device(device: str | None) -> None:
    """``--device``: checked, then passed to every experiment through ``PAPERWORKS_DEVICE``."""
    if device is None:
        return
    if device == "auto":
        os.environ.pop("PAPERWORKS_DEVICE", None)
        return
    if device == "cuda":
        from .seeding import choose_device

        try:
            choose_device("cuda")
        except ValueError as e:
            raise _Usage(f"--device cuda: {str(e).removeprefix('device: ')}") from None
    os.environ["PAPERWORKS_DEVICE"] = device


def _check_folder(folder: Path) -> None:
    """Refuse a report folder that cannot be written, creating nothing (one line, exit status 2)."""
    from .io import check_writable

    try:
        if folder.exists():
            check_writable(folder)  # a probe file, removed at once
            return
        ancestor = folder.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise NotADirectoryError(f"{ancestor} is not a folder")
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise PermissionError(f"{ancestor} is not writable")
    except OSError as e:
        raise _Usage(f"--out: cannot write the report folder {folder} ({e.strerror or e})") from None


def _parse_sets(items: list[str]) -> list[tuple[str | None, str, str]]:
    """``--set`` items as (slug scope or None, key, raw value)."""
    from .overrides import OverrideError, parse_assignment

    out = []
    for item in items:
        try:
            key, value = parse_assignment(item)
        except OverrideError as e:
            raise _Usage(str(e)) from None
        scope, colon, rest = key.partition(":")
        out.append((scope.strip(), rest.strip(), value) if colon else (None, key, value))
    return out


def _configure(exp: Any, overrides: dict[str, Any]) -> Any:
    from .overrides import OverrideError

    try:
        return exp.configure(overrides)
    except OverrideError as e:
        raise _Usage(str(e)) from None


def _reproduce_jobs(args: argparse.Namespace) -> list[Any]:
    from .sweep import Job

    exp = _load(args.slug)
    overrides: dict[str, str] = {}
    for scope, key, value in _parse_sets(args.overrides):
        if scope is not None and scope != args.slug:
            raise _Usage(f"--set {scope}:{key}: this run is of {args.slug!r}, not {scope!r}")
        overrides[key] = value
    _configure(exp, overrides)
    folder = args.out / args.slug
    return [Job(exp, args.quick, exp.seed_list(args.quick, args.seeds), folder, args.slug)]


def _axis_values(exp: Any, key: str, raw: list[str]) -> list[str]:
    """The grid values of ``key``: every repeated value; ``a,b,c`` split for number and bool fields."""
    import typing

    from .overrides import _hint_of

    try:
        cfg = exp.config(False)
        hint, current = _hint_of(cfg, key)
    except Exception:
        return raw
    hint = hint if hint is not None else type(current)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    scalar = hint in (int, float, bool) or (args and all(a in (int, float, bool) for a in args))
    out: list[str] = []
    for v in raw:
        out.extend(p.strip() for p in v.split(",")) if scalar and "," in v else out.append(v)
    return out


def _sweep_jobs(args: argparse.Namespace) -> list[Any]:
    from .overrides import config_fields
    from .sweep import Job, config_label, grid

    slugs = list(dict.fromkeys(args.slugs))
    experiments = {slug: _load(slug) for slug in slugs}
    sets = _parse_sets(args.overrides)
    for scope, key, _ in sets:
        if scope is not None and scope not in experiments:
            raise _Usage(
                f"--set {scope}:{key}: {scope!r} is not one of the swept methods ({', '.join(slugs)})"
            )
    jobs = []
    for slug in slugs:
        exp = experiments[slug]
        cfg = exp.config(False)
        valid = list(config_fields(cfg)) if cfg is not None else []
        axes: dict[str, list[str]] = {}
        for scope, key, value in sets:
            if scope not in (None, slug):
                continue
            if key not in valid and scope is None and len(slugs) > 1:
                raise _Usage(
                    f"--set {key}: {slug} has no such field (valid: {', '.join(valid) or 'none'}); "
                    f"scope it to one method as SLUG:{key}=VALUE"
                )
            axes.setdefault(key, []).append(value)
        values = {k: list(dict.fromkeys(_axis_values(exp, k, v))) for k, v in axes.items()}
        for i, combo in enumerate(grid(values)):
            one = exp if i == 0 else _load(slug)  # one experiment object per config
            _configure(one, combo)
            label = f"{slug}@{config_label(combo)}" if combo else slug
            jobs.append(Job(one, args.quick, one.seed_list(args.quick, args.seeds), args.out / label, label))
    return jobs


def _importable(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _print_outcomes(outcomes: list[Any], args: argparse.Namespace, *, single: bool) -> None:
    from .io import _jsonable
    from .report import verdict_line

    human = sys.stderr if args.json else sys.stdout
    for o in outcomes:
        r = o.report
        if single:
            print(r.claims_table(), file=human)
            print(file=human)
        reused = f"; reused seeds {o.reused}" if o.reused else ""
        where = f"; report written to {o.folder}" if o.folder else ""
        print(f"{o.job.label}: {verdict_line([c.to_dict() for c in r.claims])}{reused}{where}", file=human)
        if o.figure_error:
            _note(f"{o.job.label}: no figures for the incomplete run ({o.figure_error})")
    if args.json:
        records = [_jsonable(o.report.to_dict()) for o in outcomes]
        print(json.dumps(records[0] if single else records, indent=2, allow_nan=False))


def _run(args: argparse.Namespace, *, sweep: bool) -> int:
    from .checkpoints import ResumeError
    from .executors import EngineUnavailable, make_executor
    from .progress import Progress
    from .sweep import SweepInterrupted, run_jobs

    _set_device(args.device)
    if sweep and args.engine == "ray" and not _importable("ray"):  # checked before anything runs
        raise _Usage("--engine ray: Ray is not installed (pip install 'paperworks-core[ray]')")
    jobs = _sweep_jobs(args) if sweep else _reproduce_jobs(args)
    for job in jobs:
        _check_folder(job.folder)
    if sweep:
        env = {k: os.environ[k] for k in ("PAPERWORKS_DEVICE",) if k in os.environ}
        try:
            executor = make_executor(
                args.engine, address=args.address, num_cpus=args.num_cpus, temp_dir=args.out / ".ray", env=env
            )
        except ValueError as e:
            raise _Usage(str(e)) from None
    else:
        executor = make_executor("local")
    try:
        outcomes = run_jobs(jobs, executor, progress=Progress(), resume=args.resume)
    except ResumeError as e:
        raise _Usage(str(e)) from None
    except EngineUnavailable as e:
        raise _Usage(str(e)) from None
    except SweepInterrupted as e:
        if e.outcomes:
            _print_outcomes(e.outcomes, args, single=not sweep)
            for o in e.outcomes:
                r = o.report
                done = f"{len(r.seeds)} of {len(getattr(r, 'requested_seeds', r.seeds))} seeds finished"
                _note(f"interrupted: {o.job.label}: {done}; incomplete report written to {o.folder}")
        else:
            _note("interrupted before any seed finished; nothing written")
        return 130
    except ModuleNotFoundError as e:
        if not e.name or e.name.split(".")[0] in ("paperworks", "__main__"):
            raise
        slugs = {j.experiment.slug for j in jobs}
        raise _Usage(_missing_module_message(slugs.pop() if len(slugs) == 1 else None, e.name)) from None
    except OSError as e:
        raise _Usage(f"cannot write the results ({e.strerror or e}){_kept(jobs)}") from None
    _print_outcomes(outcomes, args, single=not sweep)
    return 0


def _kept(jobs: list[Any]) -> str:
    """Where the finished seeds are, when a report could not be written."""
    kept = []
    for j in jobs:
        seeds = j.folder / "seeds"
        if seeds.is_dir():
            names = sorted(int(p.stem) for p in seeds.glob("*.json") if p.stem.isdigit())
            if names:
                kept.append(f"seeds {names} in {seeds}")
    return f"; finished seeds kept: {', '.join(kept)}" if kept else "; no seed file could be kept"


def _missing_module_message(slug: str | None, module: str) -> str:
    """One line naming the missing optional module and the extras of the method's distribution."""
    if slug is None:
        return f"an experiment needs the optional module '{module}', which is not installed"
    dist = f"paperworks-{slug}"
    try:
        extras = importlib.metadata.metadata(dist).get_all("Provides-Extra") or []
    except importlib.metadata.PackageNotFoundError:
        extras = []
    hint = f"pip install '{dist}[{','.join(extras)}]'" if extras else f"see {dist}'s README"
    return f"{slug}: the experiment needs the optional module '{module}', which is not installed ({hint})"


# -- bench and report ----------------------------------------------------------------------------------


def benchmark_scripts(slug: str) -> list[Path]:
    """The ``benchmarks/bench_*.py`` scripts of an installed method's source checkout."""
    exp = _load(slug)
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
    from .gather import ReportError, load_reports, summary_markdown
    from .io import atomic_write_text

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
        if args.command == "show":
            return _cmd_show(args)
        if args.command == "reproduce":
            return _run(args, sweep=False)
        if args.command == "sweep":
            return _run(args, sweep=True)
        if args.command == "bench":
            return _cmd_bench(args)
        return _cmd_report(args)
    except _Usage as e:
        print(f"paperworks: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("paperworks: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `paperworks show x | head`: the reader left; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
