"""Seed specifications: a count, an explicit list, or half-open ranges, so that a sweep can be sharded.

``"5"`` is seeds 0..4 (a count); ``"0,3,7"`` is those seeds; ``"10:20"`` is seeds 10..19 (half-open,
as in Python); items mix: ``"0:3,7"`` is 0, 1, 2, 7. Order is kept; a seed may appear once.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SeedSpecError", "format_seed_spec", "parse_seed_spec"]

_MAX_SEEDS = 1_000_000  # a typo such as 0:10000000000 should fail here, not fill memory


class SeedSpecError(ValueError):
    """A malformed seed specification; the message says what was expected."""


def _nonneg(text: str, spec: str) -> int:
    t = text.strip()
    if not t.isdigit():  # digits only: no sign, no underscores, no '1e3'
        raise SeedSpecError(
            f"seeds {spec!r}: {t!r} is not a non-negative integer "
            "(expected a count N, a list a,b,c or a range a:b)"
        )
    return int(t)


def parse_seed_spec(spec: str) -> list[int]:
    """The seeds named by ``spec`` (see the module docstring); raise :class:`SeedSpecError` if malformed."""
    if not isinstance(spec, str):
        raise SeedSpecError(f"seeds: expected a string, got {type(spec).__name__}")
    text = spec.strip()
    if not text:
        raise SeedSpecError("seeds: expected a count N, a list a,b,c or a range a:b, got an empty string")
    if "," not in text and ":" not in text:
        n = _nonneg(text, spec)
        if n < 1:
            raise SeedSpecError(f"seeds {spec!r}: a count must be at least 1")
        if n > _MAX_SEEDS:
            raise SeedSpecError(f"seeds {spec!r}: at most {_MAX_SEEDS} seeds")
        return list(range(n))
    out: list[int] = []
    for item in text.split(","):
        if not item.strip():
            raise SeedSpecError(f"seeds {spec!r}: empty item (expected a,b,c without a trailing comma)")
        if ":" in item:
            parts = item.split(":")
            if len(parts) != 2:
                raise SeedSpecError(f"seeds {spec!r}: range {item.strip()!r} expected the form a:b")
            lo, hi = _nonneg(parts[0], spec), _nonneg(parts[1], spec)
            if hi <= lo:
                raise SeedSpecError(f"seeds {spec!r}: range {item.strip()!r} is empty (expected a < b)")
            if hi - lo + len(out) > _MAX_SEEDS:
                raise SeedSpecError(f"seeds {spec!r}: at most {_MAX_SEEDS} seeds")
            out.extend(range(lo, hi))
        else:
            out.append(_nonneg(item, spec))
    seen: set[int] = set()
    for s in out:
        if s in seen:
            raise SeedSpecError(f"seeds {spec!r}: seed {s} is named twice")
        seen.add(s)
    return out


def format_seed_spec(seeds: Sequence[int]) -> str:
    """The shortest spec naming ``seeds`` in order (runs of consecutive seeds become ranges)."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds: expected at least one seed")
    if seeds == list(range(len(seeds))) and len(seeds) > 0:
        return str(len(seeds))
    items: list[str] = []
    start = prev = seeds[0]
    for s in [*seeds[1:], None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        items.append(str(start) if start == prev else f"{start}:{prev + 1}")
        if s is not None:
            start = prev = s
    spec = ",".join(items)
    return spec if ("," in spec or ":" in spec) else f"{spec}:{int(spec) + 1}"
