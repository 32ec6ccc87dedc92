"""A memory server speaking the Model Context Protocol over stdio, as a :class:`~agentmemory.systems.MemorySystem`.

``mcp[profile=server-memory]`` starts the reference memory server
``@modelcontextprotocol/server-memory`` (installed by ``make node-servers``
from the committed lockfile in ``agentmemory/systems/node``);
``mcp[command="python my_server.py",profile=my-profile.toml]`` starts any
other server.  One server process per scope, through the official Python SDK
(``mcp`` 2.x, the ``mcp`` extra), driven from a private event loop thread so
the calls here stay synchronous.

**Profiles.**  A profile (TOML or JSON; the shipped ones are in
``agentmemory/systems/profiles/``) says how ingest becomes tool calls and how
a search result becomes memories::

    name = "my-server"
    command = ["python", "my_server.py"]   # default command line (``command=`` overrides it)
    requires = ["python"]                  # executables that must be on PATH (optional)
    batch_size = 64                        # turns per ingest call (optional)
    env = { DATA = "{workdir}/data" }      # environment of the server (optional)

    [[ingest]]                             # one or more steps, run in order for each ingest batch
    tool = "remember"
    each = "turn"                          # turn | session | new-session | batch
    result = "ignore"                      # ignore (default) | json | text: how the tool's answer is read
    arguments = { text = "{text}", speaker = "{role}" }

    [search]
    tool = "recall"
    arguments = { query = "{query}", limit = "{k}" }
    result = "json"                        # json (default) | text (then split and match, below)
    records = "hits"                       # path from the result to the list of records
    items = ""                             # optional path from a record to a list: one memory per element
    text = "item.text"                     # paths (or templates) from {record, item, position}
    id = "item.id"
    score = "item.score"
    sources = "item.sources"

*Steps.*  ``each = "turn"`` calls the tool once per turn; ``"session"`` once
per session present in the batch (in order of first appearance);
``"new-session"`` once per session the first time it appears in the scope;
``"batch"`` once per ingest batch.  A turn's session is its ``session``, else
its scope, else ``"conversation"``.

*Templates.*  A string ``"{field}"`` alone is replaced by the field's value
as it is (so ``"{k}"`` stays a number and a missing role stays null); inside
longer text the value is written as text (null as an empty string).  Fields:
``entry_id``, ``text``, ``role``, ``created_at`` (ISO 8601 or null),
``session`` and ``scope`` in a turn step; ``session`` and ``scope`` in a
session step; ``scope`` in a batch step; ``query`` and ``k`` in the search;
``workdir`` (the scope's temporary folder) and ``node`` (the package's node
folder) in ``command`` and ``env``.  In a session or batch step an object
``{ "$each-turn" = TEMPLATE }`` becomes the list of TEMPLATE rendered for
each of that step's turns, in time order.

*Answers.*  Each step and the search say how the tool's answer is read,
``result``: ``"json"`` reads its ``structured_content``, or when the
server gives none, its text content parsed as JSON (text that is not JSON
is a fault naming the key to set); ``"text"`` reads its text blocks joined
by newlines; ``"ignore"`` (a step only, and a step's default: the answer
to a write is not used) reads nothing.  A tool error is a fault whatever
``result`` says.  Many servers answer a write in plain text
(``"Successfully processed 1 entities"``, ``"Saved: ..."``), some a search
too: with ``result = "text"`` the search's text becomes records by
``split``: ``"lines"`` (the default: each non-empty line), ``"whole"``
(the whole text, one record) or ``{ regex = "PATTERN" }`` (the pieces
between the pattern's matches); each piece stripped, empty ones dropped.
With ``match = "PATTERN"`` (named groups required) only the pieces it
matches (``re.search``) are records, each the table of its named groups
(``'^(?P<id>m[0-9]+): (?P<text>.*)$'`` gives ``record.id`` and
``record.text``; a header line such as ``"Found 3 memories:"`` is not
matched, so not a memory); without it a record is the piece itself (a
string: ``text = "record"``).  ``records`` and ``items`` are not used
then; a score read from a group is a number written as text.

*Results.*  A path is a dotted list of keys
and list positions (``hits.0.text``; ``""`` is the value itself).  ``records``
leads from the result to a list; with ``items``, each record's list at that
path is flattened in the server's order, one memory per element (``item``);
without it, each record is one memory (``item`` is the record).  ``text``,
``id``, ``score``, ``sources`` (a list of our entry ids) and ``created_at``
(ISO 8601) are paths rooted at ``{record, item, position}`` (``position``:
the element's 0-based place within its record), or templates of such paths
(``"{record.name}#{position}"``).  The memories are cut at ``k`` (a server
that takes no ``k`` returns all it found; the cut is not a fault).

**server-memory.**  One entity per session (named after the session, type
``session``), one observation per turn whose text is the turn's text
verbatim; each scope gets its own ``MEMORY_FILE_PATH`` in the scope's
temporary folder (the server's default file lives in its own package folder
and persists between runs).  ``search_nodes`` keeps the entities whose name,
type or one observation contains the *whole query* as a case-insensitive
substring and returns them whole, unranked, without scores; the profile
flattens them to their observations in the server's order and cuts at k.
A memory's id is ``<session>#<position>``; it carries no ``sources``: its
text *is* a turn's text, so ``exact`` attribution (what ``auto`` picks)
maps it back to our entries.  The server drops an observation equal to one
its entity already has, so two turns of one session with the same text are
one memory (attributed to both by ``exact``).

**mcp-memory-libsql.**  ``mcp[profile=mcp-memory-libsql]``: an MCP memory
server keeping entities and observations in a libSQL (SQLite) file, a fresh
``LIBSQL_URL`` file per scope.  It answers a write in plain text (ignored)
and a search with JSON text.  One entity per turn, named by its entry id,
its one observation the turn's text (the server replaces an entity's
observations on every write), 50 a call.  ``search_nodes`` keeps the
entities matching ``%<the query, runs of spaces, "_" and "-" as %>%`` with
SQL ``LIKE`` (ASCII case-insensitive): the query's words in order, anything
between them; name matches rank first, then type, then observation, newest
first (by the server's own clock, to the second), at most 50.  A memory's id
is our entry id; ``exact`` attribution maps its text back.

**Labels.**  A spec ``mcp[profile=...]`` is labelled ``MCP <the profile's
name>`` (:meth:`MCPSystem.label_for`), whether the profile is shipped or a
file: tables show ``MCP my-server``, never a path.

**Faults.**  Every failure is a :class:`~agentmemory.errors.MemorySystemError`
of one line naming the system, scope, call and problem: a server that does
not start (not found, exits, no answer to ``initialize`` in time), lacks a
tool the profile calls, exits mid-run, writes a line that is not JSON-RPC,
answers a tool error, a result the profile's paths do not fit, or exceeds
``timeout`` seconds on one call.  The server runs in its own session and
process group; :meth:`MCPSystem.close` (also after a failure) closes its
stdin, waits up to two seconds for it to exit, kills the group if it has not,
reaps it, and then (on Linux, read from ``/proc``) kills every process still
left in the server's session, e.g. a child the server started and did not
end: no process is left behind.  The replay calls ``close()`` after a call
that timed out too (:mod:`agentmemory.systems.replay`).  What a message
quotes of the server (a tool error's text, its last stderr line, a result
the profile does not fit) has this machine's folders scrubbed first (the
scope's workdir as ``<workdir>``, the current folder as ``<cwd>``, ...:
:func:`~agentmemory.systems.checks.scrub_paths`), then is shortened, so it
can go into an artifact under ``--lenient-system``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from agentmemory.errors import InputError, MemorySystemError, ParameterError, quote, shorten
from agentmemory.retrievers.spec import format_value
from agentmemory.systems.base import Memory, Turn
from agentmemory.systems.checks import scrub_paths
from agentmemory.systems.processes import pids, stat

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - python 3.10
    import tomli as tomllib

__all__ = ["NODE_DIR", "PROFILES_DIR", "MCPSystem", "Profile", "load_profile", "profile_names"]

PROFILES_DIR = Path(__file__).parent / "profiles"
"""The shipped profiles, one ``<name>.toml`` each."""

NODE_DIR = Path(__file__).parent / "node"
"""The node package (``package.json`` + lockfile) holding the shipped profiles' servers; ``{node}`` in a profile."""

STEP_KINDS = ("turn", "session", "new-session", "batch")
STEP_RESULTS = ("ignore", "json", "text")
"""How an ingest step's answer is read: not at all (the default), as JSON (a fault when it is not), as text."""
SEARCH_RESULTS = ("json", "text")
"""How a search's answer is read: JSON (structured content, else its text parsed; the default), or plain text."""
TEXT_SPLITS = ("lines", "whole")
_STEP_FIELDS = {
    "turn": {"entry_id", "text", "role", "created_at", "session", "scope"},
    "session": {"session", "scope"},
    "new-session": {"session", "scope"},
    "batch": {"scope"},
}
_TURN_FIELDS = _STEP_FIELDS["turn"]
_SEARCH_FIELDS = {"query", "k"}
_START_FIELDS = {"workdir", "node"}
_EACH_TURN = "$each-turn"
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")
_STARTUP_FLOOR = 30.0  # seconds allowed for start-up (spawn + initialize + tools/list) at the least
_STDERR_SHOWN = 200  # characters of the server's last stderr line quoted in a start-up fault


# -- profiles ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One ingest step: call ``tool`` with ``arguments`` rendered for each unit of kind ``each``."""

    tool: str
    each: str
    arguments: Any
    result: str = "ignore"  # json | text | ignore: how the tool's answer is read


@dataclass(frozen=True)
class TextRecords:
    """How a search answered in plain text becomes records: ``split`` the text, keep the pieces ``match`` fits.

    ``split`` is ``"lines"`` (each non-empty line), ``"whole"`` (the whole text, when not empty) or a
    compiled pattern the text is split at; ``match``, when given, keeps only the pieces it matches
    (``re.search``), each as the table of its named groups.
    """

    split: str | re.Pattern[str]
    match: re.Pattern[str] | None = None

    def records(self, text: str) -> list[Any]:
        """The pieces of ``text``, stripped, empty ones dropped; with ``match`` the named groups of those it fits."""
        if self.split == "lines":
            pieces = text.splitlines()
        elif self.split == "whole":
            pieces = [text]
        else:
            assert isinstance(self.split, re.Pattern)
            pieces = self.split.split(text)
        kept = [piece.strip() for piece in pieces if isinstance(piece, str) and piece.strip()]
        if self.match is None:
            return kept
        out = []
        for piece in kept:
            found = self.match.search(piece)
            if found is not None:
                out.append({name: value for name, value in found.groupdict().items() if value is not None})
        return out


@dataclass(frozen=True)
class SearchMapping:
    """The search call and how its result becomes memories (paths as in the module docstring)."""

    tool: str
    arguments: Any
    records: str
    items: str | None
    text: str
    id: str | None = None
    score: str | None = None
    sources: str | None = None
    created_at: str | None = None
    result: str = "json"  # json | text
    text_records: TextRecords | None = None  # with result = "text": how the text becomes records


@dataclass(frozen=True)
class Profile:
    """A declarative mapping from the :class:`MemorySystem` calls to one server's tools."""

    name: str
    origin: str  # the profile's file name (no folder), for params and messages
    command: tuple[str, ...] | None
    requires: tuple[str, ...]
    env: dict[str, str]
    batch_size: int | None
    ingest: tuple[Step, ...]
    search: SearchMapping
    install_hint: str | None = None

    @property
    def tools(self) -> list[str]:
        """Every tool the profile calls, in order of first use."""
        return list(dict.fromkeys([s.tool for s in self.ingest] + [self.search.tool]))


def profile_names() -> list[str]:
    """The shipped profiles' names, sorted (read from :data:`PROFILES_DIR`)."""
    return sorted(p.stem for p in PROFILES_DIR.glob("*.toml"))


def load_profile(profile: str | os.PathLike[str]) -> Profile:
    """A shipped profile by name (``"server-memory"``), or a profile file (``.toml`` or ``.json``).

    Raises:
        ParameterError: ``profile`` names no shipped profile and no file.
        InputError: the file is not valid TOML/JSON or not a valid profile (one line naming the file and the key).
    """
    if not isinstance(profile, (str, os.PathLike)):
        raise ParameterError(
            "profile", profile, "is not a profile name or file", f"use one of {', '.join(profile_names())}, or a path"
        )
    text = os.fspath(profile)
    path = PROFILES_DIR / f"{text}.toml" if text in profile_names() else Path(text)
    if not path.is_file():
        raise ParameterError(
            "profile",
            text,
            "is neither a shipped profile nor a file",
            f"use one of {', '.join(profile_names())}, or the path of a .toml or .json profile",
        )
    raw = path.read_bytes()
    try:
        if path.suffix == ".json":
            data = json.loads(raw)
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(path, None, f"not a valid profile file: {shorten(str(err))}") from None
    return _parse_profile(data, path)


def _bad(path: Path, key: str, value: Any, allowed: str) -> InputError:
    """The profile's ``key`` holds a value it may not."""
    return InputError(path, None, f"{key}: {quote(value)} ({type(value).__name__}) is not allowed; {allowed}")


def _string(path: Path, table: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    """``table[key]`` as a string (``None`` when absent and not required)."""
    value = table.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise _bad(path, f"{where}{key}", value, "expected a string")
    return value


def _profile_start(data: Mapping[str, Any], path: Path) -> tuple[list[str] | None, list[str], dict, int | None]:
    """How the server starts: ``command``, ``requires``, ``env`` (templates checked) and ``batch_size``."""
    command = data.get("command")
    if command is not None and (
        not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command)
    ):
        raise _bad(path, "command", command, "expected a non-empty list of strings")
    requires = data.get("requires", [])
    if not isinstance(requires, list) or not all(isinstance(r, str) and r for r in requires):
        raise _bad(path, "requires", requires, "expected a list of executable names")
    env = data.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise _bad(path, "env", env, "expected a table of strings")
    batch_size = data.get("batch_size")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise _bad(path, "batch_size", batch_size, "expected an integer >= 1")
    for where, template in [("command", command or []), *((f"env.{k}", v) for k, v in env.items())]:
        _check_fields(template, _START_FIELDS, path, where, each_turn=False)
    return command, requires, env, batch_size


def _profile_steps(data: Mapping[str, Any], path: Path) -> list[Step]:
    """The ``[[ingest]]`` steps: a tool, what each call covers, argument templates (checked)."""
    steps_raw = data.get("ingest")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise _bad(path, "ingest", steps_raw, "expected a non-empty list of steps ([[ingest]] tables)")
    steps = []
    for i, step in enumerate(steps_raw):
        where = f"ingest[{i}]."
        if not isinstance(step, dict):
            raise _bad(path, f"ingest[{i}]", step, "expected a table with tool, each and arguments")
        tool = _string(path, step, "tool", where)
        each = step.get("each", "turn")
        if each not in STEP_KINDS:
            raise _bad(path, f"{where}each", each, f"expected one of {', '.join(STEP_KINDS)}")
        arguments = step.get("arguments", {})
        if not isinstance(arguments, dict):
            raise _bad(path, f"{where}arguments", arguments, "expected a table")
        _check_fields(arguments, _STEP_FIELDS[each], path, f"{where}arguments", each_turn=each != "turn")
        result = step.get("result", "ignore")
        if result not in STEP_RESULTS:
            raise _bad(path, f"{where}result", result, f"expected one of {', '.join(STEP_RESULTS)}")
        unknown = sorted(set(step) - {"tool", "each", "arguments", "result"})
        if unknown:
            raise _bad(
                path, f"{where}{unknown[0]}", step[unknown[0]], "unknown key; a step has tool, each, arguments, result"
            )
        assert tool is not None
        steps.append(Step(tool, each, arguments, result))
    return steps


def _profile_search(data: Mapping[str, Any], path: Path) -> SearchMapping:
    """The ``[search]`` table: the tool, its argument template, and the paths from its result to memories."""
    search = data.get("search")
    if not isinstance(search, dict):
        raise _bad(path, "search", search, "expected a table with tool, arguments, records and text")
    tool = _string(path, search, "tool", "search.")
    arguments = search.get("arguments", {})
    if not isinstance(arguments, dict):
        raise _bad(path, "search.arguments", arguments, "expected a table")
    _check_fields(arguments, _SEARCH_FIELDS, path, "search.arguments", each_turn=False)
    result = search.get("result", "json")
    if result not in SEARCH_RESULTS:
        raise _bad(path, "search.result", result, f"expected one of {', '.join(SEARCH_RESULTS)}")
    known = {"tool", "arguments", "result", "records", "items", "text", "id", "score", "sources", "created_at"}
    known |= {"split", "match"} if result == "text" else set()
    for key in search:
        if key not in known:
            allowed = (
                'split and match belong to a search with result = "text"'
                if key in ("split", "match")
                else f"a search has {', '.join(sorted(known))}"
            )
            raise _bad(path, f"search.{key}", search[key], f"unknown key; {allowed}")
    text_records = _text_records(search, path) if result == "text" else None
    if text_records is not None:
        for key in ("records", "items"):
            if key in search:
                raise _bad(
                    path,
                    f"search.{key}",
                    search[key],
                    'not used with result = "text": split (and match) make the records from the text',
                )
        records: str | None = ""
    else:
        records = _string(path, search, "records", "search.")
    text = _string(path, search, "text", "search.")
    assert tool is not None and records is not None and text is not None
    optional = {
        key: _string(path, search, key, "search.", required=False)
        for key in ("items", "id", "score", "sources", "created_at")
    }
    return SearchMapping(
        tool=tool, arguments=arguments, records=records, text=text, result=result, text_records=text_records, **optional
    )


def _text_records(search: Mapping[str, Any], path: Path) -> TextRecords:
    """``split`` (``"lines"``, ``"whole"`` or ``{ regex = "..." }``) and ``match`` (a pattern) of a text search."""
    split = search.get("split", "lines")
    pattern: str | re.Pattern[str]
    if isinstance(split, dict) and set(split) == {"regex"} and isinstance(split["regex"], str):
        pattern = _compiled(path, "search.split.regex", split["regex"])
    elif split in TEXT_SPLITS:
        pattern = split
    else:
        raise _bad(
            path, "search.split", split, f'expected {" or ".join(map(repr, TEXT_SPLITS))}, or {{ regex = "..." }}'
        )
    match = search.get("match")
    if match is not None and not isinstance(match, str):
        raise _bad(path, "search.match", match, "expected a regular expression (a string)")
    compiled = None if match is None else _compiled(path, "search.match", match)
    if compiled is not None and not compiled.groupindex:
        raise _bad(path, "search.match", match, "expected named groups, e.g. (?P<text>.*), which the paths read")
    return TextRecords(pattern, compiled)


def _compiled(path: Path, key: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as err:
        raise _bad(path, key, pattern, f"not a regular expression ({err})") from None


def _parse_profile(data: Any, path: Path) -> Profile:
    if not isinstance(data, dict):
        raise _bad(path, "profile", data, "expected a table (object) with name, ingest and search")
    known = {"name", "description", "command", "requires", "env", "batch_size", "ingest", "search", "install_hint"}
    for key in data:
        if key not in known:
            raise _bad(path, key, data[key], f"unknown key; a profile has {', '.join(sorted(known))}")
    name = _string(path, data, "name", "")
    assert name is not None
    command, requires, env, batch_size = _profile_start(data, path)
    steps = _profile_steps(data, path)
    mapping = _profile_search(data, path)
    return Profile(
        name=name,
        origin=path.name,
        command=tuple(command) if command else None,
        requires=tuple(requires),
        env=dict(env),
        batch_size=batch_size,
        ingest=tuple(steps),
        search=mapping,
        install_hint=_string(path, data, "install_hint", "", required=False),
    )


def _check_fields(template: Any, allowed: set[str], path: Path, where: str, *, each_turn: bool) -> None:
    """Every ``{field}`` of ``template`` is one of ``allowed`` (``$each-turn`` objects: turn fields)."""
    if isinstance(template, str):
        for field in _FIELD.findall(template):
            if field not in allowed:
                raise InputError(
                    path,
                    None,
                    f"{where}: {{{field}}} is not a field here; use {', '.join('{' + f + '}' for f in sorted(allowed))}",
                )
    elif isinstance(template, list):
        for item in template:
            _check_fields(item, allowed, path, where, each_turn=each_turn)
    elif isinstance(template, dict):
        if _EACH_TURN in template:
            if not each_turn or len(template) != 1:
                raise InputError(
                    path,
                    None,
                    f"{where}: {{{_EACH_TURN!r} = ...}} belongs alone in a table of a session or batch step",
                )
            _check_fields(template[_EACH_TURN], _TURN_FIELDS, path, where, each_turn=False)
            return
        for value in template.values():
            _check_fields(value, allowed, path, where, each_turn=each_turn)


def _render(template: Any, fields: Mapping[str, Any], turns: Sequence[Mapping[str, Any]] = ()) -> Any:
    """``template`` with its fields filled in (rules in the module docstring)."""
    if isinstance(template, str):
        whole = _FIELD.fullmatch(template)
        if whole:
            return fields[whole[1]]
        return _FIELD.sub(lambda m: "" if fields[m[1]] is None else str(fields[m[1]]), template)
    if isinstance(template, list):
        return [_render(t, fields, turns) for t in template]
    if isinstance(template, dict):
        if _EACH_TURN in template:
            return [_render(template[_EACH_TURN], turn) for turn in turns]
        return {k: _render(v, fields, turns) for k, v in template.items()}
    return template


def _turn_fields(turn: Turn) -> dict[str, Any]:
    return {
        "entry_id": turn.entry_id,
        "text": turn.text,
        "role": turn.role,
        "created_at": None if turn.created_at is None else turn.created_at.isoformat(),
        "session": _session_of(turn),
        "scope": turn.scope,
    }


def _session_of(turn: Turn) -> str:
    if turn.session is not None:
        return turn.session
    return turn.scope if turn.scope is not None else "conversation"


# -- paths into results ------------------------------------------------------------------------------------------------
class _PathMissing(Exception):
    pass


def _follow(value: Any, path: str) -> Any:
    """The value at a dotted ``path`` (keys and list positions; ``""`` the value itself)."""
    if not path:
        return value
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise _PathMissing(part)
    return value


def _extract(context: Mapping[str, Any], spec: str) -> Any:
    """A path from ``{record, item, position}``, or a template of such paths."""
    if _FIELD.search(spec):
        whole = _FIELD.fullmatch(spec)
        if whole:
            return _follow(context, whole[1])
        return _FIELD.sub(lambda m: _as_text(_follow(context, m[1])), spec)
    return _follow(context, spec)


def _number(text: str) -> float | str:
    """``text`` as a finite float, or ``text`` itself when it is not one (then refused as not a number)."""
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# -- processes (Linux: /proc) -------------------------------------------------------------------------------------------
_SPAWN_LOCK = threading.Lock()  # one server spawned at a time in this process, so its pid is known for sure
_CLAIMED: set[int] = set()  # pids of the servers this process started and has not yet ended


def _new_session_leaders() -> set[int]:
    """Children of this process that lead their own session (how the SDK starts a server), not yet claimed."""
    me = os.getpid()
    found = set()
    for pid in pids():
        got = stat(pid)
        if got is not None and got[1] == me and got[3] == pid and pid not in _CLAIMED:
            found.add(pid)
    return found


def _end_session(leader: int, wait: float = 2.0) -> None:
    """SIGKILL every live process still in the session ``leader`` led (what the server started and left), and
    wait up to ``wait`` seconds until each has died (SIGKILL is delivered asynchronously)."""
    killed = []
    for pid in pids():
        got = stat(pid)
        if got is not None and got[3] == leader and got[2] == leader and got[0] != "Z":
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    deadline = time.monotonic() + wait
    while killed and time.monotonic() < deadline:
        killed = [pid for pid in killed if (got := stat(pid)) is not None and got[0] not in ("Z", "X")]
        if killed:
            time.sleep(0.01)


def _scrubbed(value: Any, workdir: Path) -> Any:
    """``value`` with this machine's folders scrubbed from every string in it (lists and dicts walked)."""
    if isinstance(value, str):
        return scrub_paths(value, workdir)
    if isinstance(value, list):
        return [_scrubbed(v, workdir) for v in value]
    if isinstance(value, dict):
        return {_scrubbed(k, workdir): _scrubbed(v, workdir) for k, v in value.items()}
    return value


# -- the system -------------------------------------------------------------------------------------------------------
class _Fault(Exception):
    """A failure of one call, turned into a MemorySystemError by the caller (which knows the call's name)."""


class MCPSystem:
    """One MCP memory server for one scope (see the module docstring for profiles, mapping and faults).

    Args:
        scope: the scope replayed into this server (for messages).
        workdir: the scope's temporary folder (``{workdir}``; the server's stderr is kept in it); a temporary
            folder of its own when ``None``.
        profile: a shipped profile's name (``server-memory``) or a profile file; required, so a spec names it.
        command: the server's command line, overriding the profile's: one string (split as a shell would,
            without running a shell) or a list of strings.
        timeout: seconds allowed for one tool call (start-up gets at least 30).
        batch_size: turns per ingest call, overriding the profile's.
    """

    label = "MCP"

    @classmethod
    def label_for(cls, params: Mapping[str, Any]) -> str:
        """``MCP <the profile's name>``, then the other parameters given: the label tables show, not the file's path."""
        profile = load_profile(params["profile"]).name if "profile" in params else "(no profile)"
        rest = {key: value for key, value in params.items() if key != "profile"}
        if not rest:
            return f"MCP {profile}"
        return f"MCP {profile} (" + ", ".join(f"{key}={format_value(value)}" for key, value in rest.items()) + ")"

    def __init__(
        self,
        *,
        scope: str | None = None,
        workdir: Path | None = None,
        profile: str,
        command: str | Sequence[str] | None = None,
        timeout: float = 60.0,
        batch_size: int | None = None,
    ) -> None:
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ParameterError("timeout", timeout, "is not a positive number of seconds", "pass e.g. timeout=60")
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
        ):
            raise ParameterError("batch_size", batch_size, "is not an integer >= 1", "pass e.g. batch_size=64")
        self.profile = load_profile(profile)
        self.name = f"mcp[profile={self.profile.name}]"
        self.scope = scope
        self.timeout = float(timeout)
        size = batch_size if batch_size is not None else self.profile.batch_size
        if size is not None:
            self.batch_size = size
        self.label = f"MCP {self.profile.name}"
        self._own_workdir: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._own_workdir = tempfile.TemporaryDirectory(prefix="agentmemory-mcp-")
            workdir = Path(self._own_workdir.name)
        self.workdir = Path(workdir)
        self._seen_sessions: set[str] = set()
        self._server: tuple[str, str] | None = None
        self._portal_cm: AbstractContextManager[Any] | None = None
        self._portal: Any = None
        self._session_cm: AbstractContextManager[Any] | None = None
        self._session: Any = None
        self._errlog: IO[str] | None = None
        self._fault: Exception | None = None
        self._current: Any = None  # the cancel scope of the call in flight
        self._leader: int | None = None  # the server's pid, which leads its own session (Linux)
        self._closed = False
        argv = self._command_line(command)
        try:
            self._start(argv)
        except BaseException:
            self.close()
            raise

    # -- start-up ---------------------------------------------------------------------------------------------------
    def _error(self, call: str, problem: str) -> MemorySystemError:
        """The failure as one line, without the scope's workdir or another folder of this machine (a message may go
        into an artifact under ``--lenient-system``)."""
        return MemorySystemError(self.name, self.scope, call, scrub_paths(problem, self.workdir))

    def _text(self, text: str, limit: int | None = None) -> str:
        """The server's ``text`` for a message: on one line, this machine's folders scrubbed, then shortened."""
        clean = scrub_paths(" ".join(text.split()), self.workdir)  # before shortening, which could cut a path
        return shorten(clean) if limit is None else shorten(clean, limit)

    def _quote(self, value: Any) -> str:
        """``value`` (the server's, or a command's) quoted for a message, its strings' folders scrubbed first."""
        return quote(_scrubbed(value, self.workdir))

    def _command_line(self, command: str | Sequence[str] | None) -> list[str]:
        fields = {"workdir": str(self.workdir), "node": str(NODE_DIR)}
        if command is None:
            if self.profile.command is None:
                raise ParameterError(
                    "command",
                    None,
                    f"is needed: profile {self.profile.origin} gives no command",
                    'pass command="program arg ..."',
                )
            argv = [str(_render(part, fields)) for part in self.profile.command]
        elif isinstance(command, str):
            argv = shlex.split(command)
        elif isinstance(command, Sequence) and all(isinstance(c, str) for c in command):
            argv = list(command)
        else:
            raise ParameterError("command", command, "is not a command line", "pass a string or a list of strings")
        if not argv:
            raise ParameterError("command", command, "is empty", 'pass command="program arg ..."')
        for program in self.profile.requires:
            if shutil.which(program) is None:
                raise self._error("start", f"{program!r} is not on PATH; profile {self.profile.name} needs it")
        if shutil.which(argv[0]) is None:
            hint = f"; {self.profile.install_hint}" if command is None and self.profile.install_hint else ""
            raise self._error("start", f"cannot run {self._quote(argv[0])}: no such executable{hint}")
        return argv

    def _start(self, argv: list[str]) -> None:
        # The SDK (the mcp extra) is imported here, not at module level, so that naming the system without it
        # installed fails with an install hint, and `import agentmemory` never imports it.
        try:
            from anyio.from_thread import start_blocking_portal
            from mcp.client.session import ClientSession
            from mcp.client.stdio import StdioServerParameters, stdio_client
        except ImportError as err:
            raise self._error(
                "start", f"the MCP SDK is not installed ({err}); pip install 'agentmemory-eval[mcp]'"
            ) from None
        # The SDK logs a malformed line with its traceback; with no handler configured anywhere, logging's
        # last-resort handler would print it to stderr beside our one-line error.  A NullHandler on the SDK's logger
        # (what the logging docs ask libraries to add) stops only that fallback; configured handlers still get it.
        sdk_logger = logging.getLogger("mcp")
        if not any(isinstance(h, logging.NullHandler) for h in sdk_logger.handlers):
            sdk_logger.addHandler(logging.NullHandler())
        fields = {"workdir": str(self.workdir), "node": str(NODE_DIR)}
        env = {key: str(_render(value, fields)) for key, value in self.profile.env.items()}
        # The program as found on PATH (or relative to the current folder), so a relative command means what it
        # means to the user; the server runs in the current folder, like the command the user typed.
        program = shutil.which(argv[0]) or argv[0]
        params = StdioServerParameters(command=program, args=argv[1:], env=env)
        self._errlog = (self.workdir / "mcp-server.stderr").open("w", encoding="utf-8")
        errlog = self._errlog

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):  # a line on stdout that is not JSON-RPC
                self._fault = message
                if self._current is not None:
                    self._current.cancel()

        @asynccontextmanager
        async def connect() -> Any:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, message_handler=on_message) as session:
                    yield session

        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        startup = max(self.timeout, _STARTUP_FLOOR)
        try:
            with _SPAWN_LOCK:
                before = _new_session_leaders()
                self._session_cm = self._portal.wrap_async_context_manager(connect())
                self._session = self._session_cm.__enter__()
                started = _new_session_leaders() - before
                if len(started) == 1:
                    self._leader = started.pop()
                    _CLAIMED.add(self._leader)
        except OSError as err:
            self._session_cm = None
            raise self._error("start", f"cannot run {self._quote(argv[0])}: {err.strerror or err}") from None
        try:
            init = self._run("initialize", self._session.initialize, timeout=startup)
        except _Fault as fault:
            raise self._error("start", f"{fault}{self._stderr_tail()}") from None
        self._server = (init.server_info.name, init.server_info.version)
        try:
            offered = self._run("tools/list", self._list_tools, timeout=startup)
        except _Fault as fault:
            raise self._error("start", f"{fault}{self._stderr_tail()}") from None
        missing = [tool for tool in self.profile.tools if tool not in offered]
        if missing:
            raise self._error(
                "start",
                f"the server lacks the tool{'s' if len(missing) > 1 else ''} {', '.join(missing)} that profile "
                f"{self.profile.name} calls; it offers {', '.join(sorted(offered)) or 'no tool'}",
            )

    async def _list_tools(self) -> list[str]:
        names: list[str] = []
        cursor = None
        while True:
            if cursor is None:
                page = await self._session.list_tools()
            else:
                from mcp.types import PaginatedRequestParams  # the SDK, imported where used (see _start)

                page = await self._session.list_tools(params=PaginatedRequestParams(cursor=cursor))
            names.extend(tool.name for tool in page.tools)
            cursor = page.next_cursor
            if not cursor:
                return names

    def _stderr_tail(self) -> str:
        if self._errlog is None:
            return ""
        self._errlog.flush()
        try:
            lines = (self.workdir / "mcp-server.stderr").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        lines = [line.strip() for line in lines if line.strip()]
        return f"; its stderr ends: {self._text(lines[-1], _STDERR_SHOWN)}" if lines else ""

    # -- calls --------------------------------------------------------------------------------------------------------
    def _run(self, what: str, func: Any, *args: Any, timeout: float | None = None) -> Any:
        """``await func(*args)`` on the portal's loop within ``timeout``; any failure becomes a :class:`_Fault`."""
        if self._closed or self._session is None:
            raise _Fault("the server is closed")
        if self._fault is not None:
            raise _Fault(self._malformed())
        limit = self.timeout if timeout is None else timeout

        async def guarded() -> Any:
            import anyio  # the SDK's event-loop library, a dependency of the mcp extra (see _start)

            with anyio.CancelScope() as scope:
                self._current = scope
                try:
                    with anyio.fail_after(limit):
                        return await func(*args)
                finally:
                    self._current = None
            raise _Fault(self._malformed())  # cancelled by on_message: the server wrote a malformed line

        try:
            return self._portal.call(guarded)
        except _Fault:
            raise
        except TimeoutError:
            raise _Fault(f"{what} took longer than the timeout of {limit:g} s") from None
        except Exception as err:
            raise _Fault(self._describe(what, err)) from None

    def _malformed(self) -> str:
        fault = self._fault
        details = getattr(fault, "errors", None)  # pydantic's ValidationError: the line and the reason
        if callable(details):
            first = details()[0]
            return (
                f"the server wrote a line that is not a JSON-RPC message: {self._quote(first.get('input'))} "
                f"({self._text(str(first.get('msg')))})"
            )
        return f"the server wrote a line that is not a JSON-RPC message: {self._text(' '.join(str(fault).split()))}"

    def _describe(self, what: str, err: Exception) -> str:
        data = getattr(err, "error", None)  # mcp.shared.exceptions.MCPError's ErrorData
        code = getattr(data, "code", None)
        if code == -32000:  # mcp.types.CONNECTION_CLOSED
            return f"the server closed the connection during {what} (it exited)"
        if code is not None:
            return f"the server answered {what} with error {code}: {self._text(str(getattr(data, 'message', err)))}"
        return f"{what} failed: {type(err).__name__}: {self._text(' '.join(str(err).split()))}"

    def _call_tool(self, call: str, tool: str, arguments: Any, result: str = "json") -> Any:
        """The tool's answer read as ``result`` says: ``"json"`` its structured content, else its text parsed as
        JSON; ``"text"`` its text blocks joined by newlines; ``"ignore"`` nothing (``None``).  A tool error is a
        MemorySystemError whatever ``result`` says."""
        try:
            answer = self._run(f"tool {tool}", self._session.call_tool, tool, arguments)
        except _Fault as fault:
            raise self._error(f"{call} (tool {tool})", str(fault)) from None
        texts = [getattr(block, "text", "") for block in answer.content if getattr(block, "type", None) == "text"]
        if answer.is_error:
            raise self._error(f"{call} (tool {tool})", f"the tool answered an error: {self._text(' '.join(texts))}")
        if result == "ignore":
            return None
        if result == "text":
            return "\n".join(texts)
        if answer.structured_content is not None:
            return answer.structured_content
        joined = "".join(texts)
        try:
            return json.loads(joined)
        except ValueError:
            where = "ingest" if call == "ingest" else "search"
            raise self._error(
                f"{call} (tool {tool})",
                f"the tool answered no structured content and text that is not JSON: {self._quote(joined)} "
                f'(a server answering plain text needs result = "text" in the profile\'s {where}'
                + (', or "ignore"' if where == "ingest" else "")
                + ")",
            ) from None

    # -- the protocol -------------------------------------------------------------------------------------------------
    def ingest(self, turns: Sequence[Turn]) -> None:
        """Run the profile's ingest steps over ``turns`` (one scope, time order)."""
        if not turns:
            return
        fields = [_turn_fields(t) for t in turns]
        sessions: dict[str, list[dict[str, Any]]] = {}
        for f in fields:
            sessions.setdefault(f["session"], []).append(f)
        scope = turns[0].scope
        for step in self.profile.ingest:
            for arguments in self._step_arguments(step, fields, sessions, scope):
                self._call_tool("ingest", step.tool, arguments, step.result)
        self._seen_sessions.update(sessions)

    def _step_arguments(
        self, step: Step, fields: list[dict[str, Any]], sessions: dict[str, list[dict[str, Any]]], scope: str | None
    ) -> Iterator[Any]:
        if step.each == "turn":
            for f in fields:
                yield _render(step.arguments, f)
        elif step.each == "batch":
            yield _render(step.arguments, {"scope": scope}, fields)
        else:
            for session, members in sessions.items():
                if step.each == "new-session" and session in self._seen_sessions:
                    continue
                yield _render(step.arguments, {"session": session, "scope": scope}, members)

    def search(self, query: str, k: int) -> list[Memory]:
        """The profile's search tool's result as memories, in the server's order, cut at ``k``."""
        mapping = self.profile.search
        arguments = _render(mapping.arguments, {"query": query, "k": k})
        result = self._call_tool("search", mapping.tool, arguments, mapping.result)
        call = f"search (tool {mapping.tool})"
        memories: list[Memory] = []
        if mapping.text_records is not None:
            records = mapping.text_records.records(result)
        else:
            try:
                records = _follow(result, mapping.records)
            except _PathMissing as missing:
                raise self._error(call, f"the result has no {str(missing)!r} on the path {mapping.records!r}") from None
        if not isinstance(records, list):
            raise self._error(call, f"the result's {mapping.records!r} is not a list: {self._quote(records)}")
        for r, record in enumerate(records):
            if mapping.items is None:
                elements = [record]
            else:
                try:
                    elements = _follow(record, mapping.items)
                except _PathMissing:
                    raise self._error(call, f"record {r} has no {mapping.items!r}: {self._quote(record)}") from None
                if not isinstance(elements, list):
                    raise self._error(call, f"record {r}'s {mapping.items!r} is not a list: {self._quote(elements)}")
            for position, item in enumerate(elements):
                if len(memories) == k:
                    return memories
                memories.append(self._memory({"record": record, "item": item, "position": position}, r, call))
        return memories

    def _memory(self, context: dict[str, Any], r: int, call: str) -> Memory:
        mapping = self.profile.search

        def get(name: str, spec: str | None) -> Any:
            if spec is None:
                return None
            try:
                return _extract(context, spec)
            except _PathMissing:
                raise self._error(
                    call,
                    f"record {r}, element {context['position']}: no {name} at {spec!r}: {self._quote(context['item'])}",
                ) from None

        text = get("text", mapping.text)
        if not isinstance(text, str):
            raise self._error(call, f"record {r}: the text at {mapping.text!r} is not a string: {self._quote(text)}")
        ident = get("id", mapping.id)
        score = get("score", mapping.score)
        if isinstance(score, str) and mapping.text_records is not None:  # a regex group: a number written as text
            score = _number(score)
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise self._error(call, f"record {r}: the score at {mapping.score!r} is not a number: {self._quote(score)}")
        sources = get("sources", mapping.sources)
        if sources is not None and (not isinstance(sources, list) or not all(isinstance(s, str) for s in sources)):
            raise self._error(
                call,
                f"record {r}: the sources at {mapping.sources!r} are not a list of strings: {self._quote(sources)}",
            )
        created = get("created_at", mapping.created_at)
        created_at = None
        if created is not None:
            try:
                created_at = datetime.fromisoformat(created) if isinstance(created, str) else None
            except ValueError:
                created_at = None
            if created_at is None:
                raise self._error(call, f"record {r}: created_at is not an ISO 8601 time: {self._quote(created)}")
        return Memory(
            text=text,
            score=None if score is None else float(score),
            id=None if ident is None else _as_text(ident),
            sources=None if sources is None else tuple(sources),
            created_at=created_at,
        )

    def params(self) -> dict[str, Any]:
        """The profile (its name and file name) and the server's self-reported name and version; no path."""
        out: dict[str, Any] = {"profile": self.profile.name, "profile_file": self.profile.origin}
        if self._server is not None:
            out["server"], out["server_version"] = self._server
        return out

    def close(self) -> None:
        """Stop the server and wait for its process group to end (idempotent; also after a failure)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._session_cm is not None:
                try:
                    self._session_cm.__exit__(None, None, None)
                except Exception:  # noqa: S110 - a failing shutdown still ends the process below
                    pass
        finally:
            self._session_cm = None
            self._session = None
            if self._leader is not None:
                # The SDK kills the server's process group only when the server outlives the grace period; a server
                # that exits at once may leave what it started running.  End whatever is left of its session.
                _end_session(self._leader)
                _CLAIMED.discard(self._leader)
                self._leader = None
            if self._portal_cm is not None:
                try:
                    self._portal_cm.__exit__(None, None, None)
                finally:
                    self._portal_cm = None
            if self._errlog is not None:
                self._errlog.close()
                self._errlog = None
            if self._own_workdir is not None:
                self._own_workdir.cleanup()
                self._own_workdir = None
