"""Notebook parameters, validated by the library before anything runs.

The first code cell after a notebook's parameters cell calls
:func:`eval_setup` (or :func:`explore_setup`).  Any bad value raises
:class:`ReportParameterError` whose text is exactly the library's own message
(for example ``k: 0 (int) is less than 1; k must be an integer >= 1``); in a
notebook it shows as that one line, without a traceback, and papermill stops
at that cell.

Parameter conventions shared by both notebooks: ``collection = ""`` (or
``None``) means the shipped fixture (:func:`agentmemory.collection.default_collection_path`),
found from any working directory; any other value is a collection folder,
relative to the kernel's working directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from ..collection import Collection, default_collection_path, load_collection
from ..errors import AgentMemoryError, ParameterError, check_positive_int
from ..retrievers import parse_retrievers
from ..tokenize import tokenize

__all__ = ["EvalSetup", "ExploreSetup", "ReportParameterError", "eval_setup", "explore_setup"]

SHIPPED = "the shipped fixture"


class ReportParameterError(AgentMemoryError, ValueError):
    """A notebook parameter was rejected.

    ``str(err)`` is the message of the library error in :attr:`cause`,
    unchanged.  IPython shows it as one line (``_render_traceback_``), so a
    reader of the failed notebook sees the message, not a stack of frames.
    """

    def __init__(self, cause: AgentMemoryError) -> None:
        self.cause = cause
        super().__init__(str(cause))

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


@dataclass(frozen=True)
class EvalSetup:
    """The validated parameters of ``eval.ipynb`` and the loaded collection.

    ``source`` says where the collection came from, as the user gave it
    (``"the shipped fixture"`` for the default), so no absolute path of this
    machine is ever printed.
    """

    seed: int
    k: int
    retrievers: tuple[str, ...]
    collection: Collection
    source: str
    output_dir: Path | None


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


def _load(collection: str | PathLike[str] | None) -> tuple[Collection, str]:
    if collection is None or collection == "":
        return load_collection(default_collection_path()), SHIPPED
    if not isinstance(collection, (str, PathLike)):
        raise ParameterError(
            "collection", collection, "is not a path", 'pass a collection folder, or "" for the shipped fixture'
        )
    return load_collection(collection), str(collection)


def _seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ParameterError("seed", seed, "is not an integer", "seed must be an integer")
    return seed


def _output_dir(output_dir: object) -> Path | None:
    if output_dir is None or output_dir == "":
        return None
    if not isinstance(output_dir, (str, PathLike)):
        raise ParameterError(
            "output_dir", output_dir, "is not a path", 'pass a folder such as "reports", or "" to write nothing'
        )
    path = Path(output_dir)
    if path.exists() and not path.is_dir():
        raise ParameterError("output_dir", str(output_dir), "is a file", "pass a folder (it is created if missing)")
    return path


def eval_setup(
    *,
    seed: object,
    k: object,
    collection: str | PathLike[str] | None,
    retrievers: object,
    output_dir: object,
) -> EvalSetup:
    """Validate ``eval.ipynb``'s parameters and load the collection.

    Checks, in order: ``seed`` (an int), ``k`` (an int >= 1), ``retrievers``
    (registry names, see :func:`agentmemory.retrievers.parse_retrievers`),
    ``output_dir`` (``""``/``None`` to write nothing, else a folder) and the
    collection (loaded with :func:`agentmemory.load_collection`).

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        checked_seed = _seed(seed)
        checked_k = check_positive_int("k", k)
        names = parse_retrievers(retrievers)  # type: ignore[arg-type]
        out = _output_dir(output_dir)
        loaded, source = _load(collection)
    except ReportParameterError:
        raise
    except AgentMemoryError as err:
        raise ReportParameterError(err) from err
    return EvalSetup(checked_seed, checked_k, names, loaded, source, out)


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
