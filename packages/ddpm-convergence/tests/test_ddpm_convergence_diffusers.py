"""Field integration: ExactScoreModel and our steps beside diffusers' real schedulers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from diffusers import DDIMScheduler, DDPMScheduler

import paperworks.ddpm_convergence as dc


def _schedulers(sch: dc.Schedule):
    ddpm = DDPMScheduler(
        num_train_timesteps=sch.T,
        trained_betas=sch.trained_betas(),
        variance_type="fixed_large",
        clip_sample=False,
    )
    ddim = DDIMScheduler(num_train_timesteps=sch.T, trained_betas=sch.trained_betas(), clip_sample=False)
    ddim.set_timesteps(sch.T)
    return ddpm, ddim


def _float64(scheduler, sch: dc.Schedule) -> None:
    """diffusers keeps its schedule in float32; recompute it in float64 from the same betas."""
    scheduler.betas = torch.tensor(sch.trained_betas(), dtype=torch.float64)
    scheduler.alphas = 1.0 - scheduler.betas
    scheduler.alphas_cumprod = torch.cumprod(scheduler.alphas, 0)


@pytest.mark.parametrize("d", [2, 33])
def test_one_step_agrees_with_diffusers_ddpm_fixed_large_and_ddim(d) -> None:
    sch = dc.li_yan_schedule(100)
    target = dc.axis_mixture(d, 2.0, 0.25)
    model = dc.ExactScoreModel(target, sch)
    ddpm, ddim = _schedulers(sch)
    _float64(ddpm, sch)
    _float64(ddim, sch)
    x = torch.randn(500, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for i in (99, 50, 5, 1):
        t = i + 1
        eps = model(x, i).sample
        score = -eps / np.sqrt(1 - sch.alpha_bar(t))
        out = ddpm.step(eps, i, x, generator=torch.Generator().manual_seed(i)).prev_sample
        noise = torch.randn(x.shape, generator=torch.Generator().manual_seed(i), dtype=x.dtype)
        ours = dc.ddpm_step(x, score, t, sch, noise)
        assert float((out - ours).abs().max()) < 1e-9, i
        out = ddim.step(eps, i, x).prev_sample
        assert float((out - dc.ddim_step(x, score, t, sch)).abs().max()) < 1e-9, i


def test_model_interface_shapes_timesteps_and_return_dict() -> None:
    sch = dc.li_yan_schedule(40)
    model = dc.ExactScoreModel(dc.gaussian(np.zeros(4), 0.5), sch)
    x = torch.randn(3, 1, 2, 2)  # image-shaped, 4 entries per sample, float32
    out = model(x, torch.tensor(7))
    assert out.sample.shape == x.shape and out.sample.dtype == torch.float32
    (tup,) = model(x, 7, return_dict=False)
    assert torch.equal(tup, out.sample)
    per = model(x, torch.tensor([7, 7, 20]))
    assert torch.allclose(per.sample[:2], out.sample[:2]) and not torch.allclose(per.sample[2], out.sample[2])
    expected = -np.sqrt(1 - sch.alpha_bar(8)) * model.target.score(
        x.reshape(3, 4).double().numpy(), sch.alpha_bar(8)
    )
    np.testing.assert_allclose(out.sample.reshape(3, 4).numpy(), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"timestep: expected diffusers timesteps in 0\.\.39"):
        model(x, 40)
    with pytest.raises(ValueError, match="sample: expected shape"):
        model(torch.zeros(3, 5), 1)


def test_diffusers_scheduler_loop_samples_the_exact_output_law() -> None:
    """Sampling through diffusers' own loop with our model reproduces our exact Gaussian output law."""
    sch = dc.li_yan_schedule(15)
    target = dc.gaussian(np.array([1.0, -0.5]), np.array([[0.5, 0.2], [0.2, 0.3]]))
    model = dc.ExactScoreModel(target, sch)
    ddpm, _ = _schedulers(sch)
    _float64(ddpm, sch)
    gen = torch.Generator().manual_seed(3)
    n = 10_000
    x = torch.randn(n, 2, dtype=torch.float64, generator=gen)
    for i in ddpm.timesteps[:-1]:  # our output is Y_1, diffusers' timestep 0
        x = ddpm.step(model(x, i).sample, i, x, generator=gen).prev_sample
    law = dc.gaussian_output_law(target, sch)
    y = x.numpy()
    assert np.all(np.abs(y.mean(0) - law.mean) < 5 * np.sqrt(np.diag(law.cov) / n))
    assert np.all(
        np.abs(np.cov(y.T) - law.cov) < 5 * np.sqrt(2 * np.outer(np.diag(law.cov), np.diag(law.cov)) / n)
    )
