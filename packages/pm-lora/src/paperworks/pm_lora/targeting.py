"""Which modules of a model get an adapter: peft's ``target_modules`` rules, on ``nn.Linear`` and Conv1D.

Three forms, as in ``peft.LoraConfig(target_modules=...)``:

* ``"all-linear"`` (any case): every ``nn.Linear`` and GPT-2-style ``Conv1D`` except the output layer
  of a ``transformers`` model (``model.get_output_embeddings()``), like peft;
* any other string: a regular expression that must match the *full* module name (``re.fullmatch``);
* a sequence of names: a module is selected when its name equals one of them or ends with
  ``"." + name``.

``transformers.pytorch_utils.Conv1D`` stores its weight as (in, out) (peft's ``fan_in_fan_out``);
it is recognised without importing transformers: only when a model already uses it is the module
loaded. ``nn.MultiheadAttention.out_proj`` is refused: the attention reads ``out_proj.weight``
directly, bypassing any wrapper, so an adapter there would be silently ignored or break the module.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from torch import nn

__all__ = ["ALL_LINEAR", "find_target_modules", "is_conv1d", "is_linear_like"]

ALL_LINEAR = "all-linear"


def is_conv1d(module: nn.Module) -> bool:
    """Whether ``module`` is ``transformers.pytorch_utils.Conv1D`` (weight (in, out), ``fan_in_fan_out``)."""
    mod = sys.modules.get("transformers.pytorch_utils")
    cls = getattr(mod, "Conv1D", None) if mod is not None else None
    return cls is not None and isinstance(module, cls)


def is_linear_like(module: nn.Module) -> bool:
    """``nn.Linear`` or a GPT-2 ``Conv1D``: the layer types an adapter can wrap."""
    return isinstance(module, nn.Linear) or is_conv1d(module)


def _mha_out_projs(model: nn.Module) -> set[str]:
    out = set()
    for name, m in model.named_modules():
        if isinstance(m, nn.MultiheadAttention):
            out.add(f"{name}.out_proj" if name else "out_proj")
    return out


def _inside_adapters(model: nn.Module) -> set[str]:
    """Names of modules that live inside an existing continual adapter layer (never re-wrapped)."""
    from .adapter import ContinualLoRALinear  # local: adapter imports this module

    inner = set()
    for name, m in model.named_modules():
        if isinstance(m, ContinualLoRALinear):
            inner.update(f"{name}.{sub}" for sub, _ in m.named_modules() if sub)
    return inner


def _output_layer(model: nn.Module) -> str | None:
    get = getattr(model, "get_output_embeddings", None)
    if not callable(get):
        return None
    try:
        head = get()
    except (AttributeError, NotImplementedError):
        return None
    if head is None:
        return None
    return next((n for n, m in model.named_modules() if m is head), None)


def find_target_modules(model: nn.Module, target_modules: str | Sequence[str]) -> list[str]:
    """Names of the modules of ``model`` that ``target_modules`` selects (module docstring).

    Raises ``ValueError`` (one line, naming ``target_modules``) for an invalid regular expression,
    an empty selection (listing the model's linear modules), a selected module that is not
    ``nn.Linear``/Conv1D (name lists only), an ``nn.MultiheadAttention.out_proj``, or a module that
    already carries a continual adapter.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    from .adapter import ContinualLoRALinear

    mha = _mha_out_projs(model)
    inner = _inside_adapters(model)
    modules = [(n, m) for n, m in model.named_modules() if n and n not in inner]
    linear = [n for n, m in modules if is_linear_like(m)]
    if isinstance(target_modules, str):
        if target_modules.lower() == ALL_LINEAR:
            head = _output_layer(model)
            # like peft, all-linear leaves the output layer alone; the attention's out_proj cannot
            # be wrapped (see the module docstring), so all-linear skips it rather than failing
            chosen = [n for n in linear if n != head and n not in mha]
        else:
            try:
                pattern = re.compile(target_modules)
            except re.error as e:
                raise ValueError(
                    f"target_modules: {target_modules!r} is not a valid regular expression ({e})"
                ) from None
            matched = [(n, m) for n, m in modules if pattern.fullmatch(n)]
            # a regex also matches containers (".*" matches every module): keep the layers it selects
            chosen = [n for n, m in matched if is_linear_like(m) or isinstance(m, ContinualLoRALinear)]
    else:
        if isinstance(target_modules, bytes) or not isinstance(target_modules, Sequence | set | frozenset):
            raise TypeError(
                "target_modules: expected 'all-linear', a regular expression or a list of module names, "
                f"got {type(target_modules).__name__}"
            )
        pats = list(target_modules)
        if not pats or not all(isinstance(p, str) and p for p in pats):
            raise ValueError(
                f"target_modules: expected a non-empty list of non-empty names, got {target_modules!r}"
            )
        chosen = []
        for n, m in modules:
            if any(n == p or n.endswith("." + p) for p in pats):
                if not (is_linear_like(m) or isinstance(m, ContinualLoRALinear)):
                    raise ValueError(
                        f"target_modules: {n!r} is a {type(m).__name__}; only nn.Linear and "
                        "transformers' Conv1D layers can carry an adapter"
                    )
                chosen.append(n)
    bad = [n for n in chosen if n in mha]
    if bad:
        raise ValueError(
            f"target_modules: {bad[0]!r} is the out_proj of an nn.MultiheadAttention, which reads its "
            "weight directly and cannot be wrapped; exclude it (e.g. list the linear layers by name)"
        )
    wrapped = [n for n in chosen if isinstance(model.get_submodule(n), ContinualLoRALinear)]
    if wrapped:
        raise ValueError(f"target_modules: {wrapped[0]!r} already carries a continual adapter")
    if not chosen:
        raise ValueError(
            f"target_modules: {target_modules!r} matches no nn.Linear or Conv1D module; "
            f"the model's linear modules are {linear}"
        )
    return chosen
