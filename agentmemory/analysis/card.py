"""The definitions card: what every number of a report or an artifact is, stated before any number.

Published agent-memory numbers are rarely comparable: the same "R@5" is
computed on another copy of the data, over whole sessions or single turns,
as trec_eval's share of the evidence found or as "any evidence in the top
5", over all questions or without the adversarial ones.  The card states
each of these for one evaluation, from the evaluation itself:

* **data**: each input file's name (never a folder) and sha256, and the
  release they are when the hashes are a known release
  (:data:`agentmemory.datasets.releases.RELEASES`), else ``unknown release``;
  the format that read them and every option it read them with;
* **granularity**: what one entry is (``turn``, ``session``), as the format
  was told or records it (``None`` when the format declares none);
* **relevance** and **attribution**: how a hit is judged, and how the
  memories of a memory system or a recorded run are mapped to entries;
* **judgments**: the collection's own, or the patch applied to them
  (:mod:`agentmemory.datasets.judgment_patch`);
* **measures**: each measure's family and one-line definition, read from its
  :class:`~agentmemory.metrics.MeasureDef` (``family``, ``description``,
  ``direction``, ``granularity``), so a plugin's measure or a token-budget
  one is described as it describes itself;
* **denominator**: how many questions the headline means average over, of
  how many the file holds, and every exclusion with its reason and count
  (``kind`` ``skipped``: questions the loader left out, grouped by reason;
  ``unjudged``: questions without a judgment; ``group``: the judged questions
  of a group left out of the headline means);
* **cutoffs**: ``k``, the ranks and the token budgets the measures cut at
  (a cutoff written ``<n>tok`` is a budget, by the measure grammar).

:func:`evaluation_card` is the artifact's ``card`` (JSON-ready, keys in a
fixed order, byte-identical across runs); :func:`collection_card` is the card
of a report that evaluates nothing (the explore report) or several things
(the sweep); :func:`card_text` renders either as Markdown, which reads as
plain text on the command line; :func:`short_form` is the one line the
comparison table's caption repeats:
``LoCoMo (original = mem0 copy), turns, trec_eval P/R/RR/nDCG/AP, 1,526 of 1,986 questions``.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentmemory.analysis.text_tables import markdown_table
from agentmemory.collection import EVIDENCE, Collection, JudgmentPatch
from agentmemory.datasets.judgment_patch import answer_key_ceiling
from agentmemory.datasets.releases import release_of
from agentmemory.evaluation.runner import Evaluation
from agentmemory.metrics import Measure, distinct_measures

__all__ = [
    "RELEVANCE_RULES",
    "UNKNOWN_RELEASE",
    "card_text",
    "collection_card",
    "answers_card",
    "answers_lines",
    "ceiling_text",
    "evaluation_card",
    "files_digest",
    "granularity_of",
    "measured",
    "release_name",
    "short_form",
]

UNKNOWN_RELEASE = "unknown release"
"""What the card says of files whose hashes are no known release."""

RELEVANCE_RULES: Mapping[str, str] = {
    "direct": "a hit counts when it is judged relevant (grade >= 1), trec_eval's rule",
    "provenance": (
        "a hit counts through the judged sources its derived_from chain reaches, each source once "
        "(evidence-level; no trec_eval equivalent)"
    ),
}
"""Each relevance mode's rule, in one line."""

_PLURAL = {"turn": "turns", "session": "sessions"}
_BUDGET = re.compile(r"([0-9]+)tok")


def granularity_of(collection: Collection) -> str | None:
    """What one entry is (:attr:`Collection.granularity <agentmemory.collection.Collection>`); ``None`` when the
    format declares none."""
    return collection.granularity


def release_name(collection: Collection) -> str | None:
    """The known release the collection's files are (:func:`agentmemory.datasets.releases.release_of`), or ``None``."""
    release = release_of(collection.files)
    return None if release is None else release.name


def _data(collection: Collection) -> dict[str, Any]:
    release = release_of(collection.files)
    return {
        "collection": collection.name,
        "format": collection.format,
        "options": dict(collection.format_options),
        "files": [{"name": name, "sha256": sha} for name, sha in sorted(collection.files.items())],
        "release": None if release is None else release.name,
        "release_source": None if release is None else release.source,
    }


def _measure_rows(measures: Iterable[Measure]) -> list[dict[str, Any]]:
    rows = []
    for m in measures:
        d = m.definition
        rows.append(
            {
                "measure": str(m),
                "name": d.name,
                "family": d.family,
                "direction": d.direction,
                "granularity": d.granularity,
                "definition": d.description,
            }
        )
    return rows


def _denominator(collection: Collection) -> dict[str, Any]:
    """Questions in the file, those behind the headline means, and every exclusion (reason, count)."""
    exclusions: list[dict[str, Any]] = []
    skipped = Counter(reason for _, reason in collection.skipped)  # most frequent first, ties in first-seen order
    for reason, n in sorted(skipped.items(), key=lambda item: -item[1]):
        exclusions.append({"kind": "skipped", "reason": reason, "count": n})
    unjudged = len(collection.unjudged_query_ids)
    if unjudged:
        exclusions.append({"kind": "unjudged", "reason": "no judgment", "count": unjudged})
    for group in collection.headline_excludes:
        n = sum(1 for q in collection.judged_queries if q.group == group)
        exclusions.append({"kind": "group", "reason": group, "count": n})
    return {
        "questions": len(collection.queries) + len(collection.skipped),
        "counted": len(collection.headline_queries),
        "exclusions": exclusions,
    }


def _cutoffs(k: int | None, measures: Iterable[Measure]) -> dict[str, Any]:
    """``k``, and the ranks and token budgets the measures cut at (the text after ``@``; ``<n>tok`` a budget)."""
    ranks: set[int] = set()
    budgets: set[int] = set()
    for m in measures:
        cut = str(m).partition("@")[2]
        budget = _BUDGET.fullmatch(cut)
        if budget is not None:
            budgets.add(int(budget[1]))
        elif cut.isdigit():
            ranks.add(int(cut))
    return {"k": k, "ranks": sorted(ranks), "budgets": sorted(budgets)}


def _attribution(evaluation: Evaluation) -> str:
    imported = [a.name for a in evaluation.answers if a.has_retrieval]
    if imported and not evaluation.systems:
        return (
            f"{evaluation.options.attribution}: the memories the answer files of {', '.join(imported)} carry are "
            "mapped to the entries they came from, and count through them"
        )
    if evaluation.systems:
        return (
            f"{evaluation.options.attribution}: each memory system's memories are mapped to the entries they came "
            "from, and count through them"
        )
    recorded = [r.name for r in evaluation.runs if r.memories_path is not None]
    if recorded:
        return (
            f"as recorded in the memories files of {', '.join(recorded)}: each memory counts through its derived_from"
        )
    return "none: every hit is an entry of the collection"


def _judgments(collection: Collection) -> str:
    patch = collection.judgment_patch
    if patch is None:
        return "the collection's own"
    text = f"patched: {patch.summary()} (sha256 {patch.sha256}); the original judgments' numbers are shown beside"
    if any(k.kind != EVIDENCE for k in patch.answer_key):
        text += f"; {ceiling_text(patch, collection)}"
    return text


def ceiling_text(patch: JudgmentPatch, collection: Collection) -> str:
    """The answer key's ceiling under a patch that replaces or excludes gold answers: per group, the share of
    questions whose original key the patch leaves right (the best a perfect answerer scores under the original
    key), headline groups first, and a note that imported verdicts were judged against the original key."""
    ceiling = answer_key_ceiling(patch, collection)
    excluded = set(collection.headline_excludes)
    headline = [(g, c) for g, c in ceiling.items() if g not in excluded]
    right = sum(r for _, (r, _) in headline)
    total = sum(t for _, (_, t) in headline)
    parts = ", ".join(f"{g or 'no group'} {r:,}/{t:,}" for g, (r, t) in ceiling.items())
    share = f"{right / total:.2%}" if total else "n/a"
    return (
        f"answer-key ceiling (questions whose original gold answer is right): {right:,} of {total:,} headline "
        f"questions ({share}); per group {parts}; an imported verdict on a question whose gold answer the patch "
        "replaced was judged against the replaced answer, so under the corrected key Judge leaves it out, while "
        "the answer scores computed here (F1, EM, BLEU-1, answer_in_context) read the corrected answer"
    )


def collection_card(
    collection: Collection,
    *,
    measures: Sequence[Measure] = (),
    unscored: Sequence[str] = (),
    k: int | None = None,
    relevance: str | None = None,
    attribution: str | None = None,
) -> dict[str, Any]:
    """The card of ``collection`` evaluated with ``measures`` at ``k`` under ``relevance`` (``None``: no measure).

    ``unscored`` are measures asked for but not computed (no provenance
    definition); ``attribution`` says how memories map to entries (``None``:
    nothing to attribute).  Keys in a fixed order (JSON-ready).
    """
    card: dict[str, Any] = {
        "short_form": "",
        "data": _data(collection),
        "granularity": granularity_of(collection),
        "relevance": None,
        "relevance_rule": None,
        "attribution": attribution,
        "judgments": _judgments(collection),
        "measures": [],
        "unscored": [],
        "denominator": _denominator(collection),
        "cutoffs": _cutoffs(k, ()),
    }
    return measured(card, measures, k=k, relevance=relevance, unscored=unscored)


def measured(
    card: Mapping[str, Any],
    measures: Sequence[Measure],
    *,
    k: int | None,
    relevance: str | None,
    unscored: Sequence[str] = (),
) -> dict[str, Any]:
    """``card`` (a collection's) stating ``measures`` at ``k`` under ``relevance``, its short form made again:
    what an experiment's merge states for each evaluation of a collection it loaded once."""
    out = dict(card)
    out["relevance"] = relevance
    out["relevance_rule"] = None if relevance is None else RELEVANCE_RULES.get(relevance, relevance)
    out["measures"] = _measure_rows(measures)
    out["unscored"] = list(unscored)
    out["cutoffs"] = _cutoffs(k, measures)
    out["short_form"] = short_form(out)
    return out


def evaluation_card(evaluation: Evaluation) -> dict[str, Any]:
    """The artifact's ``card`` of ``evaluation`` (module docstring); with imported answer files, their section
    (:func:`answers_card`) too."""
    card = collection_card(
        evaluation.collection,
        measures=evaluation.measures,
        unscored=evaluation.unscored,
        k=evaluation.k,
        relevance=evaluation.relevance,
        attribution=_attribution(evaluation),
    )
    if evaluation.options.defaults_chosen:  # the defaults resolved from the data (the default retrievers)
        card["defaults"] = list(evaluation.options.defaults_chosen)
    if evaluation.answers:
        card["answers"] = answers_card(evaluation)
    return card


def answers_card(evaluation: Evaluation) -> list[dict[str, Any]]:
    """What the card states of each imported answer system: its files (name and sha256, the release unknown:
    no answer file is a known release), the format that read them, the judges and how their labels map to
    verdicts, the seeds, and per file which key matched how many records, the records that matched nothing
    (counted by reason) and the questions with no record."""
    out = []
    scored = evaluation.results[0].headline
    questions = {
        "headline": len(scored),
        "left_out_of_retrieval": sum(1 for q in scored if q.query_id not in evaluation.collection.qrels),
    }
    for system in evaluation.answers:
        files = []
        for answers, matched in zip(system.files, system.matched):
            reasons = Counter(_reason_kind(reason) for _, reason in matched.unmatched)
            files.append(
                {
                    "files": [{"name": _file_name(p), "sha256": h} for p, h in zip(answers.paths, answers.sha256)],
                    "records": len(answers.records),
                    "matched_by": dict(sorted(matched.keys.items())),
                    "unmatched": dict(sorted(reasons.items())),
                    "missing": len(matched.missing),
                    "notes": list(answers.notes),
                }
            )
        first = system.files[0]
        out.append(
            {
                "system": system.name,
                "questions": questions,
                "format": first.format,
                "release": UNKNOWN_RELEASE,
                "judges": dict(first.judges),
                "seeds": len(system.files),
                "retrieval": system.ranked,
                "files": files,
                **({"generated": system.live.describe()} if system.live is not None else {}),
                **({"rejudged": [run.describe() for run in system.rejudged]} if system.rejudged else {}),
            }
        )
    return out


def _file_name(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]


def _reason_kind(reason: str) -> str:
    """A reason without the record's own values (``question left out by the loader: malformed evidence``)."""
    return reason.split(" (", 1)[0]


def answers_lines(card: Mapping[str, Any]) -> list[str]:
    """The card's answer systems as list lines (nothing without answer files)."""
    lines = []
    for system in card.get("answers", ()):
        judges = "; ".join(f"{j}: {how}" for j, how in system["judges"].items()) or "no verdicts"
        seeds = f", {system['seeds']} seeds" if system["seeds"] > 1 else ""
        retrieval = "with retrieved memories" if system["retrieval"] else "answers only, no retrieval"
        counted = system["questions"]
        extra = counted["left_out_of_retrieval"]
        also = f", {extra:,} of them left out of retrieval scoring by the loader" if extra else ""
        lines.append(
            f"- **Answers {system['system']}** ({system['format']} format{seeds}, {retrieval}; "
            f"{system['release']}): judges {judges}; answer measures over {counted['headline']:,} headline "
            f"questions{also}"
        )
        if "generated" in system:
            lines += _generated_lines(system["generated"])
            continue
        for run in system.get("rejudged", ()):
            lines += _generated_lines(run)
        for f in system["files"]:
            names = ", ".join(f"`{x['name']}` (sha256 `{x['sha256']}`)" for x in f["files"])
            matched = ", ".join(f"{n:,} by {key}" for key, n in f["matched_by"].items()) or "none"
            unmatched = "; ".join(f"{n:,} {why}" for why, n in f["unmatched"].items()) or "none"
            lines.append(
                f"    - {names}: {f['records']:,} records; matched {matched}; unmatched {unmatched}; "
                f"{f['missing']:,} questions without a record"
            )
    return lines


def _role_text(role: Mapping[str, Any]) -> str:
    """``mini: openai gpt-4o-mini at URL, temperature 0.0, seed 7, prompt default (sha256 `...`)``."""
    where = f" at {role['base_url']}" if role.get("base_url") else ""
    prompt = role["prompt"]
    return (
        f"{role['name']}: {role.get('kind', 'model')} {role.get('model', '')}{where}, temperature "
        f"{role.get('temperature')}, seed {role.get('seed')}, prompt {prompt['source']} (sha256 `{prompt['sha256']}`)"
    )


def _generated_lines(generated: Mapping[str, Any]) -> list[str]:
    """A live answer system's reader, judges, questions, tokens and cost as list lines."""
    failed = generated["failed"]
    reader = generated["reader"]
    lines = [
        f"    - answers generated live from the top k of {generated['base']}; reader " + _role_text(reader)
        if reader is not None
        else f"    - the answers of {generated['base']} graded live (no reader)",
        "    - judges: "
        + ("; ".join(_role_text(j) for j in generated["judges"]) or "none")
        + (f"; Judge is {generated['judge']}'s verdict" if generated["judge"] else ""),
        f"    - {generated['questions']:,} questions: {generated['answered']:,} answered, {generated['judged']:,} "
        f"judged, {generated['without_gold_answer']:,} without a gold answer (not judged), {failed['questions']:,} "
        "failed (left out of the answer measures, never scored wrong)"
        + "".join(f"; {n:,} {why}" for why, n in failed["by_reason"].items()),
    ]
    tokens = generated["tokens"]
    parts = [f"reader {_tokens_text(tokens['reader'])}"] if reader is not None else []
    parts += [f"judge {name} {_tokens_text(t)}" for name, t in tokens["judges"].items()]
    total = tokens.get("total")
    if total is not None:
        parts.append(f"total {total['input']:,} in, {total['output']:,} out")
    lines.append("    - tokens (the endpoints' usage): " + "; ".join(parts))
    latency = generated.get("latency")
    if latency is not None:
        shown = [f"reader {_latency_text(latency['reader'])}"] if reader is not None else []
        shown += [f"judge {name} {_latency_text(t)}" for name, t in latency["judges"].items()]
        lines.append(
            "    - latency per call (seconds, measured when the call was made and read from the cache since): "
            + ("; ".join(shown) or "no call")
        )
    cost = generated.get("cost")
    if cost is not None:
        lines.append(
            f"    - cost: {cost['total']:.4f} {cost['currency']} (prices `{cost['file']}`, sha256 `{cost['sha256']}`)"
        )
    return lines


def _latency_text(t: Mapping[str, Any]) -> str:
    """``p50 0.012, p95 0.031 over 17 calls`` (and the calls whose cache file held no latency)."""
    missing = f", {t['without_latency']:,} without a recorded latency" if t["without_latency"] else ""
    if t["p50"] is None:
        return f"none recorded over {t['calls']:,} calls"
    return f"p50 {t['p50']:.3f}, p95 {t['p95']:.3f} over {t['calls']:,} calls{missing}"


def _tokens_text(t: Mapping[str, Any]) -> str:
    missing = f", {t['without_usage']:,} without usage" if t["without_usage"] else ""
    return f"{t['input']:,} in, {t['output']:,} out over {t['calls']:,} calls{missing}"


def _families(rows: Sequence[Mapping[str, Any]]) -> str:
    """``trec_eval P/R/RR/nDCG/AP + LongMemEval recall_any/sess.recall_any``: each family and its measures' names."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        names = groups.setdefault(row["family"] or "unstated family", [])
        if row["name"] not in names:
            names.append(row["name"])
    return " + ".join(f"{family} {'/'.join(names)}" for family, names in groups.items())


def short_form(card: Mapping[str, Any]) -> str:
    """The card in one line: release, granularity, measure families, relevance and judgments when not the usual,
    and how many questions of how many (the comparison table's caption starts with it)."""
    data = card["data"]
    parts = [data["release"] or f"{data['collection']} ({UNKNOWN_RELEASE})"]
    granularity = card["granularity"]
    parts.append("entries" if granularity is None else _PLURAL.get(granularity, f"{granularity} entries"))
    if card["measures"]:
        parts.append(_families(card["measures"]))
    if card["relevance"] not in (None, "direct"):
        parts.append(f"judged through {card['relevance']}")
    if not card["judgments"].startswith("the collection's own"):
        parts.append("patched judgments")
    denominator = card["denominator"]
    parts.append(f"{denominator['counted']:,} of {denominator['questions']:,} questions")
    return ", ".join(parts)


_SHOWN_FILES = 4
"""Up to this many data files the card's line names each with its sha256; more (a BEAM size folder holds 40 or
70) are counted, the first two named, and summed up by :func:`files_digest` (the artifact's card lists every one)."""


def files_digest(files: Sequence[Mapping[str, str]]) -> str:
    """The sha256 of the lines ``sha256sum`` prints for ``files`` (``"<sha256>  <name>\\n"``, sorted by name in code
    point order): one hash that changes when any file, or the set of files, does.  In the collection's folder,
    ``printf '%s\\n' NAME... | LC_ALL=C sort | xargs sha256sum | sha256sum`` gives the same."""
    listing = "".join(f"{f['sha256']}  {f['name']}\n" for f in sorted(files, key=lambda f: f["name"]))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def _files_text(files: Sequence[Mapping[str, str]]) -> str:
    if not files:
        return "none (generated)"
    if len(files) <= _SHOWN_FILES:
        return ", ".join(f"`{f['name']}` (sha256 `{f['sha256']}`)" for f in files)
    first = ", ".join(f"`{f['name']}`" for f in files[:2])
    return (
        f"{len(files)} files ({first} and {len(files) - 2} more; each name and sha256 in the artifact's card), "
        f"sha256 of their `sha256sum` listing `{files_digest(files)}`"
    )


def _data_lines(data: Mapping[str, Any]) -> list[str]:
    files = _files_text(data["files"])
    release = data["release"] or UNKNOWN_RELEASE
    known = f" (known from: {data['release_source']})" if data["release_source"] else ""
    lines = [f"- **Data**: {files}; release: **{release}**{known}"]
    if data["format"] is not None:
        options = ", ".join(f"{k}={_text(v)}" for k, v in data["options"].items())
        lines.append(f"- **Read as**: the {data['format']} format" + (f" ({options})" if options else ""))
    return lines


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


_KINDS = {
    "skipped": "skipped by the loader",
    "unjudged": "without a judgment (left out of every mean)",
    "group": "in groups shown by group only, not in the headline means",
}


_SHOWN_REASONS = 3
"""How many reasons of one kind of exclusion the card's line names (the most frequent); the artifact's card keeps
every one, and each report lists every left-out question with its reason."""


def _denominator_line(denominator: Mapping[str, Any]) -> str:
    """``1,526 of 1,986 questions; left out: 14 skipped by the loader (4: no evidence; 1: ...); 446 in groups ...``.

    Each kind names its :data:`_SHOWN_REASONS` most frequent reasons and counts the rest."""
    text = f"- **Denominator**: {denominator['counted']:,} of {denominator['questions']:,} questions"
    parts = []
    for kind, said in _KINDS.items():
        rows = [e for e in denominator["exclusions"] if e["kind"] == kind]
        if rows:
            reasons = "; ".join(f"{e['count']:,}: {e['reason']}" for e in rows[:_SHOWN_REASONS])
            rest = rows[_SHOWN_REASONS:]
            if rest:
                more = sum(e["count"] for e in rest)
                reasons += f"; {more:,} for {len(rest):,} other reasons (the artifact lists every one)"
            parts.append(f"{sum(e['count'] for e in rows):,} {said} ({reasons})")
    if parts:
        text += "; left out: " + "; ".join(parts)
    return text


def _cutoff_line(cutoffs: Mapping[str, Any]) -> str:
    k = "none" if cutoffs["k"] is None else str(cutoffs["k"])
    ranks = ", ".join(map(str, cutoffs["ranks"])) or "none"
    budgets = ", ".join(f"{b:,} tokens" for b in cutoffs["budgets"]) or "none"
    return f"- **Cutoffs**: k = {k}; ranks cut at: {ranks}; token budgets: {budgets}"


def card_text(card: Mapping[str, Any], extra: Sequence[str] = (), *, plain: bool = False) -> str:
    """The card as Markdown (a list, then the measures' table): what a report opens with and
    ``agentmemory eval`` prints first.  ``extra`` are more list lines (a sweep's synthetic collections);
    ``plain`` leaves out the bold marks (for a terminal)."""
    lines = [f"**{card['short_form']}**", ""]
    lines += _data_lines(card["data"])
    granularity = card["granularity"] or "not declared by the format (one entry per record it reads)"
    lines.append(f"- **Granularity**: {granularity}")
    if card["relevance"] is not None:
        lines.append(f"- **Relevance**: {card['relevance']}: {card['relevance_rule']}")
    if card["attribution"] is not None:
        lines.append(f"- **Attribution**: {card['attribution']}")
    lines.append(f"- **Judgments**: {card['judgments']}")
    lines.append(_denominator_line(card["denominator"]))
    lines.append(_cutoff_line(card["cutoffs"]))
    if card["unscored"]:
        lines.append(f"- **Not computed** (no definition under this relevance): {', '.join(card['unscored'])}")
    if card.get("defaults"):
        lines.append(f"- **Defaults chosen**: {'; '.join(card['defaults'])}")
    lines += answers_lines(card)
    lines += list(extra)
    if plain:
        lines = [line.replace("**", "") for line in lines]
    if not card["measures"]:
        return "\n".join(lines)
    rows = [
        [
            m["measure"],
            m["family"] or "unstated",
            m["direction"],
            m["definition"] + (f" (scores {m['granularity']}s)" if m["granularity"] else "") + _merged_note(m, card),
        ]
        for m in _shown_measures(card)
    ]
    table = markdown_table(["Measure", "Family", "Better", "Definition"], rows)
    return "\n".join(lines) + "\n\n" + table


def _shown_measures(card: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The card's measures as the comparison table shows them: an uncut measure that is its cut form at k (``RR``
    beside ``RR@k``, :func:`agentmemory.metrics.distinct_measures`) once, as the cut form."""
    k = card["cutoffs"]["k"]
    if k is None:
        return list(card["measures"])
    kept = set(distinct_measures([m["measure"] for m in card["measures"]], k))
    return [m for m in card["measures"] if m["measure"] in kept]


def _merged_note(row: Mapping[str, Any], card: Mapping[str, Any]) -> str:
    """`` (RR is the same measure here)`` on the cut form that an uncut measure of the card was merged into."""
    shown = {m["measure"] for m in _shown_measures(card)}
    merged = [m["measure"] for m in card["measures"] if m["measure"] not in shown and m["name"] == row["name"]]
    return f" ({', '.join(merged)} is the same measure here: every ranking is cut at k)" if merged else ""
