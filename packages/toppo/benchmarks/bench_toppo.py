"""Our batched trainers against stable-baselines3 PPO and SAC on the same task family, and combiner cost.

1. Training throughput at equal environment steps: our batched MT-PPO (vanilla and TOPPO) and MT-SAC
   against SB3 PPO / SAC on the five-task family (:data:`~paperworks.toppo.tasks.DEFAULT_TASKS`) through
   the real gymnasium environments in :class:`~paperworks.toppo.envs.MultiTaskEnv` one-hot wrappers
   (16 per task, SB3 ``DummyVecEnv``). Both sides get the reproduction's settings
   (:class:`~paperworks.toppo.experiments.TOPPOExperimentConfig`: 80 environments, 64-step rollouts, 4
   epochs of 4 minibatches, the tuned learning rates (SB3 PPO vanilla's), gamma 0.95, reward
   normalisation via ``VecNormalize`` for SB3 PPO; SAC with its tuned learning rate and
   ``sac_gradient_steps`` gradient steps of ``sac_batch_size`` per vector step after 5,000 random
   steps). Quality: mean normalised return of
   each side's policy (deterministic, 16 episodes per task) after its last timed training run.
2. Cost of one combination (PCGrad, CAGrad, FairGrad) against the mean of the per-task gradients, on
   ``G (K, P)`` with ``P`` = 5,130 (the critic body's parameters, 64 x 64 with LN-c) at K = 2, 10, 50.

    uv run --no-sync python packages/toppo/benchmarks/bench_toppo.py [--quick]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch

from paperworks.core import torch_threads
from paperworks.core.bench import compare, publish
from paperworks.toppo import (
    DEFAULT_TASKS,
    MultiTaskPPO,
    MultiTaskSAC,
    cagrad,
    evaluate_policy,
    fairgrad,
    mean_combiner,
    normalised_return,
    pcgrad,
)
from paperworks.toppo.envs import MultiTaskEnv, make_gym_task
from paperworks.toppo.experiments import TOPPOExperimentConfig

N_PER_TASK = 16
CFG = TOPPOExperimentConfig()


def _sb3_env(sb3):
    from stable_baselines3.common.vec_env import DummyVecEnv

    def maker(k):
        def make():
            env = MultiTaskEnv([make_gym_task(t) for t in DEFAULT_TASKS])
            env.reset(options={"task_id": k})
            return _Pinned(env, k)

        return make

    return DummyVecEnv([maker(k) for k in range(len(DEFAULT_TASKS)) for _ in range(N_PER_TASK)])


class _Pinned:
    """Keep a MultiTaskEnv on one task (SB3 resets without options)."""

    def __new__(cls, env, k):
        import gymnasium as gym

        class Pinned(gym.Wrapper):
            def reset(self, *, seed=None, options=None):
                return self.env.reset(seed=seed, options={"task_id": k})

        return Pinned(env)


def _sb3_eval(model) -> float:
    def act(obs):
        a, _ = model.predict(obs.numpy(), deterministic=True)
        return torch.as_tensor(a)

    return float(normalised_return(evaluate_policy(act, DEFAULT_TASKS, 16, 10_000), DEFAULT_TASKS).mean())


def training_benchmark(quick: bool):
    import stable_baselines3 as sb3
    from stable_baselines3.common.vec_env import VecNormalize

    steps = 5_120 if quick else 40_960
    quality: dict[str, float] = {}

    def ours_ppo(cfg, name):
        def run(_=None):
            agent = MultiTaskPPO(DEFAULT_TASKS, cfg, seed=0)
            agent.train(steps)
            quality[name] = float(normalised_return(agent.evaluate(16), DEFAULT_TASKS).mean())

        return run

    def ours_sac(_=None):
        agent = MultiTaskSAC(DEFAULT_TASKS, CFG.sac_config(), seed=0)
        agent.train(steps)
        quality["ours MT-SAC"] = float(normalised_return(agent.evaluate(16), DEFAULT_TASKS).mean())

    def sb3_ppo(_=None):
        env = VecNormalize(_sb3_env(sb3), norm_obs=False, norm_reward=True, gamma=0.95)
        model = sb3.PPO(
            "MlpPolicy",
            env,
            n_steps=64,
            batch_size=1280,
            n_epochs=4,
            learning_rate=CFG.vanilla_lr,
            gamma=0.95,
            gae_lambda=0.95,
            max_grad_norm=0.5,
            seed=0,
            device="cpu",
            policy_kwargs={"net_arch": [64, 64], "activation_fn": torch.nn.Tanh},
        )
        model.learn(steps)
        quality["SB3 PPO"] = _sb3_eval(model)

    def sb3_sac(_=None):
        model = sb3.SAC(
            "MlpPolicy",
            _sb3_env(sb3),
            learning_rate=CFG.sac_lr,
            buffer_size=300_000,
            learning_starts=5_000,
            batch_size=CFG.sac_batch_size,
            gamma=0.95,
            train_freq=1,
            gradient_steps=CFG.sac_gradient_steps,
            seed=0,
            device="cpu",
            policy_kwargs={"net_arch": [64, 64]},
        )
        model.learn(steps)
        quality["SB3 SAC"] = _sb3_eval(model)

    ppo = compare(
        {
            "ours vanilla MT-PPO": ours_ppo(CFG.ppo_config("vanilla"), "ours vanilla MT-PPO"),
            "ours TOPPO": ours_ppo(CFG.ppo_config("toppo"), "ours TOPPO"),
            "SB3 PPO": sb3_ppo,
        },
        ours="ours vanilla MT-PPO",
        name=f"PPO training, {steps:,} environment steps (5 tasks x 16 environments)",
        warmup=0,
        repeats=2,
        number=1,
        threads=1,
        note="seconds per training run (environment stepping, rollouts and updates); SB3 on the real "
        "gymnasium "
        "environments in DummyVecEnv, ours on the batched NumPy family. TOPPO's extra time is its combiners.",
    )
    sac = compare(
        {"ours MT-SAC": ours_sac, "SB3 SAC": sb3_sac},
        ours="ours MT-SAC",
        name=f"SAC training, {steps:,} environment steps (5 tasks x 16 environments)",
        warmup=0,
        repeats=2,
        number=1,
        threads=1,
        note=f"{CFG.sac_gradient_steps} gradient steps (batch {CFG.sac_batch_size}) per vector step of 80 "
        "environments after "
        "5,000 random steps.",
    )
    rows = [
        "| side | environment steps / s (median) | updates | normalised mean return after the run |",
        "|---|---|---|---|",
    ]
    n_upd_ppo = int(np.ceil(steps / (80 * 64))) * 16
    n_upd_sac = max(0, steps - 5_000) // 80 * CFG.sac_gradient_steps
    for res, upd in ((ppo, n_upd_ppo), (sac, n_upd_sac)):
        for size in res.rows:
            for side in size.sides:
                rows.append(
                    f"| {side.name} | {steps / side.median_s:,.0f} | {upd:,} | {quality[side.name]:.3f} |"
                )
    return [ppo, sac], "\n".join(rows)


def combiner_benchmark(quick: bool):
    sizes = (2,) if quick else (2, 10, 50)
    P = 5_130

    def make_input(k):
        gen = torch.Generator().manual_seed(k)
        scales = torch.logspace(-1, 1, k)[:, None]
        return torch.randn(k, P, generator=gen) * scales

    results = []
    for name, fn in (("pcgrad", pcgrad), ("cagrad", cagrad), ("fairgrad", fairgrad)):
        results.append(
            compare(
                {name: fn, "mean": mean_combiner},
                make_input,
                sizes,
                ours=name,
                name=f"{name} vs the mean of per-task gradients, P = {P:,}",
                warmup=2,
                repeats=3 if quick else 15,
                threads=1,
                size_label="tasks K",
                note="one combination of a precomputed G (K, P); task gradient scales spread over 0.1 to 10.",
            )
        )
    return results


def main(quick: bool) -> None:
    warnings.filterwarnings("ignore")
    with torch_threads(1):
        train_results, table = training_benchmark(quick)
        comb_results = combiner_benchmark(quick)
    publish(
        [*train_results, *comb_results],
        __file__,
        quick=quick,
        title="toppo benchmarks",
        tables={"Throughput and return at equal environment steps (last timed run of each side)": table},
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    main(parser.parse_args().quick)
