"""The chat models a reader or a judge calls: the protocol, and the one shipped kind, an OpenAI-compatible endpoint.

A **chat model** is what ``--reader`` and ``--judge`` name: an object with

* ``complete(messages) -> Completion``: one chat-completions call (the
  messages are ``{"role", "content"}`` dicts), raising
  :class:`~agentmemory.errors.ChatCallError` when it fails (``retryable``
  when the same call may succeed again); when it takes a ``timeout``
  keyword, it is given the seconds a ``deadline`` leaves;
* ``identity() -> dict``: JSON-ready, everything that decides the reply (the
  endpoint, the model, the sampling parameters): the cache key holds it with
  the exact messages, and the card and the artifact state it;
* optionally ``prepare()``, called before the first call is sent and
  outside its latency (a client made, a library imported: once),
  ``label`` (the name tables show; default the spec's name),
  ``retries``, ``backoff``, ``concurrency`` and ``deadline`` (how the calls are made: see
  :mod:`agentmemory.live.answering`), ``price_model`` (the name the price
  table knows it by).

The shipped kind is :class:`OpenAIChat`, ``openai[base_url=...,model=...]``:
any server speaking OpenAI's chat-completions API (OpenAI itself, vLLM,
llama.cpp's server, Ollama, LiteLLM, ...), called through the official
``openai`` client (the ``live`` extra), imported when the first call is made.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

from agentmemory.errors import ChatCallError, ParameterError, shorten

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "ChatModel",
    "Completion",
    "OpenAIChat",
    "parse_completion",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""OpenAI's own endpoint: ``openai[...]`` without ``base_url``."""

DEFAULT_MODEL = "gpt-4o-mini"
"""The model ``openai[...]`` asks for without ``model`` (the reader and judge of mem0's LoCoMo evaluation)."""

PLACEHOLDER_KEY = "EMPTY"
"""The key sent when the key's environment variable is unset and the endpoint is not OpenAI's own: local servers
(vLLM, llama.cpp, Ollama) take any key, and vLLM's documentation writes this one."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_BODY_SHOWN = 120


class Completion(NamedTuple):
    """What one chat-completions call returned.

    ``content`` is the first choice's message text; ``input_tokens`` and
    ``output_tokens`` the endpoint's ``usage`` (``prompt_tokens``,
    ``completion_tokens``), ``None`` when it sent none; ``model`` the model
    the endpoint says answered and ``finish_reason`` why it stopped, when it
    said.
    """

    content: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None
    finish_reason: str | None = None


@runtime_checkable
class ChatModel(Protocol):
    """What a reader or a judge calls (see the module docstring)."""

    def complete(self, messages: Sequence[Mapping[str, str]]) -> Completion: ...

    def identity(self) -> dict[str, Any]: ...


def _count(usage: Mapping[str, Any], key: str) -> int | None:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def parse_completion(body: str) -> Completion:
    """A chat-completions response body -> :class:`Completion`.

    The body must be a JSON object whose ``choices[0].message.content`` is a
    string; ``usage`` (``prompt_tokens``, ``completion_tokens``: integers
    >= 0) is read when present.

    Raises:
        ChatCallError: (retryable) the body is not JSON, or not a chat completion.
    """
    try:
        data = json.loads(body)
    except ValueError:
        raise ChatCallError(
            f"sent a body that is not JSON: {shorten(' '.join(body.split()) or '(empty)', _BODY_SHOWN)}",
            retryable=True,
        ) from None
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = first.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ChatCallError(
            "sent JSON that is not a chat completion (no choices[0].message.content text): "
            + shorten(json.dumps(data, ensure_ascii=False), _BODY_SHOWN),
            retryable=True,
        )
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    model = data.get("model")
    reason = first.get("finish_reason")
    return Completion(
        content,
        _count(usage, "prompt_tokens"),
        _count(usage, "completion_tokens"),
        model if isinstance(model, str) else None,
        reason if isinstance(reason, str) else None,
    )


def _number(name: str, value: object, low: float, high: float, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(name, value, "is not a number", allowed)
    if not low <= value <= high:
        raise ParameterError(name, value, "is out of range", allowed)
    return float(value)


def _integer(name: str, value: object, low: int, allowed: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(name, value, "is not an integer", allowed)
    if value < low:
        raise ParameterError(name, value, "is out of range", allowed)
    return value


def _retry_after(headers: Any) -> float | None:
    """The ``Retry-After`` header in seconds, when it is a number of seconds."""
    try:
        text = headers.get("retry-after") if headers is not None else None
        seconds = float(text) if text is not None else None
    except (TypeError, ValueError):
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


@dataclass(frozen=True)
class OpenAIChat:
    """``openai[base_url=...,model=...]``: an OpenAI-compatible chat-completions endpoint.

    Parameters (each checked here):

    * ``base_url``: the API's root, ending before ``/chat/completions``
      (default :data:`DEFAULT_BASE_URL`; ``http://localhost:8000/v1`` for
      vLLM, ``http://localhost:8080/v1`` for llama.cpp,
      ``http://localhost:11434/v1`` for Ollama);
    * ``model``: the model asked for (default :data:`DEFAULT_MODEL`);
    * ``api_key_env``: the **name** of the environment variable holding the
      key (default ``OPENAI_API_KEY``); the key itself is never a parameter
      and never written anywhere.  Unset: OpenAI's own endpoint refuses to
      call, another sends :data:`PLACEHOLDER_KEY`;
    * ``temperature`` (default 0) and ``seed`` (default 7; ``null`` sends
      none) as the request carries them; ``max_tokens`` (default ``null``:
      not sent, the endpoint's own limit);
    * how calls are made, not what they return (so outside the cache key):
      ``timeout`` seconds for one attempt (default 60), ``retries`` after the
      first attempt on a 408, 409, 429, 5xx, timeout, lost connection or a
      body that is not a chat completion (default 4), ``backoff`` seconds
      before the first retry, doubled for each next one (default 1; a
      ``Retry-After`` header wins), ``concurrency`` calls in flight at once
      (default 4), ``deadline`` seconds for the whole call, its attempts and
      the waits between them together (default ``null``: none; an attempt
      gets at most the time left, and a retry that would start past it is not
      made).
    """

    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    seed: int | None = 7
    max_tokens: int | None = None
    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0
    concurrency: int = 4
    deadline: float | None = None
    _client_box: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not re.fullmatch(r"https?://\S+", self.base_url):
            raise ParameterError(
                "base_url", self.base_url, "is not an http(s) URL", "give the API's root, e.g. http://localhost:8000/v1"
            )
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if not isinstance(self.model, str) or not self.model.strip():
            raise ParameterError("model", self.model, "is not a model name", "give the model to ask, e.g. gpt-4o-mini")
        if not isinstance(self.api_key_env, str) or not _ENV_NAME.fullmatch(self.api_key_env):
            raise ParameterError(
                "api_key_env",
                self.api_key_env,
                "is not an environment variable's name",
                "name the variable that holds the key (e.g. OPENAI_API_KEY), never the key itself",
            )
        temperature = _number("temperature", self.temperature, 0.0, 2.0, "give a number from 0 to 2")
        object.__setattr__(self, "temperature", temperature)
        if self.seed is not None:
            _integer("seed", self.seed, 0, "give an integer >= 0, or null to send none")
        if self.max_tokens is not None:
            _integer("max_tokens", self.max_tokens, 1, "give an integer >= 1, or null for the endpoint's limit")
        timeout = _number("timeout", self.timeout, 1e-3, 86_400.0, "give seconds > 0, e.g. 60")
        object.__setattr__(self, "timeout", timeout)
        _integer("retries", self.retries, 0, "give an integer >= 0")
        object.__setattr__(self, "backoff", _number("backoff", self.backoff, 0.0, 3_600.0, "give seconds >= 0"))
        _integer("concurrency", self.concurrency, 1, "give an integer >= 1")
        if self.deadline is not None:
            deadline = _number("deadline", self.deadline, 1e-3, 86_400.0, "give seconds > 0, or null for none")
            object.__setattr__(self, "deadline", deadline)

    @property
    def label(self) -> str:
        """The name tables show: the model."""
        return self.model

    @property
    def price_model(self) -> str:
        """The name a price table knows this model by: the model asked for."""
        return self.model

    def identity(self) -> dict[str, Any]:
        """What decides the reply: the kind, the endpoint, the model and the sampling parameters."""
        return {
            "kind": "openai",
            "base_url": self.base_url,
            "model": self.model,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }

    def describe(self) -> dict[str, Any]:
        """:meth:`identity` and the name of the key's environment variable (never the key)."""
        return {**self.identity(), "api_key_env": self.api_key_env}

    def _client(self) -> Any:
        """The ``openai`` client, made on the first call (one per model; it is safe across threads)."""
        with self._lock:
            if not self._client_box:
                try:
                    import openai
                except ImportError:
                    raise ChatCallError(
                        "needs the openai client, which is not installed; run pip install 'agentmemory-eval[live]'"
                    ) from None
                key = os.environ.get(self.api_key_env, "").strip()
                if not key and self.base_url == DEFAULT_BASE_URL:
                    raise ChatCallError(
                        f"has no key: the environment variable {self.api_key_env} is not set, and {self.base_url} "
                        "needs one; set it, or name another variable with api_key_env=..."
                    )
                self._client_box.append(
                    openai.OpenAI(
                        api_key=key or PLACEHOLDER_KEY,
                        base_url=self.base_url,
                        timeout=self.timeout,
                        max_retries=0,  # retries are ours (agentmemory.live.answering): counted and stated
                    )
                )
            return self._client_box[0]

    def prepare(self) -> None:
        """Make the client (importing ``openai``) before the first call, so its latency is the call's alone.

        Raises:
            ChatCallError: the openai client is not installed, or OpenAI's own endpoint has no key.
        """
        self._client()

    def complete(self, messages: Sequence[Mapping[str, str]], *, timeout: float | None = None) -> Completion:
        """One call: ``POST {base_url}/chat/completions`` with the messages and the sampling parameters, within
        ``timeout`` seconds when it is shorter than the model's own (the time a ``deadline`` leaves).

        Raises:
            ChatCallError: an HTTP error (retryable on 408, 409, 429 and 5xx), a timeout or a lost connection
                (retryable), a body that is not a chat completion (retryable), no key for OpenAI's endpoint.
        """
        import openai

        client = self._client()
        seconds = self.timeout if timeout is None else min(self.timeout, timeout)
        extra: dict[str, Any] = {} if seconds == self.timeout else {"timeout": seconds}
        if self.seed is not None:
            extra["seed"] = self.seed
        if self.max_tokens is not None:
            extra["max_tokens"] = self.max_tokens
        try:
            raw = client.chat.completions.with_raw_response.create(
                model=self.model, messages=[dict(m) for m in messages], temperature=self.temperature, **extra
            )
        except openai.APIStatusError as err:
            status = err.status_code
            body = " ".join(err.response.text.split()) if err.response is not None else ""
            hint = f" (is the key in {self.api_key_env} right?)" if status in (401, 403) else ""
            raise ChatCallError(
                f"got HTTP {status}{hint}: {shorten(body or '(no body)', _BODY_SHOWN)}",
                retryable=status in _RETRYABLE_STATUS or status >= 500,
                retry_after=_retry_after(getattr(err.response, "headers", None)),
            ) from None
        except openai.APITimeoutError:
            raise ChatCallError(f"got no reply within {seconds:g} s", retryable=True) from None
        except openai.APIConnectionError as err:
            cause = err.__cause__ or err
            raise ChatCallError(
                f"could not reach {self.base_url} ({type(cause).__name__}: {shorten(str(cause), 80)})", retryable=True
            ) from None
        return parse_completion(raw.http_response.text)
