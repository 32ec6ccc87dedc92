"""``explore.ipynb``'s parameters, checked (see :mod:`agentmemory.report.params`)."""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike

from agentmemory.collection import Collection
from agentmemory.errors import (
    AgentMemoryError,
    ParameterError,
    ReportParameterError,
    check_positive_int,
)
from agentmemory.report.setup_base import _load
from agentmemory.tokenize import tokenize


@dataclass(frozen=True)
class ExploreSetup:
    """The validated parameters of ``explore.ipynb`` and the loaded collection.

    ``query_tags`` is ``None`` when the tag scorer should derive the query's
    tags from its text; ``explain_entry`` is ``None`` for "BM25's first hit".
    """

    collection: Collection
    source: str
    query: str
    query_tags: tuple[str, ...] | None
    k: int
    explain_entry: str | None


def explore_setup(
    *,
    collection: str | PathLike[str] | None,
    query: object,
    query_tags: object,
    k: object,
    explain_entry: object,
) -> ExploreSetup:
    """Validate ``explore.ipynb``'s parameters and load the collection.

    ``query`` must contain at least one token; ``query_tags`` is a
    comma-separated string (``""`` derives the tags from the query text);
    ``explain_entry`` is an entry id of the collection or ``""``.

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        checked_k = check_positive_int("k", k)
        if not isinstance(query, str):
            raise ParameterError("query", query, "is not text", "type a query such as 'what does Maya eat'")
        if not tokenize(query):
            raise ParameterError("query", query, "has no words", "type a query with at least one letter or digit")
        tags: tuple[str, ...] | None
        if query_tags is None or query_tags == "":
            tags = None
        elif isinstance(query_tags, str):
            tags = tuple(t.strip() for t in query_tags.split(",") if t.strip())
            if not tags:
                raise ParameterError(
                    "query_tags", query_tags, "names no tag", 'pass e.g. "diet,food", or "" to derive them'
                )
        else:
            raise ParameterError("query_tags", query_tags, "is not text", 'pass e.g. "diet,food", or "" to derive them')
        loaded, source = _load(collection)
        entry: str | None = None
        if explain_entry is not None and explain_entry != "":
            ids = [e.id for e in loaded.entries]
            if explain_entry not in ids:
                shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                raise ParameterError(
                    "explain_entry",
                    explain_entry,
                    "is not an entry of the collection",
                    f'pass one of its {len(ids)} entry ids ({shown}), or "" for BM25\'s first hit',
                )
            entry = str(explain_entry)
    except ReportParameterError:
        raise
    except AgentMemoryError as err:
        raise ReportParameterError(err) from err
    return ExploreSetup(loaded, source, query, tags, checked_k, entry)
