"""GoalAccessibilityRatio across two CPU processes (torch.distributed, gloo): states sync by dist_reduce_fx.

The two ranks are forked from the test process (as DataLoader workers are), so they inherit the already
imported torch and torchmetrics instead of paying for the imports again; each rank sees an uneven shard
of the batches, and both must return the GAR of all the batches pooled.
"""

import multiprocessing as mp
import os

import pytest
import torch

from paperworks.goal_accessibility import goal_accessibility_ratio

L, TURNS = 2, 3


def _batches():
    g = torch.Generator().manual_seed(5)
    out = []
    for b in range(5):
        T = 7 + b  # batches of different lengths: the metric's states must not depend on T
        a = torch.softmax(torch.randn(L, 2, 2, T, T, generator=g), -1)
        goal = torch.zeros(2, T, dtype=torch.bool)
        goal[:, : 1 + b % 2] = True
        turns = torch.randint(-1, TURNS, (2, T), generator=g)
        out.append((a, goal, turns))
    return out


SHARDS = ((0, 1, 2), (3, 4))  # uneven: rank 0 gets three batches, rank 1 two


def _rank(rank: int, store: str, out: str) -> None:
    import torch.distributed as dist

    from paperworks.goal_accessibility import GoalAccessibilityRatio

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=2)
    try:
        batches = _batches()
        metric = GoalAccessibilityRatio(num_layers=L, num_turns=TURNS)
        for i in SHARDS[rank]:
            metric.update(*batches[i])
        torch.save({"synced": metric.compute(), "local_count": metric.count.clone()}, out)
    finally:
        dist.destroy_process_group()


def _pooled(indices) -> torch.Tensor:
    """(L, TURNS) GAR of the given batches pooled, by the pure function turn by turn."""
    batches = _batches()
    cols = []
    for t in range(TURNS):
        masses, rows = [], 0
        for i in indices:
            a, goal, turns = batches[i]
            sel = turns == t
            if sel.any():
                masses.append(goal_accessibility_ratio(a, goal, sel).double() * int(sel.sum()))
                rows += int(sel.sum())
        cols.append(sum(masses) / max(rows, 1))
    return torch.stack(cols, 1)


def test_ddp_two_gloo_processes_every_rank_gets_the_pooled_value(tmp_path):
    pytest.importorskip("torchmetrics")
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    ctx = mp.get_context("fork")
    outs = [str(tmp_path / f"rank{r}.pt") for r in range(2)]
    procs = [ctx.Process(target=_rank, args=(r, str(tmp_path / "store"), outs[r])) for r in range(2)]
    old = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        if old is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = old
    assert [p.exitcode for p in procs] == [0, 0]
    want = _pooled(range(5))
    results = [torch.load(o) for o in outs]
    for r, res in enumerate(results):
        assert torch.allclose(res["synced"], want, atol=1e-9), r
        # a rank's own shard gives another value: the test would catch a metric that does not sync
        assert not torch.allclose(_pooled(SHARDS[r]), want, atol=1e-6)
    # compute() restores each rank's local state after syncing
    assert float(results[0]["local_count"].sum() + results[1]["local_count"].sum()) == float(
        sum(int((b[2] >= 0).sum()) for b in _batches())
    )
