"""An experiment's declarations (paper, claims, seeds, config fields) read from its source, unimported.

``paperworks list`` and ``show`` must not import every experiment module: those import torch and
friends at the top (seconds and hundreds of MB each). So this module parses the module that the
entry point names with :mod:`ast` and evaluates only the declarations, in a small interpreter that
knows literals, names bound once at module level (also in sibling modules imported relatively),
f-strings, ``str`` methods, a few pure builtins, comprehensions, simple helper functions (assign,
``+=``, ``for``, ``if``, ``return``) and calls of the core's ``Paper``, ``Claim`` and ``SlopeClaim``
(the real classes, so their checks run). Anything else raises :class:`Unreadable`, and the caller
imports the module instead (``source == "import"``). Config fields come from the dataclass that
``config()`` is annotated to return (defaults, and the quick run's values when ``config()`` picks
between two spellings of it on ``quick``); a default that is not a literal is shown as its source.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib.machinery
import io
import re
import sys
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

from .claims import Claim, SlopeClaim
from .report import Paper

__all__ = [
    "ConfigField",
    "Declarations",
    "Unreadable",
    "declarations_from_experiment",
    "locate_module",
    "read_declarations",
]

_ATTRS = ("slug", "paper", "claims", "default_seeds", "quick_seeds", "seeds_note")
_CORE_CALLABLES = {"Claim": Claim, "SlopeClaim": SlopeClaim, "Paper": Paper}
_SAFE_BUILTINS = {
    n: getattr(builtins, n)
    for n in (
        "tuple list dict set frozenset len range str int float bool sorted min max abs round zip "
        "enumerate reversed sum any all repr"
    ).split()
}
_SAFE_METHODS = {
    str: {
        "format",
        "join",
        "replace",
        "upper",
        "lower",
        "strip",
        "lstrip",
        "rstrip",
        "split",
        "title",
        "capitalize",
        "startswith",
        "endswith",
    },
    list: {"append", "extend", "index", "count"},
    tuple: {"index", "count"},
    dict: {"get", "items", "keys", "values"},
}
_MAX_STEPS = 200_000


class Unreadable(Exception):
    """The declarations cannot be read statically; the message says which construct stopped it."""


@dataclass(frozen=True)
class ConfigField:
    """One field of an experiment's config: its annotation, default and quick value, and help."""

    name: str
    annotation: str
    default: str  # repr of the value, or the default's source text when it is not a literal
    quick: str | None  # the quick run's value the same way; None when it could not be read
    help: str = ""
    default_exact: bool = True  # False: ``default`` is (partly) source text, not the value's repr
    quick_exact: bool = True


@dataclass(frozen=True)
class Declarations:
    """What ``list`` and ``show`` print about one installed experiment."""

    slug: str
    paper: Paper
    claims: tuple[Claim | SlopeClaim, ...]
    default_seeds: int
    quick_seeds: int | None
    seeds_note: str
    config_class: str | None
    config_fields: tuple[ConfigField, ...] | None  # None: no config, or not readable statically
    config_note: str = ""  # why the fields may differ from a run's (e.g. config() adjusts them)
    distribution: str | None = None
    version: str | None = None
    source: str = "static"  # "static": read from the source; "import": the module was imported
    why_imported: str = ""  # when source == "import": why the static read failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "paper": {"title": self.paper.title, "arxiv": self.paper.arxiv, "note": self.paper.note},
            "citation": self.paper.citation,
            "distribution": self.distribution,
            "version": self.version,
            "default_seeds": self.default_seeds,
            "quick_seeds": self.quick_seeds,
            "seeds_note": self.seeds_note,
            "claims": [
                {
                    "key": c.key,
                    "statement": c.statement,
                    "predicate": c.predicate,
                    "kind": c.kind,
                    "exact": c.exact,
                    "paper_value": c.paper_value,
                    "note": c.note,
                }
                for c in self.claims
            ],
            "config_class": self.config_class,
            "config": None
            if self.config_fields is None
            else [dataclasses.asdict(f) for f in self.config_fields],
            "config_note": self.config_note,
            "source": self.source,
        }


# -- locating a module's file without importing it -------------------------------------------------


def locate_module(modname: str) -> Path | None:
    """The ``.py`` file of ``modname`` found on ``sys.path``, without executing any package."""
    path: Any = None
    spec = None
    parts = modname.split(".")
    for i in range(len(parts)):
        name = ".".join(parts[: i + 1])
        loaded = sys.modules.get(name)
        if loaded is not None and i < len(parts) - 1 and hasattr(loaded, "__path__"):
            path = list(loaded.__path__)
            continue
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, path)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        path = spec.submodule_search_locations
        if i < len(parts) - 1 and path is None:
            return None
    if spec is None or not spec.origin or not str(spec.origin).endswith(".py"):
        return None
    return Path(spec.origin)


# -- the interpreter ---------------------------------------------------------------------------------


class _Opaque:
    """A name bound to something the interpreter cannot evaluate; using it is :class:`Unreadable`."""

    def __init__(self, what: str) -> None:
        self.what = what


@dataclass
class _ClassRef:
    module: _Module
    node: ast.ClassDef


@dataclass
class _FunctionRef:
    module: _Module
    node: ast.FunctionDef


@dataclass
class _Instance:
    """An instance of a dataclass of the package, built in the interpreter: its field values."""

    cls: _ClassRef
    values: dict[str, Any]


@dataclass
class _Lambda:
    module: _Module
    node: ast.Lambda
    scope: dict[str, Any]


@dataclass
class _SafeModule:
    name: str
    names: dict[str, Any]


class _Replace:
    """Stands for ``dataclasses.replace`` (on instances built in the interpreter)."""


_REPLACE = _Replace()
_SAFE_MODULES: dict[str, dict[str, Any]] = {
    "math": {"inf": float("inf"), "nan": float("nan"), "pi": 3.141592653589793, "e": 2.718281828459045},
    "dataclasses": {"replace": _REPLACE},
}


@dataclass
class _Bound:
    obj: Any
    name: str


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _bound_names(node: ast.AST) -> Iterator[str]:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            yield n.id
        elif isinstance(n, ast.alias):
            yield (n.asname or n.name).split(".")[0]
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield n.name


class _Module:
    """One parsed module: its top-level bindings, evaluated on demand."""

    def __init__(self, path: Path, modname: str, reader: _Reader) -> None:
        self.path, self.modname, self.reader = path, modname, reader
        try:
            self.text = path.read_text(encoding="utf-8")
            self.tree = ast.parse(self.text, filename=str(path))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as e:
            raise Unreadable(f"{path}: cannot be parsed ({type(e).__name__})") from None
        self.exprs: dict[str, ast.expr] = {}
        self.defs: dict[str, ast.FunctionDef | ast.ClassDef] = {}
        self.imports: dict[str, tuple[str, str | None, int]] = {}  # name -> (module, attr, level)
        counts: dict[str, int] = {}
        for stmt in self.tree.body:
            names: list[str] = []
            if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
                for t in stmt.targets:
                    self.exprs[t.id] = stmt.value
                    names.append(t.id)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if stmt.value is not None:
                    self.exprs[stmt.target.id] = stmt.value
                    names.append(stmt.target.id)
            elif isinstance(stmt, ast.FunctionDef | ast.ClassDef):
                self.defs[stmt.name] = stmt
                names.append(stmt.name)
            elif isinstance(stmt, ast.ImportFrom):
                for a in stmt.names:
                    if a.name == "*":
                        continue
                    self.imports[a.asname or a.name] = (stmt.module or "", a.name, stmt.level)
                    names.append(a.asname or a.name)
            elif isinstance(stmt, ast.Import):
                for a in stmt.names:
                    bound = a.asname or a.name.split(".")[0]
                    self.imports[bound] = (a.name if a.asname else bound, None, 0)
                    names.append(bound)
            elif isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
                continue  # names only for type checkers
            else:
                names.extend(list(_bound_names(stmt)) * 2)  # bound in for/try/with/...: ambiguous
            for n in names:
                counts[n] = counts.get(n, 0) + 1
        self.ambiguous = {n for n, c in counts.items() if c > 1}
        self.values: dict[str, Any] = {}
        self._evaluating: set[str] = set()
        self._comments: dict[int, str] | None = None

    # names
    def lookup(self, name: str) -> Any:
        if name in self.ambiguous:
            raise Unreadable(f"{self.modname}: {name!r} is bound more than once or conditionally")
        if name in self.values:
            return self.values[name]
        if name in self._evaluating:
            raise Unreadable(f"{self.modname}: {name!r} refers to itself")
        self._evaluating.add(name)
        try:
            if name in self.exprs:
                value = self.reader.eval(self.exprs[name], self, {})
            elif name in self.defs:
                d = self.defs[name]
                value = _ClassRef(self, d) if isinstance(d, ast.ClassDef) else _FunctionRef(self, d)
            elif name in self.imports:
                value = self.reader.resolve_import(self, *self.imports[name])
            elif name in _SAFE_BUILTINS:
                value = _SAFE_BUILTINS[name]
            else:
                raise Unreadable(f"{self.modname}: name {name!r} is not bound at module level")
        finally:
            self._evaluating.discard(name)
        self.values[name] = value
        return value

    def comments(self) -> dict[int, str]:
        if self._comments is None:
            self._comments = {}
            try:
                for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    if tok.type == tokenize.COMMENT:
                        self._comments[tok.start[0]] = tok.string.lstrip("#").strip()
            except (tokenize.TokenError, SyntaxError):
                pass
        return self._comments

    def source(self, node: ast.AST) -> str:
        return ast.unparse(node)


def _package_root(modname: str) -> str:
    """The distribution-level package of a module: ``paperworks.<name>`` in the namespace, else the top."""
    parts = modname.split(".")
    return ".".join(parts[:2]) if parts[0] == "paperworks" and len(parts) > 1 else parts[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}
_PLAIN = (str, int, float, bool, type(None), tuple, list, dict, set, frozenset, Claim, SlopeClaim, Paper)


def _plain(v: Any) -> Any:
    if isinstance(v, _Opaque):
        raise Unreadable(f"uses {v.what}, which is not read statically")
    if isinstance(
        v,
        (
            *_PLAIN,
            _ClassRef,
            _FunctionRef,
            _Bound,
            _Instance,
            _Lambda,
            _SafeModule,
            _Replace,
            _ExperimentBase,
        ),
    ):
        return v
    if any(v is c for c in _CALLABLES):
        return v
    raise Unreadable(f"a value of type {type(v).__name__}")


_CALLABLES: tuple[Any, ...] = (*_CORE_CALLABLES.values(), *_SAFE_BUILTINS.values())


class _Reader:
    """Evaluates declarations across the modules of one package, each parsed once."""

    def __init__(self) -> None:
        self.modules: dict[Path, _Module] = {}
        self.steps = 0
        self.depth = 0

    def module(self, path: Path, modname: str) -> _Module:
        path = path.resolve()
        if path not in self.modules:
            self.modules[path] = _Module(path, modname, self)
        return self.modules[path]

    def resolve_import(self, mod: _Module, module: str, attr: str | None, level: int) -> Any:
        if level:
            base = mod.modname.split(".")
            is_pkg = mod.path.name == "__init__.py"
            keep = len(base) - level + (1 if is_pkg else 0)
            if keep <= 0:
                return _Opaque(f"a relative import of {module!r}")
            target = ".".join([*base[:keep], *([module] if module else [])])
        else:
            target = module
        if target in _SAFE_MODULES:
            names = _SAFE_MODULES[target]
            if attr is None:
                return _SafeModule(target, names)
            return names[attr] if attr in names else _Opaque(f"{target}.{attr}")
        if target == "paperworks.core" or target.startswith("paperworks.core."):
            if attr in _CORE_CALLABLES:
                return _CORE_CALLABLES[attr]
            if attr == "Experiment":
                return _EXPERIMENT
            return _Opaque(f"paperworks.core's {attr}")
        if attr is None:
            return _Opaque(f"the module {target}")
        if _package_root(target) != _package_root(mod.modname):  # only the experiment's own package
            return _Opaque(f"{target}.{attr}")
        path = locate_module(target)
        if path is None:  # maybe ``from . import submodule``
            sub = locate_module(f"{target}.{attr}")
            return _Opaque(f"the module {target}.{attr}" if sub else f"{target}.{attr}")
        return self.module(path, target).lookup(attr)

    # expressions
    def eval(self, node: ast.AST, mod: _Module, scope: dict[str, Any]) -> Any:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise Unreadable("too much computation for a static read")
        meth = getattr(self, f"_e_{type(node).__name__}", None)
        if meth is None:
            raise Unreadable(f"{mod.modname} line {getattr(node, 'lineno', '?')}: {type(node).__name__}")
        return meth(node, mod, scope)

    def _e_Constant(self, node: ast.Constant, mod: _Module, scope: dict[str, Any]) -> Any:
        return node.value

    def _e_Name(self, node: ast.Name, mod: _Module, scope: dict[str, Any]) -> Any:
        if node.id in scope:
            return scope[node.id]
        return _plain(mod.lookup(node.id))

    def _items(self, elts: list[ast.expr], mod: _Module, scope: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self._iter(self.eval(e.value, mod, scope)))
            else:
                out.append(self.eval(e, mod, scope))
        return out

    def _iter(self, value: Any) -> list[Any]:
        if isinstance(value, str | tuple | list | dict | set | frozenset | range):
            return list(value)
        if isinstance(value, zip | enumerate | reversed | type({}.items()) | type({}.keys())):
            return list(value)
        if isinstance(value, type({}.values())):
            return list(value)
        raise Unreadable(f"iterating over a {type(value).__name__}")

    def _e_Tuple(self, node: ast.Tuple, mod: _Module, scope: dict[str, Any]) -> Any:
        return tuple(self._items(node.elts, mod, scope))

    def _e_List(self, node: ast.List, mod: _Module, scope: dict[str, Any]) -> Any:
        return self._items(node.elts, mod, scope)

    def _e_Set(self, node: ast.Set, mod: _Module, scope: dict[str, Any]) -> Any:
        return set(self._items(node.elts, mod, scope))

    def _e_Dict(self, node: ast.Dict, mod: _Module, scope: dict[str, Any]) -> Any:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                d = self.eval(v, mod, scope)
                if not isinstance(d, dict):
                    raise Unreadable("** of a non-dict")
                out.update(d)
            else:
                out[self.eval(k, mod, scope)] = self.eval(v, mod, scope)
        return out

    def _e_Lambda(self, node: ast.Lambda, mod: _Module, scope: dict[str, Any]) -> Any:
        return _Lambda(mod, node, dict(scope))

    def _e_JoinedStr(self, node: ast.JoinedStr, mod: _Module, scope: dict[str, Any]) -> Any:
        parts = []
        for v in node.values:
            parts.append(v.value if isinstance(v, ast.Constant) else self.eval(v, mod, scope))
        return "".join(parts)

    def _e_FormattedValue(self, node: ast.FormattedValue, mod: _Module, scope: dict[str, Any]) -> Any:
        value = self.eval(node.value, mod, scope)
        if node.conversion == ord("r"):
            value = repr(value)
        elif node.conversion == ord("s"):
            value = str(value)
        elif node.conversion == ord("a"):
            value = ascii(value)
        spec = "" if node.format_spec is None else self.eval(node.format_spec, mod, scope)
        return format(value, spec)

    def _e_BinOp(self, node: ast.BinOp, mod: _Module, scope: dict[str, Any]) -> Any:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise Unreadable(f"operator {type(node.op).__name__}")
        a, b = self.eval(node.left, mod, scope), self.eval(node.right, mod, scope)
        if isinstance(a, str) and isinstance(node.op, ast.Mult | ast.Pow) and not isinstance(b, int):
            raise Unreadable("an odd string operation")
        try:
            return op(a, b)
        except Exception as e:
            raise Unreadable(f"{type(e).__name__} in an operation") from None

    def _e_UnaryOp(self, node: ast.UnaryOp, mod: _Module, scope: dict[str, Any]) -> Any:
        v = self.eval(node.operand, mod, scope)
        if isinstance(node.op, ast.Not):
            return not v
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return +v
        raise Unreadable(f"operator {type(node.op).__name__}")

    def _e_BoolOp(self, node: ast.BoolOp, mod: _Module, scope: dict[str, Any]) -> Any:
        value: Any = None
        for v in node.values:
            value = self.eval(v, mod, scope)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def _e_Compare(self, node: ast.Compare, mod: _Module, scope: dict[str, Any]) -> Any:
        left = self.eval(node.left, mod, scope)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node, mod, scope)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True

    def _e_IfExp(self, node: ast.IfExp, mod: _Module, scope: dict[str, Any]) -> Any:
        return self.eval(node.body if self.eval(node.test, mod, scope) else node.orelse, mod, scope)

    def _e_Subscript(self, node: ast.Subscript, mod: _Module, scope: dict[str, Any]) -> Any:
        value = self.eval(node.value, mod, scope)
        if not isinstance(value, str | tuple | list | dict):
            raise Unreadable(f"subscript of a {type(value).__name__}")
        key = self.eval(node.slice, mod, scope)
        try:
            return value[key]
        except Exception as e:
            raise Unreadable(f"{type(e).__name__} in a subscript") from None

    def _e_Slice(self, node: ast.Slice, mod: _Module, scope: dict[str, Any]) -> Any:
        parts = [None if p is None else self.eval(p, mod, scope) for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def _e_Attribute(self, node: ast.Attribute, mod: _Module, scope: dict[str, Any]) -> Any:
        obj = self.eval(node.value, mod, scope)
        if isinstance(obj, Claim | SlopeClaim | Paper) and node.attr in {
            f.name for f in dataclasses.fields(obj)
        }:
            return getattr(obj, node.attr)
        for typ, names in _SAFE_METHODS.items():
            if isinstance(obj, typ) and node.attr in names:
                return _Bound(obj, node.attr)
        if isinstance(obj, _Instance):
            if node.attr in obj.values:
                return obj.values[node.attr]
            return self.class_default(obj.cls, node.attr)
        if isinstance(obj, _ClassRef):
            return self.class_default(obj, node.attr)
        if isinstance(obj, _SafeModule) and node.attr in obj.names:
            return obj.names[node.attr]
        raise Unreadable(f"attribute {node.attr!r} of a {type(obj).__name__}")

    def _e_Call(self, node: ast.Call, mod: _Module, scope: dict[str, Any]) -> Any:
        func = self.eval(node.func, mod, scope)
        args = self._items(node.args, mod, scope)
        kwargs: dict[str, Any] = {}
        for k in node.keywords:
            v = self.eval(k.value, mod, scope)
            if k.arg is None:
                if not isinstance(v, dict):
                    raise Unreadable("** of a non-dict")
                kwargs.update(v)
            else:
                kwargs[k.arg] = v
        return self.apply(func, args, kwargs)

    def apply(self, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call ``func`` (a value of the interpreter) if it is one it may call."""
        if func is _REPLACE:
            if len(args) != 1 or not isinstance(args[0], _Instance):
                raise Unreadable("replace(...) of something that is not a config read statically")
            inst = args[0]
            if any(k not in _field_names(inst.cls) for k in kwargs):
                raise Unreadable(f"replace(...): arguments that are not fields of {inst.cls.node.name}")
            return _Instance(inst.cls, {**inst.values, **kwargs})
        if isinstance(func, _Lambda):
            a = func.node.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or kwargs or len(args) != len(a.args):
                raise Unreadable("a lambda with parameters")
            scope = {**func.scope, **{p.arg: v for p, v in zip(a.args, args)}}
            return self.eval(func.node.body, func.module, scope)
        if isinstance(func, _Bound):
            if isinstance(func.obj, list) and func.name in ("append", "extend"):
                for a in args:
                    _plain(a)
            return getattr(func.obj, func.name)(*args, **kwargs)
        if isinstance(func, _FunctionRef):
            return self.call(func, args, kwargs)
        if isinstance(func, _ClassRef) and _is_dataclass_node(func.node):
            names = _field_names(func)
            if len(args) > len(names) or any(k not in names for k in kwargs):
                raise Unreadable(f"{func.node.name}(...): arguments that are not its fields")
            return _Instance(func, {**dict(zip(names, args)), **kwargs})
        if any(func is c for c in _CALLABLES):
            try:
                return func(*args, **kwargs)
            except Exception as e:
                raise Unreadable(
                    f"{getattr(func, '__name__', func)}(...) raised {type(e).__name__}"
                ) from None
        raise Unreadable(f"a call of {type(func).__name__}")

    def class_default(self, ref: _ClassRef, name: str) -> Any:
        """A class attribute or a dataclass field's default, from the class body."""
        for r in _class_chain(ref):
            exprs, funcs, ambiguous = _class_body(r)
            if name in ambiguous or name in funcs:
                raise Unreadable(f"{r.node.name}.{name}: bound more than once, or a method")
            if name in exprs:
                e = exprs[name]
                if isinstance(e, ast.Call) and getattr(e.func, "id", getattr(e.func, "attr", "")) == "field":
                    kw = {k.arg: k.value for k in e.keywords}
                    if "default" not in kw:
                        raise Unreadable(f"{r.node.name}.{name}: a default_factory")
                    e = kw["default"]
                return self.eval(e, r.module, {})
        raise Unreadable(f"{ref.node.name}.{name}: not found in the class body")

    def _comp(self, gens: list[ast.comprehension], mod: _Module, scope: dict[str, Any]) -> Iterator[dict]:
        if not gens:
            yield scope
            return
        g = gens[0]
        if g.is_async:
            raise Unreadable("async comprehension")
        for item in self._iter(self.eval(g.iter, mod, scope)):
            inner = dict(scope)
            self.assign(g.target, item, inner)
            if all(self.eval(c, mod, inner) for c in g.ifs):
                yield from self._comp(gens[1:], mod, inner)

    def _e_ListComp(self, node: ast.ListComp, mod: _Module, scope: dict[str, Any]) -> Any:
        return [self.eval(node.elt, mod, s) for s in self._comp(node.generators, mod, scope)]

    def _e_GeneratorExp(self, node: ast.GeneratorExp, mod: _Module, scope: dict[str, Any]) -> Any:
        return [self.eval(node.elt, mod, s) for s in self._comp(node.generators, mod, scope)]

    def _e_SetComp(self, node: ast.SetComp, mod: _Module, scope: dict[str, Any]) -> Any:
        return {self.eval(node.elt, mod, s) for s in self._comp(node.generators, mod, scope)}

    def _e_DictComp(self, node: ast.DictComp, mod: _Module, scope: dict[str, Any]) -> Any:
        return {
            self.eval(node.key, mod, s): self.eval(node.value, mod, s)
            for s in self._comp(node.generators, mod, scope)
        }

    # statements (helper functions)
    def assign(self, target: ast.expr, value: Any, scope: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            items = self._iter(value)
            if len(items) != len(target.elts) or any(isinstance(e, ast.Starred) for e in target.elts):
                raise Unreadable("an unpacking of the wrong length")
            for t, v in zip(target.elts, items):
                self.assign(t, v, scope)
        else:
            raise Unreadable(f"assignment to a {type(target).__name__}")

    def call(self, fn: _FunctionRef, args: list[Any], kwargs: dict[str, Any]) -> Any:
        node = fn.node
        a = node.args
        if a.vararg or a.kwarg or a.posonlyargs or node.decorator_list:
            raise Unreadable(f"function {node.name}: only plain and keyword-only parameters are read")
        names = [p.arg for p in a.args]
        if len(args) > len(names):
            raise Unreadable(f"function {node.name}: too many arguments")
        scope = dict(zip(names, args))
        defaults: dict[str, ast.expr | None] = dict(zip(names[len(names) - len(a.defaults) :], a.defaults))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults)})
        for n in [*names[len(args) :], *(p.arg for p in a.kwonlyargs)]:
            if n in kwargs:
                scope[n] = kwargs.pop(n)
            elif defaults.get(n) is not None:
                scope[n] = self.eval(defaults[n], fn.module, {})
            else:
                raise Unreadable(f"function {node.name}: missing argument {n!r}")
        if kwargs:
            raise Unreadable(f"function {node.name}: unexpected arguments {sorted(kwargs)}")
        self.depth += 1
        if self.depth > 20:
            raise Unreadable("calls nested too deep")
        try:
            self.exec_body(node.body, fn.module, scope)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
        return None

    def exec_body(self, body: list[ast.stmt], mod: _Module, scope: dict[str, Any]) -> None:
        for stmt in body:
            self.steps += 1
            if self.steps > _MAX_STEPS:
                raise Unreadable("too much computation for a static read")
            if isinstance(stmt, ast.Expr):
                self.eval(stmt.value, mod, scope)
            elif isinstance(stmt, ast.Assign):
                value = self.eval(stmt.value, mod, scope)
                for t in stmt.targets:
                    self.assign(t, value, scope)
            elif isinstance(stmt, ast.AnnAssign):
                if stmt.value is not None:
                    self.assign(stmt.target, self.eval(stmt.value, mod, scope), scope)
            elif isinstance(stmt, ast.AugAssign):
                if not isinstance(stmt.target, ast.Name):
                    raise Unreadable("augmented assignment to a non-name")
                op = _BINOPS.get(type(stmt.op))
                if op is None:
                    raise Unreadable(f"operator {type(stmt.op).__name__}")
                old = scope[stmt.target.id] if stmt.target.id in scope else mod.lookup(stmt.target.id)
                new = self.eval(stmt.value, mod, scope)
                if isinstance(old, list) and isinstance(stmt.op, ast.Add):
                    old.extend(self._iter(new))  # list += iterable, in place
                    scope[stmt.target.id] = old
                else:
                    scope[stmt.target.id] = op(old, new)
            elif isinstance(stmt, ast.Return):
                raise _Return(None if stmt.value is None else self.eval(stmt.value, mod, scope))
            elif isinstance(stmt, ast.If):
                self.exec_body(stmt.body if self.eval(stmt.test, mod, scope) else stmt.orelse, mod, scope)
            elif isinstance(stmt, ast.For):
                broke = False
                for item in self._iter(self.eval(stmt.iter, mod, scope)):
                    self.assign(stmt.target, item, scope)
                    try:
                        self.exec_body(stmt.body, mod, scope)
                    except _Break:
                        broke = True
                        break
                    except _Continue:
                        continue
                if not broke:
                    self.exec_body(stmt.orelse, mod, scope)
            elif isinstance(stmt, ast.Pass):
                pass
            elif isinstance(stmt, ast.Break):
                raise _Break
            elif isinstance(stmt, ast.Continue):
                raise _Continue
            else:
                raise Unreadable(f"{mod.modname} line {stmt.lineno}: statement {type(stmt).__name__}")


class _ExperimentBase:
    """Stands for the core's Experiment class as a base in the interpreter."""


_EXPERIMENT = _ExperimentBase()


# -- classes, attributes and config fields --------------------------------------------------------


def _class_chain(ref: _ClassRef) -> list[_ClassRef]:
    """``ref`` and its bases defined in readable modules, in a simple depth-first order."""
    node = ref.node
    if node.keywords:
        raise Unreadable(f"class {node.name}: keywords in the class statement")
    chain = [ref]
    for b in node.bases:
        if not isinstance(b, ast.Name):
            raise Unreadable(f"class {node.name}: base {ast.unparse(b)!r}")
        base = ref.module.lookup(b.id)
        if base is _EXPERIMENT:
            continue
        if not isinstance(base, _ClassRef):
            raise Unreadable(f"class {node.name}: base {b.id!r} is not read statically")
        chain.extend(_class_chain(base))
    return chain


def _class_body(ref: _ClassRef) -> tuple[dict[str, ast.expr], dict[str, ast.FunctionDef], set[str]]:
    exprs: dict[str, ast.expr] = {}
    funcs: dict[str, ast.FunctionDef] = {}
    counts: dict[str, int] = {}
    for stmt in ref.node.body:
        names: list[str] = []
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            for t in stmt.targets:
                exprs[t.id] = stmt.value
                names.append(t.id)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.value is not None:
                exprs[stmt.target.id] = stmt.value
            names.append(stmt.target.id)
        elif isinstance(stmt, ast.FunctionDef):
            funcs[stmt.name] = stmt
            names.append(stmt.name)
        elif isinstance(stmt, ast.Expr | ast.Pass):
            continue
        else:
            names.extend(list(_bound_names(stmt)) * 2)
        for n in names:
            counts[n] = counts.get(n, 0) + 1
    return exprs, funcs, {n for n, c in counts.items() if c > 1}


def _class_attr(reader: _Reader, chain: list[_ClassRef], name: str, default: Any) -> Any:
    for ref in chain:
        exprs, funcs, ambiguous = _class_body(ref)
        if name in ambiguous:
            raise Unreadable(f"class {ref.node.name}: {name!r} is bound more than once")
        if name in funcs:
            raise Unreadable(f"class {ref.node.name}: {name!r} is a method or property")
        if name in exprs:
            scope = {}  # earlier class-body names are visible, as in Python
            for other, expr in exprs.items():
                if other == name:
                    break
                if isinstance(expr, ast.Constant):
                    scope[other] = expr.value
            return reader.eval(exprs[name], ref.module, scope)
    return default


def _field_names(ref: _ClassRef) -> list[str]:
    names: list[str] = []
    for r in reversed(_class_chain(ref)):
        for stmt in r.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if not _is_classvar(stmt.annotation) and stmt.target.id not in names:
                    names.append(stmt.target.id)
    return names


def _is_dataclass_node(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def _is_classvar(annotation: ast.expr) -> bool:
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(target, ast.Name) and target.id == "ClassVar") or (
        isinstance(target, ast.Attribute) and target.attr == "ClassVar"
    )


def _docstring_clauses(node: ast.ClassDef) -> list[str]:
    doc = ast.get_docstring(node) or ""
    text = " ".join(doc.split())
    return [c.strip() for c in re.split(r";\s+|(?<=[.:])\s+(?=``)|\.\s+", text) if c.strip()]


def _field_help(mod: _Module, node: ast.ClassDef, stmt: ast.AnnAssign, nxt: ast.stmt | None) -> str:
    name = stmt.target.id  # type: ignore[union-attr]
    value = stmt.value
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field":
        for k in value.keywords:
            if k.arg == "metadata" and isinstance(k.value, ast.Dict):
                for kk, vv in zip(k.value.keys, k.value.values):
                    if isinstance(kk, ast.Constant) and kk.value in ("help", "doc"):
                        if isinstance(vv, ast.Constant) and isinstance(vv.value, str):
                            return " ".join(vv.value.split())
    if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str):
        return " ".join(nxt.value.value.split())  # an attribute docstring
    end = getattr(stmt, "end_lineno", stmt.lineno)
    comment = mod.comments().get(end) or mod.comments().get(stmt.lineno)
    if comment and "noqa" not in comment and "type:" not in comment:
        return comment
    clauses = _docstring_clauses(node)
    starting = [c for c in clauses if c.startswith(f"``{name}``")]
    for clause in starting or clauses:
        if f"``{name}``" in clause:
            text = clause.rstrip(".;")
            text = re.sub(rf"^``{re.escape(name)}``\s*:\s*", "", text)
            return text.replace("``", "")
    return ""


def _config_class(
    reader: _Reader, chain: list[_ClassRef]
) -> tuple[_ClassRef, ast.FunctionDef, _Module] | None:
    for ref in chain:
        _, funcs, _ = _class_body(ref)
        fn = funcs.get("config")
        if fn is None:
            continue
        if fn.returns is None:
            raise Unreadable(f"{ref.node.name}.config: no return annotation naming the config class")
        ann = fn.returns
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            ann = ast.parse(ann.value, mode="eval").body
        if not isinstance(ann, ast.Name):
            raise Unreadable(f"{ref.node.name}.config: return annotation {ast.unparse(ann)!r}")
        cls = ref.module.lookup(ann.id)
        if not isinstance(cls, _ClassRef) or not _is_dataclass_node(cls.node):
            raise Unreadable(f"{ref.node.name}.config: {ann.id} is not a dataclass read statically")
        return cls, fn, ref.module
    return None


def _branches(fn: ast.FunctionDef) -> tuple[ast.expr | None, ast.expr | None, bool]:
    """(quick expression, full expression, simple) of ``config(self, quick)``.

    ``simple``: the method does nothing but pick one of the two (so the static values are a run's).
    """
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    params = [a.arg for a in fn.args.args]
    qname = params[1] if len(params) > 1 else "quick"

    def split(test: ast.expr, yes: ast.expr, no: ast.expr) -> tuple[ast.expr, ast.expr] | None:
        if isinstance(test, ast.Name) and test.id == qname:
            return yes, no
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            if isinstance(test.operand, ast.Name) and test.operand.id == qname:
                return no, yes
        return None

    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.IfExp):
        e = body[0].value
        got = split(e.test, e.body, e.orelse)
        if got:
            return got[0], got[1], True
    if (
        len(body) == 2
        and isinstance(body[0], ast.If)
        and len(body[0].body) == 1
        and isinstance(body[0].body[0], ast.Return)
        and not body[0].orelse
        and isinstance(body[1], ast.Return)
        and body[0].body[0].value is not None
        and body[1].value is not None
    ):
        got = split(body[0].test, body[0].body[0].value, body[1].value)
        if got:
            return got[0], got[1], True
    for node in ast.walk(fn):  # e.g. ``cfg = QUICK if quick else Config()`` followed by adjustments
        if isinstance(node, ast.IfExp):
            got = split(node.test, node.body, node.orelse)
            if got:
                return got[0], got[1], False
    return None, None, False


class _Source:
    """A value the interpreter could not compute, shown as its source text."""

    def __init__(self, text: str) -> None:
        self.text = text


def _field_stmts(ref: _ClassRef) -> list[tuple[_ClassRef, int, ast.AnnAssign]]:
    """The dataclass fields of ``ref`` (bases first): (defining class, index in its body, statement)."""
    out: list[tuple[_ClassRef, int, ast.AnnAssign]] = []
    seen: set[str] = set()
    for r in reversed(_class_chain(ref)):
        for i, stmt in enumerate(r.node.body):
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if not _is_classvar(stmt.annotation) and stmt.target.id not in seen:
                    seen.add(stmt.target.id)
                    out.append((r, i, stmt))
    return out


def _default_value(reader: _Reader, ref: _ClassRef, stmt: ast.AnnAssign) -> Any:
    """A field's default: its value, or a :class:`_Source` when it cannot be computed."""
    value = stmt.value
    if value is None:
        return _Source("(required)")
    try:
        if isinstance(value, ast.Call) and _callee_name(value) == "field":
            kw = {k.arg: k.value for k in value.keywords}
            if "default" in kw:
                return reader.eval(kw["default"], ref.module, {})
            if "default_factory" in kw:
                factory = reader.eval(kw["default_factory"], ref.module, {})
                return reader.apply(factory, [], {})
            return _Source("(required)")
        return reader.eval(value, ref.module, {})
    except Unreadable:
        return _Source(ast.unparse(value))


def _callee_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _field_value(reader: _Reader, inst: _Instance, name: str) -> Any:
    if name in inst.values:
        return inst.values[name]
    for r, _, stmt in _field_stmts(inst.cls):
        if stmt.target.id == name:  # type: ignore[union-attr]
            return _default_value(reader, r, stmt)
    return _Source("?")


def _render(reader: _Reader, v: Any) -> tuple[str, bool]:
    """(text, exact): the repr a dataclass would print, or source text where a value is unknown."""
    if isinstance(v, _Source):
        return v.text, False
    if isinstance(v, _Instance):
        parts, exact = [], True
        for _, _, stmt in _field_stmts(v.cls):
            name = stmt.target.id  # type: ignore[union-attr]
            text, ok = _render(reader, _field_value(reader, v, name))
            parts.append(f"{name}={text}")
            exact = exact and ok
        return f"{v.cls.node.name}({', '.join(parts)})", exact
    if isinstance(v, tuple | list):
        items = [_render(reader, x) for x in v]
        body = ", ".join(t for t, _ in items)
        exact = all(ok for _, ok in items)
        if isinstance(v, list):
            return f"[{body}]", exact
        return (f"({body},)" if len(v) == 1 else f"({body})"), exact
    if isinstance(v, dict):
        items = [(_render(reader, k), _render(reader, x)) for k, x in v.items()]
        body = ", ".join(f"{k[0]}: {x[0]}" for k, x in items)
        return "{" + body + "}", all(k[1] and x[1] for k, x in items)
    if isinstance(v, _ClassRef | _FunctionRef | _Bound | _Lambda) or callable(v):
        return "?", False
    return repr(v), True


def _fields(
    reader: _Reader,
    cls: _ClassRef,
    quick: _Instance | None,
    full: _Instance | None,
    prefix: str = "",
    depth: int = 0,
) -> list[ConfigField]:
    """The fields of the config dataclass ``cls`` with their values in the ``full`` and ``quick``
    instances (None: unknown); nested dataclass fields follow as ``outer.inner``."""
    out: list[ConfigField] = []
    for ref, i, stmt in _field_stmts(cls):
        name = stmt.target.id  # type: ignore[union-attr]
        body = ref.node.body
        help_text = _field_help(ref.module, ref.node, stmt, body[i + 1] if i + 1 < len(body) else None)
        fv = _field_value(reader, full, name) if full is not None else _default_value(reader, ref, stmt)
        qv = _field_value(reader, quick, name) if quick is not None else None
        ftext, fexact = _render(reader, fv)
        qtext, qexact = (None, False) if quick is None else _render(reader, qv)
        out.append(
            ConfigField(prefix + name, ast.unparse(stmt.annotation), ftext, qtext, help_text, fexact, qexact)
        )
        nested = _nested_class(ref.module, stmt.annotation) if depth < 3 else None
        if nested is not None:
            sub_full = fv if isinstance(fv, _Instance) else None
            sub_quick = qv if isinstance(qv, _Instance) else None
            if sub_full is None and not isinstance(fv, _Source):
                continue
            out.extend(_fields(reader, nested, sub_quick, sub_full, prefix + name + ".", depth + 1))
    return out


def _nested_class(mod: _Module, annotation: ast.expr) -> _ClassRef | None:
    ann = annotation
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(ann, ast.Name):
        return None
    try:
        ref = mod.lookup(ann.id)
    except Unreadable:
        return None
    return ref if isinstance(ref, _ClassRef) and _is_dataclass_node(ref.node) else None


# -- entry points ------------------------------------------------------------------------------------


def read_declarations(ep: EntryPoint) -> Declarations:
    """Read the experiment that ``ep`` names from its source; raise :class:`Unreadable` if it cannot."""
    modname, _, attr = ep.value.partition(":")
    modname, attr = modname.strip(), attr.strip()
    if not attr or "." in attr or "[" in attr:
        raise Unreadable(f"entry point {ep.value!r}: expected module:Class")
    path = locate_module(modname)
    if path is None:
        raise Unreadable(f"{modname}: no source file found on sys.path")
    reader = _Reader()
    mod = reader.module(path, modname)
    ref = mod.lookup(attr) if attr in mod.defs or attr in mod.imports else None
    if not isinstance(ref, _ClassRef):
        raise Unreadable(f"{modname}: {attr} is not a class defined there")
    chain = _class_chain(ref)  # raises unless it derives from Experiment through readable classes
    values = {
        name: _class_attr(reader, chain, name, getattr(_ExperimentDefaults, name, _MISSING))
        for name in _ATTRS
    }
    slug, paper, claims = values["slug"], values["paper"], values["claims"]
    if slug is _MISSING or not isinstance(slug, str):
        raise Unreadable(f"{attr}: no literal slug")
    if not isinstance(paper, Paper):
        raise Unreadable(f"{attr}: paper is not a Paper(...) read statically")
    if not isinstance(claims, tuple | list) or not all(isinstance(c, Claim | SlopeClaim) for c in claims):
        raise Unreadable(f"{attr}: claims are not Claim(...)s read statically")
    for name, typ in (("default_seeds", int), ("seeds_note", str)):
        if not isinstance(values[name], typ):
            raise Unreadable(f"{attr}: {name} is not a literal {typ.__name__}")
    if values["quick_seeds"] is not None and not isinstance(values["quick_seeds"], int):
        raise Unreadable(f"{attr}: quick_seeds is not a literal int")
    config_class, fields, note = None, None, ""
    try:
        found = _config_class(reader, chain)
        if found is not None:
            cls, fn, where = found
            q_expr, f_expr, simple = _branches(fn)

            def build(expr: ast.expr | None) -> _Instance | None:
                if expr is None:
                    return None
                try:
                    v = reader.eval(expr, where, {})
                except Unreadable:
                    return None
                return v if isinstance(v, _Instance) and v.cls.node is cls.node else None

            quick, full = build(q_expr), build(f_expr)
            config_class = cls.node.name
            fields = tuple(_fields(reader, cls, quick, full))
            if not simple:
                note = "config() adjusts these values when it runs; a run's report records the ones it used"
    except Unreadable as e:
        config_class, fields, note = None, None, f"not read statically ({e})"
    dist = getattr(ep, "dist", None)
    return Declarations(
        slug=slug,
        paper=paper,
        claims=tuple(claims),
        default_seeds=values["default_seeds"],
        quick_seeds=values["quick_seeds"],
        seeds_note=values["seeds_note"],
        config_class=config_class,
        config_fields=fields,
        config_note=note,
        distribution=None if dist is None else dist.metadata["Name"],
        version=None if dist is None else dist.version,
    )


_MISSING = object()


class _ExperimentDefaults:
    """The base class's defaults (kept in step with :class:`paperworks.core.Experiment` by a test)."""

    claims: tuple = ()
    default_seeds = 5
    quick_seeds = None
    seeds_note = ""


def declarations_from_experiment(exp: Any, ep: EntryPoint | None = None, why: str = "") -> Declarations:
    """The same record from an imported experiment (the fallback, and the reference in tests)."""
    fields: tuple[ConfigField, ...] | None = None
    cls_name = None
    try:
        full, quick = exp.config(False), exp.config(True)
    except Exception as e:  # a config that cannot be built here: show the rest
        full = quick = None
        note = f"config() failed: {type(e).__name__}: {e}"
    else:
        note = ""
    if full is not None and dataclasses.is_dataclass(full):
        from .overrides import config_fields

        cls_name = type(full).__name__
        out = []
        for key in config_fields(full):
            fv, qv = _dotted(full, key), _dotted(quick, key) if quick is not None else None
            out.append(
                ConfigField(
                    key,
                    _annotation_text(full, key),
                    repr(fv),
                    None if quick is None else repr(qv),
                )
            )
        fields = tuple(out)
    dist = getattr(ep, "dist", None) if ep is not None else None
    return Declarations(
        slug=exp.slug,
        paper=exp.paper,
        claims=tuple(exp.claims),
        default_seeds=exp.default_seeds,
        quick_seeds=exp.quick_seeds,
        seeds_note=exp.seeds_note,
        config_class=cls_name,
        config_fields=fields,
        config_note=note,
        distribution=None if dist is None else dist.metadata["Name"],
        version=None if dist is None else dist.version,
        source="import",
        why_imported=why,
    )


def _dotted(obj: Any, key: str) -> Any:
    for p in key.split("."):
        obj = getattr(obj, p)
    return obj


def _annotation_text(cfg: Any, key: str) -> str:
    *head, last = key.split(".")
    obj = cfg
    for p in head:
        obj = getattr(obj, p)
    for f in dataclasses.fields(obj):
        if f.name == last:
            t = f.type
            return t if isinstance(t, str) else getattr(t, "__name__", str(t))
    return "?"
