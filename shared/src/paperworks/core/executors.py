"""Where seeds run: in this process (the default, no service) or as Ray tasks on reused workers.

An executor maps :class:`SeedTask`s (an experiment, a seed, quick or full) to
:class:`~paperworks.core.experiment.SeedResult`s, yielding each ``(task, result)`` as it finishes;
every task runs :meth:`Experiment.run_one <paperworks.core.experiment.Experiment.run_one>`, and the
driver builds reports from the results with
:func:`~paperworks.core.experiment.assemble_report`, whichever executor ran them. Another engine (a
Slurm array, dask) needs only the same two calls: ``run_one`` where the seed runs, ``assemble_report``
where the results meet.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .progress import Progress

__all__ = [
    "ENGINES",
    "EngineUnavailable",
    "LocalExecutor",
    "RayExecutor",
    "SeedTask",
    "make_executor",
]

ENGINES = ("local", "ray")
RAY_HINT = "pip install 'paperworks-core[ray]'"


class EngineUnavailable(RuntimeError):
    """The engine cannot start here (not installed, no cluster at the address); one line."""


@dataclass(frozen=True)
class SeedTask:
    """One seed of one experiment. ``key``: the caller's tag (e.g. which job of a sweep)."""

    experiment: Any  # an Experiment, configured (its overrides travel with it)
    seed: int
    quick: bool
    key: Any = None


class LocalExecutor:
    """Runs the seeds here, one after the other, with progress (rate and ETA) over the seeds."""

    name = "local"

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"engine": "local"}

    def map(self, tasks: Sequence[SeedTask], progress: Progress) -> Iterator[tuple[SeedTask, Any]]:
        tasks = list(tasks)
        for i, task in enumerate(progress.track(tasks, "seeds")):
            progress.log(f"{task.experiment.slug}: seed {task.seed} ({i + 1}/{len(tasks)})")
            yield task, task.experiment.run_one(task.seed, quick=task.quick, progress=progress)


def _ray_run_one(experiment: Any, seed: int, quick: bool) -> Any:
    """The Ray task: one seed on a worker (progress off: a worker has no terminal)."""
    return experiment.run_one(seed, quick=quick, progress=Progress(enabled=False))


# Unix socket paths are limited to 107 bytes; Ray puts
# <temp>/session_<date>_<time>_<pid>/sockets/plasma_store under its temp dir.
_RAY_SOCKET_ROOM = 107 - len("/session_2026-01-01_00-00-00_000000_1234567/sockets/plasma_store")


class RayExecutor:
    """One seed per Ray task (``num_cpus=1``) on reused workers; results come back to the driver.

    Without ``address`` it starts a local Ray instance with ``num_cpus`` CPUs (default: all), no
    dashboard, a small object store (``object_store_mb``) and its temp dir under ``temp_dir`` (the
    sweep passes ``OUT/.ray``; when that path is too long for Ray's sockets, a short link to it in
    the system temp dir is used). With ``address`` (``"auto"``, ``"ray://host:10001"``, ...) it
    connects to that cluster, whose workers need the same packages installed. The experiment object
    is put in the object store once and shipped to the workers, its overrides with it.

    Ray runs a 1-CPU task with ``OMP_NUM_THREADS=1`` (unless the driver set it), so BLAS reductions
    may differ in the last bits from a local run using every core; the local engine started with
    ``OMP_NUM_THREADS=1`` gives the Ray engine's numbers bit for bit.
    """

    name = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        num_cpus: int | None = None,
        temp_dir: str | os.PathLike[str] | None = None,
        object_store_mb: int = 100,
        env: dict[str, str] | None = None,
    ) -> None:
        if num_cpus is not None and (isinstance(num_cpus, bool) or num_cpus < 1):
            raise ValueError(f"num_cpus: expected a positive int, got {num_cpus!r}")
        if address is not None and num_cpus is not None:
            raise ValueError(
                "num_cpus: set by the cluster when connecting to an address; give one or the other"
            )
        self.address, self.num_cpus = address, num_cpus
        self.temp_dir = None if temp_dir is None else Path(temp_dir)
        self.object_store_mb = object_store_mb
        self.env = dict(env or {})
        self._ray: Any = None
        self._started = False
        self._link: Path | None = None

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {"engine": "ray"}
        if self._ray is not None:
            d["ray"] = getattr(self._ray, "__version__", None)
            try:
                d["cluster_cpus"] = self._ray.cluster_resources().get("CPU")
            except Exception:
                pass
        if self.address:
            d["address"] = self.address
        else:  # what a 1-CPU task's BLAS/OpenMP sees: Ray sets 1 unless the driver set it
            d["task_omp_threads"] = os.environ.get("OMP_NUM_THREADS", "1")
        return d

    def __enter__(self) -> RayExecutor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _short_temp(self) -> str | None:
        if self.temp_dir is None:
            return None
        self.temp_dir.mkdir(parents=True, exist_ok=True)
        path = str(self.temp_dir.resolve())
        if len(path) <= _RAY_SOCKET_ROOM:
            return path
        link = Path(tempfile.mkdtemp(prefix="pw-ray-")) / "t"
        link.symlink_to(path, target_is_directory=True)
        self._link = link
        return str(link)

    def start(self) -> None:
        if self._ray is not None:
            return
        # Under `uv run`, Ray would start its workers through `uv run` again, which syncs the project's
        # default environment (without the `ray` extra) and leaves the workers without Ray. The
        # driver's interpreter already has what the workers need: use it (set =1 to opt back in).
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        try:
            import ray
        except ImportError:
            raise EngineUnavailable(f"--engine ray: Ray is not installed ({RAY_HINT})") from None
        constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
        if constants is not None and os.environ["RAY_ENABLE_UV_RUN_RUNTIME_ENV"] == "0":
            constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False  # read at import: Ray may be imported already
        self._ray = ray
        if ray.is_initialized():
            return  # someone else's Ray session: use it, leave it running
        kwargs: dict[str, Any] = dict(
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=True,
            logging_level="WARNING",
        )
        if self.address is None:
            kwargs.update(num_cpus=self.num_cpus, object_store_memory=self.object_store_mb * 2**20)
            temp = self._short_temp()
            if temp is not None:
                kwargs["_temp_dir"] = temp
            os.environ.update(self.env)  # a local instance's workers inherit the driver's environment
        else:
            kwargs = {"address": self.address, "log_to_driver": False, "logging_level": "WARNING"}
            if self.env:
                kwargs["runtime_env"] = {"env_vars": self.env}
        try:
            ray.init(**kwargs)
        except ConnectionError as e:
            raise EngineUnavailable(
                f"--address {self.address}: cannot connect to a Ray cluster ({e})"
            ) from None
        self._started = True

    def stop(self) -> None:
        if self._ray is not None and self._started:
            self._ray.shutdown()
        self._ray, self._started = None, False
        if self._link is not None:
            try:
                self._link.unlink()
                self._link.parent.rmdir()
            except OSError:
                pass
            self._link = None

    def map(self, tasks: Sequence[SeedTask], progress: Progress) -> Iterator[tuple[SeedTask, Any]]:
        tasks = list(tasks)
        if not tasks:
            return
        self.start()
        ray = self._ray
        remote = ray.remote(num_cpus=1, max_retries=0)(_ray_run_one)
        shipped: dict[int, Any] = {}
        pending: dict[Any, SeedTask] = {}
        for t in tasks:
            ref = shipped.get(id(t.experiment))
            if ref is None:
                ref = shipped[id(t.experiment)] = ray.put(t.experiment)
            pending[remote.remote(ref, t.seed, t.quick)] = t
        with progress.counter("seeds (ray)", total=len(tasks)) as bar:
            try:
                while pending:
                    done, _ = ray.wait(list(pending), num_returns=1)
                    for ref in done:
                        task = pending.pop(ref)
                        try:
                            result = ray.get(ref)
                        except ray.exceptions.RayTaskError as e:
                            raise e.as_instanceof_cause() from None
                        bar.update()
                        yield task, result
            finally:
                for ref in pending:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:
                        pass


def make_executor(
    engine: str,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
) -> LocalExecutor | RayExecutor:
    """The executor for ``engine`` (``"local"`` or ``"ray"``)."""
    if engine == "local":
        if address is not None or num_cpus is not None:
            raise ValueError("--address and --num-cpus apply to --engine ray only")
        return LocalExecutor()
    if engine == "ray":
        return RayExecutor(address=address, num_cpus=num_cpus, temp_dir=temp_dir, env=env)
    raise ValueError(f"engine: expected one of {ENGINES}, got {engine!r}")
