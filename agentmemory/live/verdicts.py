"""A judge's reply read as a verdict: one rule, stated, and anything else refused (never read as wrong).

:func:`parse_verdict` reads the **label**:

1. when the reply holds a JSON object with a string ``"label"`` (the whole
   reply, a fenced ```json block, or the last ``{...}`` in it: mem0's judge
   prompt asks for ``{"label": "CORRECT"}``), that string;
2. otherwise the whole reply, stripped of white space, quotes, ``*`` and a
   final ``.``, which must then be one word.

The label maps, ignoring case, through :data:`VERDICT_LABELS`: ``CORRECT``,
``yes`` and ``true`` are 1; ``WRONG``, ``INCORRECT``, ``no`` and ``false`` are
0 (LongMemEval's judge answers yes or no).  Any other reply is not a
verdict: the judge call has failed for that question, which is left out of
``Judge`` with the reply as its reason, never scored 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from agentmemory.errors import quote

__all__ = ["VERDICT_LABELS", "VERDICT_RULE", "parse_verdict"]

VERDICT_LABELS: Mapping[str, float] = {
    "correct": 1.0,
    "yes": 1.0,
    "true": 1.0,
    "wrong": 0.0,
    "incorrect": 0.0,
    "no": 0.0,
    "false": 0.0,
}
"""Each label a judge may reply (lower-cased) and its verdict."""

VERDICT_RULE = "1 for CORRECT/yes/true, 0 for WRONG/INCORRECT/no/false (the reply's one word or its JSON label)"
"""The mapping in words, as the card states it."""

_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)
_OBJECT = re.compile(r"\{[^{}]*\}")
_STRIP = " \t\r\n\"'`*"


def _json_label(reply: str) -> str | None:
    candidates = [reply.strip(), *(m for m in _FENCED.findall(reply)), *reversed(_OBJECT.findall(reply))]
    for text in candidates:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("label"), str):
            return data["label"]
    return None


def parse_verdict(reply: str) -> tuple[str, float]:
    """``(label, value)`` of a judge's reply (see the module docstring).

    Raises:
        ValueError: the reply is not a verdict; the message quotes it (shortened) and says what is read.
    """
    label = _json_label(reply)
    if label is None:
        label = reply.strip(_STRIP).removesuffix(".").strip(_STRIP)
    value = VERDICT_LABELS.get(label.strip().lower())
    if value is None:
        raise ValueError(
            f"replied with no verdict: {quote(' '.join(reply.split()), 80)} is not one word CORRECT/WRONG, yes/no or "
            'true/false, nor JSON with a "label"'
        )
    return label.strip(), value
