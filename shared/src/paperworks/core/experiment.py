"""The experiment protocol: a run over seeds, judged claim by claim, and the report it yields.

A method package subclasses :class:`Experiment`, names its :class:`Paper`, declares its claims
(:class:`Claim`, :class:`SlopeClaim`), exposes its configuration as a frozen dataclass
(:meth:`Experiment.config`: the quick and the full run are two instances of it) and implements
:meth:`Experiment.run_seed`, which returns a flat mapping of metric name to float for one seed.
:meth:`Experiment.run` runs every seed through an executor (in process by default, see
:mod:`paperworks.core.executors`), and :func:`assemble_report` summarises each metric and judges every
claim on the 95% interval of its quantity over seeds (:mod:`paperworks.core.claims`). Any engine
that runs seeds elsewhere (Ray, a Slurm array, dask) returns :class:`SeedResult` records and builds
the report with the same :func:`assemble_report`.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import hashlib
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .claims import Claim, ClaimResult, SlopeClaim
from .overrides import apply_overrides, typed_overrides
from .progress import Progress
from .record import run_record
from .report import MetricSummary, Paper, Report, claims_table
from .seeding import seed_everything
from .seeds import parse_seed_spec

__all__ = [
    "Claim",
    "ClaimResult",
    "Experiment",
    "IncompleteReport",
    "MetricSummary",
    "Paper",
    "Report",
    "RunInterrupted",
    "SeedResult",
    "SlopeClaim",
    "assemble_report",
    "canonical",
    "claims_table",
    "code_version",
    "config_diff",
]


class Experiment(abc.ABC):
    """Base class of a package's headline reproduction.

    Subclasses set ``slug``, ``paper`` and ``claims`` and implement :meth:`run_seed`; they expose
    their settings through :meth:`config` (a frozen dataclass; quick and full are two instances).
    They may override :meth:`tables` (extra markdown tables from the per-seed results) and
    :meth:`figures` (plots written into the report folder). ``quick=True`` must finish in under 30 s
    on 2 CPU cores. A full run of a comparative claim uses >= 5 seeds; ``seeds_note`` says why when
    ``default_seeds`` is fewer (the 10-minute budget).

    Overrides (:meth:`configure`, ``run(overrides=...)``, ``paperworks reproduce --set``) need nothing
    from the subclass: the base class wraps every subclass's ``config`` so that it returns
    ``dataclasses.replace(<its config>, **overrides)``; ``run_seed``, ``tables`` and ``figures`` see
    them as long as they read settings through ``self.config(quick)``.
    """

    slug: ClassVar[str]
    paper: ClassVar[Paper]
    claims: ClassVar[tuple[Claim | SlopeClaim, ...]] = ()
    default_seeds: ClassVar[int] = 5
    quick_seeds: ClassVar[int | None] = None  # seeds of a quick run when none are given; None: default_seeds
    seeds_note: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        inner = cls.__dict__.get("config")
        if inner is None or getattr(inner, "_paperworks_overridable", False) or not callable(inner):
            return

        @functools.wraps(inner)
        def config(self: Experiment, quick: bool) -> Any:
            cfg = inner(self, quick)
            overrides = self.__dict__.get("_config_overrides")
            if overrides and cfg is not None:
                cfg = apply_overrides(cfg, overrides)
            return cfg

        config._paperworks_overridable = True  # type: ignore[attr-defined]
        cls.config = config  # type: ignore[method-assign]

    @abc.abstractmethod
    def run_seed(self, seed: int, *, quick: bool, progress: Progress) -> Mapping[str, float]:
        """Run the experiment once for ``seed``; return metric name -> value."""

    def config(self, quick: bool) -> Any:
        """The run's settings: a frozen dataclass instance (None: the experiment has none)."""
        return None

    def tables(self, per_seed: list[dict[str, float]], quick: bool) -> dict[str, str]:
        """Extra markdown tables for the report, title -> table. Default: none."""
        return {}

    def figures(self, report: Report, folder: Path) -> list[str]:
        """Write figures into ``folder``; return their file names. Default: none."""
        return []

    # -- overrides ---------------------------------------------------------------------------------
    @property
    def overrides(self) -> dict[str, Any]:
        """The config overrides in force (typed values; empty: none)."""
        return dict(self.__dict__.get("_config_overrides") or {})

    def configure(self, overrides: Mapping[str, Any] | None) -> Experiment:
        """Make :meth:`config` (quick and full) return the config with ``overrides`` replaced in.

        ``overrides``: field -> value; a text value is parsed by the field's type annotation (as
        ``--set`` does), nested configs as ``outer.inner``. Raises :class:`OverrideError` (one line:
        unknown key with the valid ones, a wrong type, or a value the config's checks reject).
        ``None`` or ``{}`` removes the overrides. They stay until the next call, so figures and
        tables drawn after a run see the run's config. Returns ``self``.
        """
        self.__dict__.pop("_config_overrides", None)
        if not overrides:
            return self
        base = self.config(False)
        typed = typed_overrides(base, dict(overrides), where=getattr(self, "slug", type(self).__name__))
        for quick in (True, False):  # the config's own checks, on both runs, before anything runs
            cfg = self.config(quick)
            if cfg is not None:
                apply_overrides(cfg, typed)
        self.__dict__["_config_overrides"] = typed
        return self

    def resolved_config(self, quick: bool) -> dict[str, Any] | None:
        """:meth:`config` as a plain dict (checked to be a frozen dataclass)."""
        cfg = self.config(quick)
        if cfg is None:
            return None
        if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
            raise TypeError(
                f"{type(self).__name__}.config: expected a dataclass instance, got {type(cfg).__name__}"
            )
        if not type(cfg).__dataclass_params__.frozen:
            raise TypeError(
                f"{type(self).__name__}.config: expected a frozen dataclass, {type(cfg).__name__} is not"
            )
        return {k: _plain(v) for k, v in dataclasses.asdict(cfg).items()}

    # -- running -------------------------------------------------------------------------------------
    def seed_list(self, quick: bool, seeds: int | str | Sequence[int] | None = None) -> list[int]:
        """The seeds of a run: ``seeds`` (a count, a spec such as ``"0,3,7"`` or ``"10:20"``, or a
        list), else the experiment's default for a quick or full run."""
        if seeds is None:
            seeds = self.quick_seeds if quick and self.quick_seeds is not None else self.default_seeds
        if isinstance(seeds, str):
            return parse_seed_spec(seeds)
        return _seed_list(seeds)

    def run_one(self, seed: int, *, quick: bool, progress: Progress | None = None) -> SeedResult:
        """Seed everything, run :meth:`run_seed` once and check its metrics: one :class:`SeedResult`.

        What every engine runs for one seed, in whichever process it runs.
        """
        import time

        progress = progress or Progress(enabled=False)
        seed_everything(seed)
        start = time.perf_counter()
        raw = self.run_seed(seed, quick=quick, progress=progress)
        seconds = time.perf_counter() - start
        metrics = _check_metrics(raw, where=f"{type(self).__name__}.run_seed(seed={seed})")
        return SeedResult(
            slug=self.slug,
            seed=int(seed),
            quick=bool(quick),
            metrics=metrics,
            seconds=seconds,
            config=self.resolved_config(quick),
            code=code_version(self),
        )

    def run(
        self,
        *,
        quick: bool = False,
        seeds: int | str | Sequence[int] | None = None,
        progress: Progress | None = None,
        overrides: Mapping[str, Any] | None = None,
        executor: Any = None,
    ) -> Report:
        """Run every seed and judge every claim.

        ``seeds``: a count (seeds 0..n-1), a spec (``"0,3,7"``, ``"10:20"``) or an explicit list.
        ``overrides``: see :meth:`configure` (kept on the experiment after the run). ``executor``:
        where the seeds run (default :class:`~paperworks.core.executors.LocalExecutor`: in this
        process, one after the other). On Ctrl-C after at least one seed finished, raises
        :class:`RunInterrupted` carrying the report of the finished seeds (marked incomplete).
        """
        from .executors import LocalExecutor, SeedTask

        if overrides is not None:
            self.configure(overrides)
        seed_list = self.seed_list(quick, seeds)
        progress = progress or Progress(enabled=False)
        self.resolved_config(quick)  # a bad config fails before any seed runs
        executor = executor if executor is not None else LocalExecutor()
        results: list[SeedResult] = []
        try:
            for _, result in executor.map([SeedTask(self, s, quick) for s in seed_list], progress):
                results.append(result)
        except KeyboardInterrupt:
            if results:
                raise RunInterrupted([assemble_report(self, results, seeds=seed_list)]) from None
            raise
        return assemble_report(self, results, seeds=seed_list)


@dataclass(frozen=True)
class SeedResult:
    """What one seed of one experiment measured, with what identifies the run that produced it.

    ``config``: the resolved config (a plain dict, None when the experiment has none); ``code``:
    :func:`code_version` of the code that ran it; ``seconds``: the wall time of ``run_seed``. JSON-able
    through :meth:`to_dict` / :meth:`from_dict`, as the seed files and remote engines carry it.
    """

    slug: str
    seed: int
    quick: bool
    metrics: dict[str, float]
    seconds: float
    config: dict[str, Any] | None = None
    code: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"schema": 1, **dataclasses.asdict(self)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SeedResult:
        if not isinstance(d, Mapping) or d.get("schema") != 1:
            raise ValueError("seed result: expected an object with schema 1")
        try:
            metrics = {str(k): float(v) for k, v in d["metrics"].items()}
            return cls(
                slug=str(d["slug"]),
                seed=int(d["seed"]),
                quick=bool(d["quick"]),
                metrics=metrics,
                seconds=float(d["seconds"]),
                config=d.get("config"),
                code=d.get("code"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"seed result: missing or malformed field ({type(e).__name__}: {e})") from None


@dataclass
class IncompleteReport(Report):
    """The report of a run stopped before every requested seed finished (verdicts on those that did)."""

    requested_seeds: list[int] = field(default_factory=list)

    @property
    def missing_seeds(self) -> list[int]:
        done = set(self.seeds)
        return [s for s in self.requested_seeds if s not in done]

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["incomplete"] = True
        d["requested_seeds"] = list(self.requested_seeds)
        d["missing_seeds"] = self.missing_seeds
        return d

    def banner(self) -> str:
        return (
            f"**Incomplete run**: stopped after {len(self.seeds)} of {len(self.requested_seeds)} seeds "
            f"(missing {self.missing_seeds}); the verdicts judge the finished seeds only."
        )

    def to_markdown(self) -> str:
        md = super().to_markdown()
        cut = md.find("\n\n")
        cut = md.find("\n\n", cut + 2) if cut >= 0 else -1  # after the title and the Run line
        if cut < 0:
            return md + "\n" + self.banner() + "\n"
        return md[:cut] + "\n\n" + self.banner() + md[cut:]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: ``reports`` holds an :class:`IncompleteReport` per run with finished seeds."""

    def __init__(self, reports: list[Report]) -> None:
        super().__init__(f"interrupted; {len(reports)} incomplete report(s) from the finished seeds")
        self.reports = reports


def assemble_report(
    experiment: Experiment,
    per_seed_results: Iterable[SeedResult | Mapping[str, Any]] | Mapping[int, SeedResult],
    *,
    seeds: Sequence[int] | None = None,
    record: Mapping[str, Any] | None = None,
) -> Report:
    """The report of ``experiment`` from per-seed results, however and wherever they were run.

    ``per_seed_results``: :class:`SeedResult` records (or their ``to_dict()`` form, or a mapping
    seed -> record), all of one slug, one ``quick`` and one config, which must be the config the
    experiment has now (overrides included). ``seeds``: the requested seeds, in report order
    (default: the results' seeds, ascending); when some have no result the report is an
    :class:`IncompleteReport`. ``record``: extra entries for the run record (engine, ...). The
    report's ``wall_time_s`` is the sum of the seeds' ``run_seed`` times.
    """
    items = per_seed_results.values() if isinstance(per_seed_results, Mapping) else per_seed_results
    results: dict[int, SeedResult] = {}
    for r in items:
        r = r if isinstance(r, SeedResult) else SeedResult.from_dict(r)
        if r.seed in results:
            raise ValueError(f"per_seed_results: seed {r.seed} appears twice")
        results[r.seed] = r
    if not results:
        raise ValueError("per_seed_results: expected at least one seed's result")
    first = next(iter(results.values()))
    for r in results.values():
        if r.slug != experiment.slug:
            raise ValueError(f"per_seed_results: seed {r.seed} is of {r.slug!r}, not {experiment.slug!r}")
        if r.quick != first.quick:
            raise ValueError("per_seed_results: quick and full results cannot make one report")
    quick = first.quick
    config = experiment.resolved_config(quick)
    for r in results.values():
        if r.config is not None and canonical(r.config) != canonical(config):
            diff = config_diff(r.config, config)
            raise ValueError(
                f"per_seed_results: seed {r.seed} ran with a different config than the experiment's ({diff})"
            )
    requested = [int(s) for s in seeds] if seeds is not None else sorted(results)
    unknown = sorted(set(results) - set(requested))
    if unknown:
        raise ValueError(f"per_seed_results: seeds {unknown} were not requested ({requested})")
    seed_list = [s for s in requested if s in results]
    per_seed = [results[s].metrics for s in seed_list]
    names = list(per_seed[0])
    for s, m in zip(seed_list[1:], per_seed[1:]):
        if list(m) != names:
            raise ValueError(
                f"run_seed: seed {s} returned metrics {sorted(m)}, "
                f"expected the same names as seed {seed_list[0]}: {sorted(names)}"
            )
    summary = {k: MetricSummary.of([m[k] for m in per_seed]) for k in names}
    missing = sorted({m for c in experiment.claims for m in c.metrics if m not in summary})
    if missing:
        raise ValueError(f"run_seed: claims need metrics {missing} that were not returned; got {names}")
    claims = [c.judge(per_seed) for c in experiment.claims]
    wall = float(sum(results[s].seconds for s in seed_list))
    module = sys.modules.get(type(experiment).__module__)
    dist = getattr(experiment, "distribution", None) or _dist_of(experiment.slug)
    rec = run_record(dist, getattr(module, "__file__", None))
    rec["wall_time_s"] = wall
    rec["seeds"] = seed_list
    rec["seed_seconds"] = {str(s): results[s].seconds for s in seed_list}
    if experiment.overrides:
        rec["overrides"] = {k: _plain(v) for k, v in experiment.overrides.items()}
    rec.update(record or {})
    incomplete = len(seed_list) < len(requested)
    if incomplete:
        rec["incomplete"] = True
        try:  # tables of a partial run may not be computable; the verdicts are what matters
            tables = experiment.tables(per_seed, quick)
        except Exception as e:
            tables = {"Tables": f"not computed for the incomplete run ({type(e).__name__}: {e})"}
    else:
        tables = experiment.tables(per_seed, quick)
    common: dict[str, Any] = dict(
        slug=experiment.slug,
        paper=experiment.paper,
        quick=quick,
        seeds=seed_list,
        per_seed=per_seed,
        summary=summary,
        claims=claims,
        wall_time_s=wall,
        record=rec,
        config=config,
        seeds_note=experiment.seeds_note,
        tables=tables,
    )
    if incomplete:
        return IncompleteReport(**common, requested_seeds=requested)
    return Report(**common)


@functools.cache
def _source_hash(cls: type) -> str | None:
    """sha256 (16 hex digits) of the Python sources of the package that defines ``cls``."""
    module = sys.modules.get(cls.__module__)
    file = getattr(module, "__file__", None)
    if not file:
        return None
    package = (getattr(module, "__package__", "") or "").split(".")
    root = Path(file).resolve().parent
    if not package or package == [""]:
        files = [Path(file).resolve()]
    else:
        pkg = sys.modules.get(".".join(package[:2]) if package[0] == "paperworks" else package[0])
        paths = list(getattr(pkg, "__path__", []) or [])
        root = Path(paths[0]).resolve() if paths else root
        files = sorted(root.rglob("*.py"))
    h = hashlib.sha256()
    for f in files:
        try:
            h.update(str(f.relative_to(root) if f.is_relative_to(root) else f.name).encode())
            h.update(b"\0")
            h.update(f.read_bytes())
        except OSError:
            continue
    return h.hexdigest()[:16]


def code_version(experiment: Experiment) -> dict[str, Any]:
    """What identifies the code of a run: the distribution and its version, a hash of the package's
    sources (so an edited checkout counts as different code) and the core's version."""
    from importlib.metadata import PackageNotFoundError, version

    dist = getattr(experiment, "distribution", None) or _dist_of(experiment.slug)
    try:
        core = version("paperworks-core")
    except PackageNotFoundError:
        core = None
    pkg_version = None
    if dist is not None:
        try:
            pkg_version = version(dist)
        except PackageNotFoundError:
            pass
    return {"package": dist, "version": pkg_version, "source": _source_hash(type(experiment)), "core": core}


def canonical(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (tuples as lists, non-finite floats as strings), to compare
    a config or code record with one loaded from a file."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, Mapping):
        return {str(k): canonical(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [canonical(v) for v in obj]
    return obj


def config_diff(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str:
    """``key: x there, y here`` for the keys where two resolved configs differ."""
    a, b = canonical(dict(a or {})), canonical(dict(b or {}))
    keys = [k for k in dict.fromkeys([*a, *b]) if a.get(k, "<absent>") != b.get(k, "<absent>")]
    shown = "; ".join(f"{k}: {a.get(k, '<absent>')!r} there, {b.get(k, '<absent>')!r} here" for k in keys[:4])
    more = f"; and {len(keys) - 4} more" if len(keys) > 4 else ""
    return (shown + more) or "no field differs"


def _dist_of(slug: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    dist = f"paperworks-{slug}"
    try:
        version(dist)
    except PackageNotFoundError:
        return None
    return dist


def _plain(v: Any) -> Any:
    """A config value as JSON-friendly data (tuples to lists, dataclasses to dicts)."""
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, bool | int | float | str) or v is None:
        return v
    return repr(v)


def _seed_list(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, bool):
        raise TypeError("seeds: expected a positive int or a list of ints, got a bool")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"seeds: expected a positive number of seeds, got {seeds}")
        return list(range(seeds))
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds: expected at least one seed, got an empty list")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds: expected distinct seeds, got {out}")
    return out


def _check_metrics(raw: Mapping[str, float], where: str) -> dict[str, float]:
    if not isinstance(raw, Mapping) or not raw:
        raise TypeError(f"{where}: expected a non-empty mapping of metric name to number")
    out = {}
    for k, v in raw.items():
        if not isinstance(k, str):
            raise TypeError(f"{where}: metric names must be strings, got {k!r}")
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            raise TypeError(f"{where}: metric {k!r} is not a number: {v!r}") from None
    return out
