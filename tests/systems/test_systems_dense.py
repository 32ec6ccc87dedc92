"""dense attribution: cosine with the default encoder (wordllama, offline), a turn attributed when it reaches the threshold."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from agentmemory.collection import Collection
from agentmemory.records import MemoryEntry, Query
from agentmemory.retrievers import encoders as encoders_module
from agentmemory.retrievers import load_encoder
from agentmemory.systems import Memory
from agentmemory.systems.attribution import DENSE_DEFAULT, Attributor, attribute, parse_attribution
from agentmemory.systems.replay import Replay

TURNS = (
    MemoryEntry("t1", "The cat sat on the mat by the fire.", scope="s"),
    MemoryEntry("t2", "Quarterly revenue grew by ten percent in Europe.", scope="s"),
    MemoryEntry("t3", "A kitten was sleeping on a rug near the fireplace.", scope="s"),
    MemoryEntry("o1", "The cat sat on the mat by the fire.", scope="other"),
)
MEMORY = "A cat sat on a mat near the fire."


def _no_network(*args, **kwargs):
    raise AssertionError("the network was touched")


@pytest.fixture
def offline(monkeypatch):
    """Sockets disabled in this process (as the dense retriever's tests do): opening one fails the test."""
    monkeypatch.setattr(socket, "socket", _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
    monkeypatch.setattr(socket, "getaddrinfo", _no_network)
    encoders_module._forget_loaded()
    yield
    encoders_module._forget_loaded()


def _collection() -> Collection:
    queries = (Query("q", "where did the cat sit", scope="s"), Query("r", "the cat", scope="other"))
    return Collection("dense", TURNS, queries, {"q": {"t1": 1, "t3": 1}, "r": {"o1": 1}}, {"f": "0"})


def _cosines() -> dict[str, float]:
    """Cosines of MEMORY with the scope's turns, computed here from the encoder's raw vectors."""
    encoder = load_encoder("wordllama")
    vectors = np.asarray(encoder.encode([t.text for t in TURNS[:3]] + [MEMORY]), dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return {t.id: float(vectors[i] @ vectors[3]) for i, t in enumerate(TURNS[:3])}


def test_dense_attributes_the_turns_whose_cosine_reaches_the_threshold(offline) -> None:
    """cos >= threshold is attributed (equal counts), just above it is not; only the memory's own scope is searched."""
    cos = _cosines()
    assert cos["t1"] > cos["t3"] > cos["t2"]  # the case is what it claims: paraphrase > related > unrelated
    helper = Attributor(_collection())
    memory = Memory(MEMORY)
    assert np.allclose(helper.cosine("s", MEMORY), [cos["t1"], cos["t2"], cos["t3"]], rtol=0, atol=1e-12)
    values = dict(zip(("t1", "t2", "t3"), helper.cosine("s", MEMORY).tolist(), strict=True))

    def at(threshold: float) -> tuple[str, ...]:
        found, how = helper.attribute(parse_attribution(f"dense[threshold={threshold!r}]"), "s", memory)
        assert how == "dense"
        return found

    assert at(values["t3"]) == ("t1", "t3")  # the threshold itself reaches: >=
    assert at(float(np.nextafter(values["t3"], 2.0))) == ("t1",)
    assert at(values["t1"]) == ("t1",)
    assert at(float(np.nextafter(values["t1"], 2.0))) == ()
    assert at(0.0) == tuple(t for t in ("t1", "t2", "t3") if values[t] >= 0)  # a negative cosine never reaches
    default, _ = helper.attribute(parse_attribution("dense"), "s", memory)
    assert default == tuple(t for t in ("t1", "t2", "t3") if values[t] >= DENSE_DEFAULT)


def test_dense_in_an_evaluation_reports_its_thresholds(offline) -> None:
    """dense attribution: derived_from per memory, coverage, and a sensitivity row per dense threshold."""
    collection = _collection()
    cos = _cosines()
    answers = {"q": (Memory(MEMORY), Memory("Completely unrelated tax forms.")), "r": ()}
    replayed = Replay("fixed", "Fixed", {}, answers, {"q": "s", "r": "other"})
    threshold = (cos["t1"] + cos["t3"]) / 2  # between the paraphrase and the related turn
    done = attribute(replayed, collection, f"dense[threshold={threshold!r}]", k=2)
    first, second = done.memories
    assert first.provenance.derived_from == ("t1",)
    assert done.how[first.id] == "dense"
    unrelated = Attributor(collection).cosine("s", "Completely unrelated tax forms.")
    assert (second.provenance.derived_from == ()) == bool((unrelated < threshold).all())
    report = done.report
    assert report.returned == 2 and report.empty_queries == ("r",)
    assert [row[0] for row in report.sensitivity] == [
        "dense[threshold=0.7]",
        "dense[threshold=0.8]",
        "dense[threshold=0.9]",
    ]
    other = dict(zip(("t1", "t2", "t3"), unrelated.tolist(), strict=True))
    for (label, recall, _), t in zip(report.sensitivity, (0.7, 0.8, 0.9), strict=True):
        reached = {g for g in ("t1", "t3") if cos[g] >= t or other[g] >= t}  # q's judged turns either memory reaches
        assert recall == pytest.approx(len(reached) / 2 / 2), label  # mean of q (R = reached / 2) and r (0)
