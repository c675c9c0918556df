"""Cost of BOOST's outer step (the torch.func hypergradient through K = 1 look-ahead step) against an
inner step and against a finite-difference hypergradient, at three policy sizes.

    uv run --no-sync python packages/boost-reweight/benchmarks/bench_boost_reweight.py [--quick]

Sides, on the same batch of 32 synthetic trajectories and the 24 real validation ones:
- ``torch.func hypergradient`` (ours): ``hypergradient(...)``, d L_val / d phi for the head;
- ``inner step``: one weighted forward/backward of the policy and an AdamW step (what the outer
  step is paid against, per trajectory of the batch);
- ``finite-difference hypergradient``: d L_val / d w_i by central differences over the 32 weights
  (64 evaluations of the unrolled validation loss), chained through the head's Jacobian.
Agreement (cosine and max relative error of the two hypergradients) is reported per size.
betty-ml was not installed beside torch 2.15 here (not tried: see the README).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from paperworks.boost_reweight import (
    DialoguePolicy,
    DialogueTaskConfig,
    ReweightingHead,
    generate,
    hypergradient,
    merge,
    trajectory_features,
    trajectory_nll,
    unrolled_val_loss,
)
from paperworks.core.bench import compare, write_results

CFG = DialogueTaskConfig()
LR = 0.5


def make_input(hidden: int):
    g = np.random.default_rng(0)
    torch.manual_seed(0)
    pool = merge(
        generate(CFG, 24, g, real=True, id_prefix="r"), generate(CFG, 32, g, real=False, id_prefix="s")
    )
    val = generate(CFG, 24, g, real=True, id_prefix="v")
    policy = DialoguePolicy(CFG.obs_dim, CFG.n_actions, hidden)
    feats = trajectory_features(policy, pool, CFG.max_turns)[24:]
    head = ReweightingHead(feats.shape[1], 32)
    torch.nn.init.normal_(head.net[2].weight, std=0.1)
    opt = torch.optim.AdamW(policy.parameters(), lr=3e-3)
    return {
        "policy": policy,
        "head": head,
        "feats": feats,
        "batch": pool.batch(np.arange(24, 56)),
        "val": val.batch(np.arange(len(val))),
        "opt": opt,
    }


def ours(x):
    return hypergradient(
        x["policy"], trajectory_nll, x["head"], x["feats"], x["batch"], x["val"], lookahead_lr=LR
    )[0]


def inner_step(x):
    w = x["head"].weights(x["feats"]).detach()
    b = x["batch"]
    loss = (w * trajectory_nll(x["policy"](b["inputs"]), b)).mean()
    x["opt"].zero_grad(set_to_none=True)
    loss.backward()
    # the step itself is timed but not kept, so every side sees the same parameters
    saved = [p.detach().clone() for p in x["policy"].parameters()]
    x["opt"].step()
    with torch.no_grad():
        for p, s in zip(x["policy"].parameters(), saved, strict=True):
            p.copy_(s)


def finite_difference(x, h: float = 1e-3):
    policy, head, feats = x["policy"], x["head"], x["feats"]
    params = {n: p.detach() for n, p in policy.named_parameters()}
    logits = head(feats)
    dt = feats.dtype
    w = (feats.shape[0] * torch.softmax(logits, 0)).detach()
    dw = torch.zeros_like(w)
    with torch.no_grad():
        for i in range(w.numel()):
            e = torch.zeros_like(w)
            e[i] = h
            up = unrolled_val_loss(
                policy, trajectory_nll, params, (w + e).to(dt), x["batch"], x["val"], lookahead_lr=LR
            )
            dn = unrolled_val_loss(
                policy, trajectory_nll, params, (w - e).to(dt), x["batch"], x["val"], lookahead_lr=LR
            )
            dw[i] = (up - dn) / (2 * h)
    wt = feats.shape[0] * torch.softmax(logits, 0)
    grads = torch.autograd.grad(wt, list(head.parameters()), grad_outputs=dw.to(dt))
    return dict(zip([n for n, _ in head.named_parameters()], grads, strict=True))


def agreement(x) -> tuple[float, float]:
    """In float64 (central differences with h = 1e-5), so that the comparison is not float32 rounding."""
    x = dict(x)
    x["policy"], x["head"], x["feats"] = x["policy"].double(), x["head"].double(), x["feats"].double()
    for k in ("batch", "val"):
        x[k] = {n: (v.double() if v.is_floating_point() else v) for n, v in x[k].items()}
    a = torch.cat([v.flatten() for v in ours(x).values()])
    b = torch.cat([v.flatten() for v in finite_difference(x, h=1e-5).values()])
    cos = float(a @ b / (a.norm() * b.norm()))
    rel = float((a - b).abs().max() / b.abs().max())
    return cos, rel


def main(quick: bool) -> None:
    sizes = (32,) if quick else (32, 64, 128)
    with torch.inference_mode(False):
        res = compare(
            {
                "torch.func hypergradient": ours,
                "inner step": inner_step,
                "finite-difference hypergradient": finite_difference,
            },
            make_input,
            sizes,
            ours="torch.func hypergradient",
            repeats=3 if quick else 10,
            warmup=1,
            number=1,
            threads=1,
            size_label="policy hidden width",
            name="BOOST outer step vs inner step and finite differences",
            note="batch of 32 synthetic trajectories, 24 validation trajectories, K = 1, CPU, 1 thread",
        )
    rows = [
        "| policy hidden width | cosine(torch.func, FD), float64 | max relative error |",
        "| --- | --- | --- |",
    ]
    for s in sizes:
        with torch.random.fork_rng():
            cos, rel = agreement(make_input(s))
        rows.append(f"| {s} | {cos:.6f} | {rel:.2e} |")
    folder = Path(tempfile.mkdtemp()) if quick else Path(__file__).parent
    write_results(
        res,
        folder,
        title="boost-reweight benchmarks",
        tables={"Agreement of the hypergradients": "\n".join(rows)},
    )
    print((folder / "results.md").read_text())


if __name__ == "__main__":
    main("--quick" in sys.argv)
