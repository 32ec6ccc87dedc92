"""The openai kind against a real HTTP server on the loopback: replies, usage, failures, the key, its parameters."""

from __future__ import annotations

import re

import pytest

from agentmemory.errors import ChatCallError, ParameterError, UnknownNameError
from agentmemory.live import JUDGES, READERS, OpenAIChat, resolve_role
from agentmemory.live.endpoints import parse_completion

from .server import reader_reply

PROMPT = "Question: Where?\n1. [2023-05-08 10:00] In the garden\n2. Elsewhere"


def _message(text: str = PROMPT) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_a_call_returns_the_first_choice_and_the_usage(server) -> None:
    """complete() posts to {base_url}/chat/completions and reads the reply text and usage as the server sent them."""
    reply = OpenAIChat(base_url=server.url, model="reader-1").complete(_message())
    assert reply.content == reader_reply(PROMPT) == "In the garden"
    assert (reply.input_tokens, reply.output_tokens) == (len(PROMPT.split()), 3)
    assert (reply.model, reply.finish_reason) == ("reader-1", "stop")
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert (body["model"], body["temperature"], body["seed"]) == ("reader-1", 0.0, 7)
    assert "max_tokens" not in body  # not sent unless given


@pytest.mark.parametrize(
    "fault,problem,retryable,retry_after",
    [
        ({"status": 500}, 'got HTTP 500: {"error": {"message": "injected 500"}}', True, None),
        ({"status": 503}, 'got HTTP 503: {"error": {"message": "injected 503"}}', True, None),
        ({"status": 429, "retry_after": "3"}, 'got HTTP 429: {"error": {"message": "injected 429"}}', True, 3.0),
        (
            {"status": 401},
            'got HTTP 401 (is the key in OPENAI_API_KEY right?): {"error": {"message": "injected 401"}}',
            False,
            None,
        ),
        ({"status": 400}, 'got HTTP 400: {"error": {"message": "injected 400"}}', False, None),
        ({"body": "<html>bad gateway</html>"}, "sent a body that is not JSON: <html>bad gateway</html>", True, None),
        (
            {"body": '{"choices": []}'},
            'sent JSON that is not a chat completion (no choices[0].message.content text): {"choices": []}',
            True,
            None,
        ),
        ({"sleep": 1.0}, "got no reply within 0.2 s", True, None),
    ],
)
def test_each_failure_is_one_chat_call_error(server, fault, problem, retryable, retry_after) -> None:
    """An HTTP error, a body that is not a chat completion, a timeout: one ChatCallError, retryable on 429/5xx,
    garbage and timeouts, not on 4xx refusals; Retry-After read in seconds."""
    server.fault(times=1, **fault)
    with pytest.raises(ChatCallError) as caught:
        OpenAIChat(base_url=server.url, model="r", timeout=0.2).complete(_message())
    assert (caught.value.problem, caught.value.retryable, caught.value.retry_after) == (problem, retryable, retry_after)


def test_a_server_that_is_not_there_is_a_retryable_failure() -> None:
    """A refused connection names the endpoint and is retryable (the server may be starting)."""
    with pytest.raises(ChatCallError, match=r"^could not reach http://127\.0\.0\.1:9/v1 \(ConnectError: ") as caught:
        OpenAIChat(base_url="http://127.0.0.1:9/v1", timeout=0.5).complete(_message())
    assert caught.value.retryable


def test_the_key_comes_from_the_named_environment_variable(server, monkeypatch) -> None:
    """api_key_env names the variable read; unset, a local server gets the placeholder EMPTY, never another key."""
    monkeypatch.setenv("MY_LLM_KEY", "sk-test-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-this-one")
    OpenAIChat(base_url=server.url, api_key_env="MY_LLM_KEY").complete(_message())
    monkeypatch.delenv("MY_LLM_KEY")
    OpenAIChat(base_url=server.url, api_key_env="MY_LLM_KEY").complete(_message())
    keys = [{k.lower(): v for k, v in r["headers"].items()}["authorization"] for r in server.requests]
    assert keys == ["Bearer sk-test-secret", "Bearer EMPTY"]


def test_openai_itself_without_a_key_is_refused_before_any_call(monkeypatch) -> None:
    """The default endpoint with its key's variable unset: one line naming the variable, no request made."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(
        ChatCallError,
        match=r"^has no key: the environment variable OPENAI_API_KEY is not set, and https://api\.openai\.com/v1 "
        r"needs one; set it, or name another variable with api_key_env=\.\.\.$",
    ):
        OpenAIChat().complete(_message())


def test_the_identity_holds_what_decides_the_reply_and_never_the_key(monkeypatch) -> None:
    """identity() is the endpoint, model and sampling parameters; describe() adds the variable's name only."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    model = OpenAIChat(base_url="http://localhost:8000/v1/", model="qwen", temperature=0.5, seed=None, timeout=5)
    assert model.identity() == {
        "kind": "openai",
        "base_url": "http://localhost:8000/v1",
        "model": "qwen",
        "temperature": 0.5,
        "seed": None,
        "max_tokens": None,
    }
    assert model.describe() == {**model.identity(), "api_key_env": "OPENAI_API_KEY"}
    assert "sk-secret" not in repr(model.describe())


@pytest.mark.parametrize(
    "spec,message",
    [
        (
            "openai[temperature=5]",
            r"^--reader temperature: 5 \(int\) is out of range; give a number from 0 to 2$",
        ),
        ("openai[base_url=ftp://x]", r"^--reader base_url: 'ftp://x' \(str\) is not an http\(s\) URL; "),
        (
            'openai[api_key_env="sk-abc def"]',
            r"^--reader api_key_env: 'sk-abc def' \(str\) is not an environment variable's name; name the variable",
        ),
        ("openai[retries=-1]", r"^--reader retries: -1 \(int\) is out of range; give an integer >= 0$"),
        ("openai[concurrency=0]", r"^--reader concurrency: 0 \(int\) is out of range; give an integer >= 1$"),
        ("openai[deadline=0]", r"^--reader deadline: 0 \(int\) is out of range; give seconds > 0, or null for none$"),
        ("openai[deadline=soon]", r"^--reader deadline: 'soon' \(str\) is not a number; give seconds > 0, or null "),
        (
            "openai[modle=x]",
            r"^--reader openai parameter: 'modle' \(str\) is not a known name; choose from: api_key_env",
        ),
        ('openai[name=""]', r"^--reader reader parameter name: '' \(str\) is not a name; give a non-empty name"),
    ],
)
def test_a_bad_parameter_is_one_line_naming_the_option(spec, message) -> None:
    """Every parameter is checked when the spec is resolved; the message names the option it came from."""
    with pytest.raises(ParameterError, match=message):
        resolve_role(spec, "reader", option="--reader")


def test_an_unknown_kind_lists_the_registered_ones() -> None:
    """The choices come from the registry (openai is registered as a reader and as a judge), whatever else is."""
    choices = re.escape(", ".join(sorted(JUDGES.names())))
    with pytest.raises(
        UnknownNameError, match=rf"^--judge: 'anthropic' \(str\) is not a known name; choose from: {choices}"
    ):
        resolve_role("anthropic[model=x]", "judge", option="--judge")
    assert "openai" in READERS.names() and "openai" in JUDGES.names()


def test_a_spec_names_its_role_by_name_or_by_model(server) -> None:
    """name= is the spec's own (what tables show); without it the name is the model."""
    named = resolve_role(f"openai[base_url={server.url},model=m1,name=mini]", "reader")
    plain = resolve_role(f"openai[base_url={server.url},model=m1]", "reader")
    assert (named.name, plain.name) == ("mini", "m1")
    assert named.identity() == plain.identity()


def test_a_chat_completion_body_must_hold_a_text() -> None:
    """parse_completion reads choices[0].message.content and usage; a null content is refused (retryable)."""
    ok = parse_completion('{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 4}}')
    assert ok == ("x", 4, None, None, None)
    with pytest.raises(ChatCallError, match=r"^sent JSON that is not a chat completion"):
        parse_completion('{"choices": [{"message": {"content": null}}]}')
