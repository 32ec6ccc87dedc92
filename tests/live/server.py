"""A small OpenAI-compatible chat-completions server on the loopback, for the tests of agentmemory.live.

``with ChatServer() as server:`` serves ``POST {server.url}/chat/completions``
from a thread (``http.server``), answering deterministically from what it
receives:

* a **judge** (a prompt with a ``Gold answer:`` line): ``CORRECT`` when
  every word of that line (lower-cased, punctuation dropped, without a/an/
  the/and) is among the words of the ``Generated answer:`` line, else
  ``WRONG``;
* a **reader** (any other prompt): the first memory line of the prompt
  (``1. [date] text`` -> ``text``), or ``No information available`` when the
  prompt lists none;
* ``server.replies[model]`` replaces the reply to every call of that model.

``usage`` counts white-space separated words: ``prompt_tokens`` of every
message, ``completion_tokens`` of the reply.  Every request's body and headers
are kept (``server.requests``).

Faults are injected with :meth:`ChatServer.fault`: for requests whose text
contains ``match`` (every request when ``None``), the next ``times`` of them
(every one when ``None``) get an HTTP ``status`` (with ``Retry-After`` when
given), a ``sleep`` before the reply, or a ``body`` sent as it is (garbage).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_STOP = {"a", "an", "the", "and"}


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP]


def _line(prompt: str, head: str) -> str | None:
    for line in prompt.splitlines():
        if line.startswith(head):
            return line[len(head) :].strip()
    return None


def reader_reply(prompt: str) -> str:
    """The reader's answer: the text of the first memory line (``1. [date] text``), else no information."""
    for line in prompt.splitlines():
        found = re.match(r"1\. (?:\[[^\]]*\] )?(.*)$", line)
        if found:
            return found[1].strip()
    return "No information available"


def judge_reply(prompt: str) -> str:
    """The scripted judge: CORRECT when every gold word is in the generated answer."""
    gold = _line(prompt, "Gold answer:") or ""
    answer = _line(prompt, "Generated answer:") or ""
    return "CORRECT" if set(_words(gold)) <= set(_words(answer)) else "WRONG"


@dataclass
class Fault:
    match: str | None
    times: int | None
    status: int | None = None
    retry_after: str | None = None
    sleep: float = 0.0
    body: str | None = None


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        body = json.loads(raw)
        owner = self.server.owner
        text = "\n".join(m.get("content", "") for m in body.get("messages", []))
        with owner.lock:
            owner.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
            fault = owner.take_fault(text)
        if fault is not None and fault.sleep:
            time.sleep(fault.sleep)
        if fault is not None and fault.status is not None:
            self._send(fault.status, json.dumps({"error": {"message": f"injected {fault.status}"}}), fault.retry_after)
            return
        if fault is not None and fault.body is not None:
            self._send(200, fault.body, content_type="text/plain")
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
            return
        model = str(body.get("model", ""))
        if model in owner.replies:
            reply = owner.replies[model]
        elif _line(text, "Gold answer:") is not None:
            reply = judge_reply(text)
        else:
            reply = reader_reply(text)
        out = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": len(text.split()),
                "completion_tokens": len(reply.split()),
                "total_tokens": len(text.split()) + len(reply.split()),
            },
        }
        self._send(200, json.dumps(out))

    def _send(
        self, status: int, text: str, retry_after: str | None = None, content_type: str = "application/json"
    ) -> None:
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        if retry_after is not None:
            self.send_header("retry-after", retry_after)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout under test)
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ChatServer


class ChatServer:
    """The test server (see the module docstring); ``url`` is its ``base_url`` (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.faults: list[Fault] = []
        self.replies: dict[str, str] = {}
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fault(
        self,
        *,
        match: str | None = None,
        times: int | None = None,
        status: int | None = None,
        retry_after: str | None = None,
        sleep: float = 0.0,
        body: str | None = None,
    ) -> None:
        """Inject a fault (see the module docstring); faults are tried in the order given."""
        with self.lock:
            self.faults.append(Fault(match, times, status, retry_after, sleep, body))

    def take_fault(self, text: str) -> Fault | None:
        """The first fault that applies to a request with ``text`` (its count taken down); call under ``lock``."""
        for fault in self.faults:
            if fault.match is not None and fault.match not in text:
                continue
            if fault.times is not None:
                if fault.times <= 0:
                    continue
                fault.times -= 1
            return fault
        return None

    def calls(self, model_prefix: str = "") -> list[dict[str, Any]]:
        """The bodies of the requests whose model starts with ``model_prefix``."""
        with self.lock:
            return [r["body"] for r in self.requests if str(r["body"].get("model", "")).startswith(model_prefix)]
