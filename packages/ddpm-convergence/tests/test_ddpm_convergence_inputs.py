"""Bad input: one-line errors naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

import paperworks.ddpm_convergence as dc


def test_schedules_refuse_bad_input() -> None:
    with pytest.raises(ValueError, match="T >= 2"):
        dc.li_yan_schedule(1)
    with pytest.raises(ValueError, match="betas: expected every beta_t in"):
        dc.Schedule(np.array([0.1, 1.2]))
    with pytest.raises(ValueError, match="betas: expected every beta_t in"):
        dc.Schedule(np.array([0.1, 0.0]))
    with pytest.raises(ValueError, match="T >= 2"):
        dc.Schedule(np.array([0.1]))
    with pytest.raises(ValueError, match="strictly decreasing"):
        dc.Schedule.from_alpha_bars(np.array([0.9, 0.5, 0.6]))
    with pytest.raises(ValueError, match="c1 log T / T < 1"):
        dc.li_yan_schedule(10, c1=5)
    with pytest.raises(ValueError, match="c1: expected c1 > c0"):
        dc.li_yan_schedule(100, c0=3, c1=2)
    sch = dc.Schedule.from_alpha_bars(np.array([0.9, 0.5, 0.1]))
    np.testing.assert_allclose(sch.alpha_bars, [0.9, 0.5, 0.1])
    with pytest.raises(ValueError, match=r"t: expected an int in 1\.\.3"):
        sch.beta(0)


def test_targets_refuse_bad_input() -> None:
    with pytest.raises(ValueError, match="covs: expected positive definite"):
        dc.GaussianMixture(np.ones(1), np.zeros((1, 2)), np.array([[[1.0, 2.0], [2.0, 1.0]]]))
    with pytest.raises(ValueError, match="covs: expected symmetric"):
        dc.GaussianMixture(np.ones(1), np.zeros((1, 2)), np.array([[[1.0, 0.5], [0.0, 1.0]]]))
    with pytest.raises(ValueError, match="weights: expected probabilities summing to 1"):
        dc.GaussianMixture(np.array([0.5, 0.6]), np.zeros((2, 1)), np.ones(2))
    with pytest.raises(ValueError, match="means: expected 2 rows"):
        dc.GaussianMixture(np.array([0.5, 0.5]), np.zeros((3, 1)), np.ones(2))
    with pytest.raises(ValueError, match="covs: expected shape"):
        dc.GaussianMixture(np.array([0.5, 0.5]), np.zeros((2, 2)), np.ones((2, 3, 3)))
    with pytest.raises(ValueError, match="cov: expected shape"):
        dc.gaussian(np.zeros(2), np.eye(3))
    target = dc.axis_mixture(3, 1.0, 0.5)
    with pytest.raises(ValueError, match=r"x: expected shape \(n, 3\)"):
        target.score(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="x: expected finite"):
        target.score(np.full((1, 3), np.nan))
    with pytest.raises(ValueError, match="alpha_bar"):
        target.score(np.zeros((1, 3)), alpha_bar=0.0)


def test_laws_refuse_bad_input() -> None:
    sch = dc.li_yan_schedule(50)
    one_d = dc.mixture_1d([0.5, 0.5], [1.0, -1.0], [0.2, 0.2])
    *_, needed = dc.grid_size(one_d, sch, 1e-8)
    with pytest.raises(ValueError, match=rf"n_grid: expected >= {needed} points"):
        dc.grid_law(one_d, sch, n_grid=needed // 2, tol=1e-8)
    with pytest.raises(ValueError, match="target: expected a 1-D GaussianMixture"):
        dc.grid_law(dc.axis_mixture(2, 1.0, 0.2), sch)
    with pytest.raises(ValueError, match="method: expected one of"):
        dc.grid_law(one_d, sch, "euler")
    with pytest.raises(ValueError, match="target: expected a Gaussian"):
        dc.gaussian_output_law(dc.axis_mixture(2, 1.0, 0.2), sch)
    with pytest.raises(ValueError, match="shared variance"):
        dc.axis_mixture_law(
            dc.GaussianMixture(np.array([0.5, 0.5]), np.array([[1.0, 0], [-1, 0]]), np.array([0.2, 0.3])), sch
        )
    with pytest.raises(ValueError, match="one line through the origin"):
        dc.axis_mixture_law(
            dc.GaussianMixture(np.array([0.5, 0.5]), np.array([[1.0, 0], [0, 1.0]]), np.array([0.2, 0.2])),
            sch,
        )
    with pytest.raises(ValueError, match="eps: expected a number > 0"):
        dc.steps_for_tv(0.0, lambda T: 1.0 / T)
    with pytest.raises(ValueError, match="mean_q: expected shape"):
        dc.gaussian_kl(np.zeros(2), np.eye(2), np.zeros(3), np.eye(2))
