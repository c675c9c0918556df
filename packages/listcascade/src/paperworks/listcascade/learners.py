"""Learners for multiclass PAC learning with bandit feedback on a finite class (the realizable setting).

Protocol (arXiv 2605.25678, abstract): each round an unlabeled point ``x`` arrives, the learner predicts a
label ``y_hat`` and is told only whether ``y_hat = h*(x)`` for the unknown target ``h* in H``; after ``m``
rounds it outputs a classifier, judged by its ordinary error ``P_D(h(x) != h*(x))``.

- :class:`ListCascade` (our reading of the paper's principle, README Fidelity): the version space ``V``
  (hypotheses consistent with all feedback) gives at each point the candidate list
  ``L(x) = {h(x) : h in V}``, ordered by votes (how many ``h in V`` predict the label; ties in a fixed
  random order). The learner plays the head of ``L(x)``: "wrong" removes that label's hypotheses (the
  next visit of ``x`` cascades to the next candidate), "correct" collapses ``V`` to the hypotheses
  predicting it. A point whose list has one label is known: predicting it is always correct and teaches
  nothing. The output classifier predicts the head of each list (the plurality vote of ``V``).
- :class:`UniformExploration` (Daniely, Sabato, Ben-David and Shalev-Shwartz 2011): predicts a uniform
  label in ``0..K-1``; ``estimator="iw"`` outputs the ERM of the importance-weighted loss estimate
  ``1 - K 1[y_hat = h(x)] 1[correct]`` (the hypotheses maximising the weighted count of their confirmed
  predictions); ``estimator="consistent"`` uses the version space of all feedback (also "wrong").
- :class:`FullInformationERM`: sees the true label each round (the full-information reference, governed
  by the DS dimension); version space of the labelled examples.

All outputs are the plurality vote of the learner's set of empirical risk minimisers (ties broken in the
learner's fixed random order), so the learners differ only in what they predict while learning and in
what they keep from the feedback.
"""

from __future__ import annotations

import numpy as np

from paperworks.core.validate import as_generator, one_of

from ._validate import NonRealizableError, check_bool, check_class, check_label, check_point

__all__ = ["FullInformationERM", "ListCascade", "NonRealizableError", "UniformExploration", "VersionSpace"]

TIE_BREAKS = ("random", "smallest")


class VersionSpace:
    """A set of empirical risk minimisers over a finite class, its per-point candidate lists and its vote.

    ``hypotheses``: ``(|H|, |X|)`` integer labels in ``0..K-1`` (repeated rows are dropped);
    ``n_labels``: ``K`` (default: the largest label + 1); ``tie_break``: ``"random"`` (a fixed random
    order of the labels at each point, drawn from ``rng``) or ``"smallest"``.
    """

    def __init__(
        self,
        hypotheses: object,
        n_labels: int | None = None,
        *,
        tie_break: str = "random",
        rng: object = None,
    ) -> None:
        self.hypotheses, self.n_labels = check_class(hypotheses, n_labels=n_labels)
        one_of(tie_break, "tie_break", TIE_BREAKS)
        self.tie_break = tie_break
        self.rng = as_generator(rng)
        n, k = self.n_points, self.n_labels
        if tie_break == "random":
            self._prio = self.rng.random((n, k)) * 0.5
        else:
            self._prio = np.broadcast_to(-np.arange(k) / (2.0 * k), (n, k)).copy()
        self._offsets = (k * np.arange(n))[None, :]
        self.alive = np.arange(self.hypotheses.shape[0])
        self._refresh()

    # -- state -------------------------------------------------------------------------------------
    @property
    def n_points(self) -> int:
        return int(self.hypotheses.shape[1])

    @property
    def size(self) -> int:
        """``|V|``: how many hypotheses are still in the version space."""
        return int(self.alive.size)

    @property
    def version_space(self) -> np.ndarray:
        """The hypotheses still consistent, shape ``(|V|, |X|)`` (a copy)."""
        return self.hypotheses[self.alive].copy()

    def _refresh(self) -> None:
        sub = self.hypotheses[self.alive]
        votes = np.bincount((sub + self._offsets).ravel(), minlength=self.n_points * self.n_labels)
        self.votes = votes.reshape(self.n_points, self.n_labels)
        score = np.where(self.votes > 0, self.votes + self._prio, -np.inf)
        self._score = score
        self.heads = np.argmax(score, axis=1)
        self.list_sizes = (self.votes > 0).sum(axis=1)

    def _restrict(self, keep: np.ndarray, what: str) -> bool:
        """Keep ``alive[keep]``; True when the set changed. Raises when nothing would be left."""
        if keep.all():
            return False
        if not keep.any():
            raise NonRealizableError(
                f"{what}: no hypothesis of the class is consistent with the feedback (the target is not in H)"
            )
        self.alive = self.alive[keep]
        self._refresh()
        return True

    # -- lists and the output classifier --------------------------------------------------------------
    def candidates(self, x: int) -> np.ndarray:
        """The candidate list ``L(x)``, most-voted first (ties in the fixed tie-break order)."""
        x = check_point(x, self.n_points, "x")
        labels = np.flatnonzero(self.votes[x] > 0)
        return labels[np.argsort(-self._score[x, labels], kind="stable")]

    def predict(self, points: object) -> np.ndarray:
        """The output classifier at ``points`` (ints, any shape): the head of each candidate list."""
        p = np.asarray(points)
        if p.dtype.kind not in "iu" or (p.size and (p.min() < 0 or p.max() >= self.n_points)):
            raise ValueError(f"points: expected integer points in 0..{self.n_points - 1}, got {p!r}")
        return self.heads[p]

    def error(self, target: object, weights: object) -> float:
        """``sum_x weights[x] 1[output(x) != target[x]]``: the output's error under ``weights``."""
        t = np.asarray(target)
        w = np.asarray(weights, dtype=float)
        if t.shape != (self.n_points,) or w.shape != (self.n_points,):
            raise ValueError(f"target, weights: expected shape ({self.n_points},), got {t.shape}, {w.shape}")
        return float(w[self.heads != t].sum())

    def known(self) -> np.ndarray:
        """Boolean ``(|X|,)``: points whose candidate list has a single label."""
        return self.list_sizes == 1


class ListCascade(VersionSpace):
    """ListCascade on a finite class: cascade predictions through the version space's candidate lists.

    Use ``y = learner.propose(x)`` then ``learner.update(x, y, correct)``; ``predict(points)`` is the output
    classifier (it is also what ``propose`` plays). ``update`` raises :class:`NonRealizableError` when the
    feedback contradicts every hypothesis (the target is not in ``H``).
    """

    def propose(self, x: int) -> int:
        """The label to play at ``x``: the head of its candidate list."""
        x = check_point(x, self.n_points, "x")
        return int(self.heads[x])

    def update(self, x: int, y_pred: int, correct: bool) -> bool:
        """Feedback for ``y_pred`` at ``x``: "correct" collapses ``V`` to ``{h : h(x) = y_pred}``, "wrong"
        removes those hypotheses. Returns whether ``V`` changed."""
        x = check_point(x, self.n_points, "x")
        y = check_label(y_pred, self.n_labels, "y_pred")
        c = check_bool(correct, "correct")
        agree = self.hypotheses[self.alive, x] == y
        return self._restrict(agree if c else ~agree, f"update(x={x}, y_pred={y}, correct={c})")


class UniformExploration(VersionSpace):
    """Uniform exploration (Daniely et al. 2011): play a uniform label in ``0..K-1``, then ERM.

    ``estimator="iw"``: ERM of the importance-weighted loss estimate; the learner keeps each hypothesis's
    weighted count of confirmed predictions ``sum_t K 1[y_hat_t = h(x_t)] 1[correct_t]`` and its version
    space is the set of maximisers. ``estimator="consistent"``: the version space of all feedback.
    """

    def __init__(
        self,
        hypotheses: object,
        n_labels: int | None = None,
        *,
        estimator: str = "iw",
        tie_break: str = "random",
        rng: object = None,
    ) -> None:
        super().__init__(hypotheses, n_labels, tie_break=tie_break, rng=rng)
        self.estimator = one_of(estimator, "estimator", ("iw", "consistent"))
        self.iw_scores = np.zeros(self.hypotheses.shape[0])

    def propose(self, x: int) -> int:
        check_point(x, self.n_points, "x")
        return int(self.rng.integers(self.n_labels))

    def update(self, x: int, y_pred: int, correct: bool) -> bool:
        x = check_point(x, self.n_points, "x")
        y = check_label(y_pred, self.n_labels, "y_pred")
        c = check_bool(correct, "correct")
        where = f"update(x={x}, y_pred={y}, correct={c})"
        if self.estimator == "consistent":
            agree = self.hypotheses[self.alive, x] == y
            return self._restrict(agree if c else ~agree, where)
        if not c:  # the weighted estimate of a wrong round is the same loss 1 for every hypothesis
            return False
        self.iw_scores[self.hypotheses[:, x] == y] += self.n_labels
        best = np.flatnonzero(self.iw_scores == self.iw_scores.max())
        if np.array_equal(best, self.alive):
            return False
        self.alive = best
        self._refresh()
        return True


class FullInformationERM(VersionSpace):
    """Full information (the reference): sees ``h*(x)`` each round; version space of labelled examples."""

    def update(self, x: int, y_true: int) -> bool:
        x = check_point(x, self.n_points, "x")
        y = check_label(y_true, self.n_labels, "y_true")
        return self._restrict(self.hypotheses[self.alive, x] == y, f"update(x={x}, y_true={y})")
