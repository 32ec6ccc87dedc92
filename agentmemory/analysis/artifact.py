"""The evaluation artifact, ``eval-results.json``: byte-identical for the same inputs and seed.

What makes it reproducible: keys in a fixed order, lists in collection or
rank order (never set or dict-hash order), floats printed by Python's
shortest round-trip ``repr``, event ids and timestamps derived from inputs and
seed (see :mod:`agentmemory.evaluate`), input files named relative to the
collection folder with their sha256, no wall-clock time, no environment
detail, no absolute path.  Written atomically.

Top-level keys (``schema_version`` 3)::

    schema_version, card, params, collection, [judgment_patch], [claims],
    aggregate, groups, tie_aware, statistics, unjudged_queries, per_query, events

``card`` is the definitions card (:func:`agentmemory.analysis.card.evaluation_card`):
the data files and their release, granularity, relevance and attribution,
the judgments, each measure's family and definition, the denominator and
the cutoffs, and its one-line ``short_form``.  ``judgment_patch`` (only when
the collection's judgments were patched: :mod:`agentmemory.analysis.judgments`)
holds the patch and the original judgments' headline means; ``claims``
(only with claims: :mod:`agentmemory.analysis.claim_checks`) each claim beside our
value under its definition.  Version 3 added these three keys; version 2's
keys are unchanged.
``params`` names the seed, k, the measures, how hits were judged
(``relevance``: ``direct`` or ``provenance``, and the measures left
``unscored`` under provenance), whether queries saw only the memories
created before they were asked (``as_of``; then each per-query row says how
many entries of its scope it could see, ``visible_entries``) and every system (``retrievers``: name,
label, ``kind`` ``retriever`` or ``run``, parameters; a run's file name,
sha256, format and depth), with the run lines a lenient run dropped,
``skipped_query_hits`` (only when a run names questions the loader skipped:
per run, how many such questions and their hits, all ignored), and,
when a measure counts tokens (the budget measures, ``tokens@first``), the
``tokenizer`` that counted them (name, version, the file it reads and its
sha256: :mod:`agentmemory.metrics.token_counters`).
``aggregate`` holds one row per system (the seed's columns
``retriever``, ``mean_recall@k``, ``mean_precision@k``, ``MRR``, then every
measure's mean); ``groups`` the means per query group; ``tie_aware`` the
headline means of each measure under the tie rule, expected over all
orderings of tied scores, and at worst and best; ``statistics`` the
bootstrap intervals and paired tests of :func:`agentmemory.analysis.statistics.evaluation_statistics`,
seeded by the run's seed (:meth:`agentmemory.analysis.statistics.Statistics.to_dict`;
:meth:`~agentmemory.analysis.statistics.Statistics.from_dict` reads it back): the
pairwise comparisons with Holm over the pairs of each measure (``p_holm``),
and the comparison table's cells against the baseline with Holm over the
whole table (``versus_baseline[].p_holm_table``).  Under provenance each
per-query row also lists, per hit, the relevant sources it credited.  A
per-query value is ``null`` where its measure has no value on that query
(``tokens@first`` without a relevant hit); a mean over no such value is
``null`` too, and the interval's ``n`` counts the queries with one.

**Infinite scores.**  A hit's score may be ``+inf`` or ``-inf`` (a plugin's,
or a run file's ``inf``: both rank, first and last); JSON has no such number,
so the artifact writes them as the tokens ``Infinity`` and ``-Infinity``,
the extension Python's :mod:`json` writes and reads, and that our JSON-lines
run reader (:mod:`agentmemory.evaluation.runfiles`) and :func:`read_artifact`
read back.  The field stays a number for pandas and Python; a strict JSON
parser (``jq``, JavaScript's ``JSON.parse``) refuses the token, and an
artifact holds it only when a score was infinite.  NaN is never written: the
plugin boundary and every run reader refuse it, and the writer raises
``ValueError`` on one.  TREC run files write them ``inf`` and ``-inf``
(:mod:`agentmemory.files.trec`).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring as _encode_string
from os import PathLike
from typing import Any

from agentmemory.analysis.card import evaluation_card
from agentmemory.analysis.claim_checks import check_claims, claims_dict
from agentmemory.analysis.judgments import original_statistics, patch_dict
from agentmemory.analysis.statistics import Statistics, evaluation_statistics
from agentmemory.collection import collection_summary
from agentmemory.errors import InputError
from agentmemory.evaluation.answer_runs import AnswerSystem
from agentmemory.evaluation.runner import Evaluation
from agentmemory.files.atomic import atomic_write_text
from agentmemory.files.reading import read_bytes

__all__ = ["SCHEMA_VERSION", "artifact_dict", "dumps_artifact", "loads_artifact", "read_artifact", "write_artifact"]

SCHEMA_VERSION = 3


def artifact_dict(evaluation: Evaluation, statistics: Statistics | None = None) -> dict[str, Any]:
    """The artifact as plain JSON-ready data.

    ``statistics`` may pass :func:`~agentmemory.analysis.statistics.evaluation_statistics`
    of ``evaluation`` with its own seed when the caller already computed it;
    the artifact holds its :meth:`~agentmemory.analysis.statistics.Statistics.to_dict`.
    """
    if statistics is None:
        statistics = evaluation_statistics(evaluation, seed=evaluation.seed)
    card = evaluation_card(evaluation)
    live = {a.name: a for a in evaluation.answers if a.live is not None or a.rejudged}
    return {
        "schema_version": SCHEMA_VERSION,
        "card": card,
        "params": {
            "seed": evaluation.seed,
            "k": evaluation.k,
            "measures": [str(m) for m in evaluation.measures],
            "relevance": evaluation.relevance,
            "as_of": evaluation.as_of,
            "unscored_measures": list(evaluation.unscored),
            "retrievers": [
                {"name": r.name, "label": r.label, "kind": r.kind, "params": r.params} for r in evaluation.results
            ],
            "dropped_run_lines": {
                r.name: [{"line": line, "reason": why} for line, why in r.dropped]
                for r in evaluation.results
                if r.dropped
            },
            **_skipped_hits(evaluation),
            **({"tokenizer": dict(evaluation.tokenizer)} if evaluation.tokenizer is not None else {}),
        },
        "collection": collection_summary(evaluation.collection),
        **_optional_sections(evaluation, statistics, card),
        "aggregate": [r.aggregate_row() for r in evaluation.results],
        "groups": {r.name: r.group_means() for r in evaluation.results},
        "tie_aware": {r.name: r.tie_means() for r in evaluation.results},
        "statistics": statistics.to_dict(),
        "unjudged_queries": list(evaluation.unjudged_query_ids),
        "per_query": [
            {
                "retriever": r.name,
                "query_id": q.query_id,
                "text": q.text,
                "relevant": list(q.relevant),
                "hits": [h.to_dict() for h in q.hits],
                "metrics": q.metrics,
                "tie_at_cutoff": q.tie_at_cutoff,
                # Only the measures ties could move for this query (min < max).
                "ties": {m: t.to_dict() for m, t in (q.ties or {}).items() if t.minimum != t.maximum},
                **({"credited": [list(new) for new in q.credited.new]} if q.credited is not None else {}),
                **({"visible_entries": q.visible} if q.visible is not None else {}),
                **(_generated(live[r.name], q.query_id) if r.name in live else {}),
            }
            for r in evaluation.results
            for q in r.per_query
        ],
        "events": [e.to_dict() for e in evaluation.events],
    }


def _generated(system: AnswerSystem, query_id: str) -> dict[str, Any]:
    """``answer`` of a live answer system's per-query row: the reader's answer, each judge's verdict, every
    call's tokens (and cost), and the failures that left the question out."""
    if system.live is None:
        return _rejudged(system, query_id)
    result = system.live.by_question.get(query_id)
    if result is None:
        return {}
    return {
        "answer": {
            "text": result.answer,
            "verdicts": [{"judge": v.judge, "value": v.value, "label": v.label} for v in result.verdicts],
            "calls": [c.to_dict() for c in result.calls],
            **({"failed": list(result.failed)} if result.failed else {}),
        }
    }


def _rejudged(system: AnswerSystem, query_id: str) -> dict[str, Any]:
    """``rejudged`` of an imported answer system's per-query row graded by live judges: per answer file, the
    judges' verdicts on its answer, their calls and the failures."""
    out: list[dict[str, Any] | None] = []
    for run in system.rejudged:
        result = run.by_question.get(query_id)
        if result is None:
            out.append(None)
            continue
        out.append(
            {
                "verdicts": [{"judge": v.judge, "value": v.value, "label": v.label} for v in result.verdicts],
                "calls": [c.to_dict() for c in result.calls],
                **({"failed": list(result.failed)} if result.failed else {}),
            }
        )
    return {"rejudged": out} if any(o is not None for o in out) else {}


def _skipped_hits(evaluation: Evaluation) -> dict[str, Any]:
    """``skipped_query_hits``: per run naming questions the loader skipped, how many and their hits (ignored);
    nothing when no run named one."""
    counts = {
        r.name: {"questions": len(r.skipped_hits), "hits": sum(n for _, n in r.skipped_hits)}
        for r in evaluation.results
        if r.skipped_hits
    }
    return {"skipped_query_hits": counts} if counts else {}


def _optional_sections(evaluation: Evaluation, statistics: Statistics, card: dict[str, Any]) -> dict[str, Any]:
    """``judgment_patch`` when the judgments were patched, ``claims`` when claims were given (else nothing)."""
    out: dict[str, Any] = {}
    original = original_statistics(evaluation, statistics)
    if original is not None:
        out["judgment_patch"] = patch_dict(evaluation, original)
    claims = evaluation.options.claims
    if claims is not None:
        out["claims"] = claims_dict(claims, check_claims(evaluation, statistics, card, original=original))
    return out


def dumps_artifact(evaluation: Evaluation, statistics: Statistics | None = None) -> str:
    """The artifact's exact text: 2-space indented JSON, UTF-8, one trailing newline."""
    data = artifact_dict(evaluation, statistics)
    return dumps_indented(data) + "\n"


class _Unusual(Exception):
    """Something :func:`dumps_indented` leaves to :func:`json.dumps` (which encodes it or raises)."""


def dumps_indented(data: Any) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)``, character for character, NaN refused.

    Infinities are written ``Infinity`` and ``-Infinity`` (module docstring);
    NaN raises ``ValueError`` as ``json.dumps(..., allow_nan=False)`` does.

    With ``indent`` the standard library encodes in Python, one generator per
    container and one ``yield`` per token; this walks the data once, appending
    to a list, with the same functions for the leaves (``encode_basestring``,
    ``int.__repr__``, ``float.__repr__``) and the same layout.  Anything else
    (a non-string key, NaN, an unknown type, a cycle) is handed to
    ``json.dumps(..., allow_nan=False)``, which encodes it or raises as it
    always did (refusing an infinity too in such data, which no artifact holds).
    """
    try:
        parts: list[str] = []
        _encode(data, "", parts.append)
        return "".join(parts)
    except (_Unusual, RecursionError):
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


_INFINITY = float("inf")


def _encode(o: Any, indent: str, append: Any) -> None:
    """Append ``o``'s text at nesting ``indent`` (json.encoder's _iterencode order of type tests)."""
    if isinstance(o, str):
        append(_encode_string(o))
    elif o is None:
        append("null")
    elif o is True:
        append("true")
    elif o is False:
        append("false")
    elif isinstance(o, int):
        append(int.__repr__(o))
    elif isinstance(o, float):
        if o != o:
            raise _Unusual
        append("Infinity" if o == _INFINITY else "-Infinity" if o == -_INFINITY else float.__repr__(o))
    elif isinstance(o, (list, tuple)):
        if not o:
            append("[]")
            return
        inner = indent + "  "
        separator = ",\n" + inner
        append("[\n" + inner)
        for i, value in enumerate(o):
            if i:
                append(separator)
            _encode(value, inner, append)
        append("\n" + indent + "]")
    elif isinstance(o, dict):
        if not o:
            append("{}")
            return
        inner = indent + "  "
        separator = ",\n" + inner
        append("{\n" + inner)
        for i, (key, value) in enumerate(o.items()):
            if not isinstance(key, str):
                raise _Unusual
            if i:
                append(separator)
            append(_encode_string(key))
            append(": ")
            _encode(value, inner, append)
        append("\n" + indent + "}")
    else:
        raise _Unusual


def write_artifact(evaluation: Evaluation, path: str | PathLike[str], statistics: Statistics | None = None) -> None:
    """Write the artifact to ``path`` atomically (temporary file, then rename)."""
    atomic_write_text(path, dumps_artifact(evaluation, statistics))


def _infinity(token: str) -> float:
    if token == "NaN":
        raise ValueError("NaN")
    return float(token)  # "Infinity", "-Infinity"


def loads_artifact(text: str, where: str = "<artifact>") -> Any:
    """An artifact's text as data: ``Infinity``/``-Infinity`` read as floats (module docstring), NaN refused.

    Raises:
        InputError: not JSON, or a NaN, naming ``where``.
    """
    try:
        return json.loads(text, parse_constant=_infinity)
    except ValueError as err:
        problem = "holds NaN, which no score can be" if str(err) == "NaN" else f"is not JSON: {err}"
        raise InputError(where, None, f"{problem}; an artifact is what agentmemory eval --out writes") from None


def read_artifact(path: str | PathLike[str]) -> Any:
    """Read ``eval-results.json`` (as :func:`write_artifact` wrote it) back as data; see :func:`loads_artifact`."""
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(path, None, f"is not UTF-8 text ({err.reason} at byte {err.start})") from None
    return loads_artifact(text, str(path))
