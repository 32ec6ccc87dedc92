"""Batch retrieval: every query of a collection against one retriever.

:func:`retrieve_all` adds the collection's entries to a
:class:`~agentmemory.store.MemoryStore` (partitioned by scope: an entry is
only found by queries of its own scope, and statistics such as BM25's IDF
are per scope), then asks the query's partition for every query in
collection order.  Retrievals are not logged; the result is what
:func:`agentmemory.trec.write_run` needs, once turned into
``{query_id: [(entry_id, score), ...]}``.
"""

from __future__ import annotations

from typing import Any

from .collection import Collection
from .errors import ParameterError, UnknownNameError, check_positive_int
from .records import Hit
from .retrievers import RETRIEVERS
from .store import MemoryStore

__all__ = ["retrieve_all"]


def retrieve_all(
    collection: Collection,
    retriever_name: str,
    k: int,
    *,
    params: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, list[Hit]]:
    """The top ``k`` hits of every query of ``collection``: query id -> hits, in query order.

    Args:
        collection: entries and queries (qrels are not used).
        retriever_name: a registry name (``"bm25"``, ``"tags"``).
        k: hits per query, an int >= 1; a query may get fewer (zero scores
            are never returned, see :mod:`agentmemory.retrievers.base`).
        params: the retriever's parameters, e.g. ``{"k1": 0.9, "b": 0.4}``.
        progress: show a tqdm progress bar over the queries (on stderr).

    Raises:
        UnknownNameError: ``retriever_name`` is not registered.
        ParameterError: ``k`` is not an int >= 1, or ``params`` is not a dict
            the retriever accepts.
    """
    k = check_positive_int("k", k)
    if retriever_name not in RETRIEVERS:
        raise UnknownNameError("retriever", retriever_name, RETRIEVERS)
    if params is not None and not isinstance(params, dict):
        raise ParameterError("params", params, "is not a dict", "pass keyword parameters, e.g. {'k1': 0.9}")
    store = MemoryStore([retriever_name], params={retriever_name: params} if params else None)
    store.add(collection.entries)
    queries = collection.queries
    if progress:
        from tqdm.auto import tqdm

        queries = tqdm(queries, desc=f"retrieve {retriever_name}", unit="query")
    out: dict[str, list[Hit]] = {}
    for query in queries:
        out[query.id] = store.retriever(retriever_name, query.scope).search(query, k)
    return out
