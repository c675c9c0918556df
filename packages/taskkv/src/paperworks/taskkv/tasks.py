"""Generated long-horizon agent trajectories in the style of AlfWorld / AgentBench.

Generative model (one trajectory, every quantity drawn from the seeded generator):

* latent: the task regime (instruction-decisive or dense routine), the goal object ``x``;
* observed: a fixed layout of steps of 4 tokens each (a step is one observation/action turn)::

      step 0          header      [BOS, SYS, f, f]          a system preamble (the attention sink)
      step 1          instruction [GOAL, x, f, f]           "take x"   (instruction-decisive task)
                               or [GOAL, CONT, f, f]        "continue" (dense routine task)
      steps 2..S-2    history:  see    [SEE, o, AT, l]      object o observed at location l
                                error  [TAKE, y, FAIL, l]   a failed attempt (repeated verbatim)
                                think  [THINK, f, f, f]     filler
      step S-1        current     [NOW, f, f, f]            the current observation (always kept)
      query           [ACT] -> the next action's object

* instruction-decisive (*sparse*) tasks: the answer is ``x``, named once, early; the history shows
  other objects (distractors) and a block of identical failed attempts on a wrong object ``y``
  (a confusing distractor, like repeated error traces in agent logs);
* *dense* routine tasks: the answer is the object of the most recent sighting; every history step
  is a state update, so no single step is decisive and the useful context is the recent run.

Every trajectory has the same length, so the step boundaries are shared by a batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["AgentTaskConfig", "AgentTasks", "Vocab", "generate_tasks"]


@dataclass(frozen=True)
class Vocab:
    """Token ids of the synthetic agent language."""

    n_objects: int = 12
    n_locations: int = 10
    n_fillers: int = 16

    PAD = 0
    BOS = 1
    SYS = 2
    GOAL = 3
    SEE = 4
    AT = 5
    TAKE = 6
    FAIL = 7
    THINK = 8
    NOW = 9
    ACT = 10
    CONT = 11
    N_SPECIAL = 12

    @property
    def obj0(self) -> int:
        return self.N_SPECIAL

    @property
    def loc0(self) -> int:
        return self.N_SPECIAL + self.n_objects

    @property
    def fill0(self) -> int:
        return self.loc0 + self.n_locations

    @property
    def size(self) -> int:
        return self.fill0 + self.n_fillers


@dataclass(frozen=True)
class AgentTaskConfig:
    """Shape of the generated trajectories.

    ``n_steps`` counts every step of the context (header, instruction, history, current step);
    ``dense_fraction`` is the share of dense routine tasks in a sample; ``n_errors`` the range of the
    length of the block of repeated error traces of an instruction task; ``p_think`` the share of
    filler steps in the history of instruction tasks, ``p_think_dense`` of dense tasks.
    """

    n_steps: int = 28
    step_len: int = 4
    dense_fraction: float = 0.3
    n_errors: tuple[int, int] = (3, 7)
    p_think: float = 0.25
    p_think_dense: float = 0.1
    vocab: Vocab = Vocab()

    def __post_init__(self) -> None:
        if self.step_len != 4:
            raise ValueError(f"step_len: the agent language has 4-token steps, got {self.step_len}")
        if self.n_steps < 8:
            raise ValueError(f"n_steps: expected at least 8 steps, got {self.n_steps}")
        if not 0.0 <= self.dense_fraction <= 1.0:
            raise ValueError(f"dense_fraction: expected a value in [0, 1], got {self.dense_fraction}")
        lo, hi = self.n_errors
        if not 0 <= lo <= hi or hi > self.n_history - 2:
            raise ValueError(f"n_errors: expected 0 <= lo <= hi <= {self.n_history - 2}, got {self.n_errors}")
        if not 0.0 <= self.p_think < 1.0:
            raise ValueError(f"p_think: expected a probability in [0, 1), got {self.p_think}")
        if not 0.0 <= self.p_think_dense < 1.0:
            raise ValueError(f"p_think_dense: expected a probability in [0, 1), got {self.p_think_dense}")

    @property
    def n_history(self) -> int:
        return self.n_steps - 3

    @property
    def context_len(self) -> int:
        return self.n_steps * self.step_len

    @property
    def offsets(self) -> np.ndarray:
        """Step boundaries of the context, shape (n_steps + 1,): step s is tokens offsets[s]:offsets[s+1]."""
        return np.arange(self.n_steps + 1) * self.step_len


@dataclass(frozen=True)
class AgentTasks:
    """A batch of trajectories.

    ``context`` (n, T) int64 token ids, ``query`` (n, 1) the action prompt, ``answer`` (n,) the
    correct next action token, ``dense`` (n,) bool, ``key_step`` (n,) the step holding the answer
    (the instruction for instruction tasks, the most recent sighting for dense tasks),
    ``offsets`` (n_steps + 1,) shared step boundaries, ``instruction_step`` the index of the instruction step.
    """

    context: np.ndarray
    query: np.ndarray
    answer: np.ndarray
    dense: np.ndarray
    key_step: np.ndarray
    offsets: np.ndarray
    instruction_step: int = 1

    def __len__(self) -> int:
        return int(self.context.shape[0])

    def subset(self, idx: np.ndarray) -> AgentTasks:
        return AgentTasks(
            self.context[idx],
            self.query[idx],
            self.answer[idx],
            self.dense[idx],
            self.key_step[idx],
            self.offsets,
        )


def generate_tasks(
    n: int, config: AgentTaskConfig, rng: np.random.Generator, dense: bool | None = None
) -> AgentTasks:
    """Draw ``n`` trajectories. ``dense``: force all sparse (False) / all dense (True); None mixes."""
    if n < 1:
        raise ValueError(f"n: expected a positive number of trajectories, got {n}")
    v = config.vocab
    S, H = config.n_steps, config.n_history
    if dense is None:
        is_dense = rng.random(n) < config.dense_fraction
    else:
        is_dense = np.full(n, bool(dense))
    steps = np.zeros((n, S, 4), dtype=np.int64)
    fill = lambda *shape: v.fill0 + rng.integers(0, v.n_fillers, size=shape)  # noqa: E731
    steps[:, 0] = np.stack([np.full(n, v.BOS), np.full(n, v.SYS), fill(n), fill(n)], axis=1)
    goal = rng.integers(0, v.n_objects, size=n)
    steps[:, 1] = np.stack([np.full(n, v.GOAL), v.obj0 + goal, fill(n), fill(n)], axis=1)
    steps[:, S - 1] = np.stack([np.full(n, v.NOW), fill(n), fill(n), fill(n)], axis=1)

    # history default: "see" steps of other objects (distractors) mixed with "think" fillers
    other = (goal[:, None] + 1 + rng.integers(0, v.n_objects - 1, size=(n, H))) % v.n_objects
    locs = rng.integers(0, v.n_locations, size=(n, H))
    hist = np.stack([np.full((n, H), v.SEE), v.obj0 + other, np.full((n, H), v.AT), v.loc0 + locs], axis=2)
    think = rng.random((n, H)) < np.where(is_dense, config.p_think_dense, config.p_think)[:, None]
    hist[think] = np.stack(
        [np.full(think.sum(), v.THINK), fill(think.sum()), fill(think.sum()), fill(think.sum())], axis=1
    )
    answer = np.zeros(n, dtype=np.int64)
    key = np.zeros(n, dtype=np.int64)
    for i in range(n):  # generation only, not a hot path
        if is_dense[i]:
            # routine continuation: the instruction says "continue", the answer is the object of the
            # most recent sighting; every history step is a state update (no error block)
            steps[i, 1, 1] = v.CONT
            see = np.flatnonzero(hist[i, :, 0] == v.SEE)
            if see.size == 0:
                hist[i, H - 1] = [v.SEE, v.obj0 + other[i, H - 1], v.AT, v.loc0 + locs[i, H - 1]]
                see = np.array([H - 1])
            key[i] = see[-1]
            answer[i] = hist[i, key[i], 1]
        else:
            # instruction-decisive: the answer is the instructed object; a block of identical failed
            # attempts on a wrong object is a confusing distractor
            n_err = rng.integers(config.n_errors[0], config.n_errors[1] + 1)
            if n_err:
                start = rng.integers(0, H - n_err + 1)
                wrong = other[i, start]
                hist[i, start : start + n_err] = [v.TAKE, v.obj0 + wrong, v.FAIL, v.loc0 + locs[i, start]]
            key[i] = -1
            answer[i] = v.obj0 + goal[i]
    steps[:, 2 : S - 1] = hist
    return AgentTasks(
        context=steps.reshape(n, S * 4),
        query=np.full((n, 1), v.ACT, dtype=np.int64),
        answer=answer,
        dense=is_dense,
        key_step=np.where(key >= 0, key + 2, 1),
        offsets=config.offsets,
    )
