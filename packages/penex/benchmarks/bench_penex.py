"""Side by side: PENEXLoss vs torch.nn.CrossEntropyLoss (the peer), forward + backward per batch.

Batch 256 of float32 logits with 10, 100, 1,000 and 10,000 classes, CPU, one torch thread, one
process. One :func:`paperworks.core.bench.compare` over the class counts: each side computes the loss
of the same ``(256, C)`` logits and its gradient with respect to them (``torch.autograd.grad``, so
nothing accumulates in ``.grad`` between calls). Before timing, the script asserts that both losses
and gradients are finite and that PENEX's gradient matches the closed form ``rho exp(f) - alpha
exp(-alpha f_y) e_y`` (over the batch mean, ``rho`` the batch estimate :func:`adaptive_penalty`).

Sides: ``PENEX`` is ``PENEXLoss()`` with the authors' defaults (sensitivity 0.1, running penalty) and
the package's default value checks on CPU tensors (one read of a flag back to Python per call);
``PENEX, no checks`` is the same with ``validate=False`` (what runs on an accelerator or under
``torch.compile``); the peer is ``nn.CrossEntropyLoss``.

Memory table (not a timing): the bytes each loss keeps alive for backward (the saved tensors of its
autograd graph, the input logits excluded), counted with ``torch.autograd.graph.saved_tensors_hooks``
on the same inputs.

    uv run python packages/penex/benchmarks/bench_penex.py [--quick]
    uv run paperworks bench penex [--quick]

``--quick``: 10 classes only, 3 rounds after 1 warm-up call, results written to a temporary folder
(the committed ``benchmarks/results.*`` are left alone) and printed.
"""

from __future__ import annotations

import argparse
import functools
from types import SimpleNamespace

import torch
from torch import nn

from paperworks.core.bench import compare, publish
from paperworks.penex import PENEXLoss, adaptive_penalty

CLASSES = (10, 100, 1000, 10_000)
BATCH = 256
REPEATS, WARMUP = 100, 3
TITLE = "penex benchmarks"
CE, PENEX, PENEX_FAST = nn.CrossEntropyLoss(), PENEXLoss(), PENEXLoss(validate=False)


@functools.cache
def make_input(c: int) -> SimpleNamespace:
    """Logits ``(BATCH, c)`` (requiring grad) and targets, seeded by ``c``; built once per class count."""
    g = torch.Generator().manual_seed(c)
    f = torch.randn(BATCH, c, generator=g).requires_grad_()
    y = torch.randint(0, c, (BATCH,), generator=g)
    x = SimpleNamespace(f=f, y=y)
    (grad,) = torch.autograd.grad(PENEXLoss()(f, y), f)  # a fresh criterion: rho = the batch estimate
    with torch.no_grad():
        a = PENEX.sensitivity
        ref = adaptive_penalty(f, y, sensitivity=a) * torch.exp(f)
        ref[torch.arange(BATCH), y] -= a * torch.exp(-a * f[torch.arange(BATCH), y])
        ref /= BATCH
    assert torch.allclose(grad, ref, rtol=1e-5, atol=1e-8), "PENEX gradient differs from the closed form"
    assert all(bool(torch.isfinite(t).all()) for t in (*ce_side(x), grad))
    return x


def ce_side(x: SimpleNamespace) -> tuple[torch.Tensor, ...]:
    return torch.autograd.grad(CE(x.f, x.y), x.f)


def penex_side(x: SimpleNamespace) -> tuple[torch.Tensor, ...]:
    return torch.autograd.grad(PENEX(x.f, x.y), x.f)


def penex_fast_side(x: SimpleNamespace) -> tuple[torch.Tensor, ...]:
    return torch.autograd.grad(PENEX_FAST(x.f, x.y), x.f)


def _saved_bytes(loss_fn: nn.Module, f: torch.Tensor, y: torch.Tensor) -> int:
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.data_ptr() != f.data_ptr():  # the input itself is not extra memory
            seen[t.data_ptr()] = t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = loss_fn(f, y)
    del loss
    return sum(seen.values())


def memory_table(classes: tuple[int, ...]) -> str:
    rows = [
        "| classes | CE saved for backward (KiB) | PENEX saved for backward (KiB) |",
        "| --- | --- | --- |",
    ]
    for c in classes:
        x = make_input(c)
        b_ce, b_px = _saved_bytes(CE, x.f, x.y), _saved_bytes(PENEX, x.f, x.y)
        rows.append(f"| {c:,} | {b_ce / 1024:.1f} | {b_px / 1024:.1f} |")
    return "\n".join(rows) + (
        f"\n\nBytes of the tensors each loss's autograd graph keeps for backward (the input logits "
        f"excluded), batch {BATCH}, float32, the same inputs as the timings."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 classes only, 3 rounds; temporary output")
    args = parser.parse_args()
    classes = CLASSES[:1] if args.quick else CLASSES
    repeats, warmup = (3, 1) if args.quick else (REPEATS, WARMUP)
    torch.manual_seed(0)
    results = [
        compare(
            {"PENEX": penex_side, "PENEX, no checks": penex_fast_side, "cross-entropy": ce_side},
            make_input,
            classes,
            ours="PENEX",
            peer=["cross-entropy", "PENEX, no checks"],
            name="Loss forward + backward: PENEXLoss vs nn.CrossEntropyLoss",
            warmup=warmup,
            repeats=repeats,
            threads=1,
            size_label="classes",
            note=(
                f"Batch {BATCH}, float32 logits, CPU. Each call: the mean loss of the batch and its gradient "
                "with respect to the logits (`torch.autograd.grad`). PENEX: `PENEXLoss()`, the authors' "
                "defaults (alpha 0.1, running penalty, exact exponentials), plain torch operations; with "
                "its CPU value checks (one flag read back per call) and without them (`validate=False`); "
                "cross-entropy: torch's fused log-softmax + NLL kernels."
            ),
        )
    ]
    tables = {"Memory kept for backward (same inputs)": memory_table(classes)}
    publish(
        results, __file__, quick=args.quick, title=TITLE + (" (quick)" if args.quick else ""), tables=tables
    )


if __name__ == "__main__":
    main()
