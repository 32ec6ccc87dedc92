"""Token counters: the Llama-2 BPE of wordllama's wheel (checked against the tokenizers library directly), the
registry, the checks on a plugin's counts, the per-text cache, and an import of agentmemory that loads none."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest
from plugins import install, restored
from tokenizers import Tokenizer

from agentmemory.errors import PluginError, UnknownNameError
from agentmemory.metrics.token_counters import (
    DEFAULT_TOKEN_COUNTER,
    LLAMA2_FILE,
    TOKEN_COUNTERS,
    Llama2Counter,
    token_counter,
)

FILE = Path(str(distribution("wordllama").locate_file(LLAMA2_FILE)))
TEXTS = [
    "Hello world",
    "",
    " ",
    "Caroline: I went to the LGBTQ support group yesterday.",
    "日本語 😀",
    "Priya: Since October, yes.\nThe first class is on Thursday.",
]


@pytest.fixture(scope="module")
def reference() -> Tokenizer:
    """The same file read by the tokenizers library directly, independently of agentmemory."""
    return Tokenizer.from_file(str(FILE))


def test_llama2_counts_are_the_tokenizers_without_bos(reference):
    """Each count is the length of tokenizers' encoding without special tokens, one less than with <s>."""
    counts = Llama2Counter().count(TEXTS)
    assert counts == [len(reference.encode(t, add_special_tokens=False).ids) for t in TEXTS]
    assert [n + 1 for n in counts] == [len(reference.encode(t).ids) for t in TEXTS]  # the <s> the file adds


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Hello world", ["▁Hello", "▁world"]),
        ("", []),
        ("Caroline: I went", ["▁Caroline", ":", "▁I", "▁went"]),
        ("😀", ["▁", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]),  # byte fallback: 4 UTF-8 bytes after the prefix
    ],
)
def test_llama2_counts_by_hand(reference, text, tokens):
    """Hand-checked pieces: the prepended '▁', no <s>, bytes for a character outside the vocabulary."""
    assert reference.encode(text, add_special_tokens=False).tokens == tokens
    assert Llama2Counter().count([text]) == [len(tokens)]


def test_llama2_describes_itself():
    """The description names the tokenizer, its 32,000-token vocabulary, the file with its sha256 and the versions."""
    described = Llama2Counter().describe()
    assert described == {
        "name": "llama2",
        "tokenizer": "Llama-2 BPE, 32,000 tokens, counted without <s>",
        "vocabulary": 32000,
        "file": "wordllama/tokenizers/l2_supercat_tokenizer_config.json",
        "file_sha256": hashlib.sha256(FILE.read_bytes()).hexdigest(),
        "wordllama": distribution("wordllama").version,
        "tokenizers": distribution("tokenizers").version,
    }
    json.dumps(described)  # plain JSON values, for the artifact


def test_default_is_llama2_and_names_come_from_the_registry():
    """llama2 is the default; an unknown name lists the registered ones."""
    assert DEFAULT_TOKEN_COUNTER == "llama2" and "llama2" in TOKEN_COUNTERS
    assert token_counter().describe()["name"] == "llama2"
    names = re.escape(", ".join(sorted(TOKEN_COUNTERS.names())))
    with pytest.raises(
        UnknownNameError, match=rf"^token counter: 'gpt' \(str\) is not a known name; choose from: {names}$"
    ):
        token_counter("gpt")


class Words:
    """A plugin counter: whitespace-separated words, recording every call."""

    name = "words"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def count(self, texts):
        self.calls.append(list(texts))
        return [len(t.split()) for t in texts]

    def describe(self):
        return {"name": "ignored", "version": "1"}


@pytest.fixture
def counters_restored():
    with restored(TOKEN_COUNTERS):
        yield


def test_a_registered_counter_is_used_and_cached(counters_restored):
    """A counter registered at run time counts each distinct text once; the description keeps the registry name."""
    made: list[Words] = []

    def factory() -> Words:
        made.append(Words())
        return made[-1]

    TOKEN_COUNTERS.register("words", factory)
    counter = token_counter("words")
    assert counter.count(["a b c", "d", "a b c"]) == [3, 1, 3]
    assert counter.count(["d", "e f"]) == [1, 2]
    assert counter.count_one("a b c") == 3
    assert made[0].calls == [["a b c", "d"], ["e f"]]
    assert counter.describe() == {"name": "words", "version": "1"}


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ([1], "token counter plugin 'bad': count returned [1] for 2 texts; give a list of one int >= 0 per text"),
        ((1, 2), "token counter plugin 'bad': count returned (1, 2) for 2 texts; give a list of one int >= 0 per text"),
        ([1, -1], "token counter plugin 'bad': count returned -1 for the text 'b'; give an int >= 0 per text"),
        ([1, 2.0], "token counter plugin 'bad': count returned 2.0 for the text 'b'; give an int >= 0 per text"),
        ([1, True], "token counter plugin 'bad': count returned True for the text 'b'; give an int >= 0 per text"),
    ],
)
def test_a_plugin_counters_results_are_checked(counters_restored, returned, message):
    """A counter's results are checked where it is called: one int >= 0 per text, else one line naming it."""

    class Bad(Words):
        def count(self, texts):
            return returned

    TOKEN_COUNTERS.register("bad", Bad)
    with pytest.raises(PluginError, match=f"^{re.escape(message)}$"):
        token_counter("bad").count(["a", "b"])


def test_a_failing_counter_is_named(counters_restored):
    """A factory or count that raises becomes one error naming the counter and the call."""

    def broken():
        raise RuntimeError("no model here")

    TOKEN_COUNTERS.register("broken", broken)
    with pytest.raises(
        PluginError, match=r"^token counter plugin 'broken': factory raised RuntimeError: no model here$"
    ):
        token_counter("broken")


def test_an_installed_counter_loads_from_its_entry_point(tmp_path, monkeypatch, counters_restored):
    """A package's entry point in the group agentmemory.tokenizers is a counter by its name."""
    source = "class Chars:\n    name = 'chars'\n    def count(self, texts):\n        return [len(t) for t in texts]\n"
    source += "    def describe(self):\n        return {'unit': 'characters'}\n"
    install(tmp_path, monkeypatch, {"agentmemory.tokenizers": {"chars": "am_chars:Chars"}}, {"am_chars": source})
    assert "chars" in TOKEN_COUNTERS.names()
    counter = token_counter("chars")
    assert counter.count(["abc", ""]) == [3, 0]
    assert counter.describe() == {"name": "chars", "unit": "characters"}


def test_importing_agentmemory_loads_no_tokenizer():
    """`import agentmemory` (and its metrics) stays light: the tokenizers library loads only when tokens are counted."""
    code = (
        "import sys, agentmemory, agentmemory.metrics, agentmemory.metrics.token_counters as t; "
        "print('tokenizers' in sys.modules); t.token_counter().count(['a']); print('tokenizers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]
