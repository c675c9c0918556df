"""Per-round time of act + learn: SquareCB.Comb vs vowpal wabbit's ``--cb_explore_adf --squarecb``.

    uv run python packages/squarecb-comb/benchmarks/bench_squarecb_comb.py [--quick]
    uv run paperworks bench squarecb-comb [--quick]

One question, one :func:`paperworks.core.bench.compare` call over the arm-set sizes
``A in {100, 1000, 10000}`` (``d = 10``). Each size's input holds a pool of pre-drawn contexts, the
reward draws of every arm (arm ``i`` pays when a uniform falls below its mean) and their vowpal wabbit
text lines (formatted once, outside the timings); one call of a side is one round:

- ``squarecb_comb m=10`` (ours, the issue's setting, log-barrier program) and ``squarecb_comb igw m=1``
  (the closed-form inverse-gap weighting at ``m = 1``, which is SquareCB's own rule: the same
  single-action algorithm that vowpal wabbit's SquareCB runs), both on the linear oracle: ``act`` then
  ``learn``
  (:class:`paperworks.squarecb_comb.experiments.ActLearnRound`, the callable of the experiment's
  ``per_round_time`` claim);
- ``vw squarecb (text)``: ``predict`` on the round's ``A`` text lines, a draw from its pmf, ``learn``
  on the lines with the label on the played arm (how its Python interface is used);
- ``vw parse only``: the same two parses (``parse`` + ``finish_example`` of the ``A`` unlabelled and
  the ``A`` labelled lines) without predicting or learning: the part of vowpal wabbit's time that is
  text parsing, timed on its own.

The ratio SquareCB.Comb igw m=1 / vowpal wabbit, from the same paired rounds, goes in a table beside
the timings. vowpal wabbit is an optional peer (extra ``peer``); without it only our sides are timed.
Full mode writes ``benchmarks/results.json`` and ``results.md``; ``--quick`` (A = 100 only, 3 rounds,
1 warm-up call) writes them to a temporary folder and prints the markdown.
"""

from __future__ import annotations

import argparse

import numpy as np

from paperworks.core.bench import bootstrap_ratio_interval, compare, publish
from paperworks.squarecb_comb import EnvironmentConfig, LinearOracle, SemiBanditEnvironment, SquareCBComb
from paperworks.squarecb_comb.experiments import ActLearnRound

try:
    import vowpalwabbit
except ImportError:  # optional peer
    vowpalwabbit = None

D = 10
SIZES = (100, 1000, 10_000)
POOL = 32  # pre-drawn contexts per size, cycled
PREWARM = 20  # untimed rounds each of our agents plays while the input is built
OURS, OURS1 = "squarecb_comb m=10", "squarecb_comb igw m=1"
VW, VW_PARSE = "vw squarecb (text)", "vw parse only"
_WORKSPACES: list = []  # finished once every size has run


def _vw_lines(X: np.ndarray) -> list[str]:
    return ["|a " + " ".join(f"f{j}:{v:.4f}" for j, v in enumerate(row)) for row in X]


class VWRound:
    """One round of vowpal wabbit's SquareCB on pre-formatted text lines (``parse_only``: the parses)."""

    def __init__(
        self, lines: list[list[str]], paid: list[np.ndarray], seed: int, *, parse_only: bool
    ) -> None:
        self.vw = vowpalwabbit.Workspace("--cb_explore_adf --squarecb --quiet")
        _WORKSPACES.append(self.vw)
        self.lines, self.paid, self.parse_only = lines, paid, parse_only
        self.rng = np.random.default_rng(seed)
        self.calls = 0

    def __call__(self) -> None:
        j = self.calls % len(self.lines)
        self.calls += 1
        lines = self.lines[j]
        if self.parse_only:
            self.vw.finish_example(self.vw.parse(lines))
            a, pa = int(self.rng.integers(len(lines))), 1.0 / len(lines)
        else:
            pmf = np.asarray(self.vw.predict(lines))
            a = int(self.rng.choice(pmf.size, p=pmf / pmf.sum()))
            pa = pmf[a]
        labelled = list(lines)
        labelled[a] = f"0:{-self.paid[j][a]}:{pa:.6f} " + lines[a]
        if self.parse_only:
            self.vw.finish_example(self.vw.parse(labelled))
        else:
            self.vw.learn(labelled)


def make_input(A: int) -> dict:
    """Per size: our two agents (pre-warmed) and, when installed, the two vowpal wabbit rounds."""
    inp = {}
    for key, m, exploration in ((OURS, 10, "log_barrier"), (OURS1, 1, "igw")):
        env = SemiBanditEnvironment(EnvironmentConfig(A, 10, D), seed=A)  # same contexts for both
        agent = SquareCBComb(A, m, LinearOracle(D), exploration=exploration, seed=0)
        step = ActLearnRound(agent, env, pool=POOL)
        for _ in range(PREWARM):
            step()
        inp[key] = step
    if vowpalwabbit is not None:
        contexts, paid = inp[OURS].contexts, inp[OURS].paid
        lines = [_vw_lines(X) for X in contexts]
        inp[VW] = VWRound(lines, paid, seed=A, parse_only=False)
        inp[VW_PARSE] = VWRound(lines, paid, seed=A, parse_only=True)
    return inp


def _side(key: str):
    return lambda inp: inp[key]()


def run(sizes, *, repeats: int, warmup: int) -> list:
    names = [OURS, OURS1] + ([VW, VW_PARSE] if vowpalwabbit is not None else [])
    version = "not installed" if vowpalwabbit is None else getattr(vowpalwabbit, "__version__", "?")
    res = compare(
        {n: _side(n) for n in names},
        make_input,
        sizes,
        ours=OURS,
        name="Per-round act + learn time vs vowpal wabbit SquareCB",
        warmup=warmup,
        repeats=repeats,
        min_time_s=0.02,
        threads=1,
        size_label="arms A",
        note=(
            f"d = {D}, linear oracle; one call = one round (act + learn) on a pool of {POOL} pre-drawn "
            f"contexts, cycled; our agents have played {PREWARM} untimed rounds before the warm-up. "
            f"vowpal wabbit {version} (`--cb_explore_adf --squarecb`, single action, hashed linear "
            "model) is timed through its Python interface on the round's A text lines, formatted "
            "outside the timings; `vw parse only` times its two parses per round (unlabelled lines for "
            "predict, labelled lines for learn) without learning: vowpal wabbit's time is mostly text "
            "parsing, which grows linearly with A, not its learning algorithm. Measured on a 2-core "
            "machine shared with other jobs."
        ),
    )
    for vw in _WORKSPACES:
        vw.finish()
    _WORKSPACES.clear()
    return [res]


def m1_table(res) -> str:
    """SquareCB.Comb igw m=1 / vowpal wabbit, paired by round (median of per-round ratios, bootstrap CI)."""
    pct = round(100 * float(res.settings["level"]))
    rows = [
        f"| arms A | igw m=1 / {VW} [{pct}% CI] | igw m=1 / {VW_PARSE} [{pct}% CI] |",
        "| --- | --- | --- |",
    ]
    for row in res.rows:
        ours1 = row.side(OURS1).times_s
        cells = []
        for peer in (VW, VW_PARSE):
            est, lo, hi = bootstrap_ratio_interval(
                ours1, row.side(peer).times_s, n_boot=res.settings["n_boot"], seed=res.settings["seed"]
            )
            cells.append(f"{est:.3g} [{lo:.3g}, {hi:.3g}]")
        rows.append(f"| {row.size:,} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="A = 100 only, 3 rounds, results to a temp folder")
    args = ap.parse_args()
    sizes = SIZES[:1] if args.quick else SIZES
    repeats, warmup = (3, 1) if args.quick else (20, 2)
    results = run(sizes, repeats=repeats, warmup=warmup)
    tables = {}
    if vowpalwabbit is not None:
        tables["Single-action task: SquareCB.Comb igw m=1 (= SquareCB) / vowpal wabbit (same rounds)"] = (
            m1_table(results[0])
        )
    title = "squarecb-comb benchmarks"
    publish(results, __file__, quick=args.quick, title=title, tables=tables)


if __name__ == "__main__":
    main()
