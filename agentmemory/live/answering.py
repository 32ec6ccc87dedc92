"""A reader answers each question from a system's memories, and each judge grades the answer: cached and counted.

:func:`answer_questions` takes the questions with the memories a system
retrieved for each (its top ``k``, best first) and returns
:class:`LiveAnswers`: one :class:`QuestionResult` per question and the
:class:`~agentmemory.answers.records.AnswerFile` they make, records exactly
like an imported answer file's, so the answer measures and the failure split
read them unchanged.

**Per question.**  The reader's prompt is rendered
(:mod:`agentmemory.live.prompts`: ``{question}``, ``{memories}``,
``{question_date}``) and sent as one user message; the reply, stripped, is
the answer.  Then, when the question has a gold answer, each judge in order
gets the judge prompt (``{question}``, ``{gold_answer}``,
``{generated_answer}``) and its reply is read as a verdict
(:func:`~agentmemory.live.verdicts.parse_verdict`).  A question without a
gold answer (LoCoMo's adversarial category) is answered and not judged.

**Every call** goes through the cache first
(:mod:`agentmemory.live.call_cache`); only a miss is sent.  A sent call is
tried up to ``1 + retries`` times (the model's ``retries``, default 4) while
its :class:`~agentmemory.errors.ChatCallError` is ``retryable`` (a 408, 409,
429, 5xx, timeout, lost connection, a body that is not a chat completion),
waiting ``backoff * 2**(n - 1)`` seconds before the n-th retry (the model's
``backoff``, default 1; the endpoint's ``Retry-After`` instead when it sent
one; at most :data:`MAX_WAIT`); at most ``concurrency`` calls to one model
are in flight at once.  With the model's ``deadline`` (seconds; default none),
the attempts and the waits between them end within it: an attempt gets at
most the time left (when its ``complete`` takes a ``timeout`` keyword, as
``openai`` does), and a retry whose wait would reach the deadline is not
made.  Each sent attempt's wall-clock time is kept in :class:`CallStats`
(printed, never in an artifact); the seconds of the attempt that returned
the reply are the call's **latency**, stored with the reply in the cache
and reported from there, so a re-run from the cache reports the latency
measured when the call was made (and writes the same artifact).  The same
request is sent once per run, whatever asks it.

**A failed call** (retries spent, a refusal such as HTTP 401, an empty reply,
a judge's reply that is not a verdict) fails its question, which is never
scored as wrong: without a reader's answer every answer measure has no value
there, and without every judge's verdict ``Judge`` has none.  Unless
``lenient``, the run then stops with :class:`~agentmemory.errors.LiveCallError`
naming the first such question (after every other call is made, so they are
all cached); with it the failed questions are counted in the card and the
means are over the questions with a value, ``(n of N)``.  **Offline**, a call
the cache does not hold is never sent: the run stops naming it, lenient or
not.  Ctrl-C stops the calls not yet started; the cache's files are each
written whole (atomically) or not at all.

:func:`judge_answers` is the same without a reader: the judges grade answers
made elsewhere (an imported answer file's), every call cached and counted
alike.
"""

from __future__ import annotations

import inspect
import math
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np

from agentmemory.answers.records import AnswerFile, AnswerRecord, ImportedMemory, Verdict
from agentmemory.errors import ChatCallError, LiveCallError, ParameterError, shorten
from agentmemory.live.call_cache import CallCache, request_key
from agentmemory.live.call_progress import CallProgress
from agentmemory.live.config import LiveOptions
from agentmemory.live.endpoints import Completion
from agentmemory.live.roles import RoleSpec
from agentmemory.live.verdicts import VERDICT_RULE, parse_verdict
from agentmemory.metrics.answers import gold_answer
from agentmemory.records import Query

__all__ = [
    "MAX_WAIT",
    "CallRecord",
    "CallStats",
    "ContextMemory",
    "LiveAnswers",
    "LiveQuestion",
    "QuestionResult",
    "answer_questions",
    "judge_answers",
    "memories_text",
]

MAX_WAIT = 60.0
"""The longest wait before a retry, in seconds (a ``Retry-After`` above it is cut to it)."""

_DEFAULTS: dict[str, Any] = {"retries": 4, "backoff": 1.0, "concurrency": 4, "deadline": None}
LATENCY_DIGITS = 6
"""A call's latency is kept to the microsecond (rounded once, when measured)."""
LIVE_FORMAT = "live"
"""The format an :class:`AnswerFile` of generated answers states."""


@dataclass(frozen=True)
class ContextMemory:
    """One memory handed to the reader: its text, its id in the system's ranking, when it was recorded."""

    text: str
    id: str | None = None
    when: datetime | None = None


@dataclass(frozen=True)
class LiveQuestion:
    """A question as the reader and judge see it: id, text, gold answer, category, when asked, its memories."""

    id: str
    text: str
    gold: str | None
    category: str | int | None
    asked_at: datetime | None
    memories: tuple[ContextMemory, ...]

    @classmethod
    def of(cls, query: Query, memories: Sequence[ContextMemory]) -> LiveQuestion:
        """The question of ``query`` (gold answer and category from its metadata) with ``memories``."""
        category = query.metadata.get("category", query.group)
        return cls(
            query.id,
            query.text,
            gold_answer(query),
            category if isinstance(category, (str, int)) else None,
            query.asked_at,
            tuple(memories),
        )


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%d %H:%M")


def memories_text(memories: Sequence[ContextMemory]) -> str:
    """The ``{memories}`` placeholder: one line per memory, ``1. [YYYY-MM-DD HH:MM] text`` (the date when known;
    line breaks inside a text made spaces), or ``(no memories)``."""
    lines = []
    for i, memory in enumerate(memories, 1):
        when = _when(memory.when)
        text = " ".join(memory.text.split())
        lines.append(f"{i}. [{when}] {text}" if when else f"{i}. {text}")
    return "\n".join(lines) if lines else "(no memories)"


@dataclass(frozen=True)
class CallRecord:
    """One call of one question, as the artifact states it: the role, the reader's or judge's name, the tokens
    (``None`` without usage), the cost (``None`` without a price), why it failed (``None`` when it did not) and
    its latency (seconds, as measured when the call was made and stored in the cache; ``None`` when it failed or
    its cache file holds none)."""

    role: str
    name: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    failed: str | None = None
    latency: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": self.role,
            "name": self.name,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency": self.latency,
        }
        if self.cost is not None:
            out["cost"] = self.cost
        if self.failed is not None:
            out["failed"] = self.failed
        return out


@dataclass(frozen=True)
class QuestionResult:
    """One question's outcome: the answer (``None`` when the reader failed), the verdicts in judge order (the
    judges that succeeded), every call, the failures (``"the judge call (mini) got HTTP 500: ... (5 attempts)"``)
    and, offline, the calls missing from the cache."""

    question_id: str
    answer: str | None
    verdicts: tuple[Verdict, ...] = ()
    calls: tuple[CallRecord, ...] = ()
    failed: tuple[str, ...] = ()
    missed: tuple[str, ...] = ()
    judged: bool = False


@dataclass
class CallStats:
    """Wall-clock facts of a run (printed, never in an artifact): calls sent, read from the cache, retried, and
    each sent attempt's seconds."""

    sent: int = 0
    cached: int = 0
    retried: int = 0
    seconds: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for key, n in counts.items():
                setattr(self, key, getattr(self, key) + n)

    def timed(self, seconds: float) -> None:
        with self.lock:
            self.seconds.append(seconds)


class _Failed(Exception):
    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(problem)


class _Missed(Exception):
    pass


def _policy(spec: RoleSpec, key: str) -> Any:
    value = getattr(spec.model, key, None)
    default = _DEFAULTS[key]
    kinds = (int, float) if key in ("backoff", "deadline") else (int,)
    if isinstance(value, bool) or not isinstance(value, kinds) or (key == "deadline" and not value > 0):
        return default
    return value


def _takes_timeout(model: Any) -> bool:
    """Whether ``model.complete`` takes a ``timeout`` keyword (so an attempt can be held to a deadline)."""
    try:
        parameters = inspect.signature(model.complete).parameters
    except (TypeError, ValueError):
        return False
    return "timeout" in parameters


def who(spec: RoleSpec) -> str:
    """``mini at http://localhost:8000/v1``: a reader's or judge's name and endpoint, for messages."""
    identity = spec.identity()
    where = identity.get("base_url")
    return f"{spec.name} at {where}" if isinstance(where, str) else spec.name


class _Caller:
    """Makes the calls of one run: the cache first, then the model with retries, counted."""

    def __init__(self, options: LiveOptions, stats: CallStats, stop: threading.Event) -> None:
        self.options = options
        self.cache = CallCache(options.cache)
        self.stats = stats
        self.stop = stop
        self._gates: dict[int, threading.Semaphore] = {}
        self._timeouts: dict[int, bool] = {}
        for spec in (*options.readers, *options.judges):
            self._gates.setdefault(id(spec.model), threading.Semaphore(_policy(spec, "concurrency")))
            self._timeouts.setdefault(id(spec.model), _takes_timeout(spec.model))
        self._keys: dict[str, threading.Lock] = {}
        self._made: dict[str, tuple[Completion, float | None]] = {}
        self._lock = threading.Lock()

    def call(self, spec: RoleSpec, content: str) -> tuple[Completion, CallRecord]:
        """The reply to one user message, from the cache or the model; raises _Missed offline, _Failed."""
        messages = [{"role": "user", "content": content}]
        request = {"endpoint": spec.identity(), "messages": messages}
        key = request_key(request)
        with self._lock:
            gate = self._keys.setdefault(key, threading.Lock())
        with gate:  # the same request twice in one run: sent once, the second reads the first's reply
            reply, latency = self._reply(spec, key, request, messages)
        cost = None
        if self.options.prices is not None:
            cost = self.options.prices.cost(spec.price_model, reply.input_tokens, reply.output_tokens)
        return reply, CallRecord(spec.role, spec.name, reply.input_tokens, reply.output_tokens, cost, latency=latency)

    def _reply(
        self, spec: RoleSpec, key: str, request: dict[str, Any], messages: list[dict[str, str]]
    ) -> tuple[Completion, float | None]:
        made = self._made.get(key)
        if made is not None:
            self.stats.add(cached=1)
            return made
        found = self.cache.read(key, request)
        if found is not None:
            self.stats.add(cached=1)
            return found
        if self.options.offline:
            raise _Missed()
        reply, seconds = self._send(spec, messages)
        latency = round(seconds, LATENCY_DIGITS)
        self.cache.save(key, request, reply, latency)
        self._made[key] = (reply, latency)
        return reply, latency

    def _send(self, spec: RoleSpec, messages: list[dict[str, str]]) -> tuple[Completion, float]:
        """The reply and the seconds of the attempt that returned it; raises _Failed when every attempt failed."""
        retries, backoff = _policy(spec, "retries"), float(_policy(spec, "backoff"))
        deadline: float | None = _policy(spec, "deadline")
        began = time.monotonic()
        attempts = 0
        while True:
            if self.stop.is_set():
                raise _Failed("was not made: the run was interrupted")
            left = None if deadline is None else deadline - (time.monotonic() - began)
            outcome, seconds = self._attempt(spec, messages, left)
            attempts += 1
            if isinstance(outcome, Completion):
                return outcome, seconds
            tried = f"{attempts} attempt{'s' if attempts != 1 else ''}"
            if not outcome.retryable or attempts > retries:
                raise _Failed(f"{outcome.problem} ({tried})")
            wait = outcome.retry_after if outcome.retry_after is not None else backoff * 2 ** (attempts - 1)
            wait = min(wait, MAX_WAIT)
            if deadline is not None and time.monotonic() - began + wait >= deadline:
                raise _Failed(f"{outcome.problem} ({tried}; its deadline of {deadline:g} s leaves no time to retry)")
            self.stats.add(retried=1)
            self.stop.wait(wait)

    def _attempt(
        self, spec: RoleSpec, messages: list[dict[str, str]], left: float | None
    ) -> tuple[Completion | ChatCallError, float]:
        with self._gates[id(spec.model)]:
            prepare = getattr(spec.model, "prepare", None)
            try:
                if callable(prepare):
                    prepare()  # outside the latency: a client made once, a library imported
            except ChatCallError as err:
                return err, 0.0
            except Exception as err:  # noqa: BLE001 - a plugin model's own failure fails the call, not the run
                return ChatCallError(f"raised {type(err).__name__}: {shorten(' '.join(str(err).split()), 120)}"), 0.0
            start = time.perf_counter()
            try:
                if left is not None and self._timeouts[id(spec.model)]:
                    reply = spec.model.complete(messages, timeout=max(left, 1e-3))
                else:
                    reply = spec.model.complete(messages)
            except ChatCallError as err:
                return err, 0.0
            except Exception as err:  # noqa: BLE001 - a plugin model's own failure fails the call, not the run
                problem = f"raised {type(err).__name__}: {shorten(' '.join(str(err).split()), 120)}"
                return ChatCallError(problem), 0.0
            finally:
                seconds = time.perf_counter() - start
                self.stats.add(sent=1)
                self.stats.timed(seconds)
        if not isinstance(reply, Completion):
            return ChatCallError(f"returned a {type(reply).__name__}, not a Completion"), seconds
        return reply, seconds


def _values(question: LiveQuestion) -> dict[str, str]:
    return {
        "question": question.text,
        "memories": memories_text(question.memories),
        "question_date": _when(question.asked_at) or "an unknown date",
    }


def _one(caller: _Caller, question: LiveQuestion, reader: RoleSpec) -> QuestionResult:
    """One question: the reader's call, then each judge's (see the module docstring)."""
    options = caller.options
    values = _values(question)
    try:
        reply, record = caller.call(reader, options.reader_prompt.render(values))
    except _Missed:
        return QuestionResult(question.id, None, missed=(f"the reader call ({who(reader)})",))
    except _Failed as err:
        failed = f"the reader call ({who(reader)}) {err.problem}"
        return QuestionResult(
            question.id, None, calls=(CallRecord("reader", reader.name, failed=failed),), failed=(failed,)
        )
    answer = reply.content.strip()
    if not answer:
        failed = f"the reader call ({who(reader)}) replied with an empty message"
        return QuestionResult(question.id, None, calls=(record,), failed=(failed,))
    return _judged(caller, question, answer, (record,))


def _judged(
    caller: _Caller, question: LiveQuestion, answer: str | None, before: tuple[CallRecord, ...] = ()
) -> QuestionResult:
    """Each judge's call on ``answer`` to ``question`` (none without an answer, a gold answer or a judge)."""
    options = caller.options
    calls, verdicts, failures, missed = list(before), [], [], []
    judged = answer is not None and question.gold is not None and bool(options.judges)
    if judged:
        judge_values = {**_values(question), "gold_answer": str(question.gold), "generated_answer": str(answer)}
        for judge in options.judges:
            try:
                reply, record = caller.call(judge, options.judge_prompt.render(judge_values))
                label, value = parse_verdict(reply.content)
            except _Missed:
                missed.append(f"the judge call ({who(judge)})")
                continue
            except _Failed as err:
                record = CallRecord("judge", judge.name, failed=f"the judge call ({who(judge)}) {err.problem}")
            except ValueError as err:
                record = record_failed(record, f"the judge call ({who(judge)}) {err}")
            else:
                verdicts.append(Verdict(judge.name, value, label))
            calls.append(record)
            if record.failed is not None:
                failures.append(record.failed)
    return QuestionResult(question.id, answer, tuple(verdicts), tuple(calls), tuple(failures), tuple(missed), judged)


def record_failed(record: CallRecord, reason: str) -> CallRecord:
    """``record`` marked failed (a reply that came back but cannot be used), its tokens and latency kept."""
    return CallRecord(
        record.role, record.name, record.input_tokens, record.output_tokens, record.cost, reason, record.latency
    )


@dataclass(frozen=True)
class LiveAnswers:
    """One answer system's live run: the ``name`` (``bm25+mini``), the ``base`` system whose memories the reader
    read, the ``reader`` (``None`` when the judges graded answers made elsewhere: :func:`judge_answers`), the
    options, the questions and their results (in the same order), and the run's :class:`CallStats`."""

    name: str
    base: str
    reader: RoleSpec | None
    options: LiveOptions
    questions: tuple[LiveQuestion, ...]
    results: tuple[QuestionResult, ...]
    stats: CallStats = field(default_factory=CallStats, compare=False, repr=False)

    def headline(self, result: QuestionResult) -> float | None:
        """``Judge``'s value on one question: the first judge's verdict (the majority of every judge's with
        ``judge_majority``: 1 or 0, 0.5 on a tie); ``None`` when it was not judged or a judge call failed."""
        judges = self.options.judges
        if not result.judged or result.failed or len(result.verdicts) != len(judges):
            return None
        if not self.options.judge_majority:
            return result.verdicts[0].value
        share = math.fsum(v.value for v in result.verdicts) / len(result.verdicts)
        return 1.0 if share > 0.5 else 0.0 if share < 0.5 else 0.5

    @cached_property
    def by_question(self) -> dict[str, QuestionResult]:
        """Each question's result by its id."""
        return {r.question_id: r for r in self.results}

    @property
    def failed(self) -> tuple[tuple[str, str], ...]:
        """``(question id, reason)`` of every failed call, in question order."""
        return tuple((r.question_id, reason) for r in self.results for reason in r.failed)

    def answer_file(self) -> AnswerFile:
        """The results as an :class:`AnswerFile` of format ``live``: one record per question, its memories the ones
        the reader read, ``tokens`` the reader's input tokens, ``extra`` each role's token counts."""
        records = []
        for i, (question, result) in enumerate(zip(self.questions, self.results)):
            counts = _token_counts(result.calls)
            reader_in = next((c.input_tokens for c in result.calls if c.role == "reader"), None)
            records.append(
                AnswerRecord(
                    where=f"{self.name}[{i}]",
                    question_id=question.id,
                    question=question.text,
                    gold=question.gold,
                    category=question.category,
                    answer=result.answer,
                    verdicts=result.verdicts,
                    memories=tuple(ImportedMemory(m.text, m.id) for m in question.memories),
                    tokens=reader_in,
                    extra=counts,
                )
            )
        judges = {j.name: VERDICT_RULE for j in self.options.judges}
        notes = tuple(f"{n:,} questions failed: {kind}" for kind, n in sorted(self._failure_kinds().items()))
        return AnswerFile(self.name, (), (), LIVE_FORMAT, tuple(records), judges, notes, self.describe())

    def _failure_kinds(self) -> Counter[str]:
        return Counter(_kind(reason) for r in self.results for reason in r.failed[:1])

    def describe(self) -> dict[str, Any]:
        """What the card and the artifact state of the run (see docs/live-answers.md): the base system, the
        reader and judges with their prompts (sha256), the headline rule, the questions answered, judged and
        failed, the tokens, the cost and the latency of the calls (as stored in the cache)."""
        options = self.options
        results = self.results
        reader = self.reader
        out: dict[str, Any] = {
            "base": self.base,
            "reader": None if reader is None else {**reader.describe(), "prompt": options.reader_prompt.describe()},
            "judges": [{**j.describe(), "prompt": options.judge_prompt.describe()} for j in options.judges],
            "judge": ("majority of the judges" if options.judge_majority else "the first judge")
            if options.judges
            else None,
            "questions": len(results),
            "answered": sum(1 for r in results if r.answer is not None),
            "judged": sum(1 for r in results if self.headline(r) is not None),
            "without_gold_answer": sum(1 for r in results if r.answer is not None and not r.judged),
            "failed": {
                "questions": sum(1 for r in results if r.failed),
                "by_reason": dict(sorted(self._failure_kinds().items())),
            },
            "lenient": options.lenient,
            "tokens": _usage(results, "tokens"),
            "latency": _latency(results),
        }
        if options.prices is not None:
            out["cost"] = {**options.prices.describe(), **_usage(results, "cost")}
        return out


def _kind(reason: str) -> str:
    """A failure's kind, its details cut: ``reader mini: got HTTP 500`` of ``the reader call (mini at URL) got HTTP
    500: {...} (5 attempts)``."""
    role, _, rest = reason.removeprefix("the ").partition(" call (")
    depth, i = 1, 0
    while i < len(rest) and depth:  # the name and endpoint in brackets (a URL may hold brackets of its own)
        depth += {"(": 1, ")": -1}.get(rest[i], 0)
        i += 1
    name = rest[: i - 1].split(" at ", 1)[0]
    problem = rest[i:].strip()
    for mark in (": ", " ("):
        problem = problem.split(mark, 1)[0]
    return f"{role} {name}: {problem}"


def _token_counts(calls: Sequence[CallRecord]) -> dict[str, float]:
    out: dict[str, float] = {}
    for role in ("reader", "judge"):
        for side in ("input", "output"):
            found = [getattr(c, f"{side}_tokens") for c in calls if c.role == role]
            if found and all(v is not None for v in found):
                out[f"{role}_{side}_tokens"] = float(sum(found))
    return out


def _usage(results: Sequence[QuestionResult], what: str) -> dict[str, Any]:
    """Per role (the reader; each judge by name), the calls, and their tokens in and out or their cost, with the
    calls that said none (no usage, no price)."""
    groups: dict[tuple[str, str], list[CallRecord]] = {}
    for result in results:
        for call in result.calls:
            if call.failed is None or call.input_tokens is not None:
                groups.setdefault((call.role, call.name), []).append(call)

    def summary(calls: list[CallRecord]) -> dict[str, Any]:
        if what == "tokens":
            known = [c for c in calls if c.input_tokens is not None and c.output_tokens is not None]
            return {
                "calls": len(calls),
                "input": sum(c.input_tokens or 0 for c in known),
                "output": sum(c.output_tokens or 0 for c in known),
                "without_usage": len(calls) - len(known),
            }
        costs = [c.cost for c in calls if c.cost is not None]
        return {"calls": len(calls), "cost": math.fsum(costs), "without_cost": len(calls) - len(costs)}

    readers = [c for (role, _), calls in groups.items() if role == "reader" for c in calls]
    out: dict[str, Any] = {"reader": summary(readers)}
    out["judges"] = {name: summary(calls) for (role, name), calls in groups.items() if role == "judge"}
    if what == "cost":
        every = [c.cost for calls in groups.values() for c in calls if c.cost is not None]
        out["total"] = math.fsum(every)
    else:
        every_call = [c for calls in groups.values() for c in calls]
        total = summary(every_call)
        out["total"] = {"input": total["input"], "output": total["output"]}
    return out


def _percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of ``values`` (NumPy's default, linear between the closest ranks), to the
    microsecond; ``None`` without values."""
    return round(float(np.percentile(values, q)), LATENCY_DIGITS) if values else None


def _latency(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """The calls' latency as stored with their replies: per role (the reader; each judge by name; every judge's
    calls together), the calls that got a reply, their median (``p50``) and 95th percentile (``p95``) in
    seconds, and the calls whose cache file holds no latency."""
    replied = [c for r in results for c in r.calls if c.failed is None or c.input_tokens is not None]

    def summary(calls: Sequence[CallRecord]) -> dict[str, Any]:
        known = [c.latency for c in calls if c.latency is not None]
        return {
            "calls": len(calls),
            "p50": _percentile(known, 50),
            "p95": _percentile(known, 95),
            "without_latency": len(calls) - len(known),
        }

    judges: dict[str, list[CallRecord]] = {}
    for call in replied:
        if call.role == "judge":
            judges.setdefault(call.name, []).append(call)
    return {
        "reader": summary([c for c in replied if c.role == "reader"]),
        "judge": summary([c for c in replied if c.role == "judge"]),
        "judges": {name: summary(calls) for name, calls in judges.items()},
    }


def answer_questions(
    name: str,
    base: str,
    questions: Sequence[LiveQuestion],
    reader: RoleSpec,
    options: LiveOptions,
    *,
    progress: CallProgress | bool = False,
) -> LiveAnswers:
    """``reader`` answers every one of ``questions`` and ``options.judges`` grade the answers (module docstring).

    ``name`` is the answer system's name, ``base`` the system whose memories the questions carry.  ``progress``
    (``True``, or a :class:`~agentmemory.live.call_progress.CallProgress`) shows the questions done and the calls on
    stderr: a bar on a terminal, a plain line every few seconds elsewhere.

    Raises:
        LiveCallError: offline, a call the cache does not hold; without ``options.lenient``, a question whose
            calls finally failed (each names the first such question in order, and holds them all).
    """
    stats = CallStats()
    caller = _Caller(options, stats, threading.Event())
    results = _run(caller, name, [(_one, (caller, q, reader)) for q in questions], (reader, *options.judges), progress)
    answers = LiveAnswers(name, base, reader, options, tuple(questions), results, stats)
    _check(answers)
    return answers


def judge_answers(
    name: str,
    questions: Sequence[LiveQuestion],
    answers: Sequence[str | None],
    options: LiveOptions,
    *,
    progress: CallProgress | bool = False,
) -> LiveAnswers:
    """``options.judges`` grade ``answers`` (one per question, ``None`` where there is none: not judged) made
    elsewhere, such as an imported answer file's; no reader is called.  ``name`` names the answers (the system).

    The calls, the cache, the failures and ``progress`` are :func:`answer_questions`'s.

    Raises:
        LiveCallError: as :func:`answer_questions`.
    """
    if len(answers) != len(questions):
        raise ParameterError("answers", len(answers), f"is not one per question ({len(questions)})", "give one each")
    stats = CallStats()
    caller = _Caller(options, stats, threading.Event())
    tasks = [(_judged, (caller, q, None if a is None else a.strip() or None)) for q, a in zip(questions, answers)]
    results = _run(caller, name, tasks, options.judges, progress)
    judged = LiveAnswers(name, name, None, options, tuple(questions), results, stats)
    _check(judged)
    return judged


def _run(
    caller: _Caller,
    name: str,
    tasks: Sequence[tuple[Any, tuple[Any, ...]]],
    specs: Sequence[RoleSpec],
    progress: CallProgress | bool,
) -> tuple[QuestionResult, ...]:
    """Each task (one question's calls) on a pool as wide as the widest model's concurrency, in order; Ctrl-C
    stops the calls not yet started (those in flight end within their timeout)."""
    shown = progress if isinstance(progress, CallProgress) else (CallProgress() if progress else None)
    stats = caller.stats
    if shown is not None:
        shown.start(name, len(tasks), lambda: (stats.sent, stats.cached, stats.retried))
    workers = max((_policy(spec, "concurrency") for spec in specs), default=1)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentmemory-live")
    try:
        futures = [pool.submit(function, *arguments) for function, arguments in tasks]
        if shown is not None:
            for future in futures:
                future.add_done_callback(lambda _: shown.question())
        results = tuple(f.result() for f in futures)
    except BaseException:  # Ctrl-C: no new call starts; those in flight end within their timeout
        caller.stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    if shown is not None:
        shown.finish()
    return results


def _check(answers: LiveAnswers) -> None:
    """Offline misses, then (unless lenient) failures, as one :class:`LiveCallError` naming the first."""
    options = answers.options
    missed = [(r.question_id, m) for r in answers.results for m in r.missed]
    if missed:
        qid, call = missed[0]
        role = "reader" if call.startswith("the reader") else "judge"
        more = f"; {len(missed) - 1:,} more calls are not in it either" if len(missed) > 1 else ""
        raise LiveCallError(
            answers.name,
            role,
            qid,
            call.split(" (", 1)[1].rstrip(")"),
            f"is not in the cache, and {options.name('offline')} makes no call{more}",
            f"run without {options.name('offline')} to make {'them' if more else 'it'}",
            missed,
        )
    failed = answers.failed
    if failed and not options.lenient:
        qid, reason = failed[0]
        role = "reader" if reason.startswith("the reader") else "judge"
        head, _, problem = reason.partition(") ")
        questions = len({q for q, _ in failed})
        others = f" ({questions - 1:,} more questions failed too)" if questions > 1 else ""
        raise LiveCallError(
            answers.name,
            role,
            qid,
            head.split(" (", 1)[1],
            f"failed{others}: {problem}",
            f"the calls that succeeded are cached: run again to retry the rest, or pass {options.name('lenient')} "
            "to leave the failed questions out (counted in the card)",
            failed,
        )
