"""The plugin boundary: every call into code agentmemory did not write goes through here.

A *plugin* is a retriever that is not one of agentmemory's own (a
``package.module:attribute`` spec, a user's class, function or instance, an
entry point); next, a memory system.  :func:`agentmemory.retrievers.resolve_retriever`
wraps each in a :class:`GuardedRetriever`, so the evaluation, the store and
batch retrieval call it as any retriever and need no change of their own.

**Calls.**  :meth:`PluginBoundary.call` runs one call of the plugin.  Any
exception it raises (any type, ``SystemExit``, ``GeneratorExit`` and a
``BaseException`` of its own included; ``KeyboardInterrupt``
goes through untouched, and so does a :class:`~agentmemory.errors.PluginError`
of a plugin nested inside this one) becomes one
:class:`~agentmemory.errors.PluginError` naming the plugin (its spec and
label), the call (``import``, ``factory``, ``add``, ``search``, ``params``,
...) and the exception's type and message, with the exception as its
``__cause__`` (the CLI's ``--traceback`` and ``AGENTMEMORY_TRACEBACK=1`` show
it).  The working folder is put back after every call
(:class:`WorkingFolder`): a plugin that calls ``os.chdir`` moves no file
agentmemory reads or writes.  A plugin that ends the process
(``os._exit``, a signal, a crash in compiled code) cannot be caught in the
process it runs in.

**Results.**  What a call returns is checked before anyone else sees it,
and refused (a ``PluginError`` naming the first violation) unless:

* ``search(query, k)``: a list of :class:`~agentmemory.records.Hit`, at most
  ``k`` of them, ranked ``1..n``, each id one the retriever was given by
  ``add`` (and not removed since), so an entry of the query's scope, no id
  twice, every score a real number that is not NaN (``+inf`` and ``-inf``
  rank first and last), in the ranking rule's order: score descending, then
  id descending (:mod:`agentmemory.retrievers.base`, trec_eval's order,
  :func:`agentmemory.files.trec.trec_order`).  So the hits an evaluation
  scores are the ranking its exported run holds, and the artifact's numbers
  are trec_eval's on that run.  Scores come back as Python floats.
* ``search_batch(queries, k)`` and ``search_many(queries, k)``: one such list per query.
* ``params()``: a dict that JSON holds (:func:`plain_json`: string keys; strings UTF-8 can encode, finite
  numbers, booleans, ``None``, lists and such dicts), copied into those plain types.
* ``score_all(query)`` / ``score_at_least(query, floor)``: a dict of known
  entry ids to real, non-NaN scores.
* ``memory_bytes()``: an int >= 0.
* ``with_params(params)``: a new retriever (not the plugin itself), behind the boundary in its turn, which
  knows the entries this one was given.
* a factory's ``index_params()`` (:func:`index_params_violation`): names of parameters the factory takes.

:func:`hit_violations` is the one validator of a search's result: the
boundary raises on its first violation, and :func:`agentmemory.testing.check_retriever`
lists them all (adding the contract's stricter rules: scores above 0).
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
from collections.abc import Callable, Container, Iterable, Sequence
from typing import Any, NoReturn

from agentmemory.errors import PluginError, quote, shorten
from agentmemory.files.numbers import MAX_DIGITS
from agentmemory.records import Hit, MemoryEntry, Query
from agentmemory.retrievers.base import CAPABILITIES, has_capability, missing_members

__all__ = [
    "JSON_HOLDS",
    "GuardedRetriever",
    "PluginBoundary",
    "WorkingFolder",
    "hit_violations",
    "index_params_violation",
    "is_ours",
    "params_violation",
    "plain_json",
    "scores_violation",
]

JSON_HOLDS = "strings, finite numbers, booleans, None, lists and dicts with string keys"
"""What :func:`plain_json` accepts, as messages say it."""


def is_ours(obj: object) -> bool:
    """Whether ``obj`` (a factory, or an instance) is agentmemory's own code, which is not guarded."""
    home = obj if isinstance(obj, type) or inspect.isroutine(obj) else type(obj)
    module = getattr(home, "__module__", None) or ""
    return module == "agentmemory" or module.startswith("agentmemory.")


def _real(score: object) -> bool:
    return isinstance(score, numbers.Real) and not isinstance(score, bool)


def _hit_text(hit: Hit) -> str:
    return f"{quote(hit.entry_id, 60)} ({hit.score!r})"


def hit_violations(hits: object, k: int, known: Container[str], scope: str | None = None) -> list[str]:
    """Every way one search's result breaks the ranking rule (empty when it keeps it), in the order checked.

    Checked: ``hits`` is a list of :class:`~agentmemory.records.Hit` (when it
    is not, that is the only violation); at most ``k`` of them; ranks
    ``1..n``; no id twice; every id in ``known``; every score a real number,
    not NaN (infinities rank); the order score descending, then id
    descending.  ``scope`` (the query's) is named beside ids never added.  Scores <= 0 are not a violation here (the boundary passes
    ``-inf``); :func:`agentmemory.testing.check_retriever` adds that rule.
    """
    if not isinstance(hits, list):
        return [f"a {type(hits).__name__} ({quote(hits, 60)}), not a list of agentmemory.Hit"]
    strays = [(i, h) for i, h in enumerate(hits, start=1) if not isinstance(h, Hit)]
    if strays:
        i, stray = strays[0]
        return [f"item {i}: {quote(stray, 60)} ({type(stray).__name__}), not an agentmemory.Hit"]
    out = []
    if len(hits) > k:
        out.append(f"{len(hits)} hits for k = {k}")
    ranks = [h.rank for h in hits]
    if ranks != list(range(1, len(hits) + 1)):
        out.append(f"hits ranked {shorten(str(ranks), 80)}, not 1..{len(hits)}")
    ids = [h.entry_id for h in hits]
    if len(set(ids)) != len(ids):
        out.append(f"an entry twice ({quote(_first_repeated(ids), 60)})")
    strangers = [i for i in ids if i not in known]
    if strangers:
        where = "" if scope is None else f" (scope {quote(scope, 60)})"
        out.append(f"ids never added to it{where}: {shorten(str(strangers[:5]), 120)}")
    odd = [h for h in hits if not _real(h.score) or h.score != h.score]
    if odd:
        return out + [f"{', '.join(_hit_text(h) for h in odd[:3])}: scores must be numbers, not NaN"]
    for a, b in zip(hits, hits[1:]):
        if (a.score, a.entry_id) < (b.score, b.entry_id):
            out.append(
                f"hits out of order: {_hit_text(a)} above {_hit_text(b)}; the rule is score descending, then id "
                "descending"
            )
            break
    return out


def _first_repeated(ids: list[str]) -> str:
    seen: set[str] = set()
    for entry_id in ids:
        if entry_id in seen:
            return entry_id
        seen.add(entry_id)
    raise ValueError("no id is repeated")  # pragma: no cover - called only when one is


def scores_violation(scores: object, known: Container[str]) -> str | None:
    """What is wrong with a ``score_all``-style result (entry id -> score), or ``None``."""
    if not isinstance(scores, dict):
        return f"a {type(scores).__name__}, not a dict of entry id -> score"
    for entry_id, score in scores.items():
        if not isinstance(entry_id, str) or entry_id not in known:
            return f"{quote(entry_id, 60)}, an id that was never added"
        if not _real(score) or score != score:
            return f"the score {quote(score, 40)} of {quote(entry_id, 60)}; scores must be numbers, not NaN"
    return None


def index_params_violation(names: object, accepted: Container[str] | None) -> str | None:
    """What is wrong with a factory's ``index_params()`` result, or ``None``: a tuple or list of distinct
    parameter names, each one the factory accepts (``accepted``; ``None`` when it takes ``**kwargs``)."""
    if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
        return f"{quote(names, 60)}, not a tuple of parameter names"
    if len(set(names)) != len(names):
        return f"{quote(names, 60)}, which names a parameter twice"
    strangers = [n for n in names if accepted is not None and n not in accepted]
    if strangers:
        return f"{quote(strangers[0], 40)}, a parameter the factory does not take"
    return None


def plain_json(value: object) -> Any:
    """``value`` copied into JSON's own types, or a ``ValueError`` saying which part JSON cannot hold.

    Accepted: ``None``, ``bool``, integers (any ``numbers.Integral``, as
    ``int``, of at most 4,300 digits), real numbers (any ``numbers.Real``,
    as ``float``) that are finite, strings that UTF-8 can encode (no lone
    surrogate), lists and tuples (as lists) and dicts whose keys are such
    strings, of these.  Refused: a set, bytes, NaN or an infinity, a key that
    is not a string (``json.dumps`` would turn ``1`` into ``"1"``), anything
    else.  The message names where: ``the value at ['tags'] is a set``.
    """
    try:
        return _plain(value, "")
    except RecursionError:
        raise ValueError("the value is nested too deeply (or holds itself)") from None


def _at(where: str) -> str:
    return f"the value at {where}" if where else "the value"


def _plain(value: object, where: str) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        number = int(value)
        try:
            too_long = len(str(abs(number))) > MAX_DIGITS
        except ValueError:  # past CPython's limit on int-to-text conversion
            too_long = True
        if too_long:
            raise ValueError(f"{_at(where)} is an integer of more than {MAX_DIGITS:,} digits")
        return number
    if isinstance(value, numbers.Real):
        real = float(value)
        if not math.isfinite(real):
            raise ValueError(f"{_at(where)} is {real!r}; JSON holds finite numbers only")
        return real
    if isinstance(value, str):
        _utf8(value, where)
        return str.__str__(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        plain: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(
                    f"{'the dict at ' + where if where else 'the dict'} has the key {quote(key, 40)} "
                    f"({type(key).__name__}); keys must be strings"
                )
            _utf8(key, where)
            plain[str.__str__(key)] = _plain(item, f"{where}[{quote(key, 40)}]")
        return plain
    raise ValueError(f"{_at(where)} is a {type(value).__name__} ({JSON_HOLDS})")


def _utf8(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"{_at(where)} holds the character {ascii(text[err.start : err.end])}, which UTF-8 cannot encode"
        ) from None


def params_violation(params: object) -> str | None:
    """What keeps ``params()``'s result out of an artifact, or ``None``: a dict that JSON holds (:func:`plain_json`)."""
    if not isinstance(params, dict):
        return f"a {type(params).__name__}, not a dict"
    try:
        plain_json(params)
    except ValueError as err:
        return f"a dict which JSON cannot hold: {err}"
    return None


class WorkingFolder:
    """The working folder as it was when made; :meth:`restore` goes back to it if a plugin's call changed it.

    Read once per call (``os.getcwd``, about a microsecond).  A working
    folder that no longer exists when this is made is not restored.
    """

    __slots__ = ("path",)

    def __init__(self) -> None:
        try:
            self.path: str | None = os.getcwd()
        except OSError:  # the working folder was removed: there is nothing to go back to
            self.path = None

    def restore(self) -> str | None:
        """Go back to the folder; ``None``, or the problem when it cannot be entered any more."""
        if self.path is None:
            return None
        try:
            if os.getcwd() == self.path:
                return None
        except OSError:
            pass
        try:
            os.chdir(self.path)
        except OSError as err:
            return f"changed the working folder, and the one it left cannot be entered again ({err.strerror})"
        return None


class PluginBoundary:
    """One plugin's side of the boundary: its calls, guarded, and its refusals, as :class:`PluginError`.

    ``kind`` names the kind of plugin (``"retriever"``; a memory system's
    boundary subclasses this with its own), ``origin`` the spec it was given
    as, ``label`` its display name (``None`` until known).
    """

    kind = "plugin"

    def __init__(self, origin: str, label: str | None = None) -> None:
        self.origin = origin
        self.boundary_label = label

    def refuse(self, call: str, problem: str) -> NoReturn:
        """Raise the PluginError for a result of ``call`` that the boundary refuses."""
        raise PluginError(self.kind, self.origin, self.boundary_label, call, f"returned {problem}")

    def call(self, call: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``; any exception it raises becomes one PluginError naming ``call``, and the working
        folder is put back afterwards (module docstring)."""
        folder = WorkingFolder()
        try:
            return fn(*args)
        except (KeyboardInterrupt, PluginError):
            raise
        except BaseException as err:  # noqa: BLE001 - the point of the boundary: a plugin may raise anything
            raise PluginError.raised(self.kind, self.origin, self.boundary_label, call, err) from err
        finally:
            lost = folder.restore()
            if lost is not None:
                raise PluginError(self.kind, self.origin, self.boundary_label, call, lost)


class GuardedRetriever(PluginBoundary):
    """A plugin retriever behind the boundary: the same members, every call guarded, every result checked.

    It has the plugin's ``name`` and ``label``, ``add``, ``search`` and
    ``params``, and exactly the optional capabilities the plugin has
    (:data:`~agentmemory.retrievers.base.CAPABILITIES`); ``plugin`` is the
    plugin itself, and any other attribute is read from it (for the plugin's
    users: agentmemory itself uses declared members only).  It remembers the ids it was given by ``add`` (less those
    given to ``remove``): one retriever serves one scope of a store, so
    these are the entries of that scope.
    """

    kind = "retriever"

    def __init__(self, plugin: Any, origin: str) -> None:
        super().__init__(origin)
        self.plugin = plugin
        self.name: str = self.call("name", getattr, plugin, "name")
        self.label: str = self.call("label", getattr, plugin, "label")
        self.boundary_label = self.label
        self._known: set[str] = set()

    def __repr__(self) -> str:  # no plugin repr: it may carry a memory address
        return f"GuardedRetriever({self.origin!r}, label={self.label!r})"

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        batch = list(entries)
        self.call("add", self.plugin.add, batch)
        self._known.update(e.id for e in batch)

    def search(self, query: Query | str, k: int) -> list[Hit]:
        return self._checked(self.call("search", self.plugin.search, query, k), k, query, "search")

    def params(self) -> dict[str, Any]:
        params = self.call("params", self.plugin.params)
        problem = self.call("params", params_violation, params)  # reading a dict of the plugin's runs its code
        if problem is not None:
            self.refuse("params", problem)
        plain: dict[str, Any] = self.call("params", plain_json, params)
        return plain

    def _checked(self, hits: object, k: int, query: Query | str, call: str) -> list[Hit]:
        problems = hit_violations(hits, k, self._known, query.scope if isinstance(query, Query) else None)
        if problems:
            where = f" (query {quote(query.id if isinstance(query, Query) else query, 60)}, k = {k})"
            self.refuse(call + where, problems[0])
        assert isinstance(hits, list)
        if all(type(h.score) is float for h in hits):
            return hits
        return [Hit(h.entry_id, float(h.score), h.rank) for h in hits]

    # -- optional capabilities: present exactly when the plugin has them ----------------------------
    def __getattr__(self, name: str) -> Any:
        plugin = self.__dict__.get("plugin")
        if plugin is None or name.startswith("__"):  # being built or copied: nothing to look up yet
            raise AttributeError(name)
        if name not in CAPABILITIES:  # the plugin's own attribute (``.dim``), for its users; agentmemory reads none
            return getattr(plugin, name)
        if self.call(name, has_capability, plugin, name):
            if name == "max_k":
                return self.call("max_k", getattr, plugin, "max_k")
            return getattr(self, f"_guarded_{name}")
        raise AttributeError(f"{type(self).__name__} of {self.origin!r} has no {name!r}")

    def _guarded_score_all(self, query: Query | str) -> dict[str, float]:
        return self._scores(self.call("score_all", self.plugin.score_all, query), "score_all")

    def _guarded_score_at_least(self, query: Query | str, floor: float) -> dict[str, float]:
        return self._scores(self.call("score_at_least", self.plugin.score_at_least, query, floor), "score_at_least")

    def _scores(self, scores: Any, call: str) -> dict[str, float]:
        problem = scores_violation(scores, self._known)
        if problem is not None:
            self.refuse(call, problem)
        return {i: float(s) for i, s in scores.items()}

    def _guarded_explain(self, query: Query | str, entry_id: str) -> Any:
        return self.call("explain", self.plugin.explain, query, entry_id)

    def _guarded_remove(self, entry_ids: Iterable[str]) -> None:
        ids = list(entry_ids)
        self.call("remove", self.plugin.remove, ids)
        self._known.difference_update(ids)

    def _guarded_search_batch(self, queries: Sequence[Query | str], k: int) -> list[list[Hit]]:
        return self._lists("search_batch", self.plugin.search_batch, queries, k)

    def _guarded_search_many(self, queries: Sequence[Query | str], k: int) -> list[list[Hit]]:
        return self._lists("search_many", self.plugin.search_many, queries, k)

    def _lists(self, call: str, method: Callable, queries: Sequence[Query | str], k: int) -> list[list[Hit]]:
        """One checked list of hits per query, from the plugin's batch ``method``."""
        batch = list(queries)
        found = self.call(call, method, batch, k)
        if not isinstance(found, list) or len(found) != len(batch):
            self.refuse(call, f"{quote(found, 60)}, not a list of {len(batch)} lists of hits")
        return [self._checked(hits, k, q, call) for q, hits in zip(batch, found)]

    def _guarded_with_params(self, params: dict[str, Any]) -> GuardedRetriever:
        made = self.call("with_params", self.plugin.with_params, dict(params))
        missing = missing_members(made)
        if missing:
            self.refuse("with_params", f"{quote(made, 60)}, not a retriever (it lacks {', '.join(missing)})")
        if made is self.plugin:
            self.refuse("with_params", "the retriever itself, not a new one with the parameters given")
        shared = GuardedRetriever(made, self.origin)
        shared._known = set(self._known)  # the same entries: the index is this one's
        return shared

    def _guarded_memory_bytes(self) -> int:
        size = self.call("memory_bytes", self.plugin.memory_bytes)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            self.refuse("memory_bytes", f"{quote(size, 40)}, not an int >= 0")
        return size
