"""``agentmemory retrieve``: one retriever's top k of every query of a collection, into a TREC run file."""

from __future__ import annotations

import argparse
from pathlib import PurePath

from agentmemory.cli.args import parse_int, progress
from agentmemory.cli.collection_args import collection_path, load_collection
from agentmemory.errors import check_positive_int
from agentmemory.evaluation.batch import retrieve_all
from agentmemory.files.output_plan import OutputPlan, collection_inputs
from agentmemory.files.trec import format_run
from agentmemory.retrievers import resolve_retriever

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Run ``agentmemory retrieve``: the run file is written only once every query is answered."""
    k = check_positive_int("--k", parse_int("--k", args.k, "an integer >= 1"))
    retriever = resolve_retriever(args.retriever, option="--retriever")  # its messages name the option
    plan = OutputPlan()
    out = plan.file("--out", args.out, example="runs/bm25.trec")
    shown = progress(args)
    collection = load_collection(args, shown)
    plan.add_inputs(collection_inputs(collection_path(args), collection.files))
    hits = retrieve_all(collection, retriever, k, progress=shown)
    found = {q: [(h.entry_id, h.score) for h in ranked] for q, ranked in hits.items()}
    plan.put(out, format_run(found, tag=retriever.key))
    plan.write()
    n_hits = sum(len(ranked) for ranked in hits.values())
    print(f"Wrote {PurePath(str(args.out))}: {len(hits)} queries, {n_hits} hits ({retriever.key}, k = {k})")
    return 0
