"""One open registry class, used for every extension kind: retrievers, measures, collection formats, embedding
encoders, memory systems, token counters, answer formats, readers and judges (ARCHITECTURE.md lists each registry
and its entry-point group).

A :class:`Registry` maps names to objects.  Users extend it in two ways,
without editing this package:

* at run time: ``registry.register(name, obj)`` (``replace=True`` to
  overwrite an existing name; registering a taken name is otherwise an
  error);
* from an installed package: an entry point in the registry's group
  (``agentmemory.retrievers``, ``agentmemory.measures``,
  ``agentmemory.formats``, ...) whose name is the registry name and whose value
  is the object (``mypkg.memory:MyRetriever``).  Entry points are found
  lazily: the first lookup of a name that is not registered imports the
  entry point of that name, never all of them, so ``import agentmemory``
  stays light and a broken plugin only fails when it is used.

:meth:`Registry.names` lists every registered name and every entry point
not yet loaded, sorted: every error message that lists valid choices reads
it, so no list of choices is ever written by hand.

**The built-ins register in one place**: :data:`BUILTINS`, below, names every
object this package registers itself, by entry-point group, as
``"module:attribute"`` texts, loaded the way an installed plugin's entry points
are (so the bottom layer names the modules above it without importing them).
A registry loads its built-ins, in the table's order, the first time it is
used (a lookup of one built-in by name, before that, loads that one alone);
they come before anything registered at run time and take their names
before any entry point can.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from agentmemory.errors import ParameterError, UnknownNameError, shorten

__all__ = ["BUILTINS", "NAME_PATTERN", "Registry"]

T = TypeVar("T")

NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
"""What a registry name may be: letters, digits, ``_``, ``.``, ``+`` and ``-``, not starting with ``.``, ``+`` or ``-``.

No brackets, commas, colons, ``=`` or white space, so a name can always be
written inside a retriever spec (``bm25[k1=0.9]``) or a list (``P@5,RR``).
"""


BUILTINS: dict[str, tuple[tuple[str, str], ...]] = {
    "agentmemory.retrievers": (
        ("bm25", "agentmemory.retrievers.bm25:BM25"),
        ("tags", "agentmemory.retrievers.tags:TagScorer"),
        ("dense", "agentmemory.retrievers.dense:Dense"),
        ("hybrid", "agentmemory.retrievers.hybrid:Hybrid"),
        ("recency", "agentmemory.retrievers.recency:Recency"),
    ),
    # trec_eval's measures in the order the tables show them, then LongMemEval's official ones (their own
    # family), BEAM's stale evidence, tokens@first (the budget family), and the answer measures.
    "agentmemory.measures": (
        ("P", "agentmemory.metrics.precision:DEFINITION"),
        ("R", "agentmemory.metrics.recall:DEFINITION"),
        ("RR", "agentmemory.metrics.reciprocal_rank:DEFINITION"),
        ("nDCG", "agentmemory.metrics.ndcg:DEFINITION"),
        ("AP", "agentmemory.metrics.average_precision:DEFINITION"),
        ("Success", "agentmemory.metrics.success:DEFINITION"),
        ("Rprec", "agentmemory.metrics.r_precision:DEFINITION"),
        ("bpref", "agentmemory.metrics.bpref:DEFINITION"),
        ("recall_any", "agentmemory.metrics.longmemeval_official:RECALL_ANY"),
        ("recall_all", "agentmemory.metrics.longmemeval_official:RECALL_ALL"),
        ("ndcg_any", "agentmemory.metrics.longmemeval_official:NDCG_ANY"),
        ("sess.recall_any", "agentmemory.metrics.longmemeval_official:SESS_RECALL_ANY"),
        ("sess.recall_all", "agentmemory.metrics.longmemeval_official:SESS_RECALL_ALL"),
        ("sess.ndcg_any", "agentmemory.metrics.longmemeval_official:SESS_NDCG_ANY"),
        ("stale", "agentmemory.metrics.stale:DEFINITION"),
        ("tokens", "agentmemory.metrics.budget:DEFINITION"),
        ("Judge", "agentmemory.metrics.answers:JUDGE"),
        ("F1", "agentmemory.metrics.answers:F1"),
        ("EM", "agentmemory.metrics.answers:EM"),
        ("BLEU-1", "agentmemory.metrics.answers:BLEU1"),
        ("answer_in_context", "agentmemory.metrics.answers:ANSWER_IN_CONTEXT"),
    ),
    # In detection order: format="auto" takes the first that recognises a path.
    "agentmemory.formats": (
        ("beir", "agentmemory.datasets.beir:FORMAT"),
        ("locomo", "agentmemory.datasets.locomo:FORMAT"),
        ("longmemeval", "agentmemory.datasets.longmemeval:FORMAT"),
        ("beam", "agentmemory.datasets.beam:FORMAT"),
    ),
    "agentmemory.encoders": (
        ("wordllama", "agentmemory.retrievers.encoders:WordLlamaEncoder"),
        ("model2vec", "agentmemory.retrievers.encoders:Model2VecEncoder"),
        ("sentence-transformers", "agentmemory.retrievers.encoders:SentenceTransformerEncoder"),
        ("fastembed", "agentmemory.retrievers.encoders:FastEmbedEncoder"),
    ),
    "agentmemory.systems": (
        ("retriever", "agentmemory.systems.wrapper:RetrieverSystem"),
        ("mcp", "agentmemory.systems.mcp:MCPSystem"),
        ("agentrecall", "agentmemory.systems.agentrecall:AgentRecallSystem"),
    ),
    "agentmemory.tokenizers": (("llama2", "agentmemory.metrics.token_counters:Llama2Counter"),),
    # In detection order, as the collection formats.
    "agentmemory.answer_formats": (
        ("mem0", "agentmemory.answers.mem0:FORMAT"),
        ("evermemos", "agentmemory.answers.evermemos:FORMAT"),
        ("zep", "agentmemory.answers.zep:FORMAT"),
        ("longmemeval", "agentmemory.answers.hypotheses:FORMAT"),
        ("mapping", "agentmemory.answers.mapping:FORMAT"),
    ),
    "agentmemory.readers": (("openai", "agentmemory.live.endpoints:OpenAIChat"),),
    "agentmemory.judges": (("openai", "agentmemory.live.endpoints:OpenAIChat"),),
}
"""Every built-in of every registry: entry-point group -> ``(name, "module:attribute")`` in registration order.

The one place the package registers its own retrievers, measures, formats,
encoders, memory systems, token counters, answer formats, readers and judges
(ARCHITECTURE.md's extension table names each registry).  A built-in is
loaded as an entry point is, and checked by its registry as anything
registered is.
"""


class Registry(Generic[T]):
    """Names to objects of one kind, open to run-time registration and to entry points.

    Args:
        kind: what the objects are, for messages (``"retriever"``, ``"measure"``, ``"format"``).
        group: the entry-point group installed packages use (``"agentmemory.retrievers"``).
        check: turns what is registered (or what an entry point loads) into
            the stored object, raising :class:`~agentmemory.errors.ParameterError`
            when it is not one; called as ``check(name, obj)``.
        pattern: what a name must match (default :data:`NAME_PATTERN`).
    """

    def __init__(
        self,
        kind: str,
        group: str,
        check: Callable[[str, Any], T],
        *,
        pattern: re.Pattern[str] = NAME_PATTERN,
    ) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._pattern = pattern
        self._items: dict[str, T] = {}
        self._lock = threading.RLock()
        self._builtins = BUILTINS.get(group, ())
        self._builtins_state = "done" if not self._builtins else "waiting"  # "loading" while they load

    def _load_builtins(self) -> None:
        """Load this group's :data:`BUILTINS` (once, in order, before anything else is stored)."""
        if self._builtins_state == "done":
            return
        with self._lock:
            if self._builtins_state != "waiting":  # done meanwhile, or loading in this thread (a check reads us)
                return
            self._builtins_state = "loading"
            try:
                for name, target in self._builtins:
                    if name not in self._items:  # not looked up alone before (_load_builtin)
                        self._items[name] = self._checked_builtin(name, target)
            except BaseException:
                self._items.clear()
                self._builtins_state = "waiting"
                raise
            builtins = {name: self._items[name] for name, _ in self._builtins}
            self._items = {**builtins, **{n: v for n, v in self._items.items() if n not in builtins}}
            self._builtins_state = "done"

    def _load_builtin(self, name: str) -> T | None:
        """The built-in ``name`` alone while the others are not loaded yet, else None (the whole table applies).

        A lookup of one built-in imports its module only (``retrieve --retriever bm25`` loads no other
        retriever's); anything that lists, registers or removes loads them all first, in the table's order.
        """
        if self._builtins_state != "waiting" or not isinstance(name, str):
            return None
        target = dict(self._builtins).get(name)
        if target is None:
            return None
        with self._lock:
            if self._builtins_state != "waiting":
                return None
            found = self._items.get(name)
            if found is None:
                found = self._items[name] = self._checked_builtin(name, target)
            return found

    def _checked_builtin(self, name: str, target: str) -> T:
        module, _, attribute = target.partition(":")
        try:
            return self._check(name, getattr(importlib.import_module(module), attribute))
        except ParameterError as err:  # a defect of this package, named as an entry point's would be
            raise ParameterError(
                self.kind, name, f"is the built-in {target!r}, whose object {err.problem}", err.allowed
            ) from None

    @property
    def builtin_names(self) -> tuple[str, ...]:
        """The names this package registers itself in this registry, in :data:`BUILTINS`' order."""
        return tuple(name for name, _ in self._builtins)

    # -- registration -----------------------------------------------------
    def register(self, name: str, obj: Any, *, replace: bool = False) -> T:
        """Register ``obj`` under ``name``; return the stored object.

        Raises:
            ParameterError: ``name`` is not a valid name, is already
                registered (unless ``replace=True``), or ``obj`` is not
                what this registry holds.
        """
        self._check_name(name)
        self._load_builtins()
        stored = self._check(name, obj)
        with self._lock:
            if name in self._items and not replace:
                raise ParameterError(
                    f"{self.kind} name",
                    name,
                    "is already registered",
                    f"pass replace=True to replace the registered {self.kind}, or choose another name",
                )
            self._items[name] = stored
        return stored

    def unregister(self, name: str) -> None:
        """Remove ``name`` (registered at run time or loaded from an entry point).

        Raises:
            UnknownNameError: ``name`` is not registered.
        """
        self._load_builtins()
        with self._lock:
            if name not in self._items:
                raise UnknownNameError(self.kind, name, self._items)
            del self._items[name]

    def _check_name(self, name: object) -> None:
        if not isinstance(name, str) or not self._pattern.fullmatch(name):
            raise ParameterError(
                f"{self.kind} name",
                name,
                "is not a valid name",
                "use letters, digits, '_', '.', '+' and '-' (no brackets, commas, colons, '=' or spaces), "
                "starting with a letter, a digit or '_'",
            )

    # -- lookup ---------------------------------------------------------------
    def get(self, name: str) -> T:
        """The object registered as ``name``, loading its entry point on first use.

        Raises:
            UnknownNameError: no such name, registered or installed; the
                message lists :meth:`names`.
            ParameterError: the entry point of that name fails to load or
                does not give what this registry holds.
        """
        found = self._load_builtin(name)
        if found is not None:
            return found
        self._load_builtins()
        found = self._items.get(name) if isinstance(name, str) else None
        if found is not None:
            return found
        if isinstance(name, str):
            loaded = self._load_entry_point(name)
            if loaded is not None:
                return loaded
        raise UnknownNameError(self.kind, name, self.names())

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        """True when ``name`` is registered or an installed entry point offers it (nothing is loaded)."""
        if not isinstance(name, str):
            return False
        if self._builtins_state == "waiting" and name in dict(self._builtins):
            return True  # a built-in, none removed yet (removing one loads them all first)
        self._load_builtins()
        return name in self._items or name in self._available_entry_points()

    def registered(self) -> dict[str, T]:
        """What is registered now (entry points loaded so far included), in registration order: built-ins first."""
        self._load_builtins()
        return dict(self._items)

    def names(self) -> list[str]:
        """Every valid name, sorted: registered ones and installed entry points not yet loaded."""
        self._load_builtins()
        return sorted(set(self._items) | set(self._available_entry_points()))

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, group={self.group!r}, names={self.names()!r})"

    # -- entry points ---------------------------------------------------------
    def _available_entry_points(self) -> dict[str, Any]:
        """Entry points of this group by name (read from the installed distributions' metadata each call)."""
        from importlib.metadata import entry_points

        found: dict[str, Any] = {}
        for point in entry_points(group=self.group):
            found.setdefault(point.name, point)
        return found

    def _load_entry_point(self, name: str) -> T | None:
        point = self._available_entry_points().get(name)
        if point is None:
            return None
        with self._lock:
            if name in self._items:  # another thread loaded it meanwhile
                return self._items[name]
            try:
                obj = point.load()
            except Exception as err:  # a plugin's own import error, reported as one line
                raise ParameterError(
                    self.kind,
                    name,
                    f"comes from the entry point {point.value!r} (group {self.group}), which failed to load: "
                    f"{type(err).__name__}: {shorten(str(err))}",
                    "fix or uninstall the package that provides it",
                ) from None
            try:
                stored = self._check(name, obj)
            except ParameterError as err:
                raise ParameterError(
                    self.kind,
                    name,
                    f"comes from the entry point {point.value!r} (group {self.group}), whose object {err.problem}",
                    err.allowed,
                ) from None
            self._items[name] = stored
            return stored
