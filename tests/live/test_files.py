"""Prompt templates, verdict labels, price tables and the call cache: what is read, and what is refused."""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
import warnings

import pytest

from agentmemory.errors import CacheWarning, InputError, MissingFileError, ParameterError
from agentmemory.live import default_prompt, load_prompt, parse_verdict, read_prices
from agentmemory.live.call_cache import CallCache, request_key
from agentmemory.live.endpoints import Completion

READER_VALUES = {"question": "Q?", "memories": "1. m", "question_date": "2023-05-08 10:00"}


@pytest.mark.parametrize("role", ["reader", "judge"])
def test_the_default_prompts_ship_in_the_package_with_their_sha256(role) -> None:
    """The defaults are read from the package's templates folder; the sha256 is that of their text."""
    prompt = default_prompt(role)
    assert prompt.source == "default" and prompt.syntax == "format"
    assert prompt.sha256 == hashlib.sha256(prompt.text.encode("utf-8")).hexdigest()
    assert load_prompt(role, None) == prompt


def test_a_text_file_template_is_rendered_with_str_format(tmp_path) -> None:
    """{name} placeholders are filled; a doubled brace is a literal brace."""
    path = tmp_path / "reader.txt"
    path.write_text("Memories:\n{memories}\nAsked {question_date}: {question} {{json}}", encoding="utf-8")
    prompt = load_prompt("reader", path)
    assert (prompt.source, prompt.syntax) == ("reader.txt", "format")
    assert prompt.render(READER_VALUES) == "Memories:\n1. m\nAsked 2023-05-08 10:00: Q? {json}"


def test_a_string_constant_of_a_python_file_is_read_without_running_it(tmp_path) -> None:
    """FILE.py:NAME reads the top-level assignment with ast (the file's other code never runs); a template in
    Jinja's double braces is read as such, single braces then being literal."""
    source = tmp_path / "prompts.py"
    source.write_text(
        textwrap.dedent(
            '''
            raise SystemExit("this file must not run")
            JUDGE = """Question: {question}
            Gold answer: {gold_answer}
            Generated answer: {generated_answer}
            Return {{"label": "CORRECT"}} or WRONG."""
            READER: str = "Memories:\\n{{memories}}\\nQuestion: {{ question }} {literal}"
            '''
        ),
        encoding="utf-8",
    )
    judge = load_prompt("judge", f"{source}:JUDGE")
    assert (judge.source, judge.syntax) == ("prompts.py:JUDGE", "format")
    rendered = judge.render({"question": "q", "gold_answer": "g", "generated_answer": "a", "question_date": "d"})
    assert rendered.splitlines()[-1] == 'Return {"label": "CORRECT"} or WRONG.'
    reader = load_prompt("reader", f"{source}:READER")
    assert reader.syntax == "double-braces"
    assert reader.render(READER_VALUES) == "Memories:\n1. m\nQuestion: Q? {literal}"


@pytest.mark.parametrize(
    "text,role,message",
    [
        (
            "{question} {memories} {speaker}",
            "reader",
            r"'\{speaker\}' \(str\) is not a placeholder of the reader prompt; use: \{question\}, \{memories\}, \{question_date\}$",
        ),
        ("{question}", "reader", r"has no \{memories\} placeholder \(the system's top k memories"),
        ("{question} {generated_answer}", "judge", r"has no \{gold_answer\} placeholder"),
        (
            "{} {memories} {question}",
            "reader",
            r"has a positional placeholder \{\}; write each placeholder as \{name\}",
        ),
        ("{question!r} {memories}", "reader", r"has a conversion or format spec on \{question\}"),
    ],
)
def test_a_template_that_fails_its_checks_is_refused(tmp_path, text, role, message) -> None:
    """Unknown, positional or formatted placeholders and a missing required one: one line naming the option and file."""
    path = tmp_path / "p.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ParameterError, match=rf"^--prompt {path}: .*{message}"):
        load_prompt(role, path, "--prompt")


def test_a_python_source_without_the_string_is_refused(tmp_path) -> None:
    """No such name, or a value that is not a string literal (an f-string): refused, naming both."""
    source = tmp_path / "p.py"
    source.write_text('X = f"{1}"\nY = 3\n', encoding="utf-8")
    with pytest.raises(ParameterError, match=r"names no top-level assignment to Z in p\.py"):
        load_prompt("judge", f"{source}:Z", "--judge-prompt")
    with pytest.raises(ParameterError, match=r"is not a string constant in p\.py \(an f-string, a call or another"):
        load_prompt("judge", f"{source}:X", "--judge-prompt")
    with pytest.raises(MissingFileError, match=r"missing\.txt: no such file$"):
        load_prompt("judge", tmp_path / "missing.txt")


@pytest.mark.parametrize(
    "reply,label,value",
    [
        ("CORRECT", "CORRECT", 1.0),
        ("  wrong.\n", "wrong", 0.0),
        ("**Correct**", "Correct", 1.0),
        ("Yes", "Yes", 1.0),
        ("no", "no", 0.0),
        ('{"label": "WRONG"}', "WRONG", 0.0),
        ('The answer names the same place.\n```json\n{"label": "CORRECT"}\n```', "CORRECT", 1.0),
        ('Reasoning first. {"label": "INCORRECT"}', "INCORRECT", 0.0),
    ],
)
def test_a_judge_reply_is_read_by_one_rule(reply, label, value) -> None:
    """The JSON label when there is one, else the reply's one word; the label kept as written."""
    assert parse_verdict(reply) == (label, value)


@pytest.mark.parametrize("reply", ["Maybe", "CORRECT, mostly", "", "The answer is not correct"])
def test_a_reply_that_is_not_a_verdict_is_refused(reply) -> None:
    """Anything else is no verdict (the question is left out, never scored wrong)."""
    with pytest.raises(ValueError, match=r"^replied with no verdict: "):
        parse_verdict(reply)


def test_a_price_table_turns_tokens_into_cost(tmp_path) -> None:
    """Prices are per million tokens; an unlisted model or a call without usage has no cost."""
    path = tmp_path / "prices.toml"
    path.write_text(
        'currency = "EUR"\n\n[gpt-4o-mini]\ninput = 0.15\noutput = 0.6\n\n["gpt-4.1"]\ninput = 2\noutput = 8\n'
    )
    table = read_prices(path)
    assert table.cost("gpt-4o-mini", 1_000_000, 500_000) == pytest.approx(0.15 + 0.3)
    assert table.cost("gpt-4.1", 10, 0) == pytest.approx(2e-5)
    assert table.cost("other", 10, 10) is None and table.cost("gpt-4.1", None, 3) is None
    assert table.describe() == {
        "file": "prices.toml",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "currency": "EUR",
    }


@pytest.mark.parametrize(
    "text,message",
    [
        ("[m]\ninput = 1\noutput = -2\n", r"prices\.toml:1: \[m\] output: -2 is not a price; give a number >= 0"),
        ("[m]\ninput = 1\noutput = 2\ncached = 1\n", r"prices\.toml:1: \[m\] has the key 'cached'; a model's table"),
        ("[m]\ninput = 1\n", r"prices\.toml:1: \[m\] output: None is not a price"),
        ("m = 3\n", r"prices\.toml:1: 'm' is not a table; write \[m\] with input = and output ="),
        ("[m\n", r"prices\.toml:1: is not TOML: "),
    ],
)
def test_a_bad_price_table_is_refused_with_its_line(tmp_path, text, message) -> None:
    """Each refusal names the file and line, the bad value and what a table takes."""
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=rf"^{re.escape(str(tmp_path))}/{message}"):
        read_prices(path)


REQUEST = {
    "endpoint": {"kind": "openai", "model": "m", "temperature": 0.0},
    "messages": [{"role": "user", "content": "hi"}],
}


def test_the_cache_key_changes_with_every_part_of_the_request() -> None:
    """The key is over the endpoint's identity and the exact messages; key order does not matter."""
    key = request_key(REQUEST)
    assert key == request_key(
        {"messages": REQUEST["messages"], "endpoint": dict(reversed(REQUEST["endpoint"].items()))}
    )
    changed = [
        {**REQUEST, "endpoint": {**REQUEST["endpoint"], "model": "n"}},
        {**REQUEST, "endpoint": {**REQUEST["endpoint"], "temperature": 0.5}},
        {**REQUEST, "messages": [{"role": "user", "content": "hi "}]},
    ]
    assert len({key, *(request_key(c) for c in changed)}) == 4


def test_the_cache_gives_back_what_it_stored_and_distrusts_a_corrupt_file(tmp_path) -> None:
    """A stored reply reads back equal; a file whose request is not its key's is warned about and missed."""
    cache = CallCache(tmp_path)
    key = request_key(REQUEST)
    reply = Completion("hello", 3, 1, "m", "stop")
    assert cache.load(key, REQUEST) is None
    cache.save(key, REQUEST, reply)
    assert cache.load(key, REQUEST) == reply
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [f"{key}.json"]
    path = cache.path(key)
    document = json.loads(path.read_text())
    document["request"]["messages"][0]["content"] = "other"
    path.write_text(json.dumps(document))
    with pytest.warns(CacheWarning, match=r"is corrupt \(its recorded request is not the one its name stands for\)"):
        assert cache.load(key, REQUEST) is None
    path.write_text("{not json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.load(key, REQUEST) is None
    assert [str(w.message).split(" (")[0] for w in caught] == [f"agentmemory: chat cache file {path} is unreadable"]
