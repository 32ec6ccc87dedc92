"""metrics.modes: which measures have a definition under each relevance mode, and the one refusal."""

from __future__ import annotations

import re

import pytest
from conftest import REPO_ROOT

from agentmemory.cli.app import main
from agentmemory.errors import ParameterError
from agentmemory.metrics import REGISTRY, parse_measures
from agentmemory.metrics.modes import DEFINED_UNDER, defined_under, require_defined


def _having(mode: str) -> str:
    return ", ".join(sorted(d.name for d in REGISTRY.registered().values() if DEFINED_UNDER[mode](d)))


def test_every_measure_is_defined_under_direct_relevance():
    """Direct relevance is every measure's own per-query function: nothing is refused."""
    every = [d.name for d in REGISTRY.registered().values()]
    assert all(DEFINED_UNDER["direct"](REGISTRY[name]) for name in every)


def test_under_provenance_a_measure_needs_a_provenance_definition_or_reads_no_judgment():
    """P@5 and R@512tok (a budget form) have provenance definitions, an answer measure reads no judgment; bpref
    has none, so it is refused in one line naming it and the mode, listing the measures that have one."""
    ok = parse_measures("P@5,R@512tok,F1")
    assert require_defined(ok, "provenance") == ok
    assert not defined_under(parse_measures("bpref")[0], "provenance")
    message = (
        "measure: 'bpref' (str) has no definition under relevance = provenance; leave it out, or evaluate it under "
        f"another relevance; under provenance these have one: {_having('provenance')}"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        require_defined(parse_measures("P@5,bpref"), "provenance")
    assert require_defined(parse_measures("P@5,bpref"), "direct") == parse_measures("P@5,bpref")


def test_the_command_line_refuses_it_in_one_line(capsys):
    """agentmemory eval --relevance provenance --metrics bpref: exit 2, one line, no traceback."""
    code = main(
        [
            "eval",
            "--collection",
            str(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"),
            "--retrievers",
            "bm25",
            "--relevance",
            "provenance",
            "--metrics",
            "P@5,bpref",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(
        "agentmemory: error: measure: 'bpref' (str) has no definition under relevance = provenance; "
    )
    assert err.count("\n") == 1
