"""The retrievers' open registry and the one place that turns specs into retrievers (the package docstring says how).

This module knows no built-in retriever: :mod:`agentmemory.retrievers` registers them, so a built-in that
builds on others (hybrid, recency) resolves its components here without an import cycle.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from agentmemory.errors import ParameterError, PluginError, UnknownNameError, shorten
from agentmemory.registry import Registry
from agentmemory.retrievers.base import (
    Retriever,
    has_capability,
    is_retriever,
    missing_members,
)
from agentmemory.retrievers.guard import GuardedRetriever, PluginBoundary, index_params_violation, is_ours
from agentmemory.retrievers.spec import Spec, format_value, option_named, parse_spec, split_specs

__all__ = [
    "DEFAULT_RETRIEVERS",
    "RETRIEVERS",
    "RetrieverDef",
    "RetrieverLike",
    "RetrieverSpec",
    "full_label",
    "index_key_of",
    "make_retriever",
    "parse_retrievers",
    "register_retriever",
    "resolve_retriever",
    "resolve_retrievers",
]

DEFAULT_RETRIEVERS = ("bm25", "tags")
"""What :class:`agentmemory.MemoryStore` and :func:`agentmemory.evaluate` use when given none: always these
two, whatever else is registered (plugins and retrievers that need parameters never change the default)."""


@dataclass(frozen=True)
class RetrieverDef:
    """A registered retriever: ``factory(**params)`` returns a new, empty retriever; ``label`` names it in tables."""

    name: str
    factory: Callable[..., Any]
    label: str


class _FactoryBoundary(PluginBoundary):
    """A plugin retriever's factory behind the boundary (its ``label``, ``spec_label``, ``index_params``)."""

    kind = "retriever"


def _check_def(name: str, obj: Any) -> RetrieverDef:
    if isinstance(obj, RetrieverDef):
        return obj
    if not callable(obj) or (is_retriever(obj) and not isinstance(obj, type)):
        raise ParameterError(
            "retriever factory",
            obj,
            "is not a retriever factory",
            "register a class or function that returns a new, empty retriever",
        )
    return RetrieverDef(name, obj, _factory_label(obj, name))


RETRIEVERS: Registry[RetrieverDef] = Registry("retriever", "agentmemory.retrievers", _check_def)
"""Every retriever by name; read with ``RETRIEVERS.get(name)``, list with ``RETRIEVERS.names()``."""


def register_retriever(
    name: str, factory: Callable[..., Any], *, label: str | None = None, replace: bool = False
) -> RetrieverDef:
    """Register ``factory`` under ``name``: ``factory(**params)`` must return a new, empty retriever.

    ``label`` (default: the factory's ``label`` attribute, else ``name``) names
    it in tables when run with its default parameters.

    Raises:
        ParameterError: ``name`` is not a valid name or is taken (unless
            ``replace``), ``factory`` is not callable, or ``label`` is not a
            non-empty string.
    """
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ParameterError("label", label, "is not a non-empty string", "pass a display name such as 'My retriever'")
    definition = _check_def(name, factory)
    if label is not None:
        definition = RetrieverDef(name, definition.factory, label)
    return RETRIEVERS.register(name, definition, replace=replace)


def _factory_label(factory: Any, fallback: str) -> str:
    label = getattr(factory, "label", None)
    return label if isinstance(label, str) and label.strip() else fallback


@dataclass(frozen=True, eq=False)
class RetrieverSpec:
    """One retriever of an evaluation: how to make it and how to call it.

    Attributes:
        key: unique within an evaluation; the artifact's ``retriever`` field,
            the TREC run's tag and the run file's name (``bm25``,
            ``bm25[k1=0.9,b=0.4]``).
        label: the name in tables (``BM25``, ``BM25 (k1=0.9, b=0.4)``).
        params: the parameters given that differ from the factory's defaults.
        factory: makes a new, empty retriever (``None`` when an instance was given).
        instance: the given retriever instance (``None`` when a factory makes them);
            a plugin's behind the boundary (a :class:`GuardedRetriever`).
        plugin: the spec a plugin was given as (``"mypkg.memory:Mine[dim=64]"``,
            a registered plugin's name), ``None`` for agentmemory's own retrievers.
        index_key: what the index it builds depends on (:func:`index_key_of`):
            retrievers whose specs have the same ``index_key`` can share one
            index (:meth:`share`); ``None`` when it shares none.
    """

    key: str
    label: str
    params: dict[str, Any] = field(default_factory=dict)
    factory: Callable[[], Any] | None = None
    instance: Any = None
    plugin: str | None = None
    index_key: str | None = None

    def __repr__(self) -> str:  # no factory repr: it would carry a memory address
        kind = "instance" if self.instance is not None else "factory"
        return f"RetrieverSpec({self.key!r}, label={self.label!r}, {kind})"

    @property
    def shared(self) -> bool:
        """True when an instance was given: it can serve one store partition (scope) only."""
        return self.instance is not None

    def new(self) -> Any:
        """A retriever for one store partition: a new one from the factory, or the given instance."""
        if self.instance is not None:
            return self.instance
        assert self.factory is not None  # one of the two is always set (see resolve_retriever)
        try:
            made = self.factory()
        except PluginError as err:  # the factory's own error, now that its label is known
            if err.label is not None or err.plugin != self.plugin:
                raise
            raise PluginError(err.kind, err.plugin, self.label, err.call, err.problem) from err.__cause__
        _check_made(made, self.key)
        return made if self.plugin is None else GuardedRetriever(made, self.plugin)

    def share(self, built: Any, like: RetrieverSpec) -> Any:
        """A retriever of this spec over the index of ``built``, a retriever of ``like`` (a spec of the same
        :attr:`index_key`) that has its entries: ``built`` itself when the two specs are the same, else
        ``built.with_params(params)`` (the declared capability).

        Raises:
            ParameterError: the two specs do not share an index, or ``built`` has no ``with_params``.
            PluginError: a plugin's ``with_params`` raised or returned something else than a new retriever.
        """
        if self.index_key is None or self.index_key != like.index_key:
            raise ParameterError(
                "retriever spec",
                self.key,
                f"does not share its index with {like.key!r}",
                "share an index only between specs whose index parameters agree (RetrieverSpec.index_key)",
            )
        if self.key == like.key:
            return built
        if not has_capability(built, "with_params"):
            raise ParameterError(
                "retriever",
                like.key,
                "has no with_params(params), so it cannot serve other parameters from its index",
                "build a retriever of this spec instead",
            )
        made = built.with_params(dict(self.params))
        _check_made(made, self.key)
        return made


RetrieverLike: TypeAlias = "str | RetrieverSpec | Callable[..., Any] | Retriever"


def _check_made(obj: Any, where: str) -> None:
    missing = missing_members(obj)
    if missing:
        raise ParameterError(
            "retriever spec",
            where,
            f"gives a {type(obj).__name__}, which is not a retriever (it lacks {', '.join(missing)})",
            "a retriever has name, label, add(entries), search(query, k) and params()",
        )


def _accepted(factory: Callable[..., Any], where: str) -> tuple[dict[str, Any], bool]:
    """The factory's keyword parameters with their defaults (``inspect.Parameter.empty`` when none), and
    whether it takes ``**kwargs``."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return {}, True  # a builtin without a signature: let it check its own arguments
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
    defaults, var_kw = _accepted(factory, name)
    for key in params:
        if key in defaults or var_kw:
            continue
        if not defaults:
            raise ParameterError(
                f"{name} parameter", key, "is not accepted", f"the {name} retriever takes no parameters"
            )
        raise UnknownNameError(f"{name} parameter", key, defaults)
    missing = [k for k, d in defaults.items() if d is inspect.Parameter.empty and k not in params]
    if missing:
        raise ParameterError(
            f"{name} parameter",
            missing[0],
            "is required",
            f"give it in brackets, e.g. {name}[{missing[0]}=...]",
        )
    return {k: v for k, v in params.items() if k not in defaults or not _same(defaults[k], v)}


def _same(default: Any, value: Any) -> bool:
    """Whether a given parameter value equals the factory's default (a spec's list equals a default tuple)."""
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        return len(default) == len(value) and all(_same(d, v) for d, v in zip(default, value))
    numbers = (
        isinstance(default, (int, float))
        and isinstance(value, (int, float))
        and not isinstance(default, bool)
        and not isinstance(value, bool)
    )
    return (type(default) is type(value) or numbers) and default == value


def _label(base: str, params: dict[str, Any], factory: Any = None, plugin: str | None = None) -> str:
    """The table label: the factory's ``spec_label(params)`` when it has one, else ``base (k=v, ...)``.

    ``spec_label`` is how a factory whose parameters change what it *is*
    (``hybrid[method=convex]``, ``dense[encoder=model2vec]``) names itself;
    it gets the parameters that differ from its defaults and must give
    different labels for different parameters.
    """
    if factory is not None and has_capability(factory, "spec_label"):
        if plugin is None:
            label = factory.spec_label(dict(params))
        else:
            label = _FactoryBoundary(plugin).call("spec_label", factory.spec_label, dict(params))
        if not isinstance(label, str) or not label.strip():
            if plugin is not None:
                _FactoryBoundary(plugin).refuse("spec_label", f"{label!r}, not a non-empty string (a display name)")
            raise ParameterError(
                "retriever spec_label",
                label,
                "is not a non-empty string",
                "spec_label(params) must return a display name",
            )
        return label
    if not params:
        return base
    return f"{base} (" + ", ".join(f"{k}={format_value(v)}" for k, v in params.items()) + ")"


def _made_by(
    factory: Callable[..., Any], params: dict[str, Any], where: str, plugin: str | None = None
) -> Callable[[], Any]:
    """``factory(**params)``; a plugin's factory through the boundary (call ``factory``)."""

    def make() -> Any:
        try:
            return factory(**params)
        except ParameterError:
            raise
        except TypeError as err:  # a factory's own argument check, said as one line
            raise ParameterError(
                "retriever spec", where, f"was refused by its factory: {shorten(str(err), 200)}", "check the parameters"
            ) from None
        except (KeyboardInterrupt, PluginError):
            raise
        except BaseException as err:  # noqa: BLE001 - a plugin's factory may raise anything
            if plugin is None:
                raise
            raise PluginError.raised("retriever", plugin, None, "factory", err) from err

    return make


def _origin(obj: Any) -> str:
    """How a plugin given as an object is named in messages: ``module:qualified name`` of it (or of its class)."""
    home = obj if isinstance(obj, type) or inspect.isroutine(obj) else type(obj)
    module = getattr(home, "__module__", None) or "?"
    return f"{module}:{getattr(home, '__qualname__', type(home).__name__)}"


def _own_label(factory: Any, fallback: str, make: Callable[[], Any], plugin: str | None) -> str:
    """The factory's declared ``label``; for a plugin factory without one, the label of a retriever it makes."""
    label = getattr(factory, "label", None)
    if isinstance(label, str) and label.strip():
        return label
    if plugin is None:
        return fallback
    made = make()
    _check_made(made, plugin)
    return str(GuardedRetriever(made, plugin).label)


def index_key_of(target: str, factory: Any, given: dict[str, Any], key: str, plugin: str | None) -> str | None:
    """What the index of ``target[given]`` depends on, as text; ``None`` when it shares its index with nothing.

    A factory that declares ``index_params()`` (a capability of
    :mod:`agentmemory.retrievers.base`; a plugin's answer checked at the
    boundary) gives ``target`` with the index parameters among ``given``
    (``bm25[k1=0.9]`` and ``bm25`` both give ``bm25``; ``hybrid[of=bm25+dense,
    method=convex]`` gives ``hybrid[of=bm25+dense]``).  Without it, one of
    agentmemory's own retrievers shares only with its own spec (``key``), and
    a plugin never (its searches might change its state).
    """
    if not has_capability(factory, "index_params"):
        return key if plugin is None else None
    if plugin is None:
        names = factory.index_params()
    else:
        names = _FactoryBoundary(plugin).call("index_params", factory.index_params)
    defaults, var_kw = _accepted(factory, target)
    problem = index_params_violation(names, None if var_kw else defaults)
    if problem is not None:
        if plugin is not None:
            _FactoryBoundary(plugin).refuse("index_params", problem)
        raise ParameterError("retriever index_params", names, problem, "return the names of parameters it takes")
    return Spec(target, {k: v for k, v in given.items() if k in names}).text()


def _import(target: str, whole: str, kind: str = "retriever") -> Any:
    """The attribute ``module:attribute`` names (``whole`` is the spec as given); ``kind`` (``retriever``,
    ``system``) names the plugin when its module raises on import."""
    module_name, _, attribute = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # noqa: BLE001 - a module may raise anything on import, SystemExit included
        missing = isinstance(err, ModuleNotFoundError) and (
            err.name == module_name or module_name.startswith(f"{err.name}.")
        )
        if not missing:  # the module exists and failed while it ran: a plugin's fault
            raise PluginError.raised(kind, whole, None, "import", err) from err
        raise ParameterError(
            f"{kind} spec",
            whole,
            f"cannot be imported: {type(err).__name__}: {shorten(str(err), 200)}",
            "name an importable package.module:attribute (is the package installed?)",
        ) from None
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise ParameterError(
                f"{kind} spec",
                whole,
                f"names {attribute!r}, which module {module_name!r} does not have",
                f"check the attribute name after the ':' in {target!r}",
            )
        obj = getattr(obj, part)
    return obj


def resolve_retriever(item: RetrieverLike, *, option: str | None = None) -> RetrieverSpec:
    """One retriever (a name, a spec, ``module:attribute``, a factory or an instance) as a :class:`RetrieverSpec`.

    ``option``: the option the spec was read from (``--retriever``, a grid key), named by every message about it
    (:func:`agentmemory.retrievers.spec.option_named`); ``None``: the messages say ``retriever spec``.

    Raises:
        UnknownNameError: an unknown registry name (the message lists the live registry, entry points included).
        ParameterError: a malformed spec; parameters the factory does not
            take (named with the accepted ones); a ``module:attribute`` that
            does not import, names a missing attribute, or gives something
            that is not a retriever; parameters given to an instance.
    """
    with option_named(option):
        return _resolve(item)


def _resolve(item: RetrieverLike) -> RetrieverSpec:
    if isinstance(item, RetrieverSpec):
        return item
    if isinstance(item, str):
        return _resolve_text(item)
    if is_retriever(item) and not isinstance(item, type):
        return _from_instance(item, str(getattr(item, "name", type(item).__name__)))
    if callable(item):
        name = getattr(item, "name", None)
        key = name if isinstance(name, str) and name else getattr(item, "__name__", type(item).__name__)
        plugin = None if is_ours(item) else _origin(item)
        make = _made_by(item, {}, key, plugin)
        shared = index_key_of(key, item, {}, key, plugin)
        return RetrieverSpec(key, _own_label(item, key, make, plugin), {}, make, plugin=plugin, index_key=shared)
    raise ParameterError(
        "retrievers",
        item,
        "is not a retriever",
        "pass a registry name such as 'bm25', a spec such as 'bm25[k1=0.9]', 'package.module:attribute', "
        "a retriever factory or a retriever instance",
    )


def _from_instance(obj: Any, where: str) -> RetrieverSpec:
    missing = missing_members(obj)
    if missing:
        raise ParameterError(
            "retriever spec",
            where,
            f"gives a {type(obj).__name__}, which is not a retriever (it lacks {', '.join(missing)})",
            "a retriever has name, label, add(entries), search(query, k) and params()",
        )
    if is_ours(obj):
        return RetrieverSpec(str(obj.name), str(obj.label), {}, None, obj)
    origin = where if ":" in where else _origin(obj)
    return RetrieverSpec(str(obj.name), str(obj.label), {}, None, GuardedRetriever(obj, origin), plugin=origin)


def _resolve_text(text: str) -> RetrieverSpec:
    spec: Spec = parse_spec(text)
    if spec.is_import:
        obj = _import(spec.target, text)
        if is_retriever(obj) and not isinstance(obj, type):
            if spec.params:
                raise ParameterError(
                    "retriever spec",
                    text,
                    "gives parameters to a retriever instance",
                    f"drop the brackets, or point {spec.target.partition(':')[0]}:... at a factory that takes them",
                )
            return _from_instance(obj, text)
        if not callable(obj):
            raise ParameterError(
                "retriever spec",
                text,
                f"names a {type(obj).__name__}, which is neither a retriever nor a factory",
                "point it at a class or function returning a retriever, or at a retriever instance",
            )
        given = _check_params(spec.target, obj, spec.params)
        key = spec.text(given)
        plugin = None if is_ours(obj) else text
        make = _made_by(obj, dict(spec.params), text, plugin)
        fallback = spec.target.rpartition(":")[2].rpartition(".")[2]
        label = _label(_own_label(obj, fallback, make, plugin), given, obj, plugin)
        shared = index_key_of(spec.target, obj, given, key, plugin)
        return RetrieverSpec(key, label, given, make, plugin=plugin, index_key=shared)
    definition = RETRIEVERS.get(_by_label(spec.target))
    given = _check_params(spec.target, definition.factory, spec.params)
    plugin = None if is_ours(definition.factory) else text
    made = _made_by(definition.factory, dict(spec.params), text, plugin)
    # A label given at registration wins over the factory's own naming (spec_label).
    own = definition.label == _factory_label(definition.factory, definition.name)
    base = _own_label(definition.factory, definition.name, made, plugin) if own else definition.label
    label = _label(base, given, definition.factory if own else None, plugin)
    key = spec.text(given)
    shared = index_key_of(spec.target, definition.factory, given, key, plugin)
    return RetrieverSpec(key, label, given, made, plugin=plugin, index_key=shared)


def _by_label(target: str) -> str:
    """``target`` itself when it is a registered name (or unknown altogether: the registry refuses it, listing the
    names); a retriever's table label or its name in other letter case (``BM25``) is refused naming the name.

    Raises:
        ParameterError: ``target`` is a label or a name in the wrong case; the message says which name to write.
    """
    if target in RETRIEVERS:
        return target
    folded = target.casefold()
    for name, definition in RETRIEVERS.registered().items():
        if folded in (name.casefold(), definition.label.casefold()):
            if folded == definition.label.casefold():
                problem = f"is the label tables show for {name}, not its name"
            else:
                problem = f"is {name} in other letters (names are case-sensitive)"
            raise ParameterError("retriever", target, problem, f"write {name}")
    return target


def full_label(text: str) -> str:
    """The table label of retriever spec ``text`` with every parameter of its factory, defaults included.

    :func:`resolve_retriever` names only the parameters that differ from the defaults (``bm25[k1=0.6,b=0.75]``
    is ``BM25 (k1=0.6)``), which a reader of a parameter grid cannot tell from a setting with another ``b``;
    here each keyword parameter of the factory is named, in the factory's order, with the value given or its
    default: ``bm25[k1=0.6]`` and ``bm25[k1=0.6,b=0.75]`` are ``BM25 (k1=0.6, b=0.75)``, ``bm25`` is
    ``BM25 (k1=1.2, b=0.75)``, ``tags`` (no parameter) ``Tag scorer``.  A factory that names itself
    (``spec_label``: dense, hybrid, recency), a ``module:attribute`` instance, a required parameter without a
    value or a default that a spec cannot write keep the label :func:`resolve_retriever` gives.

    Raises:
        as :func:`resolve_retriever`.
    """
    spec = resolve_retriever(text)
    parsed = parse_spec(text)
    if parsed.is_import:
        factory = _import(parsed.target, text)
        if is_retriever(factory) and not isinstance(factory, type):
            return spec.label  # an instance: it has no parameters to name
    else:
        factory = RETRIEVERS.get(parsed.target).factory
    if has_capability(factory, "spec_label"):
        return spec.label
    given = ", ".join(f"{k}={format_value(v)}" for k, v in spec.params.items())
    suffix = f" ({given})" if given else ""
    if not spec.label.endswith(suffix):
        return spec.label
    defaults, _ = _accepted(factory, text)
    every = {k: spec.params.get(k, d) for k, d in defaults.items()} | dict(spec.params)
    if not every or any(v is inspect.Parameter.empty for v in every.values()):
        return spec.label
    try:
        shown = ", ".join(f"{k}={format_value(v)}" for k, v in every.items())
    except ParameterError:  # a default no spec can write (an object): the label names what it can
        return spec.label
    return f"{spec.label[: len(spec.label) - len(suffix)]} ({shown})"


def resolve_retrievers(
    items: RetrieverLike | Sequence[RetrieverLike], *, option: str | None = None
) -> tuple[RetrieverSpec, ...]:
    """Several retrievers: a comma-separated string of specs or a sequence of anything :func:`resolve_retriever` takes.

    ``option`` (``--retrievers``, a grid key): the option every message names, as :func:`resolve_retriever`'s.

    Raises:
        ParameterError: as :func:`resolve_retriever`; no retriever; two with
            the same key or the same label.
    """
    with option_named(option):
        return _resolve_all(items)


def _resolve_all(items: RetrieverLike | Sequence[RetrieverLike]) -> tuple[RetrieverSpec, ...]:
    if isinstance(items, str):
        pieces: list[Any] = list(split_specs(items))
    elif isinstance(items, RetrieverSpec) or (not isinstance(items, Iterable)) or is_retriever(items):
        pieces = [items]
    else:
        pieces = list(items)
        if any(isinstance(p, str) and not p.strip() for p in pieces):
            raise ParameterError(
                "retrievers", pieces, "has an empty name", "choose from: " + ", ".join(RETRIEVERS.names())
            )
    if not pieces:
        raise ParameterError("retrievers", items, "names no retriever", "name at least one, e.g. 'bm25'")
    specs = [resolve_retriever(p.strip() if isinstance(p, str) else p) for p in pieces]
    seen_keys: dict[str, RetrieverSpec] = {}
    seen_labels: dict[str, RetrieverSpec] = {}
    for spec in specs:
        if spec.key in seen_keys or spec.label in seen_labels:
            raise ParameterError(
                "retrievers",
                items if isinstance(items, str) else [s.key for s in specs],
                f"names the retriever {spec.label!r} twice",
                "give each retriever once, or different parameters (labels must be unique)",
            )
        seen_keys[spec.key] = seen_labels[spec.label] = spec
    return tuple(specs)


def parse_retrievers(items: RetrieverLike | Sequence[RetrieverLike]) -> tuple[RetrieverSpec, ...]:
    """Alias of :func:`resolve_retrievers` (the command line's and notebooks' name for it)."""
    return resolve_retrievers(items)


def make_retriever(item: RetrieverLike, **params: Any) -> Any:
    """A new, empty retriever from a name or spec (``params`` add to the spec's own), a factory or an instance.

    ``make_retriever("bm25", k1=0.9)`` equals ``make_retriever("bm25[k1=0.9]")``.
    """
    if params:
        if not isinstance(item, str):
            raise ParameterError(
                "params", params, "are given with a non-text retriever", "put the parameters in the spec text"
            )
        spec = parse_spec(item)
        clash = sorted(set(spec.params) & set(params))
        if clash:
            raise ParameterError(f"{spec.target} parameter", clash[0], "is given twice", "give each parameter once")
        item = spec.text({**spec.params, **params})
    return resolve_retriever(item).new()
