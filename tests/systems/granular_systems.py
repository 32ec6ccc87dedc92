"""Small memory systems that keep the same conversation at different granularities, for the cost tests.

``TurnNotes`` writes one note per turn (the turn's text), ``SessionNotes`` one note per session (its turns' texts
joined by spaces), ``CappedNotes`` the turn notes but never more than :data:`CAP` of them per search.  Each note
names the turns it holds as its sources, and a search ranks the notes by the number of distinct tokens they share
with the question (:func:`agentmemory.tokenize.tokenize`), ties by the order they were written.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentmemory.systems import Memory
from agentmemory.systems.base import Turn
from agentmemory.tokenize import tokenize

CAP = 3
"""The most memories :class:`CappedNotes` returns."""


class _Notes:
    """Keeps ``(note id, text, sources)`` notes; :meth:`notes` builds them from the turns ingested."""

    def __init__(self, scope: str | None = None, workdir: object = None) -> None:
        self.turns: list[Turn] = []

    def ingest(self, turns: Sequence[Turn]) -> None:
        self.turns.extend(turns)

    def notes(self) -> list[tuple[str, str, tuple[str, ...]]]:
        raise NotImplementedError

    def search(self, query: str, k: int) -> list[Memory]:
        asked = set(tokenize(query))
        notes = self.notes()
        shared = [len(asked & set(tokenize(text))) for _, text, _ in notes]
        order = sorted(range(len(notes)), key=lambda i: -shared[i])  # stable: ties in the order written
        return [Memory(notes[i][1], id=notes[i][0], sources=notes[i][2]) for i in order[:k]]

    def close(self) -> None:
        pass


class TurnNotes(_Notes):
    """One note per turn: the turn's own text."""

    label = "Turn notes"

    def notes(self) -> list[tuple[str, str, tuple[str, ...]]]:
        return [(f"turn-{t.entry_id}", t.text, (t.entry_id,)) for t in self.turns]


class SessionNotes(_Notes):
    """One note per session: its turns' texts joined by spaces."""

    label = "Session notes"

    def notes(self) -> list[tuple[str, str, tuple[str, ...]]]:
        sessions: dict[str | None, list[Turn]] = {}
        for turn in self.turns:
            sessions.setdefault(turn.session, []).append(turn)
        return [
            (f"session-{session}", " ".join(t.text for t in turns), tuple(t.entry_id for t in turns))
            for session, turns in sessions.items()
        ]


class CappedNotes(TurnNotes):
    """The turn notes, never more than :data:`CAP` per search."""

    label = "Capped notes"

    def search(self, query: str, k: int) -> list[Memory]:
        return super().search(query, min(k, CAP))
