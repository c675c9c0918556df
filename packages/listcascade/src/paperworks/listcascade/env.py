"""A gymnasium environment that turns any labelled stream into bandit feedback: :class:`BanditFeedbackEnv`.

Each step shows an instance, takes a predicted label as the action and pays reward 1 if it was the
instance's label, else 0; the label itself is never shown (``info`` carries only ``"correct"`` and the
round). Instances are either integer points of a finite domain (observation space ``Discrete(n_points)``)
or real feature vectors (``Box``). ``sampling="shuffle"`` goes once through the stream in an order drawn
at ``reset`` (an episode is one pass); ``sampling="iid"`` draws instances i.i.d. (with probabilities
``p``) for ``horizon`` steps, as the PAC protocol does. Needs gymnasium (extra ``gym``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from paperworks.core.validate import finite_array, int_in_range, one_of, probability_vector

__all__ = ["BanditFeedbackEnv"]


class BanditFeedbackEnv(gym.Env):
    """Bandit feedback from a labelled stream ``(X, y)``: observe ``X[i]``, act a label, get ``1[a = y[i]]``.

    ``X``: integer points of shape ``(n,)`` or features of shape ``(n, d)``; ``y``: labels ``0..K-1``
    (``K = n_labels`` or ``max(y) + 1``); ``sampling``: ``"shuffle"`` or ``"iid"``; ``p``: probabilities of
    the ``n`` instances for ``"iid"`` (default uniform); ``horizon``: steps per episode (``"iid"``,
    default ``n``).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(
        self,
        X: object,
        y: object,
        n_labels: int | None = None,
        *,
        sampling: str = "shuffle",
        p: object = None,
        horizon: int | None = None,
        n_points: int | None = None,
    ) -> None:
        super().__init__()
        Xa = np.asarray(X)
        if Xa.ndim == 1:
            Xa = finite_array(Xa, "X", ndim=1, dtype_kind="i").astype(np.int64)
            if Xa.min() < 0:
                raise ValueError(f"X: expected non-negative integer points, got min {int(Xa.min())}")
            npts = int(Xa.max()) + 1 if n_points is None else int_in_range(n_points, "n_points", 1)
            if Xa.max() >= npts:
                raise ValueError(f"X: expected points in 0..{npts - 1}, got max {int(Xa.max())}")
            self.observation_space = spaces.Discrete(npts)
        else:
            Xa = finite_array(Xa, "X", ndim=2).astype(np.float32)
            lo, hi = Xa.min(axis=0), Xa.max(axis=0)
            self.observation_space = spaces.Box(lo, hi, shape=(Xa.shape[1],), dtype=np.float32)
        ya = finite_array(y, "y", shape=(Xa.shape[0],), dtype_kind="i").astype(np.int64)
        k = int(ya.max()) + 1 if n_labels is None else int_in_range(n_labels, "n_labels", 1)
        if ya.min() < 0 or ya.max() >= k:
            raise ValueError(f"y: expected labels in 0..{k - 1}, got {int(ya.min())}..{int(ya.max())}")
        self.action_space = spaces.Discrete(k)
        self.X, self.y = Xa, ya
        self.sampling = one_of(sampling, "sampling", ("shuffle", "iid"))
        n = Xa.shape[0]
        self.p = None if p is None else probability_vector(p, "p")
        if self.p is not None and self.p.shape != (n,):
            raise ValueError(f"p: expected shape ({n},), got {self.p.shape}")
        if self.sampling == "shuffle" and horizon is not None and horizon > n:
            raise ValueError(f"horizon: a shuffled pass has at most {n} steps, got {horizon}")
        self.horizon = n if horizon is None else int_in_range(horizon, "horizon", 1)
        self._order = np.arange(n)
        self._t = 0

    def _obs(self) -> Any:
        x = self.X[self._order[min(self._t, self.horizon - 1)]]
        return int(x) if self.X.ndim == 1 else x.copy()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        n = self.X.shape[0]
        if self.sampling == "shuffle":
            self._order = self.np_random.permutation(n)[: self.horizon]
        else:
            self._order = self.np_random.choice(n, size=self.horizon, p=self.p)
        self._t = 0
        return self._obs(), {"round": 0}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if not self.action_space.contains(action):
            raise ValueError(f"action: expected a label in 0..{self.action_space.n - 1}, got {action!r}")
        if self._t >= self.horizon:
            raise RuntimeError("step: the episode has ended; call reset()")
        correct = bool(int(action) == self.y[self._order[self._t]])
        self._t += 1
        terminated = self._t >= self.horizon
        return self._obs(), float(correct), terminated, False, {"correct": correct, "round": self._t}
