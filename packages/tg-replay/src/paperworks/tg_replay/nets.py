"""A stack of independent small MLPs trained side by side, with hand-written backprop and Adam.

The learners of the reproduction train ``M`` agents at once (one per replay sampler, same seed):
every layer holds the ``M`` agents' weights in one array of shape ``(M, in, out)``, so a forward
pass over ``(M, B, in)`` inputs is one batched matmul per layer, and a step of ``M`` independent
Adam optimisers is a handful of NumPy calls on one flat parameter vector. At the sizes of
classic-control tasks (hidden width 64, batches of 8 to 256) this costs a few NumPy calls per layer
instead of a framework's per-operation overhead per agent.

Parameters of all layers live in one flat array (layer by layer, each layer's block contiguous),
so target networks (hard copy or Polyak averaging) and Adam act on flat vectors. Initialisation
follows ``torch.nn.Linear``'s default: weights and biases uniform in ``±1/sqrt(fan_in)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paperworks.core.validate import (
    as_generator,
    finite_float,
    fraction,
    positive_float,
    positive_int,
)

__all__ = ["Adam", "MLPStack"]


@dataclass
class _Cache:
    """What the backward pass needs: each layer's input (after ReLU) and a tanh output if any."""

    inputs: list[np.ndarray]
    masks: list[np.ndarray]


class MLPStack:
    """``M`` independent MLPs ``sizes[0] -> ... -> sizes[-1]`` with ReLU between layers.

    Args:
        n_models: ``M``, the number of independent networks.
        sizes: layer widths, e.g. ``(4, 64, 64, 2)``.
        seed: seed (or generator) of the initialisation.
        tied_init: give every network the same initial weights (paired comparisons start equal).
        out_scale: factor on the last layer's initial weights and bias.
        dtype: float dtype of parameters and activations.
        out_activation: ``None`` (linear output) or ``"tanh"`` (bounded output, e.g. an actor).

    ``forward(x)``: ``(M, B, sizes[0]) -> (M, B, sizes[-1])``; ``backward(cache, dout)`` accumulates
    the gradient of ``sum(dout * out)`` into :attr:`grad` and returns the input gradient.
    """

    def __init__(
        self,
        n_models: int,
        sizes: Sequence[int],
        *,
        seed: int | np.random.Generator | None = 0,
        tied_init: bool = True,
        out_scale: float = 1.0,
        dtype: type = np.float32,
        out_activation: str | None = None,
    ) -> None:
        self.n_models = positive_int(n_models, "n_models")
        if len(sizes) < 2:
            raise ValueError(f"sizes: expected at least an input and an output width, got {tuple(sizes)}")
        self.sizes = tuple(positive_int(s, f"sizes[{i}]") for i, s in enumerate(sizes))
        if out_activation not in (None, "tanh"):
            raise ValueError(f"out_activation: expected None or 'tanh', got {out_activation!r}")
        self.out_activation = out_activation
        self.dtype = np.dtype(dtype)
        if self.dtype.kind != "f":
            raise TypeError(f"dtype: expected a float dtype, got {self.dtype}")
        m = self.n_models
        self._shapes = []
        for i, o in zip(self.sizes[:-1], self.sizes[1:], strict=True):
            self._shapes += [(m, i, o), (m, 1, o)]
        self._spans = []
        off = 0
        for shape in self._shapes:
            n = int(np.prod(shape))
            self._spans.append((off, off + n, shape))
            off += n
        self.size = off
        self.theta = np.zeros(self.size, dtype=self.dtype)
        self.grad = np.zeros_like(self.theta)
        self.params = self.views(self.theta)
        self.grads = self.views(self.grad)
        gen = as_generator(seed, "seed")
        scale = finite_float(out_scale, "out_scale")
        n_layers = len(self.sizes) - 1
        for k in range(n_layers):
            w, b = self.params[2 * k], self.params[2 * k + 1]
            bound = 1.0 / np.sqrt(w.shape[1])
            draw_shape = (1, *w.shape[1:]) if tied_init else w.shape
            w[...] = gen.uniform(-bound, bound, draw_shape)
            b[...] = gen.uniform(-bound, bound, (1, *b.shape[1:]) if tied_init else b.shape)
            if k == n_layers - 1:
                w *= scale
                b *= scale

    def views(self, flat: np.ndarray) -> list[np.ndarray]:
        """Weight and bias views ``[W1 (M, in, h), b1 (M, 1, h), ...]`` into a flat parameter vector."""
        if flat.shape != (self.size,):
            raise ValueError(f"flat: expected shape ({self.size},), got {flat.shape}")
        return [flat[a:b].reshape(shape) for a, b, shape in self._spans]

    def forward(
        self, x: np.ndarray, flat: np.ndarray | None = None, *, cache: bool = False
    ) -> tuple[np.ndarray, _Cache | None]:
        """Outputs ``(M, B, out)`` for inputs ``(M, B, in)``; with ``cache`` also what backward needs.

        ``flat``: another parameter vector of this layout (a target network); default the online one.
        """
        params = self.params if flat is None else self.views(flat)
        h = np.asarray(x, dtype=self.dtype)
        inputs: list[np.ndarray] = []
        n_layers = len(self.sizes) - 1
        for k in range(n_layers):
            if cache:
                inputs.append(h)
            h = np.matmul(h, params[2 * k])
            h += params[2 * k + 1]
            if k < n_layers - 1:
                np.maximum(h, 0.0, out=h)
        if self.out_activation == "tanh":
            np.tanh(h, out=h)
        return h, (_Cache(inputs, [h] if self.out_activation == "tanh" else []) if cache else None)

    def backward(
        self, c: _Cache, dout: np.ndarray, *, input_grad: bool = False, param_grad: bool = True
    ) -> np.ndarray | None:
        """Write the gradient of ``sum(dout * out)`` into :attr:`grad`; return ``d/dx`` if asked.

        ``param_grad=False`` skips the parameter gradients (only ``d/dx`` is wanted, e.g. the actor's
        gradient through a critic).
        """
        g = np.asarray(dout, dtype=self.dtype)
        n_layers = len(self.sizes) - 1
        if self.out_activation == "tanh":
            y = c.masks[-1]
            g = g * (1.0 - y * y)
        for k in range(n_layers - 1, -1, -1):
            w = self.params[2 * k]
            if param_grad:
                np.matmul(c.inputs[k].transpose(0, 2, 1), g, out=self.grads[2 * k])
                self.grads[2 * k + 1][...] = g.sum(axis=1, keepdims=True)
            if k > 0 or input_grad:
                g = np.matmul(g, w.transpose(0, 2, 1))
                if k > 0:
                    g *= c.inputs[k] > 0  # ReLU: the layer's input is the previous layer's output
        return g if input_grad else None


class Adam:
    """Adam (Kingma & Ba, 2015) on one flat parameter vector, updated in place.

    ``step(theta, grad)``: ``m <- b1 m + (1-b1) g``, ``v <- b2 v + (1-b2) g^2``,
    ``theta <- theta - lr sqrt(1-b2^t)/(1-b1^t) m / (sqrt(v) + eps)`` (the bias correction folded
    into the step size, as ``torch.optim.Adam`` does up to where ``eps`` enters).
    """

    def __init__(
        self,
        size: int,
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        dtype: type = np.float32,
    ) -> None:
        self.lr = positive_float(lr, "lr")
        if len(betas) != 2:
            raise ValueError(f"betas: expected two numbers, got {betas!r}")
        self.b1 = fraction(betas[0], "betas[0]", open_high=True)
        self.b2 = fraction(betas[1], "betas[1]", open_high=True)
        self.eps = positive_float(eps, "eps")
        n = positive_int(size, "size")
        self.m = np.zeros(n, dtype=dtype)
        self.v = np.zeros(n, dtype=dtype)
        self._tmp = np.zeros(n, dtype=dtype)
        self.t = 0

    def step(self, theta: np.ndarray, grad: np.ndarray) -> None:
        self.t += 1
        self.m *= self.b1
        self.m += (1.0 - self.b1) * grad
        self.v *= self.b2
        np.multiply(grad, grad, out=self._tmp)
        self._tmp *= 1.0 - self.b2
        self.v += self._tmp
        step = self.lr * np.sqrt(1.0 - self.b2**self.t) / (1.0 - self.b1**self.t)
        np.sqrt(self.v, out=self._tmp)
        self._tmp += self.eps
        np.divide(self.m, self._tmp, out=self._tmp)
        self._tmp *= step
        theta -= self._tmp
        if self.t % 128 == 0:
            # moments of parameters whose gradient stays 0 (dead ReLUs) decay geometrically into
            # subnormal floats, which make every later pass over them many times slower; below
            # `tiny` they cannot move a parameter (the step is m / (sqrt(v) + eps)), so zero them
            tiny = 1e-30
            self.m[np.abs(self.m) < tiny] = 0.0
            self.v[self.v < tiny] = 0.0
