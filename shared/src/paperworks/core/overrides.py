"""Overrides of an experiment's frozen config dataclass: ``--set key=value`` typed by the field.

A key names a field of the config (``n_instances``) or of a nested config dataclass
(``train.steps``). A text value is parsed by the field's type annotation: ``int``, ``float``, ``bool``
(true/false, yes/no, 1/0), ``str`` (taken as written), ``X | None`` (``none``), ``Literal[...]``, tuples
(``2,4,8`` or ``(2, 4, 8)``; nested tuples as Python literals). Values that are not text are checked
against the annotation. The config's own ``__post_init__`` checks run on the result.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping
from typing import Any

__all__ = ["OverrideError", "apply_overrides", "config_fields", "parse_assignment", "typed_overrides"]


class OverrideError(ValueError):
    """A bad override: unknown key, a value of the wrong type, or a config that rejects it (one line)."""


def parse_assignment(text: str) -> tuple[str, str]:
    """``"key=value"`` -> ``("key", "value")``; the value may contain ``=``."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise OverrideError(f"--set {text!r}: expected KEY=VALUE")
    return key.strip(), value.strip()


def config_fields(config: Any, prefix: str = "") -> dict[str, dataclasses.Field]:
    """Every settable key of a config dataclass (nested dataclass fields as ``outer.inner``)."""
    out: dict[str, dataclasses.Field] = {}
    for f in dataclasses.fields(config):
        if not f.init:
            continue
        out[prefix + f.name] = f
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.update(config_fields(value, prefix + f.name + "."))
    return out


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # an annotation that cannot be evaluated: fall back to the value's type
        return {}


def _hint_of(config: Any, key: str) -> tuple[Any, Any]:
    """(annotation or None, current value) of ``key`` in ``config`` (dotted for nested configs)."""
    obj = config
    parts = key.split(".")
    for p in parts[:-1]:
        obj = getattr(obj, p)
    return _hints(type(obj)).get(parts[-1]), getattr(obj, parts[-1])


def _describe(hint: Any) -> str:
    if hint is None:
        return "a value"
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "")


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class _Mismatch(Exception):
    pass


def _is_union(origin: Any) -> bool:
    return origin is typing.Union or origin is types.UnionType


def _coerce(value: Any, hint: Any) -> Any:
    """``value`` (already a Python value) checked and converted to ``hint``; raise _Mismatch."""
    if hint is None or hint is Any:
        return value
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if _is_union(origin):
        if value is None and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return _coerce(value, a)
            except _Mismatch:
                continue
        raise _Mismatch
    if origin is typing.Literal:
        if value in args:
            return value
        raise _Mismatch
    if origin is tuple or hint is tuple:
        if not isinstance(value, tuple | list):
            raise _Mismatch
        if not args:
            return tuple(value)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0]) for v in value)
        if len(args) != len(value):
            raise _Mismatch
        return tuple(_coerce(v, a) for v, a in zip(value, args))
    if origin in (list, set, frozenset, dict) or hint in (list, set, frozenset, dict):
        raise _Mismatch  # a frozen config holds tuples; other containers are not settable from here
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _Mismatch
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _Mismatch
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise _Mismatch
    if hint is str:
        if isinstance(value, str):
            return value
        raise _Mismatch
    if isinstance(hint, type):
        if isinstance(value, hint):
            return value
        raise _Mismatch
    return value  # an annotation we do not understand: the config's own checks decide


def _parse_text(text: str, hint: Any, current: Any) -> Any:
    """A command-line value, parsed by the field's annotation (or, without one, its current value)."""
    if hint is None:
        hint = type(current) if current is not None else None
    if hint is str:
        return text
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    low = text.strip().lower()
    if _is_union(origin):
        if low in ("none", "null") and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return _parse_text(text, a, current)
            except _Mismatch:
                continue
        raise _Mismatch
    if hint is bool:
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise _Mismatch
    if origin is typing.Literal:
        for a in args:
            if (isinstance(a, str) and text == a) or (not isinstance(a, str) and low == str(a).lower()):
                return a
        raise _Mismatch
    if origin is tuple or hint is tuple:
        body = text.strip()
        if not body or body in ("()", "[]"):
            value: Any = ()
        else:
            if body[0] not in "([":
                body = f"({body},)"
            try:
                value = ast.literal_eval(body)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                if args and all(a is str for a in args if a is not Ellipsis):  # bare words: a,b,c
                    value = tuple(w.strip() for w in text.strip().strip("()[]").split(","))
                else:
                    raise _Mismatch from None
        return _coerce(value, hint)
    if hint is int:
        t = text.strip().replace("_", "")
        if t.lstrip("+-").isdigit():
            return int(t)
        raise _Mismatch
    if hint is float:
        try:
            return float(text)
        except ValueError:
            raise _Mismatch from None
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise _Mismatch from None
    return _coerce(value, hint)


def typed_overrides(config: Any, raw: Mapping[str, Any], where: str = "config") -> dict[str, Any]:
    """``raw`` (key -> text or value) checked against ``config``'s fields; values typed by annotation.

    Raise :class:`OverrideError` (one line) on an unknown key, listing the valid ones, or a value
    that does not fit the field's type.
    """
    if config is None:
        if raw:
            raise OverrideError(f"--set: {where} has no config to set (its config() returns None)")
        return {}
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise OverrideError(f"--set: {where}'s config is not a dataclass instance")
    fields = config_fields(config)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise OverrideError(
                f"--set: unknown key {key!r} for {where}; {hint}valid keys: {', '.join(fields)}"
            )
        ann, current = _hint_of(config, key)
        try:
            typed = _parse_text(value, ann, current) if isinstance(value, str) else _coerce(value, ann)
        except _Mismatch:
            raise OverrideError(
                f"--set {key}={value if isinstance(value, str) else repr(value)}: expected "
                f"{_describe(ann if ann is not None else type(current))} for {where}'s {key} "
                f"(now {current!r})"
            ) from None
        out[key] = typed
    return out


def apply_overrides(config: Any, overrides: Mapping[str, Any]) -> Any:
    """``config`` with ``overrides`` (typed, as :func:`typed_overrides` returns) replaced in.

    Nested keys replace inside the nested dataclass. The config's ``__post_init__`` runs on every
    replaced level; its ``ValueError``/``TypeError`` becomes :class:`OverrideError`.
    """
    if not overrides:
        return config
    top: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in overrides.items():
        head, dot, rest = key.partition(".")
        if dot:
            nested.setdefault(head, {})[rest] = value
        else:
            top[head] = value
    changes = dict(top)
    for head, sub in nested.items():
        inner = changes.get(head, getattr(config, head))
        changes[head] = apply_overrides(inner, sub)
    try:
        return dataclasses.replace(config, **changes)
    except (ValueError, TypeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise OverrideError(f"--set: {type(config).__name__} rejects {_fmt(overrides)}: {msg}") from None


def _fmt(overrides: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in overrides.items())
