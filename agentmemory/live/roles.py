"""Readers and judges as registries: ``--reader openai[base_url=...,model=...]``, ``--judge openai[...]``.

Two registries (:class:`agentmemory.registry.Registry`) of chat-model kinds:
:data:`READERS` (entry-point group ``agentmemory.readers``) and
:data:`JUDGES` (``agentmemory.judges``).  A kind is a factory called with the
spec's parameters that returns a chat model
(:class:`~agentmemory.live.endpoints.ChatModel`); the package registers
``openai`` (:class:`~agentmemory.live.endpoints.OpenAIChat`) in both.

A spec is read with the retrievers' grammar (:mod:`agentmemory.retrievers.spec`):
a registry name with parameters, or ``package.module:attribute[params]``.  The
parameter ``name`` is the spec's own, not the factory's: what tables show and
what the answer system is called (``bm25+NAME``); by default the model's
``label`` (for ``openai``, the model name).  Parameters are checked against
the factory's signature before anything is called.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.registry import Registry
from agentmemory.retrievers.registry import _import
from agentmemory.retrievers.spec import parse_spec, renamed

__all__ = ["JUDGES", "READERS", "RoleKind", "RoleSpec", "register_judge", "register_reader", "resolve_role"]


@dataclass(frozen=True)
class RoleKind:
    """A registered kind: ``factory(**params)`` returns a chat model."""

    name: str
    factory: Callable[..., Any]


def _check_kind(name: str, obj: Any) -> RoleKind:
    if isinstance(obj, RoleKind):
        return obj
    if not callable(obj):
        raise ParameterError(
            "chat model factory", obj, "is not callable", "register a class or function returning a chat model"
        )
    return RoleKind(name, obj)


READERS: Registry[RoleKind] = Registry("reader", "agentmemory.readers", _check_kind)
"""The kinds of reader by name (``openai``; plugins through the group ``agentmemory.readers``)."""

JUDGES: Registry[RoleKind] = Registry("judge", "agentmemory.judges", _check_kind)
"""The kinds of judge by name (``openai``; plugins through the group ``agentmemory.judges``)."""

_REGISTRIES = {"reader": READERS, "judge": JUDGES}


def register_reader(name: str, factory: Callable[..., Any], *, replace: bool = False) -> RoleKind:
    """Register a reader kind: ``factory(**params)`` returns a chat model."""
    return READERS.register(name, factory, replace=replace)


def register_judge(name: str, factory: Callable[..., Any], *, replace: bool = False) -> RoleKind:
    """Register a judge kind: ``factory(**params)`` returns a chat model."""
    return JUDGES.register(name, factory, replace=replace)


@dataclass(frozen=True, eq=False)
class RoleSpec:
    """One reader or judge of an evaluation: its ``role``, its spec text (``key``), its ``name`` and its model."""

    role: str
    key: str
    name: str
    model: Any = field(repr=False)

    def identity(self) -> dict[str, Any]:
        """What decides the model's replies (:meth:`ChatModel.identity`)."""
        found = self.model.identity()
        if not isinstance(found, dict):
            raise ParameterError(
                f"{self.role} {self.name} identity()", found, "is not a dict", "return a JSON-ready dict"
            )
        return found

    def describe(self) -> dict[str, Any]:
        """What the card states: the name, then the model's ``describe()`` (or its identity)."""
        describe = getattr(self.model, "describe", None)
        return {"name": self.name, **(describe() if callable(describe) else self.identity())}

    @property
    def price_model(self) -> str:
        """The name a price table knows the model by (its ``price_model``, else its identity's ``model``)."""
        named = getattr(self.model, "price_model", None)
        return named if isinstance(named, str) else str(self.identity().get("model", self.name))


def _is_model(candidate: object) -> bool:
    return callable(getattr(candidate, "complete", None)) and callable(getattr(candidate, "identity", None))


def _label(model: Any, fallback: str) -> str:
    label = getattr(model, "label", None)
    return label if isinstance(label, str) and label.strip() else fallback


def resolve_role(item: object, role: str, *, option: str | None = None) -> RoleSpec:
    """A reader or judge (``role``) from a spec text, a :class:`RoleSpec` or a chat model object.

    ``option`` is what messages name (``--reader``); by default the role.

    Raises:
        UnknownNameError: a kind that is not registered (the message lists :data:`READERS` or :data:`JUDGES`).
        ParameterError: a malformed spec, a parameter the kind does not take or refuses, an object that is not a
            chat model.
    """
    option = option or role
    try:
        return _resolve(item, role)
    except ParameterError as err:
        if err.name != role:
            raise renamed(err, option) from None
        copy = type(err).__new__(type(err))  # the spec itself: named by the option alone (--judge: 'x' ...)
        copy.__dict__.update(err.__dict__)
        copy.name = option
        copy.args = (option + str(err)[len(role) :],)
        raise copy from None


def _resolve(item: object, role: str) -> RoleSpec:
    if isinstance(item, RoleSpec):
        return item
    if _is_model(item):
        name = _label(item, type(item).__name__)
        return RoleSpec(role, name, name, item)
    if not isinstance(item, str) or not item.strip():
        raise ParameterError(
            role, item, "is not a chat model", "pass a spec such as 'openai[base_url=...,model=...]' or a model object"
        )
    spec = parse_spec(item.strip())
    if spec.is_import:
        factory = _import(spec.target, item)
    else:
        factory = _REGISTRIES[role].get(spec.target).factory
    params = dict(spec.params)
    name = params.pop("name", None)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ParameterError(f"{role} parameter name", name, "is not a name", "give a non-empty name, e.g. name=mini")
    _check_params(spec.target, factory, params)
    model = factory(**params)
    if not _is_model(model):
        raise ParameterError(
            role,
            item,
            f"gives a {type(model).__name__}, which is not a chat model",
            "it needs complete() and identity()",
        )
    return RoleSpec(role, spec.text(), name or _label(model, spec.target), model)


def _check_params(target: str, factory: Callable[..., Any], params: dict[str, Any]) -> None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    accepted = [
        p.name
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and not p.name.startswith("_")
    ]
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return
    for key in params:
        if key not in accepted:
            raise UnknownNameError(f"{target} parameter", key, [*accepted, "name"])
