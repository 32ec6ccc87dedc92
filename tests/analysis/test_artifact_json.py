"""dumps_indented writes exactly what json.dumps(indent=2, ensure_ascii=False) writes, NaN refused."""

from __future__ import annotations

import json
from collections import OrderedDict
from enum import IntEnum

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmemory.analysis.artifact import dumps_indented


def reference(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()  # unicode, control characters, quotes and backslashes included
)
json_like = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(), inner, max_size=4)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(json_like)
def test_same_text_as_json_dumps(data: object) -> None:
    assert dumps_indented(data) == reference(data)


class Grade(IntEnum):
    HIGH = 2


@pytest.mark.parametrize(
    "data",
    [
        {},
        [],
        {"a": {}, "b": [], "c": [[]], "d": [{}]},
        OrderedDict([("z", 1), ("a", 2)]),
        {"grade": Grade.HIGH, "x": True, "y": False, "n": None},
        {1: "int key", 2.5: "float key", None: "none key", False: "bool key"},  # handed to json.dumps
        [1e-300, -0.0, 0.1, 1e300, 2**80],
    ],
)
def test_edge_cases(data: object) -> None:
    assert dumps_indented(data) == reference(data)


@pytest.mark.parametrize("data", [float("inf"), [1, {"x": -float("inf")}], {"hits": [{"score": float("inf")}]}])
def test_infinities_are_written_as_json_dumps_writes_them(data: object) -> None:
    """An infinite score is the token Infinity / -Infinity (Python's JSON extension), which json.loads reads back."""
    text = dumps_indented(data)
    assert text == json.dumps(data, indent=2, ensure_ascii=False)
    assert "Infinity" in text and json.loads(text) == data


@pytest.mark.parametrize("bad", [float("nan"), [1, {"x": float("nan")}], {"s": {1, 2}}])
def test_what_json_refuses_is_refused_alike(bad: object) -> None:
    """NaN (which no score can be) and what JSON cannot encode raise as json.dumps(allow_nan=False) does."""
    with pytest.raises((ValueError, TypeError)) as expected:
        reference(bad)
    with pytest.raises(type(expected.value), match=str(expected.value)):
        dumps_indented(bad)


def test_cycles_raise_as_json_does() -> None:
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_indented(looped)
