"""Our tabular CQL against d3rlpy's DiscreteCQL on the same offline data (one-hot observations).

Task: a Garnet MDP (40 states, 4 actions, branching 3, gamma 0.9, costs in [-1, 0]) and data from the
partial-support behaviour (0.8 pi* + 0.2 uniform over pi*(s) and one other action) at three sizes. Both
sides use the same alpha (10 / sqrt(n), the experiment's schedule) and gamma. d3rlpy: DiscreteCQL with a
one-hidden-layer (64 units) Q network on one-hot observations (its encoder needs a hidden layer), Adam lr
1e-3, batch 256, target update every 100 steps, ``GRAD_STEPS`` gradient steps per fit. Ours: exact tabular
iterations (batched Newton on each iteration's convex CQL objective) to convergence. Quality: suboptimality
J* - J(pi) of each side's greedy policy, evaluated exactly, on the same data.

    uv run --no-sync python packages/offline-dec/benchmarks/bench_offline_dec.py [--quick]
"""

from __future__ import annotations

import argparse
import logging
import warnings

import numpy as np

from paperworks.core.bench import compare, publish
from paperworks.offline_dec import CQL, collect_dataset, garnet_mdp, greedy_policy, partial_support_behaviour

SIZES = (2000, 8000, 32000)
GRAD_STEPS = 1000


def main(quick: bool) -> None:
    warnings.filterwarnings("ignore")
    import d3rlpy
    import torch
    from d3rlpy.models.encoders import VectorEncoderFactory

    logging.getLogger("d3rlpy").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    sizes = SIZES[:1] if quick else SIZES
    steps = 200 if quick else GRAD_STEPS
    m = garnet_mdp(40, 4, 3, gamma=0.9, rng=0)
    pi_star = greedy_policy(m.optimal_q())
    mu = partial_support_behaviour(pi_star, 1, 0.2, rng=0)
    j_star = m.optimal_value()
    obs = np.eye(m.n_states, dtype=np.float32)
    quality: dict[int, dict[str, float]] = {}

    def make_input(n):
        d = collect_dataset(m, mu, n, rng=n)
        return {"n": n, "data": d, "d3": d.to_d3rlpy(), "alpha": 10.0 / np.sqrt(n)}

    def ours(x):
        res = CQL(alpha=x["alpha"], gamma=m.gamma).fit(x["data"])
        quality.setdefault(x["n"], {})["ours"] = j_star - m.value(res.policy)
        return res

    def peer(x):
        d3rlpy.seed(0)
        algo = d3rlpy.algos.DiscreteCQLConfig(
            alpha=float(x["alpha"]),
            gamma=m.gamma,
            learning_rate=1e-3,
            batch_size=256,
            target_update_interval=100,
            encoder_factory=VectorEncoderFactory(hidden_units=[64]),
        ).create(device="cpu:0")
        algo.fit(
            x["d3"],
            n_steps=steps,
            n_steps_per_epoch=steps,
            show_progress=False,
            save_interval=10**9,
            logger_adapter=d3rlpy.logging.NoopAdapterFactory(),
        )
        q = np.stack([algo.predict_value(obs, np.full(m.n_states, a)) for a in range(m.n_actions)], axis=1)
        quality.setdefault(x["n"], {})["d3rlpy"] = j_star - m.value(greedy_policy(q))
        return algo

    result = compare(
        {"ours (tabular CQL)": ours, "d3rlpy DiscreteCQL": peer},
        make_input,
        sizes,
        ours="ours (tabular CQL)",
        name="CQL fit: ours vs d3rlpy DiscreteCQL",
        warmup=1,
        repeats=3,
        number=1,
        threads=1,
        size_label="transitions n",
        note=f"d3rlpy: {steps} gradient steps per fit; ours: exact iterations to convergence.",
    )
    rows = ["| n | ours: J* - J(pi) | d3rlpy: J* - J(pi) |", "|---|---|---|"]
    for n in sizes:
        rows.append(f"| {n:,} | {quality[n]['ours']:.4f} | {quality[n]['d3rlpy']:.4f} |")
    publish(
        result,
        __file__,
        quick=quick,
        title="offline-dec benchmarks",
        tables={"Quality on the same data (suboptimality, exact DP; last fit)": "\n".join(rows)},
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    main(parser.parse_args().quick)
