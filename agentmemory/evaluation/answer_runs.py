"""Imported answer files in an evaluation: matched to the questions, their memories attributed, scored as systems.

An *answer system* is one or more answer files of one system
(:mod:`agentmemory.answers`): several files are runs of the same system with
different seeds.  Each file is read by its format, and its records are
matched to the collection's questions (:func:`agentmemory.answers.matching.match_answers`:
by id, position or text, the question's text always checked).

What the evaluation scores of it:

* the **answer measures** (:mod:`agentmemory.metrics.answers`) on every
  matched question, from each file's answer and verdicts; over several seeds
  a question's value is the mean of the seeds' values (so the system's mean
  is the mean of the seeds' means when every seed answers every question),
  and :func:`seed_spread` gives each seed's mean and their standard
  deviation (under a corrected answer key, a verdict on a question whose gold
  answer the patch replaced is no verdict: :func:`rejudged`);
* where the (first) file carries retrieved memories, the **retrieval
  measures** on them: the memories become a ranking exactly as a memory
  system's do (:mod:`agentmemory.systems.attribution`, the evaluation's
  ``attribution`` method), so R@k, recall_all@k and the budgets read them;
  without retrieval in the file, every retrieval measure has no value
  (``None``), never 0.

How :func:`agentmemory.evaluation.runner.evaluate` takes them (its
``answers``: ``"NAME=FILE[,FILE...]"``, an :class:`AnswersSpec`,
``AnswerFile`` records, or a tuple of them for the seeds of one system): the
answer measures are added to the evaluation's measures
(:func:`default_answer_measures`); with retrieval in some file and no
``relevance`` given, relevance is ``"provenance"``; a claim of the options'
claims file that names its own answer file (``answers = "..."``) adds it as
the claim's system, unless ``answers`` names that system already; and the
questions without judgments that a judgment patch did not exclude
(``Collection.left_out_queries``: LoCoMo's malformed evidence) are scored
too, their retrieval measures without a value, their answer measures with
one.

**Live answers** (:mod:`agentmemory.live`, ``EvalOptions.live``): a reader's
answers to every question from a ranked system's top ``k``, graded by the
judges, come back as an :class:`~agentmemory.answers.records.AnswerFile`
(format ``live``) and become an answer system here
(:func:`live_answer_system`), matched by question id like any file; its
ranking is the ``base`` system's, its ``Judge`` the first judge's verdict
(or the judges' majority), and a question whose calls failed has no verdict.

**Re-judged answers** (judges and no reader: ``--judge`` without
``--reader``): :func:`with_live_judges` has the judges grade each imported
file's answers against the collection's gold answers (every call cached);
their verdicts join the file's own in each record, as more judges after the
file's.  ``Judge`` stays the file's own verdict where the file gives one (a
verdict made against an answer the judgment patch replaced is none), and is
the first live judge's elsewhere; with ``judge_majority`` it is the majority
of every verdict, the file's and the live judges'.  A question whose live
judge call failed has no ``Judge`` under the majority, and keeps the file's
otherwise.
"""

from __future__ import annotations

import glob
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentmemory.answers.formats import read_answers
from agentmemory.answers.matching import Matched, match_answers
from agentmemory.answers.records import AnswerFile, AnswerRecord, Verdict
from agentmemory.collection import ANSWER, Collection
from agentmemory.errors import ParameterError
from agentmemory.evaluation.options import Relevance
from agentmemory.evaluation.runfiles import RunFile
from agentmemory.evaluation.system_runs import _run_file
from agentmemory.live.answering import LiveAnswers, LiveQuestion, QuestionResult, judge_answers
from agentmemory.live.call_progress import CallProgress
from agentmemory.live.config import LiveOptions
from agentmemory.live.verdicts import VERDICT_RULE
from agentmemory.metrics import Measure
from agentmemory.metrics.answers import gold_answer
from agentmemory.metrics.definition import AnswerInput
from agentmemory.systems.attribution import Attributed, attribute
from agentmemory.systems.base import Memory
from agentmemory.systems.replay import Replay

__all__ = [
    "AnswerSystem",
    "AnswersSpec",
    "answer_systems",
    "read_answer_files",
    "rejudged",
    "spec_name",
    "parse_answers_option",
    "default_answer_measures",
    "live_answer_system",
    "seed_spread",
    "with_live_judges",
    "with_retrieval",
]


@dataclass(frozen=True)
class AnswersSpec:
    """What ``--answers`` names: a system's ``name`` and its files (one per seed), with an optional format and
    mapping file for every file (``None``: detected from each file's shape)."""

    name: str
    paths: tuple[str, ...]
    format: str | None = None
    mapping: str | None = None


def parse_answers_option(text: object, option: str = "--answers") -> AnswersSpec:
    """``[NAME=]FILE[,FILE...]`` -> an :class:`AnswersSpec`; each ``FILE`` may be a glob (expanded, sorted).

    Without ``NAME`` the system is named after the first file's stem.  Several
    files (or a glob matching several) are seeds of one system.

    Raises:
        ParameterError: empty text, an empty name or file, or a glob that matches nothing.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(option, text, "is empty", "give [NAME=]FILE[,FILE...], e.g. zep=zep_locomo_grades.json")
    name, sep, files = text.partition("=")
    if not sep:
        name, files = "", text
    elif not name.strip():
        raise ParameterError(option, text, "has an empty NAME before '='", "give NAME=FILE, or FILE alone")
    paths: list[str] = []
    for part in files.split(","):
        part = part.strip()
        if not part:
            raise ParameterError(option, text, "names an empty file", "separate files by single commas")
        if glob.has_magic(part):
            found = sorted(glob.glob(part))
            if not found:
                raise ParameterError(option, part, "matches no file", "check the pattern")
            paths += found
        else:
            paths.append(part)
    return AnswersSpec(name.strip() or Path(paths[0]).stem, tuple(paths))


@dataclass(frozen=True)
class AnswerSystem:
    """One imported system of an evaluation (see the module docstring).

    ``files`` are its answer files (seeds) and ``matched`` how each matched
    the collection; ``inputs`` per question id, one :class:`AnswerInput` per
    seed that answers it; ``attributed`` and ``run`` the first file's
    retrieved memories, attributed and made a run (``None`` without
    retrieval).  A live answer system (:func:`live_answer_system`) has the
    ``base`` system whose ranking its reader read and its ``live`` run; an
    imported one re-judged live (:func:`with_live_judges`) has ``rejudged``,
    the judges' run on each file's answers (one per file, in order), ``given`` the files as read and
    ``file_verdicts`` each file's ``Judge`` per question.
    """

    name: str
    files: tuple[AnswerFile, ...]
    matched: tuple[Matched, ...]
    inputs: Mapping[str, tuple[AnswerInput, ...]]
    attributed: Attributed | None = None
    run: RunFile | None = None
    records: Mapping[str, tuple[AnswerRecord, ...]] = field(default_factory=dict, repr=False)
    base: str | None = None
    live: LiveAnswers | None = field(default=None, repr=False)
    label_text: str | None = None
    rejudged: tuple[LiveAnswers, ...] = field(default=(), repr=False)
    given: tuple[AnswerFile, ...] = field(default=(), repr=False)
    file_verdicts: tuple[Mapping[str, float | None], ...] = field(default=(), repr=False)

    @property
    def given_files(self) -> tuple[AnswerFile, ...]:
        """The files as read, before any live judge's verdicts joined them."""
        return self.given or self.files

    @property
    def live_judges(self) -> frozenset[str]:
        """The names of the judges that graded its imported answers live (none unless re-judged)."""
        return frozenset(j.name for run in self.rejudged for j in run.options.judges)

    @property
    def label(self) -> str:
        return self.label_text or self.name

    @property
    def has_retrieval(self) -> bool:
        """Whether its files carry retrieved memories (made a run of its own)."""
        return self.run is not None

    @property
    def ranked(self) -> bool:
        """Whether it has a ranking beside its answers: its files' retrieval, or a live system's base ranking."""
        return self.run is not None or self.base is not None

    @property
    def params(self) -> dict[str, Any]:
        """What the artifact states of it: the format, each file (name and sha256), the judges, the matching."""
        first = self.files[0]
        if self.live is not None:
            return {
                "answers": self.name,
                "format": first.format,
                "matched": [dict(sorted(m.keys.items())) for m in self.matched],
                **self.live.describe(),
            }
        out: dict[str, Any] = {
            "answers": self.name,
            "format": first.format,
            "files": [
                {"path": os.path.basename(p), "sha256": h} for f in self.files for p, h in zip(f.paths, f.sha256)
            ],
            "seeds": len(self.files),
            "judges": dict(first.judges),
            "matched": [dict(sorted(m.keys.items())) for m in self.matched],
            "unmatched": [len(m.unmatched) for m in self.matched],
            "retrieval": self.has_retrieval,
        }
        if first.params:
            out["reader"] = dict(first.params)
        if self.attributed is not None:
            out.update(self.attributed.report.summary())
        return out


def _verdict(record: AnswerRecord) -> float | None:
    return record.verdict


def spec_name(spec: object) -> str | None:
    """The system name an item of ``answers`` gives (``None`` for what is not an answer spec)."""
    if isinstance(spec, (AnswersSpec, AnswerFile)):
        return spec.name
    if isinstance(spec, str):
        return parse_answers_option(spec, "answers").name
    if isinstance(spec, Sequence) and spec and isinstance(spec[0], AnswerFile):
        return spec[0].name
    return None


def read_answer_files(spec: AnswersSpec | AnswerFile | Sequence[AnswerFile] | str) -> tuple[AnswerFile, ...]:
    """The answer files ``spec`` names, read (a system's seeds, in order); records are taken as they are."""
    return _read(spec)[1]


def _read(spec: AnswersSpec | AnswerFile | Sequence[AnswerFile] | str) -> tuple[str, tuple[AnswerFile, ...]]:
    if isinstance(spec, AnswerFile):
        return spec.name, (spec,)
    if (
        isinstance(spec, Sequence)
        and not isinstance(spec, str)
        and spec
        and all(isinstance(f, AnswerFile) for f in spec)
    ):
        return spec[0].name, tuple(spec)
    if isinstance(spec, str):
        spec = parse_answers_option(spec, "answers")
    if not isinstance(spec, AnswersSpec):
        raise ParameterError(
            "answers", spec, "is not an answer file", 'pass "NAME=FILE[,FILE...]", an AnswersSpec or AnswerFile records'
        )
    options = {} if spec.mapping is None else {"mapping": spec.mapping}
    files = tuple(read_answers(path, format=spec.format, name=spec.name, **options) for path in spec.paths)
    return spec.name, files


def _memories(record: AnswerRecord) -> tuple[Memory, ...]:
    return tuple(Memory(m.text, id=m.id) for m in record.memories or ())


def _attributed(
    name: str, first: Matched, collection: Collection, *, k: int, relevance: str, attribution: str
) -> Attributed:
    """The first file's retrieved memories attributed like a replayed system's (its memories, best first)."""
    answers = {qid: _memories(r) for qid, r in first.by_query.items() if r.memories is not None}
    recorded = Replay(name, name, {}, answers, {q.id: q.scope for q in collection.judged_queries})
    return attribute(recorded, collection, attribution, k=k, ranks_entries=Relevance(relevance) is Relevance.DIRECT)


def answer_systems(
    collection: Collection, answers: Sequence[AnswersSpec | AnswerFile | Sequence[AnswerFile] | str]
) -> list[AnswerSystem]:
    """Read and match each of ``answers`` (see the module docstring); :func:`with_retrieval` attributes the
    memories of those whose files carry retrieval."""
    if isinstance(answers, (str, AnswersSpec, AnswerFile)):
        answers = [answers]
    out = []
    replaced = rejudged(collection)
    for spec in answers:
        name, files = _read(spec)
        matched = tuple(match_answers(f, collection) for f in files)
        inputs: dict[str, list[AnswerInput]] = {}
        records: dict[str, list[AnswerRecord]] = {}
        for found in matched:
            for qid, record in found.by_query.items():
                texts = None if record.memories is None else tuple(m.text for m in record.memories)
                verdict = None if qid in replaced else _verdict(record)
                inputs.setdefault(qid, []).append(AnswerInput(record.answer, verdict, texts))
                records.setdefault(qid, []).append(record)
        out.append(
            AnswerSystem(
                name,
                files,
                matched,
                {q: tuple(v) for q, v in inputs.items()},
                records={q: tuple(v) for q, v in records.items()},
            )
        )
    return out


def rejudged(collection: Collection) -> frozenset[str]:
    """The questions whose gold answer the collection's judgment patch replaced: an imported verdict on them was
    made against the replaced answer, so under the corrected key it is no verdict (``Judge`` has no value there);
    the answer scores computed here (F1, EM, BLEU-1, answer_in_context) read the corrected answer instead."""
    patch = collection.judgment_patch
    if patch is None:
        return frozenset()
    return frozenset(k.query_id for k in patch.answer_key if k.kind == ANSWER)


def with_retrieval(
    system: AnswerSystem, collection: Collection, *, k: int, relevance: str, attribution: str
) -> AnswerSystem:
    """``system`` with its first file's retrieved memories attributed and made a run (as it is without any)."""
    if not system.files[0].has_retrieval:
        return system
    attributed = _attributed(
        system.name, system.matched[0], collection, k=k, relevance=relevance, attribution=attribution
    )
    return replace(system, attributed=attributed, run=_run_file(attributed))


def default_answer_measures(
    collection: Collection, answered: Sequence[AnswerSystem], k: int, *, generated: int = 0
) -> tuple[Measure, ...]:
    """The answer measures an evaluation with ``answered`` adds to its own: ``Judge`` when a file carries verdicts
    (or ``generated`` answers have judges: their number), LoCoMo's ``F1``, ``EM`` and ``BLEU-1`` on a LoCoMo
    collection, ``answer_in_context@k`` when a question has a gold answer (none without answer files or live
    readers).  ``generated`` is ``-1`` with live readers and no judge, the number of judges with some."""
    if not answered and not generated:
        return ()
    out: list[Measure] = []
    if generated > 0 or any(r.verdicts for a in answered for f in a.files for r in f.records):
        out.append(Measure("Judge"))
    if collection.format == "locomo":
        out += [Measure("F1"), Measure("EM"), Measure("BLEU-1")]
    questions = (*collection.judged_queries, *collection.left_out_queries)
    if any(gold_answer(q) is not None for q in questions):
        out.append(Measure("answer_in_context", k))
    return tuple(out)


def seed_spread(values: Sequence[Sequence[float | None]]) -> tuple[tuple[float | None, ...], float | None]:
    """Each seed's mean (over its questions with a value) and the seeds' standard deviation (``ddof=1``;
    ``None`` with fewer than two seeds with a mean).  ``values[s]`` are seed ``s``'s per-question values."""
    means: list[float | None] = []
    for column in values:
        present = [v for v in column if v is not None]
        means.append(math.fsum(present) / len(present) if present else None)
    known = [m for m in means if m is not None]
    if len(known) < 2:
        return tuple(means), None
    centre = math.fsum(known) / len(known)
    return tuple(means), math.sqrt(math.fsum((m - centre) ** 2 for m in known) / (len(known) - 1))


def live_answer_system(answers: LiveAnswers, collection: Collection, label: str | None = None) -> AnswerSystem:
    """The answer system of a live run (:mod:`agentmemory.live`): its file matched to the collection by question
    id, each question's input its answer, its headline verdict (:meth:`LiveAnswers.headline`: the first judge's,
    or the majority; ``None`` when a call failed) and the memories the reader read.  Its verdicts were made
    against the collection's own gold answers, so a corrected key does not void them."""
    file = answers.answer_file()
    matched = match_answers(file, collection, key="id")
    by_id = {r.question_id: r for r in answers.results}
    inputs: dict[str, tuple[AnswerInput, ...]] = {}
    records: dict[str, tuple[AnswerRecord, ...]] = {}
    for qid, record in matched.by_query.items():
        texts = tuple(m.text for m in record.memories or ())
        inputs[qid] = (AnswerInput(record.answer, answers.headline(by_id[qid]), texts),)
        records[qid] = (record,)
    return AnswerSystem(
        answers.name,
        (file,),
        (matched,),
        inputs,
        records=records,
        base=answers.base,
        live=answers,
        label_text=label,
    )


def _majority(values: Sequence[float]) -> float | None:
    """1 or 0 by the majority of ``values`` (their mean above or below 0.5), 0.5 on a tie, ``None`` without any."""
    if not values:
        return None
    share = math.fsum(values) / len(values)
    return 1.0 if share > 0.5 else 0.0 if share < 0.5 else 0.5


def _rejudged_verdict(own: Sequence[Verdict], result: QuestionResult, judges: int, majority: bool) -> float | None:
    """A re-judged question's ``Judge`` (see the module docstring): ``own`` the file's verdicts that count."""
    complete = not result.failed and len(result.verdicts) == judges
    if majority:
        if result.judged and not complete:
            return None
        return _majority([v.value for v in (*own, *result.verdicts)])
    if own:
        return _majority([v.value for v in own])
    return result.verdicts[0].value if result.judged and complete else None


def with_live_judges(
    system: AnswerSystem, collection: Collection, live: LiveOptions, *, progress: CallProgress | bool = False
) -> AnswerSystem:
    """``system`` (imported answer files) with ``live``'s judges' verdicts on every answer its files give (see
    the module docstring): each record's verdicts the file's then the judges', ``inputs`` with the ``Judge``
    that follows, ``rejudged`` the judges' runs (one per file).

    Raises:
        ParameterError: a judge named like one of the files' own judges (give it another ``name=``).
        LiveCallError: offline, a call the cache does not hold; without ``live.lenient``, a failed judge call.
    """
    own = {j for f in system.files for j in f.judges} | {
        v.judge for f in system.files for r in f.records for v in r.verdicts
    }
    for judge in live.judges:
        if judge.name in own:
            raise ParameterError(
                live.name("judges"),
                judge.key,
                f"is named {judge.name!r}, as a judge of {system.name}'s answer file is",
                "give it another name: openai[...,name=NAME]",
            )
    queries = {q.id: q for q in (*collection.queries, *collection.left_out_queries)}
    replaced = rejudged(collection)
    runs, files, matched, verdicts = [], [], [], []
    inputs: dict[str, list[AnswerInput]] = {}
    records: dict[str, list[AnswerRecord]] = {}
    for i, (file, found) in enumerate(zip(system.files, system.matched)):
        qids = list(found.by_query)
        name = system.name if len(system.files) == 1 else f"{system.name} (file {i + 1})"
        run = judge_answers(
            name,
            [LiveQuestion.of(queries[q], ()) for q in qids],
            [found.by_query[q].answer for q in qids],
            live,
            progress=progress,
        )
        runs.append(run)
        made: dict[int, AnswerRecord] = {}
        headline: dict[str, float | None] = {}
        for qid, result in zip(qids, run.results):
            record = found.by_query[qid]
            counted = () if qid in replaced else record.verdicts
            verdict = _rejudged_verdict(counted, result, len(live.judges), live.judge_majority)
            headline[qid] = verdict
            new = replace(record, verdicts=(*record.verdicts, *result.verdicts))
            made[id(record)] = new
            texts = None if record.memories is None else tuple(m.text for m in record.memories)
            inputs.setdefault(qid, []).append(AnswerInput(record.answer, verdict, texts))
            records.setdefault(qid, []).append(new)
        judges = {**file.judges, **{j.name: VERDICT_RULE for j in live.judges}}
        files.append(replace(file, records=tuple(made.get(id(r), r) for r in file.records), judges=judges))
        matched.append(replace(found, by_query={q: made[id(r)] for q, r in found.by_query.items()}))
        verdicts.append(headline)
    return replace(
        system,
        files=tuple(files),
        matched=tuple(matched),
        inputs={q: tuple(v) for q, v in inputs.items()},
        records={q: tuple(v) for q, v in records.items()},
        rejudged=tuple(runs),
        given=system.files,
        file_verdicts=tuple(verdicts),
    )
