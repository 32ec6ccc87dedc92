"""The LoCoMo long-conversation benchmark as a :class:`~agentmemory.collection.Collection`: the ``locomo`` format.

The data (``locomo10.json`` from snap-research/locomo) is not ours to ship;
users bring their own copy.  :func:`load_locomo` reads it, or a file holding
one conversation object of the same shape, and converts it once into typed
records:

**Memories.**  Every turn of every ``session_N`` becomes one
:class:`~agentmemory.records.MemoryEntry`:

* ``id`` ``"<sample_id>/<dia_id>"`` (dia_ids are unique only within one
  conversation), ``scope`` the ``sample_id`` (a conversation's questions
  only search that conversation), text ``"<speaker>: <text>"``, plus
  ``" [image: <blip_caption>]"`` when ``include_captions`` is set and the
  turn has a caption;
* ``tags`` the speaker's normalised name
  (:func:`~agentmemory.tokenize.normalize_tag`) and ``"session-<N>"``;
* ``provenance`` ``source="conversation"``, ``ref`` the entry id,
  ``actor`` the speaker;
* ``created_at``: the session's date-time (LoCoMo gives minutes and no time
  zone; it is read as UTC) **plus i seconds for the turn at 0-based
  position i in the session's list**, so ``created_at`` strictly increases
  within a session and a session of up to 60 turns stays inside its stated
  minute;
* ``metadata``: ``sample_id``, ``dia_id``, ``session``, ``session_date_time``
  (the raw string) and, when present, ``img_url``, ``blip_caption``, ``query``.

Entries come in file order of the conversations, then by session number
(``session_10`` after ``session_9``), then in list order.

**Sessions** (``granularity="session"``; the default is ``"turn"``, the
entries above).  Every ``session_N`` with turns becomes one entry instead:

* ``id`` ``"<sample_id>/S<N>"``, ``scope`` the ``sample_id``;
* text the session's turn texts as above (``"<speaker>: <text>"``, with the
  caption when ``include_captions`` is set) in list order, joined by
  :data:`SESSION_JOIN` (``"\\n"``): ``"Caroline: Hi!\\nMelanie: Hey."``;
* ``tags`` the speakers' normalised names in order of first appearance, then
  ``"session-<N>"``; ``provenance`` ``source="conversation"``, ``ref`` the
  entry id, ``actor`` the speaker when only one speaks, else ``None``;
* ``created_at`` the session's date-time (its first turn's); ``metadata``
  ``sample_id``, ``session``, ``session_date_time`` and ``dia_ids`` (its
  turns', in order).

A query's gold is every session holding one of its evidence turns (grade 1,
each session once); the queries kept and skipped, and the repairs, are those
of the turn granularity (evidence is checked against the turns).
:attr:`Collection.turns` maps each session entry to its turns' entries
(memory systems ingest turns), and ``settings`` is ``{"granularity":
"session"}``.

**Turn runs at session level.**  :attr:`Collection.session_of` is
:func:`locomo_session_of` at either granularity: ``<sample_id>/D<s>:<t>`` ->
``<sample_id>/S<s>``, so LongMemEval's ``sess.`` measures
(:mod:`agentmemory.metrics.longmemeval_official`) score a LoCoMo turn run by
the sessions its turns come from.

**Queries.**  QA item ``i`` (0-based position in the ``qa`` list, so
``conv-26/q3`` is ``$[0].qa[3]``) becomes a :class:`~agentmemory.records.Query`
with id ``"<sample_id>/q<i>"``, the question as text, no tags, ``scope`` the
``sample_id`` and ``group`` the category name from :data:`CATEGORIES`
(``"1 multi-hop"`` ... ``"5 adversarial"``; category 5 is loaded like the
others, leave that group out of a report if you follow the papers that do).
``asked_at`` is the conversation's last session date-time, as the
``created_at`` of its last turn (the items carry no date of their own, and
are asked after the whole conversation, so ``--as-of`` lets each question see
every turn of its conversation).  Every evidence turn is judged relevant with
grade 1.  ``metadata`` keeps
``category``, the raw ``evidence`` and ``answer`` / ``adversarial_answer``.

**Evidence.**  A well-formed evidence string is a dia_id ``D<session>:<turn>``
without leading zeros that names a turn of the same conversation.  Some
published evidence is malformed; nothing is dropped or guessed silently:

* strict (default): a query with any malformed evidence is left out and
  listed in :attr:`Collection.skipped` with one reason per bad string:
  several ids in one string (``"D8:6; D9:17"``), an extra colon
  (``"D:11:26"``), a leading zero (``"D30:05"``), no id at all (``"D"``),
  an id naming no turn of that conversation, an id listed twice;
* ``repair=True``: strings are split on ``;``, ``,`` and white space,
  ``D:11:26`` becomes ``D11:26``, leading zeros are removed (``D30:05`` ->
  ``D30:5``, kept only if that turn exists), ids naming no turn and repeated
  ids are dropped.  Every change is listed in :attr:`Collection.repairs`
  (one line per change).  A query is kept if at least one evidence turn
  remains; otherwise it is skipped with the reason ``"no usable evidence:
  ..."`` naming each drop.

A QA item with an empty evidence list is skipped in both modes with the
reason ``"no evidence"`` (``"no evidence (no 'evidence' field)"`` when the
field is absent or null): with nothing judged relevant it would score 0
whatever a retriever does.

A skipped question still has its answer: each is also in
:attr:`Collection.left_out_queries`, the query it would have been (same id,
text, scope, group, ``asked_at`` and metadata), so answers to it can be
scored.

Everything else that is not LoCoMo-shaped (a wrong type, a missing field, an
unparseable date-time, a dia_id that does not match its session, a repeated
dia_id) raises :class:`~agentmemory.errors.InputError` naming the JSON path,
e.g. ``$[2].conversation.session_3[4].dia_id``.

**Detection.**  Registered as the format ``locomo`` (:data:`FORMAT`; options
``repair``, ``include_captions`` and ``granularity``).  ``format="auto"`` takes a file whose
name ends in ``.json`` (any case) and whose first record, the top-level
object or the first item of a top-level list, has the keys
``"conversation"`` and ``"qa"``.  Only that record's keys are read, as a
stream (:func:`~agentmemory.datasets.sniff.first_record_has_keys`), so other
JSON formats (LongMemEval's list of question objects, say) are told apart
without parsing the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentmemory.collection import Collection
from agentmemory.collection.columns import Entries
from agentmemory.datasets.base import Format, FormatOption
from agentmemory.datasets.sniff import first_record_has_keys
from agentmemory.errors import InputError, ParameterError, UnknownNameError, quote, shorten
from agentmemory.files.reading import describe_json, read_json
from agentmemory.files.trec import TREC_ID_RULE, trec_id_problem
from agentmemory.records import LATEST, TIME_RANGE, MemoryEntry, Provenance, Query
from agentmemory.tokenize import normalize_tag

__all__ = [
    "CATEGORIES",
    "DATE_TIME_FORM",
    "FORMAT",
    "GRANULARITIES",
    "SESSION_JOIN",
    "load_locomo",
    "locomo_session_of",
    "parse_session_datetime",
    "recognise",
]

#: LoCoMo's ``category`` numbers and the group names queries get.
CATEGORIES: Mapping[int, str] = MappingProxyType(
    {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop", 5: "5 adversarial"}
)

#: What ``granularity`` takes: one entry per turn (the default), or per session.
GRANULARITIES: tuple[str, ...] = ("turn", "session")

#: How a session entry's text joins its turns' texts (each ``"<speaker>: <text>"``), in the session's order.
SESSION_JOIN = "\n"

#: The one date-time form :func:`parse_session_datetime` accepts, as shown in messages.
DATE_TIME_FORM = "'h:mm am|pm on D Month, YYYY' like '1:56 pm on 8 May, 2023'"

_MONTHS = {  # English names, independent of the locale (unlike calendar.month_name)
    name: number
    for number, name in enumerate(
        "January February March April May June July August September October November December".split(), start=1
    )
}
_DATE_TIME = re.compile(
    r"(?P<hour>1[0-2]|[1-9]):(?P<minute>[0-5][0-9]) (?P<half>am|pm)"
    r" on (?P<day>[1-9]|[12][0-9]|3[01]) (?P<month>[A-Z][a-z]+), (?P<year>[0-9]{4})"
)
_SESSION_KEY = re.compile(r"session_([0-9]+)")
_DIA_ID = re.compile(r"D([0-9]+):([0-9]+)")
_LOOSE_DIA_ID = re.compile(r"D(:?)([0-9]+):([0-9]+)")
_SEPARATORS = re.compile(r"[;,\s]+")
_TURN_ENTRY = re.compile(r"(.+)/D([0-9]+):[0-9]+")  # <sample_id>/<dia_id>, an entry id of a turn
_ID_FORM = "a dialogue id like D3:7"


def parse_session_datetime(value: object) -> datetime:
    """A LoCoMo session date-time, e.g. ``"1:56 pm on 8 May, 2023"``, as an aware UTC datetime.

    Strict: exactly ``h:mm am|pm on D Month, YYYY`` -- hour 1-12 without a
    leading zero, two-digit minutes, lower-case ``am``/``pm``, day 1-31
    without a leading zero, the English month name in full and capitalised,
    a comma, a four-digit year, single spaces, nothing before or after.
    ``12:xx am`` is just after midnight, ``12:xx pm`` just after noon.
    LoCoMo gives no time zone; the result is read as UTC.

    Raises:
        ParameterError: anything else, or a date that does not exist (30 February).
    """
    match = _DATE_TIME.fullmatch(value) if isinstance(value, str) else None
    month = _MONTHS.get(match["month"]) if match else None
    if match is None or month is None:
        raise ParameterError("date_time", value, "is not a LoCoMo date-time", f"expected {DATE_TIME_FORM}")
    hour = int(match["hour"]) % 12 + (12 if match["half"] == "pm" else 0)
    try:
        return datetime(int(match["year"]), month, int(match["day"]), hour, int(match["minute"]), tzinfo=timezone.utc)
    except ValueError as err:
        raise ParameterError("date_time", value, f"is not a real date ({err})", f"expected {DATE_TIME_FORM}") from None


def _not_locomo(path: Path, found: str) -> InputError:
    return InputError(
        path,
        None,
        f"is not a LoCoMo file: expected a list of conversations with 'conversation' and 'qa' (found {found})",
    )


def _is_sample(value: object) -> bool:
    return isinstance(value, dict) and "conversation" in value and "qa" in value


def _read_json(path: Path) -> tuple[Any, str]:
    """The parsed JSON (read strictly: :func:`agentmemory.files.reading.read_json`) and the file's sha256."""
    return read_json(path, "LoCoMo JSON file (e.g. locomo10.json)")


def _samples(path: Path, document: object) -> list[tuple[str, dict]]:
    """``(json path, sample)`` for every conversation, checked for the top-level shape."""
    if isinstance(document, dict):
        if not _is_sample(document):
            raise _not_locomo(path, describe_json(document))
        return [("$", document)]
    if not isinstance(document, list):
        raise _not_locomo(path, describe_json(document))
    if not document:
        raise _not_locomo(path, "an empty list")
    if not _is_sample(document[0]):
        raise _not_locomo(path, f"a list whose first item is {describe_json(document[0])}")
    out = []
    for index, sample in enumerate(document):
        where = f"$[{index}]"
        if not _is_sample(sample):
            raise InputError(
                path,
                None,
                f"{where}: expected a conversation object with 'sample_id', 'conversation' and 'qa'; found {describe_json(sample)}",
            )
        out.append((where, sample))
    return out


def _string(path: Path, where: str, value: object, what: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise InputError(path, None, f"{where}: expected {what}; found {describe_json(value)}")
    return value


class _Conversation:
    """One sample, validated: its turns as entries and its dia_ids."""

    def __init__(self, path: Path, where: str, sample: dict, include_captions: bool) -> None:
        if "sample_id" not in sample:
            raise InputError(
                path, None, f"{where}.sample_id: missing; every conversation needs a string sample_id like 'conv-26'"
            )
        self.sample_id = _string(path, f"{where}.sample_id", sample["sample_id"], "a non-empty string like 'conv-26'")
        problem = trec_id_problem(self.sample_id)
        if problem is not None:  # the sample_id begins every entry and query id
            raise InputError(
                path,
                None,
                f"{where}.sample_id: {quote(self.sample_id)} {problem}; sample_ids begin ids, and {TREC_ID_RULE}",
            )
        self.where = where
        conversation = sample["conversation"]
        if not isinstance(conversation, dict):
            raise InputError(
                path,
                None,
                f"{where}.conversation: expected an object with session_N lists and session_N_date_time strings; found {describe_json(conversation)}",
            )
        self.entries: list[MemoryEntry] = []
        self.turns: dict[str, str] = {}  # dia_id -> its JSON path
        self.sessions: list[tuple[int, str, list[MemoryEntry]]] = []  # (number, raw date-time, its turns' entries)
        sessions = sorted(
            (_session_number(path, f"{where}.conversation", key, m[1]), key)
            for key in conversation
            if (m := _SESSION_KEY.fullmatch(key))
        )
        for number, key in sessions:
            self._session(path, f"{where}.conversation", conversation, number, key, include_captions)
        self.qa = sample["qa"]
        if not isinstance(self.qa, list):
            raise InputError(
                path, None, f"{where}.qa: expected a list of question objects; found {describe_json(self.qa)}"
            )

    def _session(
        self, path: Path, where: str, conversation: dict, number: int, key: str, include_captions: bool
    ) -> None:
        """Add the entries of session ``key`` (number ``number``): one per turn, a second apart from its start."""
        turns = conversation[key]
        if not isinstance(turns, list):
            raise InputError(path, None, f"{where}.{key}: expected a list of turns; found {describe_json(turns)}")
        if not turns:
            return
        raw_date, start = _session_start(path, where, conversation, key)
        first = len(self.entries)
        for position, turn in enumerate(turns):
            at = f"{where}.{key}[{position}]"
            if not isinstance(turn, dict):
                raise InputError(
                    path, None, f"{at}: expected a turn object with speaker, dia_id, text; found {describe_json(turn)}"
                )
            for field in ("speaker", "dia_id", "text"):
                if field not in turn:
                    raise InputError(path, None, f"{at}.{field}: missing; every turn needs speaker, dia_id and text")
            speaker = _string(path, f"{at}.speaker", turn["speaker"], "a non-empty string")
            text = _string(path, f"{at}.text", turn["text"], "a string", empty=True)
            dia_id = self._dia_id(path, at, turn["dia_id"], number, position, key)
            try:
                created = start + timedelta(seconds=position)
            except OverflowError:
                created = LATEST
            if created >= LATEST:
                raise InputError(
                    path, None, f"{at}: turn {position} of {key} would be created after {TIME_RANGE}; split the session"
                )
            self.turns[dia_id] = at
            metadata: dict[str, Any] = {
                "sample_id": self.sample_id,
                "dia_id": dia_id,
                "session": number,
                "session_date_time": raw_date,
            }
            caption = _turn_extras(path, at, turn, metadata)
            if include_captions and caption:
                text = f"{text} [image: {caption}]"
            entry_id = f"{self.sample_id}/{dia_id}"
            self.entries.append(
                MemoryEntry._trusted(
                    id=entry_id,
                    text=f"{speaker}: {text}",
                    tags=tuple(t for t in (normalize_tag(speaker), f"session-{number}") if t),
                    created_at=created,
                    provenance=Provenance._trusted(source="conversation", ref=entry_id, actor=speaker),
                    scope=self.sample_id,
                    metadata=MappingProxyType(metadata),
                )
            )
        self.sessions.append((number, raw_date, self.entries[first:]))

    def session_entries(self) -> list[MemoryEntry]:
        """One entry per session with turns (see the module docstring), in session order."""
        out = []
        for number, raw_date, turns in self.sessions:
            entry_id = f"{self.sample_id}/S{number}"
            actors = (t.provenance.actor if t.provenance is not None else None for t in turns)
            speakers = [a for a in dict.fromkeys(actors) if a is not None]  # every turn has one (set above)
            out.append(
                MemoryEntry._trusted(
                    id=entry_id,
                    text=SESSION_JOIN.join(t.text for t in turns),
                    tags=(*(t for t in dict.fromkeys(map(normalize_tag, speakers)) if t), f"session-{number}"),
                    created_at=turns[0].created_at,
                    provenance=Provenance._trusted(
                        source="conversation", ref=entry_id, actor=speakers[0] if len(speakers) == 1 else None
                    ),
                    scope=self.sample_id,
                    metadata=MappingProxyType(
                        {
                            "sample_id": self.sample_id,
                            "session": number,
                            "session_date_time": raw_date,
                            "dia_ids": [t.metadata["dia_id"] for t in turns],
                        }
                    ),
                )
            )
        return out

    def _dia_id(self, path: Path, at: str, value: object, number: int, position: int, key: str) -> str:
        """The turn's dia_id, checked: ``D<number>:<turn>`` without leading zeros, not seen before in this sample."""
        dia_id = _string(path, f"{at}.dia_id", value, f"a string like 'D{number}:{position + 1}'")
        match = _DIA_ID.fullmatch(dia_id)
        if match is None or _unpadded(match[1]) != match[1] or _unpadded(match[2]) != match[2]:
            raise InputError(
                path,
                None,
                f"{at}.dia_id: {quote(dia_id)} is not a dialogue id; expected D{number}:<turn> like 'D{number}:{position + 1}'",
            )
        if match[1] != str(number):
            raise InputError(path, None, f"{at}.dia_id: {quote(dia_id)} is not in {key}; expected D{number}:<turn>")
        if dia_id in self.turns:
            raise InputError(path, None, f"{at}.dia_id: {quote(dia_id)} repeats the dia_id of {self.turns[dia_id]}")
        return dia_id

    def strict_evidence(self, evidence: list[str]) -> tuple[list[str], list[str]]:
        """``(ids, problems)``: the evidence ids if all are well formed, else what is wrong with each."""
        problems = []
        seen: set[str] = set()
        for raw in evidence:
            match = _LOOSE_DIA_ID.fullmatch(raw)
            if len([p for p in _SEPARATORS.split(raw) if p]) > 1:
                problems.append(f"evidence {quote(raw)} holds several ids in one string")
            elif match is None:
                problems.append(f"evidence {quote(raw)} is not {_ID_FORM}")
            elif match[1]:
                problems.append(f"evidence {quote(raw)} is not {_ID_FORM} (extra ':' after 'D')")
            elif _canonical(match) != raw:
                problems.append(f"evidence {quote(raw)} is not {_ID_FORM} (leading zero)")
            elif raw not in self.turns:
                problems.append(f"evidence {quote(raw)} names no turn in {self.sample_id}")
            elif raw in seen:
                problems.append(f"evidence {quote(raw)} is listed twice")
            seen.add(raw)
        return (list(dict.fromkeys(evidence)) if not problems else []), problems

    def repair_evidence(self, evidence: list[str]) -> tuple[list[str], list[str], list[str]]:
        """``(ids, changes, drops)``: the usable ids, the repairs made and the strings dropped."""
        ids: list[str] = []
        changes: list[str] = []
        drops: list[str] = []
        for raw in evidence:
            parts = [p for p in _SEPARATORS.split(raw) if p] or [raw]
            if len(parts) > 1:
                changes.append(f"evidence {quote(raw)} split into {shorten(', '.join(parts))}")
            elif parts[0] != raw:
                changes.append(f"evidence {quote(raw)} stripped to {shorten(parts[0])}")
            for part in parts:
                match = _LOOSE_DIA_ID.fullmatch(part)
                if match is None:
                    drops.append(f"evidence {quote(part)} dropped: not {_ID_FORM}")
                    continue
                canonical = _canonical(match)
                if canonical not in self.turns:
                    drops.append(f"evidence {quote(part)} dropped: no turn {shorten(canonical)} in {self.sample_id}")
                    continue
                if canonical in ids:
                    drops.append(f"evidence {quote(part)} dropped: {shorten(canonical)} is listed twice")
                    continue
                if canonical != part:
                    changes.append(f"evidence {quote(part)} normalised to {shorten(canonical)}")
                ids.append(canonical)
        return ids, changes, drops


def _canonical(match: re.Match[str]) -> str:
    return f"D{_unpadded(match[2])}:{_unpadded(match[3])}"


def _unpadded(digits: str) -> str:
    """ASCII ``digits`` without leading zeros (``"007"`` -> ``"7"``, ``"0"`` -> ``"0"``), as ``str(int(digits))``
    gives for any length (``int`` refuses more than 4,300 digits)."""
    return digits.lstrip("0") or "0"


def _session_start(path: Path, where: str, conversation: dict, key: str) -> tuple[str, datetime]:
    """``(raw, parsed)``: session ``key``'s ``<key>_date_time``, checked (present, LoCoMo's form, in range)."""
    date_key = f"{key}_date_time"
    if date_key not in conversation:
        raise InputError(
            path, None, f"{where}.{date_key}: missing; every session with turns needs a date-time, {DATE_TIME_FORM}"
        )
    raw_date = conversation[date_key]
    try:
        start = parse_session_datetime(raw_date)
    except ParameterError:
        raise InputError(
            path,
            None,
            f"{where}.{date_key}: {quote(raw_date)} is not a LoCoMo date-time; expected {DATE_TIME_FORM}",
        ) from None
    if start >= LATEST:
        raise InputError(path, None, f"{where}.{date_key}: {quote(raw_date)} is out of range; expected {TIME_RANGE}")
    return raw_date, start


def _turn_extras(path: Path, at: str, turn: dict, metadata: dict[str, Any]) -> str | None:
    """Check a turn's optional blip_caption, img_url and query into ``metadata``; return the caption (or None)."""
    caption = turn.get("blip_caption")
    if "blip_caption" in turn:
        caption = _string(path, f"{at}.blip_caption", caption, "a string", empty=True)
        metadata["blip_caption"] = caption
    if "img_url" in turn:
        urls = turn["img_url"]
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise InputError(path, None, f"{at}.img_url: expected a list of URL strings; found {describe_json(urls)}")
        metadata["img_url"] = list(urls)
    if "query" in turn:
        metadata["query"] = _string(path, f"{at}.query", turn["query"], "a string", empty=True)
    return caption


def _session_number(path: Path, where: str, key: str, digits: str) -> int:
    """The number of the session key ``session_<digits>``; at most nine digits."""
    if len(digits) > 9:
        raise InputError(
            path,
            None,
            f"{where}.{quote(key, 40)}: session number of {len(digits):,} digits; expected session_1, session_2, ...",
        )
    return int(digits)


def _qa_item(path: Path, where: str, item: object) -> tuple[str, int, list[str] | None, dict[str, Any]]:
    """``(question, category, evidence, metadata)`` of one QA item, checked (evidence None when absent)."""
    if not isinstance(item, dict):
        raise InputError(
            path,
            None,
            f"{where}: expected a question object with question, evidence, category; found {describe_json(item)}",
        )
    for field in ("question", "category"):
        if field not in item:
            raise InputError(path, None, f"{where}.{field}: missing; every qa item needs a question and a category")
    question = _string(path, f"{where}.question", item["question"], "a non-empty string")
    category = item["category"]
    if isinstance(category, bool) or not isinstance(category, int) or category not in CATEGORIES:
        choices = ", ".join(f"{n} ({name.split(' ', 1)[1]})" for n, name in CATEGORIES.items())
        raise InputError(
            path, None, f"{where}.category: {quote(category)} is not a LoCoMo category; expected one of {choices}"
        )
    evidence = item.get("evidence")
    if evidence is None:
        return question, category, None, {"category": category, **_answers(item)}
    if not isinstance(evidence, list):
        raise InputError(
            path, None, f"{where}.evidence: expected a list of dia_id strings; found {describe_json(evidence)}"
        )
    for position, raw in enumerate(evidence):
        _string(path, f"{where}.evidence[{position}]", raw, "a dia_id string like 'D3:7'", empty=True)
    return question, category, evidence, {"category": category, "evidence": list(evidence), **_answers(item)}


def _answers(item: dict) -> dict[str, Any]:
    return {key: item[key] for key in ("answer", "adversarial_answer") if key in item}


def _conversations(source: Path, document: object, include_captions: bool, progress: bool) -> list[_Conversation]:
    """Every conversation of the file, read and checked in file order (a tqdm bar over them with ``progress``).

    Raises:
        InputError: a conversation is not LoCoMo-shaped, or repeats another's ``sample_id``.
    """
    parsed: list[_Conversation] = []
    first: dict[str, str] = {}
    samples: Any = _samples(source, document)
    if progress:
        from tqdm.auto import tqdm  # only for the bar

        samples = tqdm(samples, desc=f"load {source.name}", unit=" conversations")
    for where, sample in samples:
        conv = _Conversation(source, where, sample, include_captions)
        if conv.sample_id in first:
            raise InputError(
                source,
                None,
                f"{where}.sample_id: {quote(conv.sample_id)} repeats the sample_id of {first[conv.sample_id]}",
            )
        first[conv.sample_id] = where
        parsed.append(conv)
    return parsed


def load_locomo(
    path: str | PathLike[str],
    *,
    repair: bool = False,
    include_captions: bool = False,
    conversations: str | Iterable[str] | None = None,
    granularity: str = "turn",
    progress: bool = False,
) -> Collection:
    """Load LoCoMo (``locomo10.json`` or one conversation object) as a collection.

    See the module docstring for the exact mapping.  ``repair`` chooses how
    malformed evidence is handled (strict skips, repair fixes what it can;
    both are reported in ``skipped`` / ``repairs``); ``include_captions``
    appends image captions to turn texts; ``conversations`` keeps only the
    named ``sample_id`` (a string) or ``sample_id``\\ s (in file order; the
    whole file is still validated); ``granularity`` is ``"turn"`` (the
    default: one entry per turn) or ``"session"`` (one per session);
    ``progress`` shows a tqdm bar over the conversations as they are read (on stderr).

    The collection's ``name`` is the file's stem, ``files`` maps the file's
    name to its sha256, ``format_options`` holds the three options; ``session_of``
    is :func:`locomo_session_of`; at session granularity ``settings`` is
    ``{"granularity": "session"}`` and ``turns`` maps each session entry to its
    turns' entries (both empty at turn granularity, as before the option existed).

    Raises:
        MissingFileError: ``path`` does not exist.
        InputError: the file is not UTF-8 JSON (with the line) or not
            LoCoMo-shaped (with the JSON path of the first wrong field).
        UnknownNameError: ``conversations`` names a sample_id not in the file,
            or ``granularity`` is not ``turn`` or ``session``.
        ParameterError: ``conversations`` is empty or not strings.
    """
    if granularity not in GRANULARITIES:
        raise UnknownNameError("granularity", granularity, GRANULARITIES)
    by_session = granularity == "session"
    source = Path(path)
    document, sha = _read_json(source)
    parsed = _conversations(source, document, include_captions, progress)
    items = {  # every QA item is validated, selected or not
        conv.sample_id: [_qa_item(source, f"{conv.where}.qa[{i}]", item) for i, item in enumerate(conv.qa)]
        for conv in parsed
    }

    selected = _select(conversations, [c.sample_id for c in parsed])
    entries: list[MemoryEntry] = []
    queries: list[Query] = []
    qrels: dict[str, Mapping[str, int]] = {}
    skipped: list[tuple[str, str]] = []
    left_out: list[Query] = []
    repairs: list[tuple[str, str]] = []
    turns: dict[str, tuple[MemoryEntry, ...]] = {}
    for conv in parsed:
        if conv.sample_id not in selected:
            continue
        if by_session:
            sessions = conv.session_entries()
            entries.extend(sessions)
            turns.update((e.id, tuple(t)) for e, (_, _, t) in zip(sessions, conv.sessions, strict=True))
        else:
            entries.extend(conv.entries)
        # LoCoMo's questions carry no date: they are asked after the whole conversation, so at its latest turn
        asked = max((e.created_at for e in conv.entries if e.created_at is not None), default=None)
        for index, (question, category, evidence, metadata) in enumerate(items[conv.sample_id]):
            query_id = f"{conv.sample_id}/q{index}"
            query = Query._trusted(
                id=query_id,
                text=question,
                tags=None,
                scope=conv.sample_id,
                group=CATEGORIES[category],
                asked_at=asked,
                metadata=MappingProxyType(metadata),
            )
            if not evidence:
                skipped.append(
                    (query_id, "no evidence" if evidence is not None else "no evidence (no 'evidence' field)")
                )
                left_out.append(query)
                continue
            if repair:
                ids, changes, drops = conv.repair_evidence(evidence)
                if not ids:
                    skipped.append((query_id, "no usable evidence: " + "; ".join(drops)))
                    left_out.append(query)
                    continue
                repairs.extend((query_id, change) for change in changes + drops)
            else:
                ids, problems = conv.strict_evidence(evidence)
                if problems:
                    skipped.append((query_id, "; ".join(problems)))
                    left_out.append(query)
                    continue
            queries.append(query)
            judged = (
                locomo_session_of(f"{conv.sample_id}/{d}") if by_session else f"{conv.sample_id}/{d}" for d in ids
            )
            qrels[query_id] = MappingProxyType(dict.fromkeys(judged, 1))

    return Collection(
        name=source.stem,
        entries=Entries.of(entries),  # the same columns as every reader's (the records made when asked)
        queries=tuple(queries),
        qrels=MappingProxyType(qrels),
        files=MappingProxyType({source.name: sha}),
        skipped=tuple(skipped),
        repairs=tuple(repairs),
        headline_excludes=(CATEGORIES[5],),
        settings=MappingProxyType({"granularity": "session"}) if by_session else MappingProxyType({}),
        granularity=granularity,
        turns=MappingProxyType(turns),
        session_of=locomo_session_of,
        format="locomo",
        format_options=_read_with(repair, include_captions, granularity),
        left_out_queries=tuple(left_out),
    )


def _read_with(repair: bool, include_captions: bool, granularity: str) -> Mapping[str, object]:
    """The options a collection was read with, in the format's declared order (``Collection.format_options``)."""
    return MappingProxyType({"repair": repair, "include_captions": include_captions, "granularity": granularity})


def locomo_session_of(entry_id: str) -> str:
    """The session of a LoCoMo entry id: ``<sample_id>/D<s>:<t> -> <sample_id>/S<s>``; any other id is its own.

    So a session entry (``conv-26/S3``) maps to itself, and the ``sess.`` measures of a session run equal the
    plain ones; an id that is not a LoCoMo turn's (a memory system's own memory) is a session of its own.
    """
    match = _TURN_ENTRY.fullmatch(entry_id)
    return f"{match[1]}/S{match[2]}" if match else entry_id


def _select(conversations: str | Iterable[str] | None, sample_ids: list[str]) -> set[str]:
    if conversations is None:
        return set(sample_ids)
    wanted = [conversations] if isinstance(conversations, str) else conversations
    try:
        wanted = list(wanted)
    except TypeError:
        raise ParameterError(
            "conversations",
            conversations,
            "is not a sample_id or a list of them",
            "pass e.g. ['conv-26'] or None for all",
        ) from None
    if not wanted:
        raise ParameterError("conversations", conversations, "is empty", "pass at least one sample_id, or None for all")
    for value in wanted:
        if value not in sample_ids:
            raise UnknownNameError("conversations", value, sample_ids)
    return set(wanted)


_KEYS = ("conversation", "qa")


def recognise(path: Path) -> bool:
    """True for a ``.json`` file whose first record has the keys ``conversation`` and ``qa`` (see the module docstring)."""
    return path.is_file() and path.suffix.lower() == ".json" and first_record_has_keys(path, _KEYS)


def read(path: Path, *, repair: bool, include_captions: bool, granularity: str, progress: bool = False) -> Collection:
    """The ``locomo`` format's reader: :func:`load_locomo` (``progress``: a bar over the conversations)."""
    return load_locomo(
        path, repair=repair, include_captions=include_captions, granularity=granularity, progress=progress
    )


FORMAT = Format(
    name="locomo",
    recognise=recognise,
    read=read,
    options=(
        FormatOption("repair", bool, False, "split and normalise malformed evidence ids, listing every change"),
        FormatOption("include_captions", bool, False, "append each turn's image caption to its text"),
        FormatOption(
            "granularity",
            str,
            "turn",
            "one entry per turn (the default) or per session, its turns joined: turn or session",
        ),
    ),
    description="a LoCoMo JSON file: locomo10.json, or one conversation object",
    rule="a .json file whose top-level object, or first list item, has the keys 'conversation' and 'qa'",
)
"""The ``locomo`` format's declaration, registered by :mod:`agentmemory.datasets`."""
