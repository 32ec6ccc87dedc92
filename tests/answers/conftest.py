"""Shared fixtures of the answer-file tests: the authored samples and the collections they answer.

This folder is a package (``__init__.py``) so this conftest is imported as ``answers.conftest`` and does not
shadow the root ``conftest`` that other test modules import by name."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agentmemory.collection import Collection
from agentmemory.datasets import load
from agentmemory.datasets.locomo import CATEGORIES
from agentmemory.records import Query

REPO = Path(__file__).resolve().parents[2]
ANSWERS = REPO / "fixtures" / "answers"
LOCOMO = REPO / "fixtures" / "locomo-sample" / "locomo-sample.json"
LONGMEMEVAL = REPO / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json"


@pytest.fixture(scope="session")
def answers_dir() -> Path:
    return ANSWERS


@pytest.fixture(scope="session")
def locomo() -> Collection:
    """The LoCoMo sample with repair: 14 questions kept, 3 left out (conv-1/q7, conv-2/q6, conv-2/q7)."""
    return load(LOCOMO, repair=True)


@pytest.fixture(scope="session")
def locomo_bare(locomo: Collection) -> Collection:
    """The repaired sample as a format that keeps no record of the questions it leaves out (``left_out_queries``
    empty, ``skipped`` as it is): what a plugin format may give, so matching can only say why a record of such a
    question matches nothing."""
    return dataclasses.replace(locomo, left_out_queries=())


@pytest.fixture(scope="session")
def locomo_strict_bare(locomo_strict: Collection) -> Collection:
    """The strictly read sample without records of its left-out questions (see :func:`locomo_bare`)."""
    return dataclasses.replace(locomo_strict, left_out_queries=())


@pytest.fixture(scope="session")
def locomo_strict() -> Collection:
    """The LoCoMo sample read strictly: 8 kept, 9 left out."""
    return load(LOCOMO)


@pytest.fixture(scope="session")
def longmemeval() -> Collection:
    return load(LONGMEMEVAL)


def with_left_out(collection: Collection) -> Collection:
    """``collection`` carrying ``left_out_queries`` (the Query records of the questions the loader left out), built
    from the raw LoCoMo sample, as a loader that records them gives."""
    raw = {s["sample_id"]: s for s in json.loads(LOCOMO.read_text(encoding="utf-8"))}
    left = []
    for qid, _ in collection.skipped:
        sample, index = qid.split("/q")
        item = raw[sample]["qa"][int(index)]
        category = item["category"]
        left.append(
            Query(qid, item["question"], scope=sample, group=CATEGORIES[category], metadata={"category": category})
        )
    copy = dataclasses.replace(collection)
    object.__setattr__(copy, "left_out_queries", tuple(left))
    return copy


@pytest.fixture(scope="session")
def locomo_with_left_out(locomo: Collection) -> Collection:
    return with_left_out(locomo)
