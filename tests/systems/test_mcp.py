"""The mcp memory system: profiles, templates, a fake stdio server's faults (no orphan process), server-memory.

The fake server (``fake_mcp_server.py``, raw JSON-RPC lines) breaks in one way per mode; each fault must be one
line naming the system, the scope, the call and the problem, and leave no process behind: the server (and, in
``child`` mode, the process it started) is gone after ``close()``, and no child of ours is left unreaped.
The server-memory tests start the real reference server installed by ``make node-servers`` and skip, saying
why, only where node or that install is absent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra (the MCP SDK) is not installed")

from agentmemory.errors import InputError, MemorySystemError, ParameterError  # noqa: E402
from agentmemory.systems.base import Turn  # noqa: E402
from agentmemory.systems.mcp import NODE_DIR, MCPSystem, _render, load_profile, profile_names  # noqa: E402
from agentmemory.systems.registry import resolve_system  # noqa: E402
from agentmemory.systems.replay import turn_of  # noqa: E402

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_mcp_server.py"
FAKE_PROFILE = HERE / "fake-profile.toml"
FAKE_TEXT_PROFILE = HERE / "fake-text-profile.toml"
SERVER_MEMORY = NODE_DIR / "node_modules" / ".bin" / "mcp-server-memory"


def turns(texts: list[str], *, scope: str = "c1", sessions: list[str | None] | None = None) -> list[Turn]:
    sessions = sessions or [None] * len(texts)
    return [Turn(f"{scope}/e{i}", t, None, None, s, scope) for i, (t, s) in enumerate(zip(texts, sessions))]


def _state(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of a live or zombie process, None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def assert_no_process_left(pidfile: Path) -> None:
    """Every pid in ``pidfile`` is gone (or a zombie that is not ours to reap)."""
    pids = [int(p) for p in pidfile.read_text().split()]
    assert pids
    for pid in pids:
        state = _state(pid)
        assert state is None or (state[0] == "Z" and state[1] != os.getpid()), (pid, state)


def fake(tmp_path: Path, mode: str, **kwargs) -> MCPSystem:
    command = [sys.executable, str(FAKE), mode, str(tmp_path / "pids")]
    return MCPSystem(scope="c1", workdir=tmp_path, profile=str(FAKE_PROFILE), command=command, **kwargs)


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process checks read /proc")


# -- profiles and templates -------------------------------------------------------------------------------------------
def test_shipped_profiles_load():
    """Every shipped profile loads; server-memory calls the server's three tools."""
    assert "server-memory" in profile_names()
    for name in profile_names():
        assert load_profile(name).name == name
    assert load_profile("server-memory").tools == ["create_entities", "add_observations", "search_nodes"]


def test_unknown_profile_lists_the_shipped_ones():
    """A profile that is neither shipped nor a file is one line listing the shipped profiles."""
    with pytest.raises(
        ParameterError,
        match=r"^profile: 'nope' \(str\) is neither a shipped profile nor a file; use one of mcp-memory-libsql, "
        r"server-memory, or the path",
    ):
        load_profile("nope")


@pytest.mark.parametrize(
    "text,message",
    [
        ("name = 1", r"name: 1 \(int\) is not allowed; expected a string"),
        ('name = "x"\nfoo = 1', r"foo: 1 \(int\) is not allowed; unknown key"),
        ('name = "x"', r"ingest: None \(NoneType\) is not allowed; expected a non-empty list of steps"),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\neach = "week"\n',
            r"ingest\[0\].each: 'week' \(str\) is not allowed; expected one of turn, session, new-session, batch",
        ),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\narguments = { a = "{speaker}" }\n[search]\ntool = "s"\nrecords = ""\ntext = ""',
            r"ingest\[0\].arguments: \{speaker\} is not a field here; use \{created_at\}, \{entry_id\}, \{role\}",
        ),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\narguments = { a = { "$each-turn" = "{text}" } }\n'
            '[search]\ntool = "s"\nrecords = ""\ntext = ""',
            r"ingest\[0\].arguments: \{'\$each-turn' = \.\.\.\} belongs alone in a table of a session or batch step",
        ),
        ("name = [", r"not a valid profile file"),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\nresult = "yaml"\n',
            r"ingest\[0\].result: 'yaml' \(str\) is not allowed; expected one of ignore, json, text",
        ),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\n[search]\ntool = "s"\nresult = "ignore"\ntext = ""',
            r"search.result: 'ignore' \(str\) is not allowed; expected one of json, text",
        ),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\n[search]\ntool = "s"\nrecords = ""\ntext = ""\nsplit = "lines"',
            r"search.split: 'lines' \(str\) is not allowed; unknown key; split and match belong to a search with "
            r'result = "text"',
        ),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\n[search]\ntool = "s"\nresult = "text"\nsplit = "words"\ntext = ""',
            r"search.split: 'words' \(str\) is not allowed; expected 'lines' or 'whole', or \{ regex = \"...\" \}",
        ),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\n[search]\ntool = "s"\nresult = "text"\nmatch = "(a"\ntext = ""',
            r"search.match: '\(a' \(str\) is not allowed; not a regular expression \(missing \), unterminated "
            r"subpattern at position 0\)",
        ),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\n[search]\ntool = "s"\nresult = "text"\nmatch = "a.*"\ntext = ""',
            r"search.match: 'a\.\*' \(str\) is not allowed; expected named groups, e\.g\. \(\?P<text>\.\*\)",
        ),
        (
            'name = "x"\n[[ingest]]\ntool = "t"\n[search]\ntool = "s"\nresult = "text"\nrecords = "hits"\ntext = ""',
            r"search.records: 'hits' \(str\) is not allowed; not used with result = \"text\": split \(and match\) "
            r"make the records from the text",
        ),
    ],
)
def test_bad_profiles(tmp_path, text, message):
    """A bad profile file is one line naming the file and the key, the bad value and what is allowed."""
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=f"^{path}: {message}"):
        load_profile(path)


def test_render_keeps_whole_fields_and_expands_each_turn():
    """``"{k}"`` alone keeps its type, fields inside text become text (null empty), $each-turn lists the turns."""
    fields = {"k": 5, "query": "tea", "role": None}
    assert _render({"n": "{k}", "q": "q={query}/{role}", "r": "{role}"}, fields) == {"n": 5, "q": "q=tea/", "r": None}
    assert _render({"c": {"$each-turn": "{text}"}}, {}, [{"text": "a"}, {"text": "b"}]) == {"c": ["a", "b"]}


def test_registry_names_the_profile():
    """``mcp`` needs a profile; ``mcp[profile=server-memory]`` keys itself by the spec and labels itself by the
    profile's ``name``: a profile file is labelled by its name, not its path; other parameters follow."""
    spec = resolve_system("mcp[profile=server-memory]")
    assert (spec.key, spec.label) == ("mcp[profile=server-memory]", "MCP server-memory")
    custom = resolve_system(f"mcp[profile={FAKE_TEXT_PROFILE}]")
    assert (custom.key, custom.label) == (f"mcp[profile={FAKE_TEXT_PROFILE}]", "MCP fake-text")
    assert resolve_system(f"mcp[profile={FAKE_PROFILE},timeout=5]").label == "MCP fake (timeout=5)"
    with pytest.raises(ParameterError, match=r"profile.*is required"):
        resolve_system("mcp")
    with pytest.raises(
        ParameterError, match=r"^system profile: 'nope\.toml' \(str\) is neither a shipped profile nor a file"
    ):
        resolve_system("mcp[profile=nope.toml]")


# -- the fake server --------------------------------------------------------------------------------------------------
def test_fake_server_round_trip(tmp_path):
    """Ingest as tool calls, search mapped by the profile's paths (text, id, score, sources), cut at k."""
    system = fake(tmp_path, "ok")
    try:
        assert system.batch_size == 2
        system.ingest(turns(["I like tea", "Tea is hot", "coffee"]))
        found = system.search("TEA", 5)
        assert [(m.text, m.id, m.score, m.sources) for m in found] == [
            ("I like tea", "m0", 1.0, ("c1/e0",)),
            ("Tea is hot", "m1", 0.5, ("c1/e1",)),
        ]
        assert [m.id for m in system.search("tea", 1)] == ["m0"]
        assert system.search("milk", 5) == []
        assert system.params() == {
            "profile": "fake",
            "profile_file": "fake-profile.toml",
            "server": "fake",
            "server_version": "1.0",
        }
    finally:
        system.close()
    system.close()  # idempotent
    assert_no_process_left(tmp_path / "pids")


def test_plain_text_server_through_a_text_profile(tmp_path):
    """A server answering in plain text only ("Saved: ..." to a write, one line per hit to a search) passes
    through a profile with ``result = "text"``: each line the ``match`` pattern fits is one memory (the header
    line is not), its named groups the paths read (the score written as text becomes a number)."""
    command = [sys.executable, str(FAKE), "text", str(tmp_path / "pids")]
    system = MCPSystem(scope="c1", workdir=tmp_path, profile=str(FAKE_TEXT_PROFILE), command=command)
    try:
        system.ingest(turns(["I like tea", "Tea is hot", "coffee"]))
        found = system.search("TEA", 5)
        assert [(m.text, m.id, m.score, m.sources) for m in found] == [
            ("I like tea", "m0", 1.0, None),
            ("Tea is hot", "m1", 0.5, None),
        ]
        assert [m.id for m in system.search("tea", 1)] == ["m0"]
        assert system.search("milk", 5) == []
        assert system.params()["profile"] == "fake-text"
    finally:
        system.close()
    assert_no_process_left(tmp_path / "pids")


@pytest.mark.parametrize(
    "split,match,expected",
    [
        ('"lines"', None, ["Found 2 memories:", "[m0] 1.00 I like tea", "[m1] 0.50 Tea is hot"]),
        ('"whole"', None, ["Found 2 memories:\n[m0] 1.00 I like tea\n[m1] 0.50 Tea is hot"]),
        ("{ regex = '\\n\\[' }", None, ["Found 2 memories:", "m0] 1.00 I like tea", "m1] 0.50 Tea is hot"]),
        ('"lines"', "'^\\[m1\\] \\S+ (?P<text>.*)'", ["Tea is hot"]),
    ],
)
def test_text_split_rules(tmp_path, split, match, expected):
    """``split`` cuts the text into records (each non-empty line, the whole text, or at a pattern); ``match``
    keeps the records it fits, as their named groups."""
    profile = tmp_path / "p.toml"
    lines = FAKE_TEXT_PROFILE.read_text().splitlines()
    search = lines[: lines.index("[search]") + 1] + ['tool = "recall"', 'arguments = { query = "{query}" }']
    search += ['result = "text"', f"split = {split}"]
    search += [f"match = {match}", 'text = "record.text"'] if match else ['text = "record"']
    profile.write_text("\n".join(search) + "\n", encoding="utf-8")
    system = MCPSystem(scope="c1", workdir=tmp_path, profile=str(profile), command=[sys.executable, str(FAKE), "text"])
    try:
        system.ingest(turns(["I like tea", "Tea is hot"]))
        assert [m.text for m in system.search("tea", 10)] == expected
    finally:
        system.close()


def test_a_text_answer_under_a_json_profile_says_what_to_set(tmp_path):
    """A search answered in plain text under a profile that reads JSON is one line quoting the text and naming
    the key to set; the write's plain-text answer is not read unless a step asks for JSON."""
    command = [sys.executable, str(FAKE), "text"]
    system = MCPSystem(scope="c1", workdir=tmp_path, profile=str(FAKE_PROFILE), command=command)
    try:
        system.ingest(turns(["I like tea"]))  # result = "ignore" by default: "Saved: I like tea" is not parsed
        with pytest.raises(
            MemorySystemError,
            match=r"^mcp\[profile=fake\]: search \(tool recall\) in scope c1: the tool answered no "
            r"structured content and text that is not JSON: 'Found 1 memories:\\n\[m0\] 1\.00 I like tea' \(a "
            r'server answering plain text needs result = "text" in the profile\'s search\)$',
        ):
            system.search("tea", 3)
    finally:
        system.close()
    profile = tmp_path / "p.toml"
    profile.write_text(FAKE_PROFILE.read_text().replace('each = "turn"', 'each = "turn"\nresult = "json"'))
    system = MCPSystem(scope="c1", workdir=tmp_path, profile=str(profile), command=command)
    try:
        with pytest.raises(
            MemorySystemError,
            match=r"ingest \(tool remember\) in scope c1: the tool answered no structured content and text that is "
            r"not JSON: 'Saved: I like tea' \(a server answering plain text needs result = \"text\" in the "
            r"profile's ingest, or \"ignore\"\)$",
        ):
            system.ingest(turns(["I like tea"]))
    finally:
        system.close()


FAULTS = [
    (
        "crash",
        "start",
        r"the server closed the connection during initialize \(it exited\); its stderr ends: fake server: cannot open its database",
    ),
    ("no-tools", "start", r"the server lacks the tool recall that profile fake calls; it offers remember"),
    ("exit-on-recall", r"search \(tool recall\)", r"the server closed the connection during tool recall \(it exited\)"),
    (
        "malformed",
        r"search \(tool recall\)",
        r"the server wrote a line that is not a JSON-RPC message: '\{this is not json' \(Invalid JSON: key must be a string at line 1 column 2\)",
    ),
    ("hang", r"search \(tool recall\)", r"tool recall took longer than the timeout of 1 s"),
]


@pytest.mark.parametrize("mode,call,problem", FAULTS, ids=[f[0] for f in FAULTS])
def test_faults_are_one_line_and_leave_no_process(tmp_path, mode, call, problem):
    """A server that does not start, lacks a tool, exits mid-run, writes malformed JSON or hangs: one line
    ``<system>: <call> in scope <scope>: <problem>``, and neither the server nor a child of ours remains."""
    system = None
    with pytest.raises(MemorySystemError, match=f"^mcp\\[profile=fake\\]: {call} in scope c1: {problem}$") as caught:
        system = fake(tmp_path, mode, timeout=1)
        try:
            system.ingest(turns(["I like tea"]))
            system.search("tea", 5)
        finally:
            system.close()
    assert (caught.value.system, caught.value.scope) == ("mcp[profile=fake]", "c1")
    assert "\n" not in str(caught.value)
    assert_no_process_left(tmp_path / "pids")


def test_a_server_with_children_leaves_none(tmp_path):
    """The server runs in its own process group: closing it ends the process it started too."""
    system = fake(tmp_path, "child")
    system.ingest(turns(["I like tea"]))
    assert system.search("tea", 5)[0].sources == ("c1/e0",)
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    assert len(pids) == 2 and all(_state(p) is not None for p in pids)
    system.close()
    assert_no_process_left(tmp_path / "pids")


def test_command_not_found(tmp_path):
    """A command that is no executable fails before anything starts, naming it."""
    with pytest.raises(
        MemorySystemError,
        match=r"^mcp\[profile=fake\]: start in scope c1: cannot run 'no-such-server-x': no such executable$",
    ):
        MCPSystem(scope="c1", workdir=tmp_path, profile=str(FAKE_PROFILE), command="no-such-server-x --flag")


def test_bad_results_are_faults(tmp_path):
    """A result the profile's paths do not fit is one line naming the path."""
    profile = tmp_path / "p.toml"
    profile.write_text(FAKE_PROFILE.read_text().replace('records = "hits"', 'records = "found"'), encoding="utf-8")
    command = [sys.executable, str(FAKE), "ok"]
    system = MCPSystem(scope="c1", workdir=tmp_path, profile=str(profile), command=command)
    try:
        system.ingest(turns(["tea"]))
        with pytest.raises(
            MemorySystemError,
            match=r"^mcp\[profile=fake\]: search \(tool recall\) in scope c1: the result has no 'found' on the path 'found'$",
        ):
            system.search("tea", 3)
    finally:
        system.close()


# -- server-memory ------------------------------------------------------------------------------------------------------
needs_server_memory = pytest.mark.skipif(
    shutil.which("node") is None or not SERVER_MEMORY.exists(),
    reason="server-memory needs node and `make node-servers` (npm ci in agentmemory/systems/node); "
    + ("node is not on PATH" if shutil.which("node") is None else "it is not installed"),
)


@needs_server_memory
def test_server_memory_entities_observations_and_search(tmp_path):
    """One entity per session, one observation per turn (verbatim); search_nodes keeps whole entities holding the
    whole query as a case-insensitive substring, flattened in the server's order and cut at k; a fresh graph file
    in the scope's workdir."""
    system = MCPSystem(scope="c1", workdir=tmp_path, profile="server-memory")
    try:
        assert system.params() == {
            "profile": "server-memory",
            "profile_file": "server-memory.toml",
            "server": "memory-server",
            "server_version": system.params()["server_version"],
        }
        texts = ["A: I walked in the park", "B: nice", "A: the museum was shut", "B: Park again?"]
        batch = turns(texts, sessions=["s1", "s1", "s2", "s2"])
        system.ingest(batch[:3])
        system.ingest(batch[3:])
        assert [(m.text, m.id) for m in system.search("PARK", 10)] == [
            ("A: I walked in the park", "s1#0"),
            ("B: nice", "s1#1"),
            ("A: the museum was shut", "s2#0"),
            ("B: Park again?", "s2#1"),
        ]
        assert [m.id for m in system.search("park", 3)] == ["s1#0", "s1#1", "s2#0"]
        assert [m.id for m in system.search("museum", 5)] == ["s2#0", "s2#1"]
        assert system.search("where did A walk", 5) == []  # the whole query must occur: no word matching
        assert all(m.sources is None and m.score is None for m in system.search("park", 5))
        graph = [json.loads(line) for line in (tmp_path / "memory.jsonl").read_text().splitlines()]
        assert [(g["name"], g["entityType"], g["observations"]) for g in graph] == [
            ("s1", "session", texts[:2]),
            ("s2", "session", texts[2:]),
        ]
        assert str(tmp_path) not in json.dumps(system.params())
    finally:
        system.close()


@needs_server_memory
def test_server_memory_scopes_never_share_a_graph(tmp_path):
    """Two scopes, two servers, two graph files: what one ingested the other never finds."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = MCPSystem(scope="a", workdir=tmp_path / "a", profile="server-memory")
    second = MCPSystem(scope="b", workdir=tmp_path / "b", profile="server-memory")
    try:
        first.ingest(turns(["tea time"], scope="a"))
        second.ingest(turns(["coffee time"], scope="b"))
        assert [m.text for m in first.search("time", 5)] == ["tea time"]
        assert [m.text for m in second.search("time", 5)] == ["coffee time"]
    finally:
        first.close()
        second.close()


# -- mcp-memory-libsql ------------------------------------------------------------------------------------------------
LIBSQL = NODE_DIR / "node_modules" / ".bin" / "mcp-memory-libsql"
SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "locomo-sample" / "locomo-sample.json"
needs_libsql = pytest.mark.skipif(
    shutil.which("node") is None or not LIBSQL.exists(),
    reason="mcp-memory-libsql needs node and `make node-servers` (npm ci in agentmemory/systems/node); "
    + ("node is not on PATH" if shutil.which("node") is None else "it is not installed"),
)


def libsql_matches(query: str, texts: dict[str, str]) -> set[str]:
    """The ids whose text the server's search keeps, computed apart from it: the query's runs of spaces, ``_`` and
    ``-`` become ``%`` in ``%query%``, matched with SQL LIKE, case-insensitive (ASCII)."""
    words = [re.escape(w) for w in re.split(r"[\s_-]+", query)]
    pattern = re.compile(".*" + ".*".join(words) + ".*", re.IGNORECASE | re.DOTALL)
    return {ident for ident, text in texts.items() if pattern.fullmatch(text)}


@needs_libsql
def test_mcp_memory_libsql_plain_text_writes_and_like_search(tmp_path):
    """The second shipped server: its plain-text answer to each write is ignored, its JSON-text search keeps the
    turns whose text holds the query's words in order (one entity per turn, named by the entry id), and its
    database lives in the scope's workdir."""
    system = MCPSystem(scope="c1", workdir=tmp_path, profile="mcp-memory-libsql")
    try:
        params = system.params()
        assert (params["profile"], params["server"]) == ("mcp-memory-libsql", "mcp-memory-libsql")
        texts = ["A: I walked in the park", "B: nice", "A: the museum was shut", "B: Park again?"]
        system.ingest(turns(texts))
        assert {(m.text, m.id) for m in system.search("PARK", 10)} == {(texts[0], "c1/e0"), (texts[3], "c1/e3")}
        assert [m.id for m in system.search("walked park", 10)] == ["c1/e0"]  # the words in order, anything between
        assert system.search("park walked", 10) == []
        assert len(system.search("a", 2)) == 2  # cut at k
        assert (tmp_path / "memory.db").is_file()
    finally:
        system.close()


@needs_libsql
def test_mcp_memory_libsql_on_the_locomo_sample():
    """Replayed over the LoCoMo sample (two conversations, 50 turns a write), every question's memories are the
    turns the server's LIKE rule keeps, computed apart here (at most k of them); and questions made of two words
    of a turn find exactly the turns that rule keeps, that turn among them."""
    from agentmemory.datasets import load
    from agentmemory.evaluation.runner import evaluate

    collection = load(SAMPLE)
    evaluation = evaluate(collection, systems=["mcp[profile=mcp-memory-libsql]"], k=5)
    (system,) = evaluation.systems
    assert system.spec.label == "MCP mcp-memory-libsql"
    texts = {e.id: e.text for e in collection.entries}
    for query in collection.judged_queries:
        scope = {i: t for i, t in texts.items() if i.startswith(f"{query.scope}/")}
        expected = libsql_matches(query.text, scope)
        got = {m.id for m in system.replay.answers[query.id]}
        assert got <= expected and len(got) == min(len(expected), 5), query.id
    first = collection.entries[0].scope
    scope_turns = [e for e in collection.entries if e.scope == first]
    made = MCPSystem(scope=first, profile="mcp-memory-libsql")
    try:
        made.ingest([turn_of(e) for e in scope_turns])
        asked = 0
        for entry in scope_turns[::5]:
            words = re.findall(r"[A-Za-z]{4,}", entry.text)
            if len(words) < 3:
                continue
            query = f"{words[0]} {words[2]}"
            expected = libsql_matches(query, {e.id: e.text for e in scope_turns})
            found = {m.id for m in made.search(query, 50)}
            assert entry.id in expected and found == expected, query
            asked += 1
        assert asked >= 3
    finally:
        made.close()


@needs_libsql
@needs_server_memory
@pytest.mark.parametrize("profile", ["server-memory", "mcp-memory-libsql"])
def test_shipped_servers_keep_the_memory_system_contract(profile):
    """Both shipped servers, through their profiles, pass agentmemory.testing.check_system."""
    from agentmemory.testing import check_system

    check_system(f"mcp[profile={profile}]")
