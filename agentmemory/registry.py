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
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from agentmemory.errors import ParameterError, UnknownNameError, shorten

__all__ = ["NAME_PATTERN", "Registry"]

T = TypeVar("T")

NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
"""What a registry name may be: letters, digits, ``_``, ``.``, ``+`` and ``-``, not starting with ``.``, ``+`` or ``-``.

No brackets, commas, colons, ``=`` or white space, so a name can always be
written inside a retriever spec (``bm25[k1=0.9]``) or a list (``P@5,RR``).
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

    # -- registration -----------------------------------------------------
    def register(self, name: str, obj: Any, *, replace: bool = False) -> T:
        """Register ``obj`` under ``name``; return the stored object.

        Raises:
            ParameterError: ``name`` is not a valid name, is already
                registered (unless ``replace=True``), or ``obj`` is not
                what this registry holds.
        """
        self._check_name(name)
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
        return name in self._items or name in self._available_entry_points()

    def registered(self) -> dict[str, T]:
        """What is registered now (entry points loaded so far included), in registration order."""
        return dict(self._items)

    def names(self) -> list[str]:
        """Every valid name, sorted: registered ones and installed entry points not yet loaded."""
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
