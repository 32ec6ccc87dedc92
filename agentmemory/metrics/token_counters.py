"""Token counters: how many tokens a text costs the agent that reads it, in an open registry.

The budget measures (:mod:`agentmemory.metrics.budget`) read a ranking by
the token lengths of the texts the system returned.  Those lengths come from
a *token counter*: :data:`TOKEN_COUNTERS` maps a name to a factory (called
with no argument) returning an object with

* ``name``: the registry name it was made under;
* ``count(texts) -> list[int]``: the number of tokens of each text (ints >= 0,
  one per text, in order);
* ``describe() -> dict``: what the artifact records of it (name, version,
  the files and libraries it reads), plain JSON values.

An installed package adds one through an entry point in the group
``agentmemory.tokenizers`` (its object is the factory); at run time,
``TOKEN_COUNTERS.register(name, factory)``.  What a counter returns is
checked where it is called (:class:`CachedCounter`), as every plugin's is.

**The default, ``llama2``**: the Llama-2 BPE (32,000 tokens) that wordllama,
a core dependency, ships in its wheel as
``wordllama/tokenizers/l2_supercat_tokenizer_config.json``, read with the
``tokenizers`` library; a text's count is the length of
``Tokenizer.encode(text, add_special_tokens=False)``: without the ``<s>``
token the file's post-processor would add, with the ``▁`` the normaliser
prepends (Llama-2's SentencePiece dummy prefix), so every non-empty text
counts at least one token and the empty text none.  It works offline (no
download: ``tiktoken`` fetches its files from the network, so it is not
offered here); the file's sha256 and both libraries' versions are in
:meth:`Llama2Counter.describe`.  The file is read on first use, not at
import (``import agentmemory`` never loads ``tokenizers``; loading takes
about 0.05 s).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any, Protocol

from agentmemory.errors import ParameterError, PluginError, UnknownNameError, quote
from agentmemory.registry import Registry

__all__ = [
    "DEFAULT_TOKEN_COUNTER",
    "TOKEN_COUNTERS",
    "CachedCounter",
    "Llama2Counter",
    "TokenCounter",
    "check_token_counter",
    "token_counter",
]

DEFAULT_TOKEN_COUNTER = "llama2"
"""The counter an evaluation uses unless told otherwise (``--tokenizer``)."""

LLAMA2_FILE = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"
"""Where wordllama's wheel keeps the Llama-2 BPE, relative to its installation folder."""


class TokenCounter(Protocol):
    """What a factory of :data:`TOKEN_COUNTERS` returns (see the module docstring)."""

    name: str

    def count(self, texts: Sequence[str]) -> list[int]: ...

    def describe(self) -> dict[str, Any]: ...


def _check_factory(name: str, obj: Any) -> Callable[[], TokenCounter]:
    if not callable(obj):
        raise ParameterError(
            "token counter",
            obj,
            "is not callable",
            "register a factory returning an object with name, count(texts) and describe()",
        )
    return obj


TOKEN_COUNTERS: Registry[Callable[[], TokenCounter]] = Registry(
    "token counter", "agentmemory.tokenizers", _check_factory
)
"""Token counter name -> factory: ``llama2`` built in, more at run time or from the entry-point group
``agentmemory.tokenizers``.  ``sorted(TOKEN_COUNTERS)`` lists every name."""


class Llama2Counter:
    """The Llama-2 BPE of wordllama's wheel, read with ``tokenizers`` (module docstring); counts without ``<s>``."""

    name = DEFAULT_TOKEN_COUNTER

    def __init__(self) -> None:
        try:
            wordllama = distribution("wordllama")
        except PackageNotFoundError:  # a core dependency; only a broken installation lacks it
            raise ParameterError(
                "tokenizer", self.name, "needs wordllama, which is not installed", "pip install wordllama"
            ) from None
        path = Path(str(wordllama.locate_file(LLAMA2_FILE)))
        try:
            data = path.read_bytes()
        except OSError as err:
            raise ParameterError(
                "tokenizer",
                self.name,
                f"cannot read {LLAMA2_FILE} of wordllama {wordllama.version} ({err.strerror})",
                "reinstall wordllama",
            ) from None
        from tokenizers import Tokenizer  # a core dependency, loaded only when tokens are counted

        self._tokenizer = Tokenizer.from_str(data.decode("utf-8"))
        self._description = {
            "name": self.name,
            "tokenizer": "Llama-2 BPE, 32,000 tokens, counted without <s>",
            "vocabulary": self._tokenizer.get_vocab_size(),
            "file": LLAMA2_FILE,
            "file_sha256": hashlib.sha256(data).hexdigest(),
            "wordllama": wordllama.version,
            "tokenizers": distribution("tokenizers").version,
        }

    def count(self, texts: Sequence[str]) -> list[int]:
        """The number of tokens of each text: ``len(encode(text, add_special_tokens=False).ids)``."""
        encode = self._tokenizer.encode
        return [len(encode(text, add_special_tokens=False).ids) for text in texts]

    def describe(self) -> dict[str, Any]:
        """Name, tokenizer, vocabulary size, the file read and its sha256, wordllama's and tokenizers' versions."""
        return dict(self._description)


class CachedCounter:
    """A counter made from :data:`TOKEN_COUNTERS`, its results checked and remembered per text.

    An evaluation counts each distinct text once however many queries and
    systems rank it (a LoCoMo turn is read by hundreds of queries).

    Raises:
        UnknownNameError: ``name`` is not a registered counter.
        PluginError: the factory or ``count`` raises, or returns what the
            protocol refuses (not one int >= 0 per text; a description that is
            not a dict).
    """

    def __init__(self, name: str = DEFAULT_TOKEN_COUNTER) -> None:
        factory = TOKEN_COUNTERS.get(name)
        self.name = name
        try:
            self._counter = factory()
            description = self._counter.describe()
        except (ParameterError, PluginError):
            raise
        except Exception as err:
            raise PluginError.raised("token counter", name, None, "factory", err) from err
        if not isinstance(description, dict):
            raise PluginError("token counter", name, None, "describe", f"returned {quote(description)}, not a dict")
        self._description = {"name": name, **{k: v for k, v in description.items() if k != "name"}}
        self._known: dict[str, int] = {}

    def describe(self) -> dict[str, Any]:
        """What the artifact records of the counter (its ``describe()``, under the name it was asked by)."""
        return dict(self._description)

    def count(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text, counting only the texts not seen before."""
        known = self._known
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            try:
                counts = self._counter.count(missing)
            except Exception as err:
                raise PluginError.raised("token counter", self.name, None, "count", err) from err
            self._check(missing, counts)
            known.update(zip(missing, counts))
        return [known[t] for t in texts]

    def count_one(self, text: str) -> int:
        """The token count of one text (remembered)."""
        found = self._known.get(text)
        return found if found is not None else self.count([text])[0]

    def _check(self, texts: list[str], counts: object) -> None:
        if not isinstance(counts, list) or len(counts) != len(texts):
            raise PluginError(
                "token counter",
                self.name,
                None,
                "count",
                f"returned {quote(counts)} for {len(texts)} texts; give a list of one int >= 0 per text",
            )
        for text, n in zip(texts, counts):
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise PluginError(
                    "token counter",
                    self.name,
                    None,
                    "count",
                    f"returned {quote(n)} for the text {quote(text)}; give an int >= 0 per text",
                )


def check_token_counter(value: object, name: str = "tokenizer") -> str:
    """``value`` when it names a counter of :data:`TOKEN_COUNTERS`; ``name`` is the option messages name.

    Raises:
        ParameterError: ``value`` is not text, or is empty (``--tokenizer ''``: refused, not read as the default).
        UnknownNameError: no counter has that name (the registry's names listed).
    """
    choices = ", ".join(TOKEN_COUNTERS.names())
    if not isinstance(value, str):
        raise ParameterError(name, value, "is not a token counter's name", f"choose from: {choices}")
    if not value.strip():
        raise ParameterError(
            name, value, "is empty", f"choose from: {choices} (leave it out for the default, {DEFAULT_TOKEN_COUNTER})"
        )
    if value not in TOKEN_COUNTERS:
        raise UnknownNameError(name, value, TOKEN_COUNTERS.names())
    return value


def token_counter(name: str = DEFAULT_TOKEN_COUNTER) -> CachedCounter:
    """A fresh :class:`CachedCounter` of the registered counter ``name`` (default :data:`DEFAULT_TOKEN_COUNTER`)."""
    return CachedCounter(name)
