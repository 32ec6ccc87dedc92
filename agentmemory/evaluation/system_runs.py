"""Memory systems in an evaluation: replay, attribute, and hand the result on as a run with its memories.

:func:`system_runs` replays each system (:mod:`agentmemory.systems.replay`),
attributes what it returned (:mod:`agentmemory.systems.attribution`) and
turns it into a :class:`~agentmemory.evaluation.runfiles.RunFile` whose
``memories`` are the attributed memories: the very record
``--run NAME=<run> --memories <memories file>`` reads, so a system is scored
by the same code as a run file, and its files (:func:`memories_text`, and
the TREC run ``--runs-dir`` writes of every system) re-score it exactly.

The run's scores are ranks turned round, ``n - i + 1`` for the ``i``-th
of ``n`` memories, so trec_eval's order (score descending) is the system's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
from collections.abc import Container, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentmemory.collection import Collection
from agentmemory.errors import check_positive_int
from agentmemory.evaluation.options import Relevance
from agentmemory.evaluation.runfiles import RunFile
from agentmemory.files.reading import decode_utf8, json_lines, read_bytes
from agentmemory.systems.attribution import Attributed, AttributionReport, Attributor, attribute
from agentmemory.systems.base import Memory
from agentmemory.systems.registry import SystemLike, SystemSpec, resolve_systems
from agentmemory.systems.replay import Replay, ReplayTimings, replay

__all__ = [
    "SYSTEM_TIMING_COLUMNS",
    "SystemRun",
    "is_system_memories",
    "judged_at_k_note",
    "memories_text",
    "reattributed_run",
    "replay_pool",
    "recorded_attribution",
    "system_runs",
    "system_table",
    "system_timing_cells",
    "system_timings",
]


@dataclass(frozen=True)
class SystemRun:
    """One system of an evaluation: its spec, what it answered, how that was attributed, and the run to score."""

    spec: SystemSpec
    replay: Replay
    attributed: Attributed
    run: RunFile

    @property
    def params(self) -> dict[str, Any]:
        """What the artifact states of the system: its parameters, then the attribution's figures."""
        clock = {"clock": self.replay.clock} if self.replay.clock != "real" else {}  # stated only when not the default
        return {"system": self.spec.key, "params": self.replay.params, **clock, **self.attributed.report.summary()}


def memories_text(attributed: Attributed, named: Container[str] | None = None) -> str:
    """The system's memories file (``--memories`` format plus ``attribution``), one JSON object per line.

    When entries are coarser than turns (LongMemEval at session granularity),
    ``derived_from`` holds the entries and ``turns`` the turns the memory was
    attributed to (before the mapping up).  ``named`` keeps only those
    memories (the ids a run cut by ``--run-depth`` still names); ``None``
    keeps every memory the system returned.
    """
    lines = []
    for memory in attributed.memories:
        if named is not None and memory.id not in named:
            continue
        record = {
            "_id": memory.id,
            "text": memory.text,
            "derived_from": list(memory.provenance.derived_from),
            "scope": memory.scope,
            "attribution": attributed.how[memory.id],
        }
        if attributed.turns:
            record["turns"] = list(attributed.turns[memory.id])
        lines.append(json.dumps(record, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def is_system_memories(text: str) -> bool:
    """Whether a memories file's text may be a memory system's (:func:`memories_text`): its first record has
    ``attribution``, or it has none (a system that returned nothing writes an empty file)."""
    for line in text.splitlines():
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError:
                return False  # not ours to judge: read_memories names the line
            return isinstance(record, dict) and "attribution" in record
    return True


def recorded_attribution(run: RunFile, collection: Collection, method: str, *, k: int) -> AttributionReport:
    """The attribution figures of a system's recorded output (its ``--runs-dir`` run and memories file).

    Each memory of the run stands as a :class:`~agentmemory.systems.base.Memory`
    whose ``sources`` are its recorded ``derived_from`` (``A(m)`` as the
    replay attributed it; an unattributed memory has none), ranked by the
    run's scores (descending: the system's order, see the module
    docstring); a hit on a collection entry is that entry's text with itself
    as source.  They are attributed by ``sources``, so coverage, Judged@k
    and the unattributed memories are the replay's; the sensitivity table
    varies ``method`` (the one the files were made with) as the replay did.
    Failures recorded as empty under ``--lenient-system`` are not in the
    files: an empty ranking here is a query that returned nothing.
    """
    by_id = {m.id: m for m in run.memories}
    entries = {e.id: e for e in collection.entries}
    answers: dict[str, tuple[Memory, ...]] = {}
    for qid, hits in run.hits.items():
        ranked = sorted(hits, key=lambda h: (-h[1], h[2]))
        answers[qid] = tuple(
            Memory(by_id[doc].text, id=doc, sources=by_id[doc].provenance.derived_from)
            if doc in by_id
            else Memory(entries[doc].text, id=doc, sources=(doc,))
            for doc, _, _ in ranked
            if doc in by_id or doc in entries
        )
    recorded = Replay(run.name, run.name, {}, answers, {q.id: q.scope for q in collection.judged_queries})
    return attribute(recorded, collection, "sources", k=k, sensitivity=method).report


def reattributed_run(run: RunFile, collection: Collection, method: str, *, k: int, relevance: str) -> RunFile:
    """A memory system's recorded run (its ``--runs-dir`` run and memories file) with its memories attributed again
    by ``method``, so ``--run NAME=RUN --memories FILE --attribution METHOD`` re-scores it without a replay.

    Each memory of the run stands as a :class:`~agentmemory.systems.base.Memory`
    with its recorded text, in the run's order (scores descending, the
    system's), its sources the turns (``turns``, else ``derived_from``) of
    the memories the replay attributed by their own ``sources`` (their
    ``attribution`` is ``"sources"``; the system's sources are not kept
    otherwise), none for the rest.  They are attributed by ``method`` as a
    replay's are (:func:`~agentmemory.systems.attribution.attribute`: the same
    memory ids, in the same order); the files' names and digests stay the
    run's.
    """
    recorded = _recorded_records(run)
    entries = {e.id: e for e in collection.entries}
    answers: dict[str, tuple[Memory, ...]] = {}
    for qid, hits in run.hits.items():
        ranked = sorted(hits, key=lambda h: (-h[1], h[2]))
        memories = []
        for doc, _, _ in ranked:
            if doc in recorded:
                text, sources = recorded[doc]
                memories.append(Memory(text, id=doc, sources=sources))
            elif doc in entries:
                memories.append(Memory(entries[doc].text, id=doc, sources=(doc,)))
        answers[qid] = tuple(memories)
    replayed = Replay(run.name, run.name, {}, answers, {q.id: q.scope for q in collection.judged_queries})
    attributed = attribute(replayed, collection, method, k=k, ranks_entries=Relevance(relevance) is Relevance.DIRECT)
    remade = _run_file(attributed)
    return replace(
        remade,
        path=run.path,
        sha256=run.sha256,
        format=run.format,
        memories_path=run.memories_path,
        memories_sha256=run.memories_sha256,
    )


def _recorded_records(run: RunFile) -> dict[str, tuple[str, tuple[str, ...] | None]]:
    """Each recorded memory's text and, when the replay attributed it by the system's own sources, those turns."""
    assert run.memories_path is not None
    path = Path(run.memories_path)
    out: dict[str, tuple[str, tuple[str, ...] | None]] = {}
    for _, record in json_lines(path, decode_utf8(path, read_bytes(path, "memories file"))):
        own = record.get("attribution") == "sources"
        sources = tuple(record.get("turns") or record.get("derived_from") or ()) if own else None
        out[record["_id"]] = (record["text"], sources)
    return out


def _run_file(attributed: Attributed) -> RunFile:
    hits = {
        qid: tuple((doc, float(len(ranking) - i), i + 1) for i, doc in enumerate(ranking))
        for qid, ranking in attributed.rankings.items()
        if ranking
    }
    text = memories_text(attributed)
    digest = hashlib.sha256(
        json.dumps({q: [h[0] for h in v] for q, v in sorted(hits.items())}).encode("utf-8")
    ).hexdigest()
    return RunFile(
        name=attributed.key,
        path=f"{attributed.key}.trec",
        sha256=digest,
        format="system",
        hits=hits,
        memories=attributed.memories,
        memories_path=f"{attributed.key}.memories.jsonl",
        memories_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        stand_ins=attributed.stand_ins,
    )


def system_runs(
    collection: Collection,
    systems: SystemLike | Sequence[SystemLike],
    *,
    k: int,
    depth: int,
    relevance: str,
    attribution: str = "auto",
    timeout: float | None = None,
    lenient: bool = False,
    as_of: bool = False,
    executor: Executor | None = None,
    clock: str = "real",
    progress: bool = False,
) -> list[SystemRun]:
    """Replay and attribute each of ``systems``; ``depth`` memories asked per query (at least ``k``).

    ``executor`` (a ``concurrent.futures.Executor``) runs each scope's
    replay as a task (:func:`agentmemory.systems.replay.replay`); the
    results are the same as without one.  ``clock`` and ``progress`` are
    the replay's (:func:`~agentmemory.systems.replay.replay`).
    """
    specs = resolve_systems(systems)
    helper = Attributor(collection)
    out = []
    for spec in specs:
        answered = replay(
            spec,
            collection,
            depth=depth,
            as_of=as_of,
            timeout=timeout,
            lenient=lenient,
            executor=executor,
            clock=clock,
            progress=progress,
        )
        attributed = attribute(
            answered,
            collection,
            attribution,
            k=k,
            ranks_entries=Relevance(relevance) is Relevance.DIRECT,
            attributor=helper,
        )
        out.append(SystemRun(spec, answered, attributed, _run_file(attributed)))
    return out


@contextlib.contextmanager
def replay_pool(workers: int) -> Iterator[Executor | None]:
    """``workers`` processes to replay a memory system's conversations on (``None`` for one: serially).

    Spawned, so a worker inherits no thread of ours; the system's factory must be importable by them (a
    ``package.module:attribute``, a registered name).  The answers are those of a serial replay
    (:func:`agentmemory.systems.replay.replay`).
    """
    check_positive_int("workers", workers)
    if workers == 1:
        yield None
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def judged_at_k_note(collection: Collection | None, k: int, relevance: str) -> tuple[bool, str | None]:
    """Whether a table shows Judged@k, and the note that says what it equals when it adds nothing.

    Judged@k counts the top ``k`` memories attributed to an entry judged for
    the query, whatever its grade; it says more than P@k only where some
    judged entry is not relevant (a grade <= 0 judgment of a headline
    query).  Where every judgment is relevant (LoCoMo: only the evidence turns
    are judged) a memory attributed to a judged entry is one attributed to a
    relevant entry: under provenance, and with no derived entry in the
    collection, Judged@k then *is* P@k, so it is not shown and the note says
    so; otherwise it is shown with a note saying what it counts.  Without a
    ``collection`` it is shown, with no note.
    """
    if collection is None:
        return True, None
    judged = collection.qrels
    graded = (g for q in collection.headline_queries for g in judged.get(q.id, {}).values())
    if any(grade <= 0 for grade in graded):
        return True, None
    derived = any(e.provenance.derived_from for e in collection.entries)
    if Relevance(relevance) is Relevance.PROVENANCE and not derived:
        return False, (
            f"Judged@{k} equals P@{k} here (so it is not shown): only relevant entries are judged (no judgment of "
            "grade 0), and a memory attributed to a judged entry is one attributed to a relevant entry."
        )
    return True, (
        f"Judged@{k} here is the share of the top {k} attributed to a relevant entry: only relevant entries are "
        "judged (no judgment of grade 0)."
    )


def system_table(
    runs: Sequence[SystemRun], k: int, collection: Collection | None = None, relevance: str = "provenance"
) -> str:
    """The attribution figures of each system as text: coverage, ambiguity, Judged@k, sensitivity, unattributed
    examples.

    ``collection`` and ``relevance`` (the evaluation's) decide whether Judged@k is shown or only named in a
    note saying what it equals (:func:`judged_at_k_note`).
    """
    if not runs:
        return ""
    shown, note = judged_at_k_note(collection, k, relevance)
    judged = f"; Judged@{k} = share of the top {k} attributed to a judged entry" if shown else ""
    column = [f"Judged@{k}"] if shown else []
    header = ["system", "attribution", "returned", "coverage", "ambiguous", "credits (mean)", "credits (most)"]
    header += [*column, "queries returning nothing", "failed queries"]
    lines = [
        f"Memory systems: attribution (coverage = attributed / returned memories; ambiguous = returned memories "
        f"attributed to more than one entry, credits = entries per attributed memory, mean and most{judged}; tie "
        "analysis beyond the returned memories is not available for systems)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for run in runs:
        r = run.attributed.report
        value = [f"{r.judged_at_k:.3f}"] if shown else []
        cells = [run.spec.label, r.method, str(r.returned), f"{r.coverage:.3f}"]
        cells += [str(r.ambiguous), f"{r.credits_per_memory:.2f}", str(r.most_credits), *value]
        cells += [str(len(r.empty_queries)), str(len(r.failures))]
        lines.append("| " + " | ".join(cells) + " |")
    if note:
        lines += ["", note]
    lines += ["", f"Sensitivity to attribution (R@{k}, nDCG@{k}, provenance):", ""]
    lines += ["| system | attribution | R@k | nDCG@k |", "|---|---|---|---|"]
    for run in runs:
        for label, recall, ndcg in run.attributed.report.sensitivity:
            lines.append(f"| {run.spec.label} | {label} | {recall:.3f} | {ndcg:.3f} |")
    for run in runs:
        r = run.attributed.report
        if r.unattributed:
            lines.append("")
            lines.append(f"{run.spec.label}: {r.unattributed} distinct memories unattributed (not relevant), e.g.:")
            lines += [f"  {text!r}" for text in r.unattributed_texts]
        if r.failures:
            lines.append(f"{run.spec.label}: {len(r.failures)} queries recorded as empty (--lenient-system):")
            lines += [f"  {qid}: {why}" for qid, why in r.failures]
    return "\n".join(lines)


def system_timings(runs: Sequence[SystemRun]) -> str:
    """Per system: its whole replay's wall time, the conversations (scopes) and the p50 and largest of their wall
    times, then p50/p95 of ingest seconds per turn and of search seconds (wall clock; never in an artifact)."""
    lines = [
        "Memory systems, wall clock on this machine (not in the artifact):",
        "",
        "| system | total (s) | conversations | per conversation p50 (s) | per conversation max (s) | "
        "ingest p50 (ms/turn) | ingest p95 (ms/turn) | search p50 (ms) | search p95 (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines.append("| " + " | ".join([run.spec.label, *system_timing_cells(run.replay.timings)]) + " |")
    return "\n".join(lines)


SYSTEM_TIMING_COLUMNS = (
    "total (s)",
    "conversations",
    "per conversation p50 (s)",
    "per conversation max (s)",
    "ingest p50 (ms/turn)",
    "ingest p95 (ms/turn)",
    "search p50 (ms)",
    "search p95 (ms)",
)
"""The columns of :func:`system_timing_cells`, after the system's label."""


def system_timing_cells(t: ReplayTimings) -> list[str]:
    """One system's replay timings as table cells, in the order of :data:`SYSTEM_TIMING_COLUMNS`."""
    p = ReplayTimings.percentile
    scopes = [seconds for _, seconds in t.scopes]
    return [
        f"{t.total:.3f}",
        str(len(scopes)),
        f"{p(scopes, 50):.3f}",
        f"{max(scopes, default=0.0):.3f}",
        f"{1000 * p(t.ingest_per_turn, 50):.3f}",
        f"{1000 * p(t.ingest_per_turn, 95):.3f}",
        f"{1000 * p(t.search, 50):.3f}",
        f"{1000 * p(t.search, 95):.3f}",
    ]
