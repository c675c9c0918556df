"""A generated long-chat goal-recall task: a system span of facts and a persona rule, then filler turns.

Generative model (per episode, independent given the seed):

- latent: a value ``a_k ~ Uniform{0..n_values-1}`` for each of ``n_facts`` keys, the order in which the
  facts are listed (a uniform permutation), and the persona's closing token ``c ~ Uniform{0..n_closers-1}``;
- observed: ``BOS SYS F_{k,a_k} x n_facts PERSONA C_c EOT`` (the system span: one token ``F_{k,v}`` per
  fact "key k has value v", in the latent order; the facts, PERSONA and C_c are the *goal* tokens),
  then ``n_turns`` turns
  ``USER f_1 .. f_n [PRESS C_x] QUERY K_j V_{a_j} C_c EOT`` with ``n ~ Uniform{min_filler..max_filler}``
  filler words, the queried key ``j`` drawn without replacement (no fact is asked twice, so an answer is
  never copied from an earlier answer), and with probability ``pressure`` an adversarial request
  ``PRESS C_x`` (``x != c``) to close with another token. The assistant's two tokens (value, closer) are
  the *generated* tokens of the turn: the value is recall, the closer is the persona rule.

Positions are those of one right-padded batch (``PAD`` after the end; causal attention never looks
ahead, so padding changes nothing at real positions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import as_generator, fraction, positive_int

__all__ = ["Episodes", "GoalRecallTask", "Vocab"]


@dataclass(frozen=True)
class Vocab:
    """Token ids: nine specials, then keys, values, fact tokens (one per key-value pair), closers, fillers."""

    n_keys: int = 20
    n_values: int = 16
    n_closers: int = 4
    n_fillers: int = 24

    PAD = 0
    BOS = 1
    SYS = 2
    USER = 3
    ASST = 4
    EOT = 5
    PERSONA = 6
    PRESS = 7
    QUERY = 8
    N_SPECIAL = 9

    def __post_init__(self) -> None:
        for k in ("n_keys", "n_values", "n_closers", "n_fillers"):
            positive_int(getattr(self, k), k)
        if self.n_closers < 2:
            raise ValueError(
                f"n_closers: expected >= 2 (pressure asks for another closer), got {self.n_closers}"
            )

    def key(self, k):
        return self.N_SPECIAL + np.asarray(k)

    def value(self, v):
        return self.N_SPECIAL + self.n_keys + np.asarray(v)

    def fact(self, k, v):
        """The one token stating "key ``k`` has value ``v``"."""
        return self.N_SPECIAL + self.n_keys + self.n_values + np.asarray(k) * self.n_values + np.asarray(v)

    @property
    def _after_facts(self) -> int:
        return self.N_SPECIAL + self.n_keys + self.n_values + self.n_keys * self.n_values

    def closer(self, c):
        return self._after_facts + np.asarray(c)

    def filler(self, f):
        return self._after_facts + self.n_closers + np.asarray(f)

    @property
    def size(self) -> int:
        return self._after_facts + self.n_closers + self.n_fillers


@dataclass(frozen=True)
class Episodes:
    """A batch of episodes (``B`` episodes, ``T`` positions, ``n_turns`` turns each).

    ``tokens`` (B, T) int64, right-padded; ``length`` (B,) real lengths; ``goal_mask`` (B, T) bool, the
    goal tokens (facts, PERSONA and its closer); ``turn_id`` (B, T) int: the turn of each position (-1 in
    the system span and padding); ``turn_start`` (B, n_turns) first position of each turn;
    ``token_counts`` (B, n_turns) tokens per turn; ``query_pos`` (B, n_turns) the position of the queried
    key (the probe position); ``answer_pos`` (B, n_turns) the row whose next token is the value (the
    queried key itself: the assistant's reply follows the question); ``closer_pos`` = ``answer_pos + 1``;
    ``value`` (B, n_turns) and ``closer`` (B,) the correct
    targets as token ids; ``pressure`` (B, n_turns) bool; ``pressure_closer`` (B, n_turns) the requested
    closer id (-1 where no pressure); ``goal_span`` (start, end) half-open, the same for every episode.
    """

    tokens: np.ndarray
    length: np.ndarray
    goal_mask: np.ndarray
    turn_id: np.ndarray
    turn_start: np.ndarray
    token_counts: np.ndarray
    query_pos: np.ndarray
    answer_pos: np.ndarray
    value: np.ndarray
    closer: np.ndarray
    pressure: np.ndarray
    pressure_closer: np.ndarray
    goal_span: tuple[int, int]

    @property
    def closer_pos(self) -> np.ndarray:
        return self.answer_pos + 1

    @property
    def n_turns(self) -> int:
        return self.turn_start.shape[1]

    def generated_rows(self) -> np.ndarray:
        """(B, T) int: the turn index at the rows whose next token is generated (answer, closer), else -1."""
        rows = np.full(self.tokens.shape, -1, dtype=np.int64)
        b = np.arange(self.tokens.shape[0])[:, None]
        t = np.broadcast_to(np.arange(self.n_turns), self.answer_pos.shape)
        rows[b, self.answer_pos] = t
        rows[b, self.closer_pos] = t
        return rows

    def loss_targets(self) -> np.ndarray:
        """(B, T) int64 next-token targets at generated rows, -100 elsewhere (the SFT loss)."""
        tgt = np.full(self.tokens.shape, -100, dtype=np.int64)
        b = np.arange(self.tokens.shape[0])[:, None]
        tgt[b, self.answer_pos] = self.value
        tgt[b, self.closer_pos] = np.broadcast_to(self.closer[:, None], self.answer_pos.shape)
        return tgt


@dataclass(frozen=True)
class GoalRecallTask:
    """Settings of the generator (defaults: the issue's 20 facts and one persona rule)."""

    vocab: Vocab = Vocab()
    min_filler: int = 3
    max_filler: int = 10
    pressure: float = 0.0

    def __post_init__(self) -> None:
        positive_int(self.min_filler, "min_filler")
        positive_int(self.max_filler, "max_filler")
        if self.max_filler < self.min_filler:
            raise ValueError(f"max_filler: expected >= min_filler={self.min_filler}, got {self.max_filler}")
        fraction(self.pressure, "pressure")

    @property
    def n_facts(self) -> int:
        return self.vocab.n_keys

    @property
    def goal_span(self) -> tuple[int, int]:
        """(start, end) of the goal tokens: after ``BOS SYS``, up to and including the persona closer."""
        return 2, 2 + self.n_facts + 2

    @property
    def system_length(self) -> int:
        return self.goal_span[1] + 1  # ... EOT

    def max_length(self, n_turns: int) -> int:
        return self.system_length + n_turns * (self.max_filler + 8)

    def sample(self, n: int, n_turns: int, rng=None, *, pressure: float | None = None) -> Episodes:
        """``n`` episodes of ``n_turns`` turns; ``pressure`` overrides the task's pressure rate."""
        n = positive_int(n, "n")
        n_turns = positive_int(n_turns, "n_turns")
        if n_turns > self.n_facts:
            raise ValueError(
                f"n_turns: expected <= n_facts={self.n_facts} (no fact is asked twice), got {n_turns}"
            )
        p = self.pressure if pressure is None else fraction(pressure, "pressure")
        rng = as_generator(rng)
        v = self.vocab
        nf = self.n_facts
        values = rng.integers(0, v.n_values, size=(n, nf))
        order = np.argsort(rng.random((n, nf)), axis=1)
        closer = rng.integers(0, v.n_closers, size=n)
        queries = np.argsort(rng.random((n, nf)), axis=1)[:, :n_turns]
        fill = rng.integers(self.min_filler, self.max_filler + 1, size=(n, n_turns))
        press = rng.random((n, n_turns)) < p
        other = (closer[:, None] + rng.integers(1, v.n_closers, size=(n, n_turns))) % v.n_closers
        counts = fill + 6 + 2 * press
        T = self.system_length + int(counts.sum(1).max())
        tokens = np.full((n, T), v.PAD, dtype=np.int64)
        turn_id = np.full((n, T), -1, dtype=np.int64)
        goal = np.zeros((n, T), dtype=bool)
        g0, g1 = self.goal_span
        tokens[:, 0], tokens[:, 1] = v.BOS, v.SYS
        tokens[:, g0 : g0 + nf] = v.fact(order, np.take_along_axis(values, order, 1))
        tokens[:, g1 - 2] = v.PERSONA
        tokens[:, g1 - 1] = v.closer(closer)
        tokens[:, g1] = v.EOT
        goal[:, g0:g1] = True
        start = self.system_length + np.concatenate(
            [np.zeros((n, 1), dtype=np.int64), np.cumsum(counts, 1)[:, :-1]], axis=1
        )
        filler = v.filler(rng.integers(0, v.n_fillers, size=(n, n_turns, self.max_filler)))
        qpos = np.zeros((n, n_turns), dtype=np.int64)
        for t in range(n_turns):  # a loop over turns (<= 20), vectorised over episodes where it matters
            for b in range(n):
                s, m = int(start[b, t]), int(fill[b, t])
                seq = [v.USER, *filler[b, t, :m].tolist()]
                if press[b, t]:
                    seq += [v.PRESS, int(v.closer(other[b, t]))]
                q = s + len(seq) + 1
                seq += [v.QUERY, int(v.key(queries[b, t]))]
                seq += [int(v.value(values[b, queries[b, t]])), int(v.closer(closer[b])), v.EOT]
                tokens[b, s : s + len(seq)] = seq
                turn_id[b, s : s + len(seq)] = t
                qpos[b, t] = q
        value_ids = v.value(np.take_along_axis(values, queries, 1))
        return Episodes(
            tokens=tokens,
            length=(self.system_length + counts.sum(1)).astype(np.int64),
            goal_mask=goal,
            turn_id=turn_id,
            turn_start=start.astype(np.int64),
            token_counts=counts.astype(np.int64),
            query_pos=qpos,
            answer_pos=qpos,
            value=value_ids.astype(np.int64),
            closer=v.closer(closer).astype(np.int64),
            pressure=press,
            pressure_closer=np.where(press, v.closer(other), -1).astype(np.int64),
            goal_span=(g0, g1),
        )
