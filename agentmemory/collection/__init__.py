"""The collection record every format produces, in a layer below the formats: importing it loads none.

* :mod:`~agentmemory.collection.record`: :class:`Collection` (entries,
  queries, judgments, where they came from; :meth:`Collection.check`, which
  :func:`agentmemory.datasets.load` runs on what every format returns), the
  judgment-patch records, :func:`collection_summary`,
  :func:`require_judgments` and :func:`default_collection_path`.
* :mod:`~agentmemory.collection.lines`: a collection as JSON lines and as a
  BEIR-style folder (what :mod:`agentmemory.datasets.beir` reads back and
  what a store exports).
"""

from __future__ import annotations

from agentmemory.collection.lines import check_split, corpus_line, query_line, write_folder
from agentmemory.collection.record import (
    ANSWER,
    EVIDENCE,
    EXCLUDE,
    KEY_KINDS,
    REMOVE,
    Collection,
    Correction,
    JudgmentPatch,
    Judgments,
    KeyCorrection,
    collection_summary,
    default_collection_path,
    require_judgments,
)

__all__ = [
    "ANSWER",
    "EVIDENCE",
    "EXCLUDE",
    "KEY_KINDS",
    "REMOVE",
    "Collection",
    "Correction",
    "JudgmentPatch",
    "Judgments",
    "KeyCorrection",
    "check_split",
    "collection_summary",
    "corpus_line",
    "default_collection_path",
    "query_line",
    "require_judgments",
    "write_folder",
]
