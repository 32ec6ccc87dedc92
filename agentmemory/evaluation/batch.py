"""Batch retrieval: every query of a collection against one retriever.

:func:`retrieve_all` adds the collection's entries to a
:class:`~agentmemory.store.core.MemoryStore` (partitioned by scope: an entry is
only found by queries of its own scope, and statistics such as BM25's IDF
are per scope), then asks the query's partition for every query in
collection order through :meth:`MemoryStore.search_all`, the one loop over
queries that :func:`agentmemory.evaluate` uses too.  Retrievals are not
logged; the result is what :func:`agentmemory.files.trec.write_run` needs, once
turned into ``{query_id: [(entry_id, score), ...]}``.
"""

from __future__ import annotations

from agentmemory.collection import Collection
from agentmemory.errors import ParameterError, check_positive_int
from agentmemory.records import Hit
from agentmemory.retrievers import RetrieverLike, resolve_retrievers
from agentmemory.store.core import MemoryStore

__all__ = ["retrieve_all"]


def retrieve_all(
    collection: Collection,
    retriever: RetrieverLike,
    k: int,
    *,
    progress: bool = False,
) -> dict[str, list[Hit]]:
    """The top ``k`` hits of every query of ``collection``: query id -> hits, in query order.

    Args:
        collection: entries and queries (qrels are not used).
        retriever: one retriever: a registry name, a spec with parameters
            (``"bm25[k1=0.9,b=0.4]"``), ``"package.module:attribute"``, a
            factory or an instance (see :mod:`agentmemory.retrievers`).
        k: hits per query, an int >= 1; a query may get fewer (zero scores
            are never returned, see :mod:`agentmemory.retrievers.base`).
        progress: show a tqdm progress bar over the queries (on stderr).

    Raises:
        UnknownNameError: an unknown retriever name.
        ParameterError: ``k`` is not an int >= 1; a bad spec or parameter;
            several retrievers where one is expected.
    """
    k = check_positive_int("k", k)
    specs = resolve_retrievers(retriever)
    if len(specs) != 1:
        raise ParameterError(
            "retriever", [s.key for s in specs], "names several retrievers", "retrieve with one retriever at a time"
        )
    store = MemoryStore(specs)
    store.add(collection.entries)
    hits = store.search_all(collection.queries, k, specs[0].key, record=False, progress=progress)
    return {query.id: found for query, found in hits}
