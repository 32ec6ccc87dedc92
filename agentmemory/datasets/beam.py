"""The BEAM benchmark as a :class:`~agentmemory.collection.Collection`: the ``beam`` format.

BEAM ("Beyond a Million Tokens", Tavakoli et al., 2025; github
mohammadtavakoli78/BEAM) has no license file: it is not ours to ship, and
users bring their own copy.  A **chat folder** holds ``chat.json`` and
``probing_questions/probing_questions.json``; a **size folder** (``chats/100K``,
``chats/500K`` ...) holds chat folders.  :func:`load_beam` reads either; each
chat is one scope (its questions search only its own messages).

**chat.json** is a list of batches ``{"batch_number", "time_anchor"?, "turns"}``;
``turns`` is a list of turns, each a list of messages ``{"role": "user" |
"assistant", "id": <int, unique in the chat>, "content", "time_anchor"?,
"index"?, "question_type"?}``.

**Entries.**  One :class:`~agentmemory.records.MemoryEntry` per message (both
roles; ``user_turns_only=True`` keeps the user's), in file order:

* ``id`` ``"<chat>/<message id>"``, where ``<chat>`` is the chat folder's name
  (``"3"`` for ``chats/100K/3``); ``scope`` the chat;
* text: the content, with the **index suffix** stripped: most user messages end
  with a copy of their ``index`` (``"... ->-> 1,1"``); when the text after the
  last ``"->->"`` of the content holds no line break, that marker, the text
  after it and the white space before it are removed, and the text after the
  marker (trimmed) is kept in ``metadata["index_suffix"]``.  Anything else is
  left as it is (an ``->->`` followed by more lines is content);
* ``created_at`` from the **time anchors** (``"March-15-2024"``: an English
  month name, the day, the year; read as midnight UTC).  A message's anchor is
  its own ``time_anchor``, or its batch's ``time_anchor`` for the batch's first
  message when that message has none.  A message without an anchor takes the
  last anchor before it in file order **plus one second per message since the
  anchored one** (the anchored message is at +0 s, the next at +1 s, ...), so
  ``created_at`` strictly increases between anchors.  Messages before the
  first anchor have no ``created_at`` (``None``: never hidden by ``--as-of``);
* ``metadata``: ``chat``, ``message_id``, ``batch`` (``batch_number``: the
  message's session), ``turn`` (0-based in the batch), ``role``, and when present
  ``time_anchor``, ``index``, ``index_suffix``, ``question_type``;
  ``provenance`` ``source="conversation"``, ``ref`` the entry id, ``actor`` the role.

**Queries.**  One :class:`~agentmemory.records.Query` per probing question,
id ``"<chat>/<ability>/<i>"`` (``i`` 0-based in the ability's list), the
question as text, ``scope`` the chat, ``group`` the ability
(:data:`ABILITIES`), and ``asked_at`` **one second after the latest
``created_at`` of the chat** (after its last message, so ``--as-of`` lets a
question see the whole chat; ``None`` when no message has a date).
``metadata``: ``chat``, ``ability``, ``difficulty`` (as given, ``""``
included: :func:`difficulty_group` names the groups a report shows),
``answer`` (the first of ``answer``, ``ideal_answer``, ``ideal_response``,
``ideal_summary``, ``expected_compliance`` present), ``source_chat_ids`` (as
given), and for a knowledge update ``original_info`` and ``updated_info``
(entry ids, sorted), the ids :mod:`agentmemory.metrics.stale` reads.

**Judgments** (grade 1) from ``source_chat_ids``, either a list of message ids
(items may be lists, nested to any depth: flattened; a repeated id counts
once) or an object of such lists, one per side: ``first_statement`` /
``second_statement`` (contradiction resolution), ``first_event`` /
``second_event`` (temporal reasoning), ``original_info`` / ``updated_info``
(knowledge update; only this ability needs the object form).  Both sides are
relevant, except for knowledge updates, where ``updates`` decides:

* ``"fresh"`` (default): only the ``updated_info`` messages are relevant; an
  id listed on both sides counts as updated (it is not original);
* ``"both"``: both sides are relevant.

Either way the original ids (those not also updated) are in the query's
metadata.  A knowledge update with an empty side (no ``updated_info``, or no
original id once the updated ones are removed) is left out of ``stale@k`` and
listed in :attr:`Collection.notes`; with ``updates="fresh"`` and no
``updated_info`` nothing is relevant, and the question is skipped.  With
``user_turns_only`` an evidence id of an assistant message is not judged (its
message is not indexed; listed in the notes), and a question left with
nothing judged is skipped.

**Left out, and listed in** :attr:`Collection.skipped` **with the reason**:

* abstention questions (the ability ``abstention``: no evidence by design);
* a question with no ``source_chat_ids`` (missing or ``null``) or an empty one;
* a malformed ``source_chat_ids`` (strict, the default), one reason per
  problem: an id the chat does not have (a **dangling** id), an item that is
  not an integer (a string, a number with a fraction, a boolean, an object),
  an object with keys other than the ability's two sides, an object for an
  ability without sides, a list for a knowledge update.  With
  ``repair=True`` the unambiguous ones are repaired, every change listed in
  :attr:`Collection.repairs`: a dangling id is dropped, a string of ASCII
  digits (``"12"``) is read as that id; the question is skipped when nothing
  remains, or when a problem cannot be repaired.

Every question left out still has its text and answer: each is also in
:attr:`Collection.left_out_queries`, as the query it would have been (a
knowledge update's metadata with its sides when they were read; no
``source_chat_ids`` when the question has none), so answers to it can be scored.

Everything else that is not BEAM-shaped raises
:class:`~agentmemory.errors.InputError` naming the file and the JSON path
(``$[2].turns[4][1].id: ...``): a wrong type, a missing field, a role other
than ``user``/``assistant``, a repeated message id, a time anchor that is not
a date, an unknown ability, a question without text; and a chat folder
without ``chat.json`` or ``probing_questions/probing_questions.json``.

**Detection.**  Registered as the format ``beam`` (:data:`FORMAT`; options
``updates``, ``all_turns``, ``user_turns_only``, ``repair``).
``format="auto"`` takes a folder holding ``chat.json`` and
``probing_questions/probing_questions.json``, or a folder one of whose
subfolders does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta, timezone
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from agentmemory.collection import Collection
from agentmemory.collection.columns import Entries
from agentmemory.datasets.base import Format, FormatOption
from agentmemory.errors import InputError, MissingFileError, ParameterError, UnknownNameError, quote
from agentmemory.files.reading import decode_utf8, describe_json, parse_json, path_kind, read_bytes
from agentmemory.files.trec import TREC_ID_RULE, trec_id_problem
from agentmemory.records import LATEST, TIME_RANGE, MemoryEntry, Provenance, Query

__all__ = [
    "ABILITIES",
    "ANCHOR_FORM",
    "FORMAT",
    "SIDES",
    "UPDATES",
    "chat_folders",
    "difficulty_group",
    "load_beam",
    "parse_time_anchor",
    "recognise",
    "strip_index_suffix",
]

#: BEAM's ten memory abilities: the keys of ``probing_questions.json`` and the queries' groups.
ABILITIES: tuple[str, ...] = (
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
)

#: The two sides of the object form of ``source_chat_ids``, per ability that has them.
SIDES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "contradiction_resolution": ("first_statement", "second_statement"),
        "temporal_reasoning": ("first_event", "second_event"),
        "knowledge_update": ("original_info", "updated_info"),
    }
)

#: What ``updates`` takes: only the updated message is relevant, or both sides are.
UPDATES: tuple[str, ...] = ("fresh", "both")

#: The one time-anchor form :func:`parse_time_anchor` accepts, as shown in messages.
ANCHOR_FORM = "'Month-DD-YYYY' like 'March-15-2024'"

CHAT_FILE = "chat.json"
QUESTIONS_FILE = "probing_questions/probing_questions.json"
_ANSWER_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
_ROLES = ("user", "assistant")
_MONTHS = {
    name: number
    for number, name in enumerate(
        "January February March April May June July August September October November December".split(), start=1
    )
}
_ANCHOR = re.compile(r"(?P<month>[A-Z][a-z]+)-(?P<day>[0-9]{1,2})-(?P<year>[0-9]{4})")
_MARKER = "->->"
_DIGITS = re.compile(r"[0-9]+")


def parse_time_anchor(value: object) -> datetime:
    """A BEAM time anchor, e.g. ``"March-15-2024"``, as midnight UTC of that day.

    Strict: the English month name in full and capitalised, a hyphen, the day
    (one or two digits), a hyphen, a four-digit year; a real date.

    Raises:
        ParameterError: anything else, or a date that does not exist (February-30-2024).
    """
    match = _ANCHOR.fullmatch(value) if isinstance(value, str) else None
    if match is None or match["month"] not in _MONTHS:
        raise ParameterError("time_anchor", value, "is not a BEAM time anchor", f"expected {ANCHOR_FORM}")
    try:
        parsed = datetime(int(match["year"]), _MONTHS[match["month"]], int(match["day"]), tzinfo=timezone.utc)
    except ValueError as err:
        raise ParameterError("time_anchor", value, f"is not a real date ({err})", f"expected {ANCHOR_FORM}") from None
    if parsed + timedelta(days=1) >= LATEST:  # the event clock counts on from the newest date
        raise ParameterError("time_anchor", value, "is out of range", f"expected {TIME_RANGE}")
    return parsed


def strip_index_suffix(content: str) -> tuple[str, str | None]:
    """``(text, suffix)``: ``content`` without a trailing ``" ->-> 1,1"`` and the suffix (``"1,1"``), or ``(content, None)``.

    The suffix is what follows the last ``"->->"`` when it holds no line
    break; the marker, the suffix and the white space before the marker are
    removed, and the suffix is returned trimmed.
    """
    at = content.rfind(_MARKER)
    if at < 0:
        return content, None
    tail = content[at + len(_MARKER) :]
    if "\n" in tail or "\r" in tail:
        return content, None
    return content[:at].rstrip(), tail.strip()


def difficulty_group(difficulty: str) -> str:
    """The difficulty a report groups a question under: as given, ``"(none)"`` for the empty string."""
    return difficulty if difficulty else "(none)"


# --- reading and shape checks (InputError) ----------------------------------------------------------


def _read_json(path: Path, what: str) -> tuple[Any, str]:
    """The parsed JSON (strict: :func:`agentmemory.files.reading.parse_json`) and the file's sha256."""
    data = read_bytes(path, what)
    sha = hashlib.sha256(data).hexdigest()
    return parse_json(decode_utf8(path, data), path, root="$"), sha


def _is_chat_folder(path: Path) -> bool:
    return (path / CHAT_FILE).is_file() and (path / QUESTIONS_FILE).is_file()


def _looks_like_chat_folder(path: Path) -> bool:
    """A folder with either of the two files (a partial chat: an error names what is missing)."""
    return (path / CHAT_FILE).exists() or (path / QUESTIONS_FILE).exists()


def _chat_order(path: Path) -> tuple[int, int, str]:
    """Numeric names in numeric order (``2`` before ``10``), then the others by name."""
    name = path.name
    return (0, int(name), name) if name.isdigit() else (1, 0, name)


def chat_folders(path: str | PathLike[str]) -> list[Path]:
    """The chat folders ``path`` stands for: itself when it is a chat folder, else its subfolders that are.

    Subfolders come in numeric order of their names (``1, 2, ..., 10``), then
    the other names sorted; a subfolder holding only one of the two files is
    included (and refused when read, naming the missing file).

    Raises:
        MissingFileError: ``path`` does not exist.
        InputError: ``path`` is not a folder, or holds no chat folder.
    """
    root = Path(path)
    kind = path_kind(root)
    if kind is not None or not root.is_dir():
        raise InputError(root, None, f"is {kind or 'a file'}; expected a BEAM chat folder or a folder of chat folders")
    if _looks_like_chat_folder(root):
        return [root]
    chats = sorted((p for p in root.iterdir() if p.is_dir() and _looks_like_chat_folder(p)), key=_chat_order)
    if not chats:
        raise InputError(
            root,
            None,
            f"is not a BEAM folder: expected {CHAT_FILE} and {QUESTIONS_FILE} in it or in its subfolders (a size "
            "folder such as chats/100K)",
        )
    return chats


class _Message(NamedTuple):
    id: int
    role: str
    text: str
    batch: int
    turn: int
    created_at: datetime | None
    metadata: Mapping[str, Any]


def _require(path: Path, where: str, value: object, field: str) -> object:
    if not isinstance(value, dict) or field not in value:
        raise InputError(path, None, f"{where}.{field}: missing")
    return value[field]


def _anchor(path: Path, where: str, value: object) -> datetime:
    try:
        return parse_time_anchor(value)
    except ParameterError as err:
        raise InputError(path, None, f"{where}: {quote(value)} {err.problem}; {err.allowed}") from None


def _batch_header(path: Path, at: str, batch: object) -> tuple[int, datetime | None, object, list]:
    """A batch's number, its time anchor (parsed, and as written) and its list of turns, checked."""
    if not isinstance(batch, dict):
        raise InputError(path, None, f"{at}: expected a batch object with 'turns'; found {describe_json(batch)}")
    number = _require(path, at, batch, "batch_number")
    if isinstance(number, bool) or not isinstance(number, int):
        raise InputError(path, None, f"{at}.batch_number: expected an integer; found {describe_json(number)}")
    batch_anchor = batch.get("time_anchor")
    batch_time = None if batch_anchor is None else _anchor(path, f"{at}.time_anchor", batch_anchor)
    turns = _require(path, at, batch, "turns")
    if not isinstance(turns, list):
        raise InputError(path, None, f"{at}.turns: expected a list of turns; found {describe_json(turns)}")
    return number, batch_time, batch_anchor, turns


def _checked_message(path: Path, where: str, message: object, seen: dict[int, str]) -> tuple[str, int, str]:
    """A message's role, id and content, checked (an id seen before in the chat is refused)."""
    if not isinstance(message, dict):
        raise InputError(
            path,
            None,
            f"{where}: expected a message object with role, id and content; found {describe_json(message)}",
        )
    for field in ("role", "id", "content"):
        if field not in message:
            raise InputError(path, None, f"{where}.{field}: missing; every message needs role, id and content")
    role = message["role"]
    if role not in _ROLES:
        raise InputError(path, None, f"{where}.role: expected 'user' or 'assistant'; found {describe_json(role)}")
    mid = message["id"]
    if isinstance(mid, bool) or not isinstance(mid, int) or mid < 0:
        raise InputError(path, None, f"{where}.id: expected an integer >= 0; found {describe_json(mid)}")
    if mid in seen:
        raise InputError(path, None, f"{where}.id: {mid} repeats the id of {seen[mid]}")
    seen[mid] = where
    content = message["content"]
    if not isinstance(content, str):
        raise InputError(path, None, f"{where}.content: expected a string; found {describe_json(content)}")
    return role, mid, content


def _optional_strings(path: Path, where: str, message: dict, meta: dict[str, Any]) -> None:
    """A message's ``index`` and ``question_type``, when present, into ``meta`` (strings only)."""
    for field in ("index", "question_type"):
        value = message.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InputError(path, None, f"{where}.{field}: expected a string; found {describe_json(value)}")
        meta[field] = value


def _messages(path: Path, chat: str, document: object) -> list[_Message]:
    """Every message of one chat.json, in file order, with its ``created_at`` (rule: module docstring)."""
    if not isinstance(document, list) or not document:
        raise InputError(
            path,
            None,
            f"is not a BEAM chat.json: expected a non-empty list of batches (found {describe_json(document)})",
        )
    out: list[_Message] = []
    seen: dict[int, str] = {}
    anchor: datetime | None = None
    since = 0
    for b, batch in enumerate(document):
        at = f"$[{b}]"
        number, batch_time, batch_anchor, turns = _batch_header(path, at, batch)
        first_of_batch = True
        for t, turn in enumerate(turns):
            if not isinstance(turn, list):
                raise InputError(
                    path, None, f"{at}.turns[{t}]: expected a turn, a list of messages; found {describe_json(turn)}"
                )
            for m, message in enumerate(turn):
                where = f"{at}.turns[{t}][{m}]"
                role, mid, content = _checked_message(path, where, message, seen)
                meta: dict[str, Any] = {"chat": chat, "message_id": mid, "batch": number, "turn": t, "role": role}
                own = message.get("time_anchor")
                if own is not None:
                    anchor, since = _anchor(path, f"{where}.time_anchor", own), 0
                    meta["time_anchor"] = own
                elif first_of_batch and batch_time is not None:
                    anchor, since = batch_time, 0
                    meta["time_anchor"] = batch_anchor
                else:
                    since += 1
                _optional_strings(path, where, message, meta)
                text, suffix = strip_index_suffix(content)
                if suffix is not None:
                    meta["index_suffix"] = suffix
                created = None if anchor is None else anchor + timedelta(seconds=since)
                out.append(_Message(mid, role, text, number, t, created, MappingProxyType(meta)))
                first_of_batch = False
    return out


class _Question(NamedTuple):
    ability: str
    position: int
    where: str
    text: str
    difficulty: str
    answer: object
    source: object  # source_chat_ids as given (absent: ...)


_ABSENT = object()


def _questions(path: Path, document: object) -> list[_Question]:
    if not isinstance(document, dict):
        raise InputError(
            path,
            None,
            f"is not a BEAM probing_questions.json: expected an object keyed by ability (found {describe_json(document)})",
        )
    out: list[_Question] = []
    for ability, items in document.items():
        where = f"$.{ability}"
        if ability not in ABILITIES:
            raise InputError(
                path, None, f"{where}: {quote(ability)} is not a BEAM ability; expected one of " + ", ".join(ABILITIES)
            )
        if not isinstance(items, list):
            raise InputError(path, None, f"{where}: expected a list of questions; found {describe_json(items)}")
        for i, item in enumerate(items):
            at = f"{where}[{i}]"
            if not isinstance(item, dict):
                raise InputError(path, None, f"{at}: expected a question object; found {describe_json(item)}")
            text = item.get("question")
            if not isinstance(text, str) or not text.strip():
                raise InputError(path, None, f"{at}.question: expected a non-empty string; found {describe_json(text)}")
            difficulty = item.get("difficulty", "")
            if not isinstance(difficulty, str):
                raise InputError(path, None, f"{at}.difficulty: expected a string; found {describe_json(difficulty)}")
            answer = next((item[f] for f in _ANSWER_FIELDS if f in item), None)
            out.append(_Question(ability, i, at, text, difficulty, answer, item.get("source_chat_ids", _ABSENT)))
    return out


# --- source_chat_ids: evidence, checked (skip or repair) ---------------------------------------------


class _Evidence(NamedTuple):
    sides: dict[str, list[int]]  # side name ("" for the list form) -> ids in order, each once
    problems: list[str]  # strict: every problem; repair: those that cannot be repaired
    changes: list[str]


def _flatten(value: object, where: str, ids: set[int], repair: bool, ev: _Evidence, out: list[int]) -> None:
    """The ids of a (nested) list, each checked against the chat's ``ids``, appended to ``out`` once each."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            _flatten(item, f"{where}[{i}]", ids, repair, ev, out)
        return
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        if repair:
            number = int(value)
            ev.changes.append(f"{where}: the string {quote(value)} read as the message id {number}")
        else:
            ev.problems.append(f"{where}: {quote(value)} is a string, not a message id (an integer)")
            return
    else:
        ev.problems.append(f"{where}: {describe_json(value)} is not a message id (an integer)")
        return
    if number not in ids:
        if repair:
            ev.changes.append(f"{where}: message id {number} dropped: the chat has no message with that id")
        else:
            ev.problems.append(f"{where}: message id {number} is not in the chat (a dangling id)")
        return
    if number not in out:
        out.append(number)


def _evidence(q: _Question, ids: set[int], repair: bool) -> _Evidence:
    ev = _Evidence({}, [], [])
    source = q.source
    sides = SIDES.get(q.ability)
    if isinstance(source, dict):
        if sides is None:
            ev.problems.append(
                f"source_chat_ids is {describe_json(source)}; the {q.ability} ability takes a list of message ids"
            )
            return ev
        keys = set(source)
        if keys != set(sides):
            ev.problems.append(
                f"source_chat_ids is {describe_json(source)}; expected exactly the keys {sides[0]!r} and {sides[1]!r}"
            )
            return ev
        for side in sides:
            found: list[int] = []
            _flatten(source[side], f"source_chat_ids.{side}", ids, repair, ev, found)
            ev.sides[side] = found
        return ev
    if isinstance(source, list):
        if q.ability == "knowledge_update":
            ev.problems.append(
                f"source_chat_ids is {describe_json(source)}; a knowledge update needs an object with 'original_info' "
                "and 'updated_info'"
            )
            return ev
        found = []
        _flatten(source, "source_chat_ids", ids, repair, ev, found)
        ev.sides[""] = found
        return ev
    ev.problems.append(
        f"source_chat_ids is {describe_json(source)}; expected a list of message ids or an object of lists"
    )
    return ev


def _entry_ids(chat: str, ids: list[int]) -> tuple[str, ...]:
    return tuple(sorted(f"{chat}/{i}" for i in ids))


# --- loading -----------------------------------------------------------------------------------------


class _Chat(NamedTuple):
    entries: list[MemoryEntry]
    queries: list[Query]
    qrels: dict[str, Mapping[str, int]]
    skipped: list[tuple[str, str]]
    repairs: list[tuple[str, str]]
    notes: list[tuple[str, str]]
    files: dict[str, str]
    left_out: list[Query]


def _check_chat_id(folder: Path, chat: str) -> None:
    problem = trec_id_problem(chat)
    if problem is not None:
        raise InputError(folder, None, f"the chat folder's name {quote(chat)} {problem}; {TREC_ID_RULE}")


def _usable_evidence(q: _Question, ids: set[int], repair: bool) -> tuple[_Evidence | None, str | None]:
    """A question's evidence, or why the question is skipped (no field, problems, nothing left)."""
    if q.source is _ABSENT or q.source is None:
        field = "no source_chat_ids field" if q.source is _ABSENT else "source_chat_ids is null"
        return None, f"no evidence ({field})"
    ev = _evidence(q, ids, repair)
    if ev.problems:
        return None, "; ".join(ev.problems)
    if not any(ev.sides.values()):
        reason = "no evidence: source_chat_ids is empty"
        if ev.changes:
            reason = "no usable evidence: " + "; ".join(ev.changes)
        return None, reason
    return ev, None


def _update_relevance(
    qid: str, chat: str, ev: _Evidence, updates: str, metadata: dict[str, Any], out: _Chat
) -> list[int] | None:
    """A knowledge update's relevant ids under ``updates`` (both sides into ``metadata``); ``None``: skipped."""
    updated = ev.sides["updated_info"]
    original = [i for i in ev.sides["original_info"] if i not in updated]
    metadata["original_info"] = _entry_ids(chat, original)
    metadata["updated_info"] = _entry_ids(chat, updated)
    if not updated and updates == "fresh":
        out.skipped.append(
            (qid, "knowledge update with an empty updated_info: nothing is relevant under --updates fresh")
        )
        return None
    if not updated:
        out.notes.append((qid, "left out of stale@k: its updated_info is empty"))
    elif not original:
        why = "is empty" if not ev.sides["original_info"] else "lists only ids also in updated_info"
        out.notes.append((qid, f"left out of stale@k: its original_info {why}"))
    return updated if updates == "fresh" else [*original, *updated]


def _indexed_only(qid: str, relevant: list[int], indexed: set[int], out: _Chat) -> list[int] | None:
    """The relevant ids that are entries (assistant messages are not, with --user-turns-only); ``None``: skipped."""
    judged = [i for i in relevant if i in indexed]
    if len(judged) < len(relevant):
        dropped = ", ".join(str(i) for i in relevant if i not in indexed)
        if not judged:
            out.skipped.append(
                (qid, f"nothing to judge: every evidence message ({dropped}) is an assistant message, not indexed")
            )
            return None
        out.notes.append((qid, f"evidence of assistant messages not judged (not indexed): {dropped}"))
    return judged


def _load_chat(folder: Path, prefix: str, *, updates: str, user_only: bool, repair: bool) -> _Chat:
    chat = folder.name
    _check_chat_id(folder, chat)
    for name in (CHAT_FILE, QUESTIONS_FILE):
        if not (folder / name).exists():
            raise MissingFileError(
                folder / name, f"BEAM file (every chat folder needs {CHAT_FILE} and {QUESTIONS_FILE})"
            )
    chat_path, questions_path = folder / CHAT_FILE, folder / QUESTIONS_FILE
    document, chat_sha = _read_json(chat_path, "BEAM chat.json")
    messages = _messages(chat_path, chat, document)
    del document
    document, questions_sha = _read_json(questions_path, "BEAM probing_questions.json")
    questions = _questions(questions_path, document)
    del document

    roles = {m.id: m.role for m in messages}
    ids = set(roles)
    indexed = {i for i, role in roles.items() if role == "user"} if user_only else ids
    entries = [
        MemoryEntry._trusted(  # every field checked above, with its JSON path
            id=f"{chat}/{m.id}",
            text=m.text,
            created_at=m.created_at,
            provenance=Provenance(source="conversation", ref=f"{chat}/{m.id}", actor=m.role),
            scope=chat,
            metadata=m.metadata,
        )
        for m in messages
        if m.id in indexed
    ]
    dated = [m.created_at for m in messages if m.created_at is not None]
    asked_at = max(dated) + timedelta(seconds=1) if dated else None

    files = {prefix + CHAT_FILE: chat_sha, prefix + QUESTIONS_FILE: questions_sha}
    out = _Chat(entries, [], {}, [], [], [], files, [])
    for q in questions:
        qid = f"{chat}/{q.ability}/{q.position}"
        metadata: dict[str, Any] = {"chat": chat, "ability": q.ability, "difficulty": q.difficulty, "answer": q.answer}
        if q.source is not _ABSENT:  # a question left out for having none has no such field
            metadata["source_chat_ids"] = q.source
        skipped = len(out.skipped)
        judged = _judged(q, qid, chat, metadata, ids, indexed, out, updates=updates, repair=repair)
        query = Query._trusted(
            id=qid,
            text=q.text,
            tags=None,
            scope=chat,
            group=q.ability,
            asked_at=asked_at,
            metadata=MappingProxyType(metadata),
        )
        if judged is None:
            if len(out.skipped) > skipped:  # every question skipped has its text: kept for answers
                out.left_out.append(query)
            continue
        out.queries.append(query)
        out.qrels[qid] = MappingProxyType(dict.fromkeys((f"{chat}/{i}" for i in judged), 1))
    return out


def _judged(
    q: _Question,
    qid: str,
    chat: str,
    metadata: dict[str, Any],
    ids: set[int],
    indexed: set[int],
    out: _Chat,
    *,
    updates: str,
    repair: bool,
) -> list[int] | None:
    """The message ids judged relevant for question ``q`` (its repairs into ``out``, a knowledge update's sides into
    ``metadata``), or ``None`` when it is skipped (the reason in ``out.skipped``)."""
    if q.ability == "abstention":
        out.skipped.append((qid, "abstention question: it has no evidence by design, so no retrieval measure applies"))
        return None
    ev, reason = _usable_evidence(q, ids, repair)
    if ev is None:
        out.skipped.append((qid, reason or ""))
        return None
    if q.ability == "knowledge_update":
        relevant = _update_relevance(qid, chat, ev, updates, metadata, out)
    else:
        relevant = [i for side in ev.sides.values() for i in side]
    judged = None if relevant is None else _indexed_only(qid, relevant, indexed, out)
    if judged is not None:
        out.repairs.extend((qid, change) for change in ev.changes)
    return judged


def load_beam(
    path: str | PathLike[str],
    *,
    updates: str = "fresh",
    all_turns: bool = False,
    user_turns_only: bool = False,
    repair: bool = False,
    progress: bool = False,
) -> Collection:
    """Load a BEAM chat folder, or a folder of chat folders, as a collection (rules: the module docstring).

    ``updates`` is ``"fresh"`` or ``"both"``; ``user_turns_only`` indexes the
    user's messages only, ``all_turns`` states the default (both roles)
    explicitly, and the two cannot be combined; ``repair`` repairs malformed
    evidence where unambiguous instead of skipping the question; ``progress``
    shows a bar over the chats.

    The collection's ``name`` is the folder's name, ``files`` maps each file's
    path relative to ``path`` to its sha256, ``settings`` records ``updates``
    and ``indexed_turns`` (``"all"`` or ``"user"``).

    Raises:
        MissingFileError: ``path`` or a chat folder's file does not exist.
        InputError: a file is not UTF-8 JSON or not BEAM-shaped (the file and
            the JSON path of the first wrong field).
        UnknownNameError: ``updates`` is not ``fresh`` or ``both``.
        ParameterError: ``all_turns`` and ``user_turns_only`` are both set.
    """
    if updates not in UPDATES:
        raise UnknownNameError("updates", updates, UPDATES)
    if all_turns and user_turns_only:
        raise ParameterError(
            "all_turns",
            all_turns,
            "contradicts user_turns_only=True",
            "index both roles' messages (the default) or the user's only, not both",
        )
    root = Path(path)
    folders = chat_folders(root)
    single = folders == [root]
    iterable: Any = folders
    if progress and not single:
        from tqdm.auto import tqdm  # an optional dependency, only for the bar

        iterable = tqdm(folders, desc=f"load {root.name}", unit=" chats")
    entries: list[MemoryEntry] = []
    queries: list[Query] = []
    qrels: dict[str, Mapping[str, int]] = {}
    skipped: list[tuple[str, str]] = []
    repairs: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    files: dict[str, str] = {}
    left_out: list[Query] = []
    for folder in iterable:
        prefix = "" if single else folder.name + "/"
        chat = _load_chat(folder, prefix, updates=updates, user_only=user_turns_only, repair=repair)
        entries += chat.entries
        queries += chat.queries
        qrels.update(chat.qrels)
        skipped += chat.skipped
        repairs += chat.repairs
        notes += chat.notes
        files.update(chat.files)
        left_out += chat.left_out
    return Collection(
        name=root.resolve().name or root.name,
        entries=Entries.of(entries),  # the same columns as every reader's (the records made when asked)
        queries=tuple(queries),
        qrels=MappingProxyType(qrels),
        files=MappingProxyType(files),
        skipped=tuple(skipped),
        repairs=tuple(repairs),
        notes=tuple(notes),
        settings=MappingProxyType({"updates": updates, "indexed_turns": "user" if user_turns_only else "all"}),
        format="beam",
        format_options=MappingProxyType(
            {"updates": updates, "all_turns": all_turns, "user_turns_only": user_turns_only, "repair": repair}
        ),
        left_out_queries=tuple(left_out),
    )


def _subfolders(path: Path) -> Iterator[Path]:
    try:
        yield from (p for p in path.iterdir() if p.is_dir())
    except OSError:
        return


def recognise(path: Path) -> bool:
    """True for a chat folder (``chat.json`` and ``probing_questions/probing_questions.json``) or a folder of them."""
    if not path.is_dir():
        return False
    return _is_chat_folder(path) or any(_is_chat_folder(p) for p in _subfolders(path))


def read(
    path: Path, *, updates: str, all_turns: bool, user_turns_only: bool, repair: bool, progress: bool
) -> Collection:
    """The ``beam`` format's reader: :func:`load_beam`."""
    return load_beam(
        path, updates=updates, all_turns=all_turns, user_turns_only=user_turns_only, repair=repair, progress=progress
    )


FORMAT = Format(
    name="beam",
    recognise=recognise,
    read=read,
    options=(
        FormatOption(
            "updates",
            str,
            "fresh",
            "knowledge updates: only the updated message is relevant (fresh) or both sides (both)",
        ),
        FormatOption("all_turns", bool, False, "index both roles' messages (the default, stated explicitly)"),
        FormatOption("user_turns_only", bool, False, "index the user's messages only"),
        FormatOption("repair", bool, False, "repair malformed source_chat_ids where unambiguous, listing every change"),
    ),
    description="a BEAM chat folder (chat.json and probing_questions/), or a size folder of chat folders (chats/100K)",
    rule="a folder holding chat.json and probing_questions/probing_questions.json, or one of whose subfolders does",
)
"""The ``beam`` format's declaration, registered by :mod:`agentmemory.datasets`."""
