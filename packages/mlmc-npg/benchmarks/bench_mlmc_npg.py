"""MLMC-NPG side by side: estimator cost and bias, NPG iterations, and a MORL user's reference agent.

    uv run python packages/mlmc-npg/benchmarks/bench_mlmc_npg.py [--quick]
    uv run paperworks bench mlmc-npg [--quick]

1. Scalarisation-gradient estimators (:func:`paperworks.core.bench.compare`): one call of the MLMC
   estimator (``L_max = 12``, 13 expected rollouts) against one plug-in call at the same expected
   rollouts (``B = 13``), on the rollout sampler of a random 10-state MDP at the optimal policy of the
   kinked utility (where the kink sits). Beside the timings, a quality table from 50,000 calls each:
   rollouts per call, |bias| and the trace of the covariance, at equal expected rollouts.
2. Tabular NPG iterations for ``S x A`` in ``10 x 2, 100 x 5, 1000 x 10`` (``M = 2``): one oracle
   iteration (exact evaluation by a linear solve + the closed-form step) against the natural gradient
   by an explicit Fisher solve (``lstsq`` on the ``SA x SA`` Fisher matrix; sizes up to 100 x 5, where it
   fits in memory) and against the policy evaluation alone (the linear solve: the floor of an iteration).
3. Reference agent on mo-gymnasium's deep-sea-treasure: morl-baselines' single-policy linear
   scalarisation (MOQLearning) is not installed here (it pins pillow < 12 through moviepy and pulls
   wandb, cvxpy and pycddlib); we run the same recipe, tabular Q-learning on the scalarised reward
   ``w . r`` with epsilon-greedy exploration (MOQLearning's defaults: learning rate 0.1, epsilon 0.1,
   gamma 0.99; weights 1/2, 1/2), written here, against the MLMC-NPG agent at the same number of
   episodes, and report the concave objective (proportional fairness of the shifted treasure and time
   returns) of each learnt policy by Monte Carlo. Skipped when mo-gymnasium is absent.

Full mode writes ``benchmarks/results.json`` and ``results.md``; ``--quick`` (smallest sizes, 3 rounds,
a small episode budget) writes them to a temporary folder and prints the markdown.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from paperworks.core.bench import compare, publish
from paperworks.mlmc_npg import (
    ConcaveScalarization,
    MLMCEstimator,
    MLMCNPGAgent,
    kinked_problem,
    npg_step,
    plugin_weights,
    random_mdp,
    softmax_policy,
    state_index,
)
from paperworks.mlmc_npg.policy import fisher_matrix, policy_gradient

MAX_LEVEL = 12
NPG_SIZES = ((10, 2), (100, 5), (1000, 10))
FISHER_MAX = 500  # the explicit Fisher solve is timed up to S * A = 500


def _kink_setup(seed: int = 0):
    mdp = random_mdp(10, 3, 2, 0.8, rng=seed)
    f = kinked_problem(mdp, kappa=2.0)
    theta = np.zeros((10, 3))
    for _ in range(3000):
        ev = mdp.evaluate(softmax_policy(theta))
        theta = npg_step(theta, f.grad(ev.J), ev.advantage, 1.0, mdp.gamma)
    pi = softmax_policy(theta)
    return mdp, f, pi


def estimator_bench(repeats: int, warmup: int, calls: int):
    mdp, f, pi = _kink_setup()
    mlmc = MLMCEstimator(f, MAX_LEVEL)
    B = round(mlmc.expected_cost)
    rng = np.random.default_rng(1)

    def sampler(n, g):
        return mdp.sample_returns(pi, n, g)

    res = compare(
        {
            "MLMC (L_max = 12)": lambda: mlmc(sampler, rng),
            f"plug-in (B = {B})": lambda: plugin_weights(f, sampler, B, rng),
        },
        ours="MLMC (L_max = 12)",
        name="Scalarisation-gradient estimator: one call",
        warmup=warmup,
        repeats=repeats,
        threads=1,
        note=(
            f"Random MDP (S = 10, A = 3, M = 2, gamma = 0.8), rollouts of the optimal policy of the kinked "
            f"utility (its returns sit on the kink); the plug-in uses the MLMC estimator's expected "
            f"rollouts per call ({mlmc.expected_cost:.4g}, rounded to {B}). Time per call includes the "
            "vectorised rollouts. Measured on a 2-core machine shared with other jobs."
        ),
    )
    J = mdp.returns(pi)
    truth = f.grad(J)
    est_m = mlmc(sampler, rng, calls=calls)
    est_p = plugin_weights(f, sampler, B, rng, calls=calls)
    rows = [
        "| estimator | rollouts per call | abs. bias (norm) | MC s.e. of the bias | trace of covariance |"
    ]
    rows.append("| --- | --- | --- | --- | --- |")
    for name, est in (("MLMC (L_max = 12)", est_m), (f"plug-in (B = {B})", est_p)):
        w = est.weights
        bias = float(np.linalg.norm(w.mean(axis=0) - truth))
        se = float(np.linalg.norm(w.std(axis=0) / np.sqrt(calls)))
        cov = float(np.trace(np.cov(w.T)))
        rows.append(f"| {name} | {est.rollouts / calls:.4g} | {bias:.4g} | {se:.2g} | {cov:.4g} |")
    table = "\n".join(rows) + f"\n\n{calls:,} calls of each estimator, at the kink of the same MDP."
    return res, table


def _npg_input(size):
    S, A = size
    mdp = random_mdp(S, A, 2, 0.9, rng=S)
    f = kinked_problem(mdp, kappa=2.0, n_angles=33) if S <= 100 else None
    theta = np.random.default_rng(0).standard_normal((S, A))
    return {"mdp": mdp, "f": f, "theta": theta, "w": np.array([0.6, 1.4])}


def _npg_iteration(x):
    mdp, theta, w = x["mdp"], x["theta"], x["w"]
    ev = mdp.evaluate(softmax_policy(theta))
    return npg_step(theta, w, ev.advantage, 0.5, mdp.gamma)


def _fisher_iteration(x):
    mdp, theta, w = x["mdp"], x["theta"], x["w"]
    pi = softmax_policy(theta)
    ev = mdp.evaluate(pi)
    S, A = theta.shape
    if S * A > FISHER_MAX:
        return None
    g = policy_gradient(pi, ev.occupancy, ev.advantage @ w, mdp.gamma).ravel()
    step = np.linalg.lstsq(fisher_matrix(pi, ev.occupancy), g, rcond=None)[0]
    return theta + 0.5 * step.reshape(S, A)


def _evaluation_only(x):
    return x["mdp"].evaluate(softmax_policy(x["theta"]))


def npg_bench(sizes, repeats: int, warmup: int):
    small = [s for s in sizes if s[0] * s[1] <= FISHER_MAX]
    out = []
    res = compare(
        {
            "closed-form NPG iteration": _npg_iteration,
            "Fisher-solve NPG iteration": _fisher_iteration,
            "policy evaluation only": _evaluation_only,
        },
        _npg_input,
        small,
        ours="closed-form NPG iteration",
        name="Tabular NPG iteration (exact evaluation + step)",
        warmup=warmup,
        repeats=repeats,
        threads=1,
        size_label="S x A",
        note=(
            "M = 2, gamma = 0.9; one iteration evaluates the policy exactly (an S x S linear solve for both "
            "objectives) and steps. The Fisher side builds the SA x SA Fisher matrix and solves it by "
            "least squares (the textbook natural gradient), the evaluation side is the linear solve alone."
        ),
    )
    out.append(res)
    big = [s for s in sizes if s[0] * s[1] > FISHER_MAX]
    if big:
        out.append(
            compare(
                {"closed-form NPG iteration": _npg_iteration, "policy evaluation only": _evaluation_only},
                _npg_input,
                big,
                ours="closed-form NPG iteration",
                name="Tabular NPG iteration at scale (no Fisher solve: a 10,000 x 10,000 system)",
                warmup=warmup,
                repeats=repeats,
                threads=1,
                size_label="S x A",
                note="As above; the explicit Fisher solve is not timed at this size.",
            )
        )
    return out


def _dst_utility():
    shift = np.array([1.0, 101.0])  # treasure >= 0, time penalty >= -100 within 100 steps
    return ConcaveScalarization(
        "log(treasure + 1) + log(time + 101)",
        2,
        lambda J: np.log(J + shift).sum(-1),
        lambda J: 1 / (J + shift),
        domain_fn=lambda J: np.all(J + shift > 0, axis=-1),
    )


def _q_learning(env, episodes, rng, lr=0.1, epsilon=0.1, gamma=0.99, max_steps=100):
    """Scalarised tabular Q-learning on w . r (the MOQLearning recipe), w = (1/2, 1/2)."""
    n_states, index = state_index(env.observation_space)
    Q = np.zeros((n_states, env.action_space.n))
    w = np.array([0.5, 0.5])
    for _ in range(episodes):
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        for _ in range(max_steps):
            s = index(obs)
            a = int(rng.integers(Q.shape[1])) if rng.random() < epsilon else int(Q[s].argmax())
            obs, r, term, trunc, _ = env.step(a)
            target = float(np.asarray(r) @ w) + (0.0 if term else gamma * Q[index(obs)].max())
            Q[s, a] += lr * (target - Q[s, a])
            if term or trunc:
                break
    greedy = np.eye(Q.shape[1])[Q.argmax(axis=1)]
    return greedy, index


def _policy_returns(env, pi, index, episodes, rng, gamma=0.99, max_steps=100):
    out = []
    for _ in range(episodes):
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        G, disc = np.zeros(2), 1.0
        for _ in range(max_steps):
            p = pi[index(obs)]
            obs, r, term, trunc, _ = env.step(int(rng.choice(p.size, p=p)))
            G += disc * np.asarray(r, dtype=float)
            disc *= gamma
            if term or trunc:
                break
        out.append(G)
    return np.array(out).mean(axis=0)


def dst_table(episodes: int, eval_episodes: int, seeds: int) -> str | None:
    try:
        import mo_gymnasium as mo_gym
    except ImportError:
        return None
    f = _dst_utility()
    rows = [
        "| agent | episodes | seed | J (treasure, time) | f(J) | wall time |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for seed in range(seeds):
        env = mo_gym.make("deep-sea-treasure-v0")
        rng = np.random.default_rng(seed)
        t = time.perf_counter()
        pi_q, index = _q_learning(env, episodes, rng)
        tq = time.perf_counter() - t
        t = time.perf_counter()
        agent = MLMCNPGAgent(f, gamma=0.99, batch=16, max_level=4, eta=0.5, max_steps=100, seed=seed)
        agent.learn(env, episodes)
        ta = time.perf_counter() - t
        for name, pi, index_, secs in (
            ("linear-scalarised Q-learning (w = 1/2, 1/2)", pi_q, index, tq),
            ("MLMC-NPG agent (L_max = 4)", agent.policy_, state_index(env.observation_space)[1], ta),
        ):
            J = _policy_returns(env, pi, index_, eval_episodes, np.random.default_rng(100 + seed))
            rows.append(
                f"| {name} | {episodes} | {seed} | ({J[0]:.3g}, {J[1]:.3g}) | {float(f.value(J)):.4g} | "
                f"{secs:.2g} s |"
            )
    note = (
        f"\n\nmo-gymnasium deep-sea-treasure-v0, gamma = 0.99, episodes cut at 100 steps; f(J) from "
        f"{eval_episodes} evaluation episodes of each learnt policy (greedy for Q-learning, the softmax "
        "policy for MLMC-NPG). The Q-learner optimises the linear objective, not f."
    )
    return "\n".join(rows) + note


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smallest sizes, 3 rounds, results to a temp folder")
    args = ap.parse_args()
    repeats, warmup = (3, 1) if args.quick else (20, 2)
    sizes = NPG_SIZES[:1] if args.quick else NPG_SIZES
    est, quality = estimator_bench(repeats, warmup, 2000 if args.quick else 50_000)
    results = [est, *npg_bench(sizes, repeats, warmup)]
    tables = {"Estimator quality at equal expected rollouts": quality}
    dst = dst_table(60 if args.quick else 1500, 20 if args.quick else 200, 1 if args.quick else 3)
    if dst is not None:
        tables["Reference agent on deep-sea-treasure: concave objective at equal episodes"] = dst
    publish(results, __file__, quick=args.quick, title="mlmc-npg benchmarks", tables=tables)


if __name__ == "__main__":
    main()
