"""Generated multi-task data, a pretrained MLP backbone and per-task LoRA fine-tuning (batched over tasks).

Generative model (all latent quantities drawn from ``seed``): ``C = 12`` latent clusters with means
``mu_c ~ N(0, 3^2 I_d)`` in ``d = 32`` dimensions; an observation of cluster ``c`` is ``z = mu_c + eps``,
``eps ~ N(0, I_d)``. Pretraining observes ``(z, c)``. Two suites of K tasks (``suite=``):

- ``"shared_shift"``: task ``k`` observes ``x = T_k z`` under a domain shift ``T_k = I + S + G_k`` (``S``:
  a shift shared by all tasks, ``G_k``: the task's own, both rank-2 with ``N(0, 1.2^2 / d)`` entries),
  and a label ``y = g_k(c)`` from a random grouping ``g_k`` of the clusters into 4 classes;
- ``"independent"``: no shared shift, ``T_k = I + G_k``, and tasks from two different generators
  alternating with ``k``: even ``k`` labels a random grouping of the clusters as above, odd ``k`` labels
  two random half-spaces of ``z`` (``y = 2 [v_1 . z > t_1] + [v_2 . z > t_2]``, ``v`` uniform on the
  sphere, ``t`` the median of the projection), which cut through clusters.

The backbone (two ReLU layers of width 64) is pretrained on clusters; each task fine-tunes rank-``r``
LoRA adapters on both layers plus its own linear head (heads stay task-specific and are not merged, as
in the model-merging literature's classification benchmarks).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import nn

from paperworks.core.validate import nonnegative_int, one_of, positive_int

from .lora import LoRAAdapter

__all__ = [
    "SUITES",
    "Backbone",
    "TaskSuite",
    "TrainedTasks",
    "forward_tasks",
    "make_tasks",
    "pretrain_backbone",
    "train_task_loras",
]

D_IN, HIDDEN, N_CLUSTERS, N_CLASSES = 32, 64, 12, 4
LAYERS = ("fc1", "fc2")
SUITES = ("shared_shift", "independent")


class Backbone(nn.Module):
    """``x (n, 32) -> features (n, 64)``: two ReLU layers ``fc1`` (64 x 32) and ``fc2`` (64 x 64)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(D_IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc2(torch.relu(self.fc1(x))))


@dataclass(frozen=True)
class TaskSuite:
    """Pretraining data ``(z, c)`` and K tasks: ``x_*``: ``(K, n, 32)``, ``y_*``: ``(K, n)`` splits."""

    z_pre: torch.Tensor
    c_pre: torch.Tensor
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_val: torch.Tensor
    y_val: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor

    def to(self, device: torch.device | str) -> TaskSuite:
        """The same suite with every tensor on ``device``."""
        return TaskSuite(*(getattr(self, f.name).to(device) for f in fields(self)))


def make_tasks(
    n_tasks: int, seed: int, *, suite: str = "shared_shift", n_train: int = 300, n_eval: int = 400
) -> TaskSuite:
    """Draw the generative model above; ``n_eval`` points each for validation and test per task."""
    n_tasks = positive_int(n_tasks, "n_tasks")
    seed = nonnegative_int(seed, "seed")
    suite = one_of(suite, "suite", SUITES)
    n_train, n_eval = positive_int(n_train, "n_train"), positive_int(n_eval, "n_eval")
    g = torch.Generator().manual_seed(seed)
    mu = 3.0 * torch.randn(N_CLUSTERS, D_IN, generator=g)

    def draw(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        c = torch.randint(0, N_CLUSTERS, (n,), generator=g)
        return mu[c] + torch.randn(n, D_IN, generator=g), c

    def low_rank() -> torch.Tensor:
        return 1.2 * torch.randn(D_IN, 2, generator=g) @ torch.randn(2, D_IN, generator=g) / D_IN**0.5

    z_pre, c_pre = draw(1500)
    shared = low_rank() if suite == "shared_shift" else torch.zeros(D_IN, D_IN)
    n_all = n_train + 2 * n_eval
    xs, ys = [], []
    for k in range(n_tasks):
        T = torch.eye(D_IN) + shared + low_rank()
        z, c = draw(n_all)
        if suite == "independent" and k % 2 == 1:
            v = torch.randn(D_IN, 2, generator=g)
            proj = z @ (v / v.norm(dim=0))
            bits = (proj > proj.median(dim=0).values).long()
            y = 2 * bits[:, 0] + bits[:, 1]
        else:
            grouping = torch.randperm(N_CLUSTERS, generator=g) % N_CLASSES
            y = grouping[c]
        xs.append(z @ T.T)
        ys.append(y)
    x, y = torch.stack(xs), torch.stack(ys)
    a, b = n_train, n_train + n_eval
    return TaskSuite(z_pre, c_pre, x[:, :a], y[:, :a], x[:, a:b], y[:, a:b], x[:, b:], y[:, b:])


def pretrain_backbone(suite: TaskSuite, seed: int, steps: int = 150) -> Backbone:
    """Pretrain the backbone (with a throwaway head) on the cluster labels, full-batch Adam."""
    torch.manual_seed(seed)
    device = suite.z_pre.device
    net = Backbone().to(device)  # initialised on the CPU from the seed, then moved
    head = nn.Linear(HIDDEN, N_CLUSTERS).to(device)
    opt = torch.optim.Adam([*net.parameters(), *head.parameters()], lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(head(net(suite.z_pre)), suite.c_pre).backward()
        opt.step()
    net.requires_grad_(False)
    return net


@dataclass(frozen=True)
class TrainedTasks:
    """Per-task adapters ``{layer: LoRAAdapter}`` and heads ``(W (K, 4, 64), b (K, 4))``."""

    adapters: list[dict[str, LoRAAdapter]]
    head_w: torch.Tensor
    head_b: torch.Tensor


def forward_tasks(
    net: Backbone,
    deltas: dict[str, torch.Tensor],
    x: torch.Tensor,
    head_w: torch.Tensor,
    head_b: torch.Tensor,
) -> torch.Tensor:
    """Logits ``(K, n, 4)`` of every task's head on a backbone with updates ``deltas[layer]``:
    ``(K, d_out, d_in)`` (per-task weights) or ``(d_out, d_in)`` (one merged weight for all tasks)."""
    w1 = net.fc1.weight + deltas["fc1"]
    w2 = net.fc2.weight + deltas["fc2"]
    h = torch.relu(torch.matmul(x, w1.transpose(-1, -2)) + net.fc1.bias)
    h = torch.relu(torch.matmul(h, w2.transpose(-1, -2)) + net.fc2.bias)
    return torch.matmul(h, head_w.transpose(-1, -2)) + head_b[:, None, :]


def train_task_loras(
    net: Backbone, suite: TaskSuite, seed: int, *, rank: int = 4, alpha: float = 8.0, steps: int = 200
) -> TrainedTasks:
    """Fine-tune one LoRA (both layers) and one head per task, all K tasks in one batched model (drawn
    on the CPU from ``seed``, trained on the device of ``net``)."""
    K = suite.x_train.shape[0]
    device = net.fc1.weight.device
    g = torch.Generator().manual_seed(seed + 7919)
    s = alpha / rank
    params = {}
    for name in LAYERS:
        lin = getattr(net, name)
        d_out, d_in = lin.weight.shape
        A0 = torch.randn(K, rank, d_in, generator=g) / d_in**0.5
        params[f"{name}.A"] = A0.to(device).requires_grad_()
        params[f"{name}.B"] = torch.zeros(K, d_out, rank, device=device).requires_grad_()
    head_w = (0.1 * torch.randn(K, N_CLASSES, HIDDEN, generator=g)).to(device).requires_grad_()
    head_b = torch.zeros(K, N_CLASSES, device=device).requires_grad_()
    opt = torch.optim.Adam([*params.values(), head_w, head_b], lr=1e-2)
    y = suite.y_train.reshape(-1)
    for _ in range(steps):
        opt.zero_grad()
        deltas = {n: s * params[f"{n}.B"] @ params[f"{n}.A"] for n in LAYERS}
        logits = forward_tasks(net, deltas, suite.x_train, head_w, head_b)
        nn.functional.cross_entropy(logits.reshape(-1, N_CLASSES), y, reduction="sum").div(
            y.numel() / K
        ).backward()
        opt.step()
    adapters = [
        {
            n: LoRAAdapter(
                params[f"{n}.A"][k].detach().clone(), params[f"{n}.B"][k].detach().clone(), alpha=alpha
            )
            for n in LAYERS
        }
        for k in range(K)
    ]
    return TrainedTasks(adapters, head_w.detach(), head_b.detach())
