"""The registry of memory systems and the one place that turns a system spec into a factory.

A system spec is read with the retrievers' grammar
(:mod:`agentmemory.retrievers.spec`, the same parser):

* a registry name of :data:`SYSTEMS`, with parameters
  (``mcp[profile=server-memory]``); installed packages add names through the
  entry-point group ``agentmemory.systems``;
* ``package.module:attribute[params]``: a factory (a class or function), e.g.
  ``examples.my_memory_system:System``;
* a registry name of a *retriever* (``bm25``, ``hybrid[weights=0.5+0.5]``):
  the retriever wrapped as a system (:mod:`agentmemory.systems.wrapper`),
  the same as ``retriever[of=bm25]``;
* a factory object, or a :class:`SystemSpec`.

A factory is called once per scope as ``factory(scope=..., workdir=Path,
**params)`` and returns a fresh :class:`~agentmemory.systems.base.MemorySystem`;
``scope`` and ``workdir`` are passed only when its signature takes them (or
``**kwargs``).  Parameters are checked against the factory's signature before
anything runs.

The spec's ``key`` (its canonical text with only the parameters that differ
from the defaults) names the system in the artifact and the run files; its
``label`` (the factory's ``label`` attribute, else the name, then the
parameters) names it in tables.  A factory with a ``label_for(params)``
class method names itself from its parameters instead (``mcp`` reads its
profile's ``name``: ``mcp[profile=my.toml]`` is ``MCP my-server``).  A wrapped retriever is labelled
``"<retriever label> as a system"``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.registry import Registry
from agentmemory.retrievers.registry import RETRIEVERS, _import, resolve_retriever
from agentmemory.retrievers.spec import Spec, format_value, option_named, parse_spec
from agentmemory.systems.base import MemorySystem
from agentmemory.systems.wrapper import RetrieverSystem

__all__ = [
    "SYSTEMS",
    "SystemDef",
    "SystemLike",
    "SystemSpec",
    "register_system",
    "resolve_system",
    "resolve_systems",
]

_MEMBERS = ("ingest", "search", "close")
_PASSED = ("scope", "workdir")  # what the replay passes to every factory, not user parameters


@dataclass(frozen=True)
class SystemDef:
    """A registered system: ``factory(scope=..., workdir=..., **params)`` returns a fresh system; ``label`` names it."""

    name: str
    factory: Callable[..., Any]
    label: str


def _check_def(name: str, obj: Any) -> SystemDef:
    if isinstance(obj, SystemDef):
        return obj
    if not callable(obj):
        raise ParameterError(
            "system factory",
            obj,
            "is not callable",
            "register a class or function that returns a fresh memory system (ingest, search, close)",
        )
    return SystemDef(name, obj, _factory_label(obj, name))


SYSTEMS: Registry[SystemDef] = Registry("system", "agentmemory.systems", _check_def)
"""Every memory system by name (retrievers are reachable through the ``retriever`` wrapper, see the module docstring)."""


def register_system(
    name: str, factory: Callable[..., Any], *, label: str | None = None, replace: bool = False
) -> SystemDef:
    """Register ``factory`` under ``name``: ``factory(scope=..., workdir=..., **params)`` returns a fresh system.

    Raises:
        ParameterError: a bad or taken name (unless ``replace``), a factory that is not callable, a bad label.
    """
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ParameterError("label", label, "is not a non-empty string", "pass a display name such as 'My system'")
    definition = _check_def(name, factory)
    if label is not None:
        definition = SystemDef(name, definition.factory, label)
    return SYSTEMS.register(name, definition, replace=replace)


def _factory_label(factory: Any, fallback: str) -> str:
    label = getattr(factory, "label", None)
    return label if isinstance(label, str) and label.strip() else fallback


@dataclass(frozen=True, eq=False)
class SystemSpec:
    """One memory system of an evaluation: its key, its label, its parameters, and how to make one per scope.

    ``make(scope, workdir)`` returns a fresh system for that scope (checked to
    have ``ingest``, ``search`` and ``close``).
    """

    key: str
    label: str
    params: dict[str, Any] = field(default_factory=dict)
    factory: Callable[..., Any] | None = None
    call_params: dict[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:  # no factory repr: it would carry a memory address
        return f"SystemSpec({self.key!r}, label={self.label!r})"

    def make(self, scope: str | None, workdir: Path) -> MemorySystem:
        """A fresh system for ``scope`` (raises :class:`ParameterError` when the factory gives something else)."""
        assert self.factory is not None  # resolve_system always sets it
        accepted, var_kw = _accepted(self.factory)
        passed = {name: value for name, value in (("scope", scope), ("workdir", workdir)) if var_kw or name in accepted}
        made = self.factory(**passed, **self.call_params)
        missing = [m for m in _MEMBERS if not callable(getattr(made, m, None))]
        if missing:
            raise ParameterError(
                "system spec",
                self.key,
                f"gives a {type(made).__name__}, which is not a memory system (it lacks {', '.join(missing)})",
                "a memory system has ingest(turns), search(query, k) and close()",
            )
        return made


SystemLike: TypeAlias = "str | SystemSpec | Callable[..., Any]"


def _accepted(factory: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return {}, True
    defaults: dict[str, Any] = {}
    var_kw = False
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            var_kw = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            defaults[p.name] = p.default
    return defaults, var_kw


def _check_params(name: str, factory: Callable[..., Any], params: dict[str, Any]) -> dict[str, Any]:
    """``params`` checked against ``factory``'s signature; returns those differing from its defaults."""
    defaults, var_kw = _accepted(factory)
    own = {k: d for k, d in defaults.items() if k not in _PASSED}
    for key in params:
        if key in _PASSED:
            raise ParameterError(
                f"{name} parameter", key, "is set by the replay", "leave scope and workdir out of the spec"
            )
        if key in own or var_kw:
            continue
        if not own:
            raise ParameterError(f"{name} parameter", key, "is not accepted", f"the {name} system takes no parameters")
        raise UnknownNameError(f"{name} parameter", key, own)
    missing = [k for k, d in own.items() if d is inspect.Parameter.empty and k not in params]
    if missing:
        raise ParameterError(
            f"{name} parameter", missing[0], "is required", f"give it in brackets, e.g. {name}[{missing[0]}=...]"
        )
    return {k: v for k, v in params.items() if k not in own or own[k] != v or type(own[k]) is not type(v)}


def _label(base: str, params: dict[str, Any]) -> str:
    if not params:
        return base
    return f"{base} (" + ", ".join(f"{k}={format_value(v)}" for k, v in params.items()) + ")"


def _spec_label(factory: Any, base: str, given: dict[str, Any]) -> str:
    """The factory's ``label_for(params)`` when it has one (a non-empty string), else ``base (k=v, ...)``."""
    label_for = getattr(factory, "label_for", None)
    if not callable(label_for):
        return _label(base, given)
    label = label_for(dict(given))
    if not isinstance(label, str) or not label.strip():
        raise ParameterError(
            "system spec",
            base,
            f"has a label_for() that returned {label!r}",
            "label_for(params) must return a non-empty string",
        )
    return label


def resolve_system(item: SystemLike, *, option: str = "system") -> SystemSpec:
    """One system (a name, a spec, ``module:attribute``, a retriever name, a factory) as a :class:`SystemSpec`.

    ``option`` is what every message about the spec names: the option it was read from (``--system``, a grid
    key such as ``systems``), by default ``system`` (:func:`agentmemory.retrievers.spec.option_named`).

    Raises:
        UnknownNameError: a name that is neither a system nor a retriever (lists both registries).
        ParameterError: a malformed spec, parameters the factory does not take, a module that does not import.
    """
    with option_named(option):
        return _resolve(item)


def _resolve(item: SystemLike) -> SystemSpec:
    if isinstance(item, SystemSpec):
        return item
    if isinstance(item, str):
        return _resolve_text(item)
    if callable(item):
        name = getattr(item, "name", None)
        key = name if isinstance(name, str) and name else getattr(item, "__name__", type(item).__name__)
        return SystemSpec(key, _factory_label(item, key), {}, item, {})
    raise ParameterError(
        "systems",
        item,
        "is not a memory system",
        "pass a system name such as 'mcp[profile=server-memory]', 'package.module:attribute', a retriever name "
        "such as 'bm25', or a factory returning a memory system",
    )


def _resolve_text(text: str) -> SystemSpec:
    spec: Spec = parse_spec(text)
    if spec.is_import:
        obj = _import(spec.target, text, "system")
        if not callable(obj):
            raise ParameterError(
                "system spec",
                text,
                f"names a {type(obj).__name__}, which is not a factory",
                "point it at a class or function returning a memory system",
            )
        given = _check_params(spec.target, obj, spec.params)
        base = _factory_label(obj, spec.target.rpartition(":")[2].rpartition(".")[2])
        return SystemSpec(spec.text(given), _spec_label(obj, base, given), given, obj, dict(spec.params))
    if spec.target in SYSTEMS or spec.target not in RETRIEVERS:
        if spec.target not in SYSTEMS:
            raise UnknownNameError("system", spec.target, [*SYSTEMS.names(), *RETRIEVERS.names()])
        definition = SYSTEMS.get(spec.target)
        given = _check_params(spec.target, definition.factory, spec.params)
        if spec.target == "retriever":
            return _wrapped(str(spec.params["of"]))
        label = _spec_label(definition.factory, definition.label, given)
        return SystemSpec(spec.text(given), label, given, definition.factory, dict(spec.params))
    return _wrapped(text)


def _wrapped(retriever: str) -> SystemSpec:
    """The retriever ``retriever`` (a spec text) as a system: key ``retriever[of=<key>]``."""
    found = resolve_retriever(retriever)
    key = Spec("retriever", {"of": found.key}).text()
    return SystemSpec(key, f"{found.label} as a system", {"of": found.key}, RetrieverSystem, {"of": found.key})


def resolve_systems(items: SystemLike | Sequence[SystemLike], *, option: str = "systems") -> tuple[SystemSpec, ...]:
    """Several systems (each as :func:`resolve_system` takes); keys and labels must be unique.

    A string is **one** spec (``--system`` is repeated, not comma-separated).  ``option`` is what every message
    names (``--system`` on the command line; by default ``systems``, :func:`agentmemory.evaluate`'s keyword).
    """
    pieces = [items] if isinstance(items, (str, SystemSpec)) or callable(items) else list(items)
    specs = [resolve_system(p.strip() if isinstance(p, str) else p, option=option) for p in pieces]
    keys: set[str] = set()
    labels: set[str] = set()
    for spec in specs:
        if spec.key in keys or spec.label in labels:
            raise ParameterError(
                option,
                [s.key for s in specs],
                f"names the system {spec.label!r} twice",
                "give each system once (labels must be unique)",
            )
        keys.add(spec.key)
        labels.add(spec.label)
    return tuple(specs)
