"""``agentmemory store``: a persistent store file (:mod:`agentmemory.store.sqlite`), in and out.

``import`` puts a collection of any registered format into it (created when
missing) in one transaction, ``export`` writes it back as a BEIR-style folder,
``export-run`` writes the searches it recorded with one retriever (key or
label) as a TREC run and ``export-queries`` their queries as
``queries.jsonl`` (``--since`` inclusive, ``--until`` exclusive), and
``stats`` counts what it holds.  Only ``import`` opens the store for
writing; the others read it, even while an agent writes to it.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from agentmemory.cli.args import output_format
from agentmemory.cli.collection_args import load_collection
from agentmemory.errors import NumberTextError, ParameterError
from agentmemory.files.fields import parse_time
from agentmemory.files.numbers import parse_number
from agentmemory.files.output_plan import OutputPlan, collection_inputs
from agentmemory.store.core import MemoryStore
from agentmemory.store.sqlite import LOCK_SUFFIX
from agentmemory.store.transfer import (
    UNINDEXED,
    export_collection,
    export_queries,
    export_run,
    format_stats,
    import_collection,
    store_stats,
)

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Run ``agentmemory store COMMAND``."""
    commands = {
        "import": _store_import,
        "export": _store_export,
        "export-run": _store_export_run,
        "export-queries": _store_export_queries,
        "stats": _store_stats,
    }
    return commands[args.store_command](args)


def _store_files(store: str) -> list[Path]:
    """A store's files (the database and SQLite's journal files): the inputs no export may replace."""
    return [Path(store + suffix) for suffix in ("", "-wal", "-shm")]


def _store_import(args: argparse.Namespace) -> int:

    try:
        timeout = parse_number(args.timeout)
    except NumberTextError as err:
        raise ParameterError("--timeout", args.timeout, err.problem, "give seconds, e.g. 5 or 0.5") from None
    collection = load_collection(args, progress=False)
    split = args.format_option_split or "test"  # a BEIR folder's qrels/<split>.tsv; the name the judgments keep
    target = Path(args.store)
    # The store is written in place (SQLite), not through a plan; the plan's checks still apply: not a
    # folder, FIFO or device, and not one of the collection's files.
    OutputPlan(collection_inputs(args.collection, collection.files)).file("STORE", target, example="memory.db")
    created = not target.exists()
    try:
        with MemoryStore.open(target, UNINDEXED, timeout=timeout) as store:
            counts = import_collection(store, collection, split=split)
    except BaseException:
        if created:  # a store this command made holds nothing of the failed import: leave no file behind
            for suffix in ("", "-wal", "-shm", LOCK_SUFFIX):
                target.with_name(target.name + suffix).unlink(missing_ok=True)
        raise
    print(
        f"Imported {counts['entries']} entries, {counts['queries']} queries and {counts['judgments']} judgments "
        f"({split}) into {args.store}"
    )
    return 0


def _store_export(args: argparse.Namespace) -> int:

    plan = OutputPlan(_store_files(args.store))
    folder = plan.folder("COLLECTION_DIR", args.folder)
    for name in ("corpus.jsonl", "queries.jsonl"):  # the qrels/<split>.tsv names depend on the store's splits
        plan.file("COLLECTION_DIR", folder / name, example="collection/")
    written = export_collection(args.store, folder)
    print(f"Wrote {folder}: " + ", ".join(written))
    return 0


def _times(args: argparse.Namespace) -> dict[str, datetime | None]:

    return {
        "since": None if args.since is None else parse_time(args.since, "--since"),
        "until": None if args.until is None else parse_time(args.until, "--until"),
    }


def _window(args: argparse.Namespace) -> str:
    parts = [f"since {args.since}" if args.since else "", f"until {args.until}" if args.until else ""]
    shown = ", ".join(p for p in parts if p)
    return f"; {shown}" if shown else ""


def _store_export_run(args: argparse.Namespace) -> int:

    times = _times(args)
    out = OutputPlan(_store_files(args.store)).file("--out", args.out, example="runs/mine.trec")
    done = export_run(args.store, out, args.retriever, option="--retriever", **times)
    empty = f" ({done['empty']} found nothing and have no line)" if done["empty"] else ""
    print(f"Wrote {out}: {done['queries']} queries{empty}, {done['hits']} hits ({done['retriever']}{_window(args)})")
    return 0


def _store_export_queries(args: argparse.Namespace) -> int:

    times = _times(args)
    out = OutputPlan(_store_files(args.store)).file("--out", args.out, example="queries.jsonl")
    n = export_queries(args.store, out, retriever=args.retriever, option="--retriever", **times)
    print(f"Wrote {out}: {n} queries{_window(args)}")
    return 0


def _store_stats(args: argparse.Namespace) -> int:

    shown = output_format(args)
    stats = store_stats(args.store)
    print(json.dumps(stats, indent=2) if shown == "json" else format_stats(stats))
    return 0
