"""vowpal wabbit's ``--cbify K``, the practitioner's multiclass-to-contextual-bandit tool, and its lines.

``--cbify K`` reads ordinary multiclass examples (``label | features``, labels ``1..K``) but learns from
bandit feedback only: for each example it plays an action from its exploration distribution and
learns from the 0/1 cost of that action alone (the label is used only to compute that cost). Exploration:
``"epsilon"`` (``--cbify K --epsilon e``, vowpal wabbit's default ``e = 0.05``) or ``"squarecb"``
(``--cbify K --cb_explore_adf --squarecb``, default ``--gamma_scale 10``).

A finite domain point ``x`` is the one-hot feature ``p<x>`` in namespace ``x`` (a per-point cost per action:
the one-hot linear model holds every function of the points, so the class of all functions is
realizable for it). The output classifier is vowpal wabbit's greedy policy: the model is saved and
reloaded with exploration turned off (``-t`` and ``--epsilon 0``, or a huge SquareCB learning rate
``gamma``), because ``predict`` of a ``--cbify`` workspace samples from the exploration distribution.

vowpalwabbit is an optional dependency (extra ``peer``); it is imported when a :class:`VWCbify` is made.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from paperworks.core import atomic_write_text
from paperworks.core.validate import finite_array, int_in_range, one_of, positive_float

__all__ = ["EXPLORATIONS", "VWCbify", "cbify_lines", "write_cbify_file"]

EXPLORATIONS = ("epsilon", "squarecb")


def _features(X: np.ndarray, namespace: str) -> list[str]:
    if X.ndim == 1:
        return [f"|{namespace} p{int(x)}" for x in X]
    return ["|" + namespace + " " + " ".join(f"f{j}:{v:.6g}" for j, v in enumerate(row)) for row in X]


def cbify_lines(X: object, y: object, *, n_labels: int | None = None, namespace: str = "x") -> list[str]:
    """vowpal wabbit ``--cbify`` lines for a labelled stream: ``"<y+1> |x p<x>"`` for integer points
    ``X`` of shape ``(n,)``, ``"<y+1> |x f0:v0 f1:v1 ..."`` for real features of shape ``(n, d)``.

    ``y``: labels ``0..K-1`` of shape ``(n,)`` (vowpal wabbit's labels are ``1..K``). ``namespace``: a name
    of letters and digits.
    """
    Xa = np.asarray(X)
    if Xa.ndim == 1:
        Xa = finite_array(Xa, "X", ndim=1, dtype_kind="i")
        if Xa.min() < 0:
            raise ValueError(f"X: expected non-negative integer points, got min {int(Xa.min())}")
    else:
        Xa = finite_array(Xa, "X", ndim=2)
    ya = finite_array(y, "y", shape=(Xa.shape[0],), dtype_kind="i")
    k = int(ya.max()) + 1 if n_labels is None else int_in_range(n_labels, "n_labels", 1)
    if ya.min() < 0 or ya.max() >= k:
        raise ValueError(f"y: expected labels in 0..{k - 1}, got {int(ya.min())}..{int(ya.max())}")
    if not namespace or not namespace.isalnum():
        raise ValueError(f"namespace: expected letters and digits, got {namespace!r}")
    return [f"{int(label) + 1} {f}" for label, f in zip(ya, _features(Xa, namespace))]


def write_cbify_file(path: str | os.PathLike[str], X: object, y: object, **kwargs: object) -> Path:
    """Write :func:`cbify_lines` to ``path`` atomically (one example per line); for ``vw --cbify K -d``."""
    lines = cbify_lines(X, y, **kwargs)  # type: ignore[arg-type]
    return atomic_write_text(Path(path), "\n".join(lines) + "\n")


class VWCbify:
    """A ``vowpalwabbit.Workspace`` in ``--cbify K`` mode on a finite domain, with a greedy readout.

    ``learn(x, y)`` hands vowpal wabbit the example ``(x, y)``; it explores, observes only whether its
    own action was ``y`` and learns from that. ``greedy_predict(points)`` returns its exploit policy's
    labels (0-based). ``extra``: further vowpal wabbit arguments (e.g. ``"-b 18"``).
    """

    def __init__(
        self,
        n_labels: int,
        *,
        exploration: str = "epsilon",
        epsilon: float = 0.05,
        gamma_scale: float = 10.0,
        seed: int = 0,
        extra: str = "",
    ) -> None:
        try:
            import vowpalwabbit
        except ImportError as e:  # pragma: no cover - exercised only without the extra
            raise ImportError("VWCbify needs vowpalwabbit: pip install 'paperworks-listcascade[peer]'") from e
        self._vw_module = vowpalwabbit
        self.n_labels = int_in_range(n_labels, "n_labels", 2)
        self.exploration = one_of(exploration, "exploration", EXPLORATIONS)
        self.epsilon = float(epsilon)
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon: expected a probability in [0, 1], got {epsilon!r}")
        self.gamma_scale = positive_float(gamma_scale, "gamma_scale")
        self.seed = int_in_range(seed, "seed", 0)
        if self.exploration == "epsilon":
            explore = f"--epsilon {self.epsilon:g}"
        else:  # the default scale is left implicit so that the greedy readout may override it
            explore = "--cb_explore_adf --squarecb" + (
                "" if self.gamma_scale == 10.0 else f" --gamma_scale {self.gamma_scale:g}"
            )
        self.args = f"--cbify {self.n_labels} {explore} --quiet --random_seed {self.seed} {extra}".strip()
        self.vw = vowpalwabbit.Workspace(self.args)
        self._lines: dict[tuple[int, int], str] = {}
        self.rounds = 0

    def learn(self, x: int, y: int) -> None:
        """One round on the example ``(x, y)`` (0-based label)."""
        line = self._lines.get((x, y))
        if line is None:
            line = self._lines[(x, y)] = f"{int(y) + 1} |x p{int(x)}"
        self.vw.learn(line)
        self.rounds += 1

    def learn_many(self, xs: Sequence[int], ys: Sequence[int]) -> None:
        for x, y in zip(xs, ys):
            self.learn(x, y)

    def greedy_predict(self, points: Sequence[int]) -> np.ndarray:
        """The greedy (exploit) policy's 0-based labels at ``points``: the model reloaded without
        exploration (``-t``; ``--epsilon 0``, or SquareCB's ``gamma`` made huge), queried, discarded."""
        if self.exploration == "epsilon":
            off = "--epsilon 0"
        else:  # SquareCB's gamma_t = gamma_scale t^gamma_exponent: make it huge
            off = "--gamma_scale 1e9" if self.gamma_scale == 10.0 else "--gamma_exponent 8"
        with tempfile.TemporaryDirectory(prefix="listcascade_vw_") as tmp:
            path = Path(tmp) / "model.vw"
            self.vw.save(str(path))
            greedy = self._vw_module.Workspace(f"-i {path} -t {off} --quiet")
            try:
                return np.array([greedy.predict(f"|x p{int(x)}") - 1 for x in points], dtype=np.int64)
            finally:
                greedy.finish()

    def close(self) -> None:
        if self.vw is not None:
            self.vw.finish()
            self.vw = None

    def __enter__(self) -> VWCbify:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
