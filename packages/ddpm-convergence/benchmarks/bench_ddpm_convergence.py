"""One reverse step: ours vs diffusers' DDPMScheduler ("fixed_large") and DDIMScheduler.

    uv run python packages/ddpm-convergence/benchmarks/bench_ddpm_convergence.py [--quick]
    uv run paperworks bench ddpm-convergence [--quick]

Both schedulers get our Li-Yan schedule (T = 1000) as ``trained_betas`` and the exact epsilon
prediction of the two-point mixture ``N(+-2u, 0.25 I)`` (``ExactScoreModel``, computed once per size,
outside the timings), for a batch of 10,000 samples at d = 2, 64 and 1,024, float32 on the CPU, one
thread, at diffusers' timestep 500. One call of a side is one step ``t -> t-1``:

- ``ours ddpm_step``: ``score = -eps / sqrt(1 - abar_t)``, ``torch.randn_like`` noise, then
  :func:`paperworks.ddpm_convergence.ddpm_step`; ``diffusers DDPM``: ``scheduler.step(eps, t, x,
  generator=...)`` (it draws its noise with ``randn_tensor``).
- ``ours ddim_step`` and ``diffusers DDIM`` (``eta = 0``, ``set_timesteps(1000)``) likewise, no noise.

Agreement (the quality table): the largest absolute difference between the two outputs on the same
inputs and the same noise, at several timesteps, (a) with diffusers as it is (it stores its schedule
in float32, so ``1 - abar_t`` loses digits where ``abar_t`` is near 1) and (b) with its schedule
recomputed in float64 from the same betas and float64 inputs. Full mode writes ``benchmarks/results.json``
and ``results.md``; ``--quick`` (d = 2 only, 3 rounds) writes them to a temporary folder.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch
from diffusers import DDIMScheduler, DDPMScheduler

import paperworks.ddpm_convergence as dc
from paperworks.core.bench import compare, publish

T = 1000
STEP = 500  # diffusers' timestep (ours t = STEP + 1)
BATCH = 10_000
SIZES = (2, 64, 1024)
CHECK_STEPS = (999, 500, 50, 5)


def _schedulers(sch: dc.Schedule, float64: bool = False):
    ddpm = DDPMScheduler(
        num_train_timesteps=sch.T,
        trained_betas=sch.trained_betas(),
        variance_type="fixed_large",
        clip_sample=False,
    )
    ddim = DDIMScheduler(num_train_timesteps=sch.T, trained_betas=sch.trained_betas(), clip_sample=False)
    ddim.set_timesteps(sch.T)
    if float64:
        for s in (ddpm, ddim):
            s.betas = torch.tensor(sch.trained_betas(), dtype=torch.float64)
            s.alphas = 1.0 - s.betas
            s.alphas_cumprod = torch.cumprod(s.alphas, 0)
    return ddpm, ddim


def make_input(d: int) -> dict:
    sch = dc.li_yan_schedule(T)
    model = dc.ExactScoreModel(dc.axis_mixture(d, 2.0, 0.25), sch)
    x = torch.randn(BATCH, d, generator=torch.Generator().manual_seed(d))
    with torch.inference_mode():
        eps = model(x, STEP).sample
    ddpm, ddim = _schedulers(sch)
    return {
        "sch": sch,
        "x": x,
        "eps": eps,
        "ddpm": ddpm,
        "ddim": ddim,
        "gen": torch.Generator().manual_seed(0),
    }


def _ours_ddpm(inp: dict) -> torch.Tensor:
    sch, t = inp["sch"], STEP + 1
    with torch.inference_mode():
        score = inp["eps"] * (-1.0 / math.sqrt(1 - sch.alpha_bar(t)))
        return dc.ddpm_step(inp["x"], score, t, sch, torch.randn_like(inp["x"]))


def _diffusers_ddpm(inp: dict) -> torch.Tensor:
    with torch.inference_mode():
        return inp["ddpm"].step(inp["eps"], STEP, inp["x"], generator=inp["gen"]).prev_sample


def _ours_ddim(inp: dict) -> torch.Tensor:
    sch, t = inp["sch"], STEP + 1
    with torch.inference_mode():
        score = inp["eps"] * (-1.0 / math.sqrt(1 - sch.alpha_bar(t)))
        return dc.ddim_step(inp["x"], score, t, sch)


def _diffusers_ddim(inp: dict) -> torch.Tensor:
    with torch.inference_mode():
        return inp["ddim"].step(inp["eps"], STEP, inp["x"]).prev_sample


def run(sizes, *, repeats: int, warmup: int) -> list:
    common = dict(sizes=sizes, warmup=warmup, repeats=repeats, min_time_s=0.02, threads=1, size_label="d")
    note = (
        f"batch {BATCH:,} x d, float32, CPU, one thread, Li-Yan schedule T = {T} (c0 = 2, c1 = 5) as "
        f"trained_betas, diffusers timestep {STEP}; the exact epsilon prediction is computed once per size "
        "outside the timings. diffusers' steps include their own bookkeeping (timestep lookups, the "
        "x0-prediction route, output dataclass); ours is the score form, one fused expression."
    )
    ddpm = compare(
        {"ours ddpm_step": _ours_ddpm, "diffusers DDPMScheduler.step": _diffusers_ddpm},
        make_input,
        ours="ours ddpm_step",
        name="One DDPM reverse step (variance 1 - alpha_t, noise drawn inside the call)",
        note=note,
        **common,
    )
    ddim = compare(
        {"ours ddim_step": _ours_ddim, "diffusers DDIMScheduler.step": _diffusers_ddim},
        make_input,
        ours="ours ddim_step",
        name="One DDIM reverse step (eta = 0)",
        note=note,
        **common,
    )
    return [ddpm, ddim]


def agreement_table(sizes) -> str:
    """Largest |ours - diffusers| on the same inputs and noise, per d and timestep."""
    rows = [
        "| d | diffusers timestep | DDPM, diffusers float32 | DDIM, diffusers float32 | DDPM, float64 "
        "| DDIM, float64 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    sch = dc.li_yan_schedule(T)
    for d in sizes:
        model = dc.ExactScoreModel(dc.axis_mixture(d, 2.0, 0.25), sch)
        for i in CHECK_STEPS:
            t = i + 1
            cells = []
            for dtype, f64 in ((torch.float32, False), (torch.float64, True)):
                ddpm, ddim = _schedulers(sch, float64=f64)
                x = torch.randn(BATCH, d, generator=torch.Generator().manual_seed(d), dtype=dtype)
                with torch.inference_mode():
                    eps = model(x, i).sample
                    score = eps.double() * (-1.0 / math.sqrt(1 - sch.alpha_bar(t)))
                    noise = torch.randn(x.shape, generator=torch.Generator().manual_seed(7), dtype=dtype)
                    theirs = ddpm.step(eps, i, x, generator=torch.Generator().manual_seed(7)).prev_sample
                    ours = dc.ddpm_step(x.double(), score, t, sch, noise.double())
                    e1 = float((theirs.double() - ours).abs().max())
                    theirs = ddim.step(eps, i, x).prev_sample
                    e2 = float((theirs.double() - dc.ddim_step(x.double(), score, t, sch)).abs().max())
                cells += [e1, e2]
            rows.append(
                f"| {d:,} | {i} | {cells[0]:.2e} | {cells[1]:.2e} | {cells[2]:.2e} | {cells[3]:.2e} |"
            )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="d = 2 only, 3 rounds, results to a temp folder")
    args = ap.parse_args()
    torch.manual_seed(0)
    sizes = SIZES[:1] if args.quick else SIZES
    repeats, warmup = (3, 1) if args.quick else (20, 2)
    results = run(sizes, repeats=repeats, warmup=warmup)
    tables = {
        "Agreement: max |ours - diffusers| over the batch, same inputs and noise "
        f"(batch {BATCH:,}, Li-Yan T = {T}; our side in float64)": agreement_table(sizes)
    }
    title = "ddpm-convergence benchmarks"
    publish(results, __file__, quick=args.quick, title=title, tables=tables)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
