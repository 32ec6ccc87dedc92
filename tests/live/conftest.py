"""Shared fixtures of the live answers' tests: a chat server on the loopback, a cache of each test's own, the
LoCoMo sample.

This folder is a package (``__init__.py``) so this conftest is imported as ``live.conftest``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmemory.collection import Collection
from agentmemory.datasets import load

from .server import ChatServer

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "fixtures" / "locomo-sample" / "locomo-sample.json"


@pytest.fixture
def server() -> Iterator[ChatServer]:
    """A fresh chat server (tests/live/server.py), stopped after the test."""
    with ChatServer() as running:
        yield running


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own cache folder (``AGENTMEMORY_CACHE``); the call cache is its ``chat`` folder."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("AGENTMEMORY_CACHE", str(folder))
    return folder


@pytest.fixture(scope="session")
def sample() -> Collection:
    """The authored LoCoMo sample, loaded strictly (8 judged questions, 9 left out of retrieval scoring)."""
    return load(SAMPLE)
