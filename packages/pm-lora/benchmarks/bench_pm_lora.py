"""Side by side: PM-LoRA vs O-LoRA, InfLoRA and per-task LoRA as the number of tasks grows to 50.

One process, one MLP backbone (64 -> 128 -> 128 -> 10, adapters on fc1 and fc2), random task data of
600 inputs, full-batch ``torch.optim.Adam``, 20 steps per task. The four methods first run the task stream
interleaved task by task (untimed); at each checkpoint (1, 5, 10, 20, 50 tasks) the state of every
method after training task t (before its end of task) is kept. On copies of those states, three
questions, one :func:`paperworks.core.bench.compare` each, the number of tasks as the size:

* training-step time (forward + backward + Adam update on task t's 600 inputs), PM-LoRA / each peer;
* end-of-task time (PM-LoRA: spectral merge by truncated SVD; O-LoRA, per-task LoRA: freezing the
  adapter; InfLoRA: freezing it and growing its input memory from the task's inputs),
  PM-LoRA / each peer, each call on a fresh copy of the state (copied outside the timing);
* PM-LoRA's merge against one of its own training steps (how much the merge adds per task).

Stored adapter parameters and bytes after t tasks (deterministic) go to a table beside the timings.

    uv run python packages/pm-lora/benchmarks/bench_pm_lora.py [--quick]
    uv run paperworks bench pm-lora [--quick]

``--quick``: 1 task only, 3 rounds after 1 warm-up call, results written to a temporary folder (the
committed ``benchmarks/results.*`` are left alone) and printed.
"""

from __future__ import annotations

import argparse
import copy
from types import SimpleNamespace

import torch
from torch.nn import functional as F

from paperworks.core.bench import compare, publish
from paperworks.pm_lora import MLP, InfLoRA, OLoRA, PerTaskLoRA, PMLoRA, PMLoRAConfig

TM = ("fc1", "fc2")
CHECKPOINTS = (1, 5, 10, 20, 50)
METHODS = ("PM-LoRA", "O-LoRA", "InfLoRA", "per-task LoRA")
STEPS, LR, N, D_IN = 20, 5e-3, 600, 64
REPEATS, WARMUP = 20, 2
TITLE = "pm-lora benchmarks"
SETUP = (
    f"MLP {D_IN}-128-128-10, adapters on fc1 and fc2 (PM-LoRA rank 16 + task rank 4; O-LoRA, InfLoRA "
    f"and per-task LoRA task rank 4); state after training task t ({STEPS} full-batch torch.optim.Adam "
    f"steps on {N} random inputs per task, the four methods interleaved task by task); CPU."
)


def _make(name: str):
    torch.manual_seed(0)
    if name == "PM-LoRA":
        return PMLoRA(MLP(), PMLoRAConfig(rank=16, task_rank=4, target_modules=TM))
    if name == "O-LoRA":
        return OLoRA(MLP(), TM, task_rank=4, lam=0.5)
    if name == "InfLoRA":
        return InfLoRA(MLP(), TM, task_rank=4)
    return PerTaskLoRA(MLP(), TM, task_rank=4)


def _train_step(adapter, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> None:
    opt.zero_grad()
    (F.cross_entropy(adapter(x), y) + adapter.penalty()).backward()
    opt.step()


class Stream:
    """The four methods run through the task stream once; a snapshot of each kept at the checkpoints.

    Snapshot of task ``t``: every method's adapter after training task ``t`` (before ``end_task``) and
    task ``t``'s data. Built lazily up to the largest checkpoint asked for, never timed.
    """

    def __init__(self, checkpoints: tuple[int, ...]) -> None:
        self.checkpoints = set(checkpoints)
        self.gen = torch.Generator().manual_seed(0)
        self.adapters = {n: _make(n) for n in METHODS}
        self.done = 0
        self.snaps: dict[int, SimpleNamespace] = {}

    def snapshot(self, t: int) -> SimpleNamespace:
        if t not in self.checkpoints:
            raise ValueError(f"t: expected one of the checkpoints {sorted(self.checkpoints)}, got {t!r}")
        while self.done < t:
            task = self.done + 1
            x = torch.randn(N, D_IN, generator=self.gen)
            y = torch.randint(0, 10, (N,), generator=self.gen)
            order = METHODS if task % 2 else METHODS[::-1]  # alternate who runs first
            kept = {}
            for n in order:
                a = self.adapters[n]
                a.begin_task(inputs=x)
                opt = torch.optim.Adam(list(a.trainable_parameters()), lr=LR)
                for _ in range(STEPS):
                    _train_step(a, opt, x, y)
                if task in self.checkpoints:
                    kept[n] = copy.deepcopy(a)
                a.end_task()
            if task in self.checkpoints:
                self.snaps[task] = SimpleNamespace(adapters=kept, x=x, y=y)
            self.done = task
        return self.snaps[t]


def make_input_fn(stream: Stream, n_calls: int):
    """``make_input(t)``: fresh copies of task ``t``'s states, so no compare sees another's changes.

    Per method: a live copy with a fresh Adam for the training-step side, and ``n_calls`` further
    copies for the end-of-task side (``end_task`` changes its adapter, so each call takes a new one).
    """

    def make_input(t: int) -> dict[str, SimpleNamespace]:
        snap = stream.snapshot(t)
        out = {}
        for n, a in snap.adapters.items():
            live = copy.deepcopy(a)
            out[n] = SimpleNamespace(
                adapter=live,
                opt=torch.optim.Adam(list(live.trainable_parameters()), lr=LR),
                x=snap.x,
                y=snap.y,
                pool=[copy.deepcopy(a) for _ in range(n_calls)],
            )
        return out

    return make_input


def step_side(name: str):
    def side(inp: dict[str, SimpleNamespace]) -> None:
        s = inp[name]
        _train_step(s.adapter, s.opt, s.x, s.y)

    return side


def end_task_side(name: str):
    def side(inp: dict[str, SimpleNamespace]) -> None:
        pool = inp[name].pool
        if not pool:
            raise RuntimeError(f"{name}: no fresh state left for end_task (make_input built too few)")
        pool.pop().end_task()

    return side


def size_table(stream: Stream, checkpoints: tuple[int, ...]) -> str:
    rows = [
        "| tasks | method | stored params | stored KiB | params ratio PM-LoRA / this |",
        "| --- | --- | --- | --- | --- |",
    ]
    for t in checkpoints:
        stored = {}
        for n, a in stream.snapshot(t).adapters.items():
            done = copy.deepcopy(a)
            done.end_task()
            stored[n] = (done.stored_parameters(), done.stored_bytes())
        pm = stored["PM-LoRA"][0]
        for n in METHODS:
            p, b = stored[n]
            rows.append(f"| {t} | {n} | {p:,} | {b / 1024:.1f} | {pm / p:.3f} |")
    return "\n".join(rows) + (
        "\n\nAdapter numbers kept after t tasks (`stored_parameters()`, `stored_bytes()`, float32): "
        "PM-LoRA's single rank-16 adapter per layer stays constant, the others keep one rank-4 adapter "
        "per task (InfLoRA also its input memory)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 task only, 3 rounds; temporary output")
    args = parser.parse_args()
    checkpoints = CHECKPOINTS[:1] if args.quick else CHECKPOINTS
    repeats, warmup = (3, 1) if args.quick else (REPEATS, WARMUP)
    stream = Stream(checkpoints)
    # end_task sides run number=1 call per timing, so warmup + repeats calls need as many fresh states
    make_input = make_input_fn(stream, warmup + repeats)
    common = dict(make_input=make_input, sizes=checkpoints, warmup=warmup, repeats=repeats, threads=1)
    common["size_label"] = "tasks"
    results = [
        compare(
            {n: step_side(n) for n in METHODS},
            ours="PM-LoRA",
            name="Training step vs number of tasks",
            note=(
                f"{SETUP} One training step of task t: forward + backward + Adam update on the {N} inputs "
                "(O-LoRA's forward sums all its frozen adapters and its loss adds the orthogonality penalty "
                "over them)."
            ),
            **common,
        ),
        compare(
            {n: end_task_side(n) for n in METHODS},
            ours="PM-LoRA",
            number=1,
            name="End of task vs number of tasks",
            note=(
                f"{SETUP} `end_task()` after task t: PM-LoRA merges the task adapter into its rank-16 "
                "adapter (QR of thin factors + small SVD per layer); O-LoRA and per-task LoRA freeze it, "
                "InfLoRA freezes it and grows its input memory (a forward pass and an SVD of the task's "
                "inputs). "
                "Each call on a fresh copy of the state, copied outside the timing. PM-LoRA's `begin_task()` "
                "(spectral basis of the merged adapter) is not included."
            ),
            **common,
        ),
        compare(
            {"merge (end_task)": end_task_side("PM-LoRA"), "train step": step_side("PM-LoRA")},
            ours="merge (end_task)",
            number=1,
            name="PM-LoRA: merge vs one training step",
            note=(
                f"{SETUP} PM-LoRA's end-of-task merge against one of its own training steps at the same "
                f"state: a task costs {STEPS} steps and one merge."
            ),
            **common,
        ),
    ]
    tables = {"Stored adapter size vs number of tasks": size_table(stream, checkpoints)}
    publish(
        results, __file__, quick=args.quick, title=TITLE + (" (quick)" if args.quick else ""), tables=tables
    )


if __name__ == "__main__":
    main()
