"""Every reader and judge call, cached on disk: a re-run reads the replies instead of asking again.

**Where.**  ``<cache>/chat/<key[:2]>/<key>.json`` under the user's cache folder
(:func:`agentmemory.files.cache.cache_dir`: ``$AGENTMEMORY_CACHE``, else
``$XDG_CACHE_HOME/agentmemory``, else ``~/.cache/agentmemory``).

**The key** is the sha256 of the canonical JSON (keys sorted, no white
space, UTF-8) of ``{"format": FORMAT_VERSION, "endpoint": <the chat model's
identity()>, "messages": [...]}``: the endpoint, the model, the sampling
parameters (temperature, seed, max_tokens) and the exact messages.  Anything
else (timeouts, retries, concurrency, the question's id, the system that
retrieved the memories) is not in it, so the same prompt to the same model
is asked once whatever asks it, and re-judging old answers with a new judge
prompt makes only the judge calls.

**A file** holds the format version, the key, the request, the reply
(content, token counts, the answering model, the finish reason) and the
``latency``: the seconds the attempt that returned the reply took, measured
when the call was made.  A re-run reports that stored value, never a new
measurement, so an offline re-run writes the same artifact (a file written
before latency was recorded has none: ``None``, counted as such).  Only calls
that returned a chat completion are written (a failed call is asked again on
the next run); each file is written atomically
(:func:`agentmemory.files.atomic.atomic_write_bytes`), so an interrupted run
leaves whole files or none.  A file that cannot be read, that another version
wrote, or whose recorded request is not the one its name stands for is never
trusted: one :class:`~agentmemory.errors.CacheWarning` line names it and the
call is made again (or, offline, counts as missing).
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from agentmemory.errors import CacheWarning, shorten
from agentmemory.files.atomic import atomic_write_bytes
from agentmemory.files.cache import WARNING_SOURCE, cache_dir
from agentmemory.live.endpoints import Completion

__all__ = ["CACHE_FOLDER", "FORMAT_VERSION", "CachedReply", "CallCache", "request_key"]

CACHE_FOLDER = "chat"
"""The cache's folder inside the user's cache folder."""

FORMAT_VERSION = 1
"""The version of a cache file (and a part of every key): a file of another version is asked again."""


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def request_key(request: Mapping[str, Any]) -> str:
    """The hex sha256 of ``{"format": FORMAT_VERSION, **request}`` as canonical JSON (see the module docstring)."""
    return hashlib.sha256(_canonical({"format": FORMAT_VERSION, **request})).hexdigest()


class CachedReply(NamedTuple):
    """A cached call: the reply, and the seconds the call took when it was made (``None`` when not recorded)."""

    reply: Completion
    latency: float | None


def _warn(message: str) -> None:
    warnings.warn_explicit(message, CacheWarning, WARNING_SOURCE, 0, module=__name__)


class CallCache:
    """The call cache in ``folder`` (default ``<cache>/chat``, resolved when made)."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else cache_dir() / CACHE_FOLDER

    def path(self, key: str) -> Path:
        """The file of ``key``."""
        return self.folder / key[:2] / f"{key}.json"

    def load(self, key: str, request: Mapping[str, Any]) -> Completion | None:
        """The cached reply to ``request`` (whose key is ``key``), or ``None`` (absent, or untrustworthy: warned)."""
        found = self.read(key, request)
        return None if found is None else found.reply

    def read(self, key: str, request: Mapping[str, Any]) -> CachedReply | None:
        """The cached reply to ``request`` with its recorded latency, or ``None`` (as :meth:`load`)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            _warn(f"agentmemory: chat cache file {path} is unreadable ({err.strerror or err}); asking again")
            return None
        try:
            found = json.loads(data.decode("utf-8"))
            if not isinstance(found, dict):
                raise ValueError("not a JSON object")
        except ValueError as err:
            _warn(f"agentmemory: chat cache file {path} is unreadable ({shorten(str(err), 100)}); asking again")
            return None
        if found.get("format") != FORMAT_VERSION:
            _warn(
                f"agentmemory: chat cache file {path} was written by another version (format "
                f"{found.get('format')!r}, this version reads {FORMAT_VERSION}); asking again"
            )
            return None
        reply = found.get("reply")
        problem = None
        if found.get("key") != key or found.get("request") != json.loads(_canonical(request)):
            problem = "its recorded request is not the one its name stands for"
        elif not isinstance(reply, dict) or not isinstance(reply.get("content"), str):
            problem = "it holds no reply text"
        if problem is not None:
            _warn(f"agentmemory: chat cache file {path} is corrupt ({problem}); asking again")
            return None
        assert isinstance(reply, dict)
        completion = Completion(
            reply["content"],
            _int(reply.get("input_tokens")),
            _int(reply.get("output_tokens")),
            reply.get("model") if isinstance(reply.get("model"), str) else None,
            reply.get("finish_reason") if isinstance(reply.get("finish_reason"), str) else None,
        )
        return CachedReply(completion, _seconds(found.get("latency")))

    def save(self, key: str, request: Mapping[str, Any], reply: Completion, latency: float | None = None) -> None:
        """Write the reply to ``request`` (and the seconds it took) atomically; a write error is a warning (the run
        goes on)."""
        path = self.path(key)
        document = {
            "format": FORMAT_VERSION,
            "key": key,
            "request": json.loads(_canonical(request)),
            "reply": reply._asdict(),
            "latency": latency,
        }
        try:
            atomic_write_bytes(path, json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8") + b"\n")
        except OSError as err:
            _warn(f"agentmemory: cannot write the chat cache file {path} ({err}); continuing without caching it")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None
