"""Claims files: the example reads, measures go through the registry, and every bad claim is one clear line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.errors import InputError, ParameterError
from agentmemory.evaluation import claims as claims_module
from agentmemory.evaluation.claims import CLAIM_FIELDS, read_claims
from agentmemory.evaluation.options import EvalOptions
from agentmemory.metrics import ALIASES, REGISTRY, CutoffRule, Measure, MeasureDef, register_measure

EXAMPLE = REPO_ROOT / "fixtures/claims/claims.toml"

GOOD = """\
[[claim]]
system = "bm25"
collection = "LoCoMo (original = mem0 copy)"
measure = "recall"
k = 5
granularity = "turn"
value = 0.449
source = "https://example.org/table"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "claims.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_example_file() -> None:
    """The committed example: two cited claims, four marked illustrative, each with its header's line."""
    read = read_claims(EXAMPLE)
    assert read.name == "claims.toml" and len(read.sha256) == 64
    assert [(c.line, c.system, str(c.measure), c.granularity, c.illustrative) for c in read.claims] == [
        (8, "bm25", "recall_any@5", "session", False),
        (21, "hebb-mind", "recall_any@10", "session", False),
        (33, "bm25", "R@5", "turn", True),
        (44, "hybrid", "sess.recall_any@5", "session", True),
        (55, "dense", "recall_any@5", "session", True),
        (65, "bm25", "Success@5", "turn", True),
    ]
    for claim in read.claims:
        assert (claim.source or "").startswith("https://") or claim.illustrative
        if claim.illustrative:
            assert claim.citation is not None and claim.citation.startswith("illustrative: not a published number")


def test_an_alias_and_the_cutoff_make_the_registry_measure(tmp_path: Path) -> None:
    """``measure = "recall"`` with ``k = 5`` is the registry's R@5; a measure without cutoff takes neither."""
    read = read_claims(_write(tmp_path, GOOD))
    assert read.claims[0].measure == Measure("R", 5)
    assert read.claims[0].to_dict() == {
        "line": 1,
        "system": "bm25",
        "collection": "LoCoMo (original = mem0 copy)",
        "measure": "R@5",
        "granularity": "turn",
        "value": 0.449,
        "source": "https://example.org/table",
    }
    mrr = GOOD.replace('measure = "recall"\nk = 5\n', 'measure = "MRR"\n')
    assert read_claims(_write(tmp_path, mrr)).claims[0].measure == Measure("RR")


def test_a_budget_is_written_with_tok_for_the_registry(tmp_path: Path, monkeypatch) -> None:
    """``budget = 2048`` hands the registry's parser ``recall@2048tok``, the measure grammar's budget form."""
    seen: list[str] = []

    def parse(text: str) -> Measure:
        seen.append(text)
        return Measure("R", 5)

    monkeypatch.setattr(claims_module, "parse_measure", parse)
    read_claims(_write(tmp_path, GOOD.replace("k = 5", "budget = 2048")))
    assert seen == ["recall@2048tok"]


def test_a_measure_registered_at_run_time_is_a_claim_measure(tmp_path: Path) -> None:
    """The claims read the live registry: a plugin's measure parses as soon as it is registered."""
    definition = MeasureDef("claimtest", lambda ctx: 0.0, CutoffRule.REQUIRED, "a test measure", family="plugin")
    text = GOOD.replace('measure = "recall"', 'measure = "claimtest"')
    with pytest.raises(InputError, match="is not a measure we have"):
        read_claims(_write(tmp_path, text))
    register_measure(definition)
    try:
        assert str(read_claims(_write(tmp_path, text)).claims[0].measure) == "claimtest@5"
    finally:
        REGISTRY.unregister("claimtest")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ('measure = "recall"', 'measure = "recal"'),
            r":1: claim: measure 'recal@5' is not a measure we have: is "
            r"not a known name; choose from: " + re.escape(", ".join(sorted([*REGISTRY.names(), *ALIASES]))) + "$",
        ),
        (
            ('measure = "recall"', 'measure = "R@5"'),
            r":1: claim: measure 'R@5' carries a cutoff; write the name "
            "alone and the cutoff as k or budget$",
        ),
        (("k = 5", "k = 5\nbudget = 512"), r":1: claim: gives both k and budget; "),
        (("k = 5\n", ""), r":1: claim: measure 'recall' is not a measure we have: has no cutoff; R needs a cutoff k"),
        (
            ('measure = "recall"', 'measure = "Rprec"'),
            r":1: claim: measure 'Rprec@5' is not a measure we have: has "
            r"a cutoff; Rprec takes no cutoff",
        ),
        (("k = 5", "k = 0"), r":1: claim: k 0 is not an integer >= 1 \(the measure's cutoff"),
        (("k = 5", "k = true"), r":1: claim: k True is not an integer >= 1"),
        (('system = "bm25"\n', ""), r":1: claim: has no system \(required: the system of the run"),
        (("value = 0.449", 'value = "44.9%"'), r":1: claim: value '44.9%' is not a finite number; "),
        (("value = 0.449", "value = nan"), r":1: claim: value nan is not a finite number; "),
        (('source = "https://example.org/table"\n', ""), r":1: claim: has neither source nor citation; "),
        (('granularity = "turn"', 'granularity = ""'), r":1: claim: granularity '' is not a non-empty string"),
        (
            ("value = 0.449", "value = 0.449\nurl = 'x'"),
            r":1: claim: has the field 'url', which a claim does not "
            r"take; fields: system, collection, measure, k, budget, ",
        ),
        (("value = 0.449", "value = 0.449\nillustrative = 'yes'"), r":1: claim: illustrative 'yes' is not true"),
        (
            ("value = 0.449", "value = 0.449\nsha256 = 'abc'"),
            r":1: claim: sha256 'abc' is not 64 hexadecimal digits \(sha256sum FILE prints them\)$",
        ),
        (("value = 0.449", "value = 0.449\nsha256 = 5"), r":1: claim: sha256 5 is not a hash or a list of them "),
        (("[[claim]]", "[[claims]]"), r": has the key 'claims'; a claims file holds only \[\[claim\]\] tables$"),
        (("value = 0.449", "value = 0.449\nvalue = 1"), r":8: is not TOML: "),
    ],
)
def test_a_bad_claim_is_one_line_naming_the_file_and_line(tmp_path: Path, edit, message) -> None:
    """Each bad claim is refused with the file, the line of its [[claim]] header, and what is wrong."""
    old, new = edit
    assert GOOD.count(old) == 1
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(InputError, match="^" + str(path).replace("\\", "\\\\") + message) as info:
        read_claims(path)
    assert "\n" not in str(info.value)


def test_the_second_claim_is_named_by_its_own_line(tmp_path: Path) -> None:
    """With several claims, the bad one's header line is named."""
    path = _write(tmp_path, GOOD + "\n" + GOOD.replace("value = 0.449", "value = []"))
    with pytest.raises(InputError, match=r"claims\.toml:10: claim: value \[\] is not a finite number"):
        read_claims(path)


def test_an_empty_file_and_options_that_are_not_a_file(tmp_path: Path) -> None:
    """A file without a claim is refused; EvalOptions reads a path, refuses anything else."""
    with pytest.raises(InputError, match=r"claims\.toml: holds no claim; write one \[\[claim\]\] table per claim"):
        read_claims(_write(tmp_path, "# nothing\n"))
    assert EvalOptions(claims=_write(tmp_path, GOOD)).claims is not None
    with pytest.raises(ParameterError, match=r"^--claims: 5 \(int\) is not a claims file; pass the path of a claims"):
        EvalOptions(claims=5, names={"claims": "--claims"})  # type: ignore[arg-type]
    assert set(CLAIM_FIELDS) >= {"system", "collection", "measure", "k", "budget", "granularity", "value", "source"}
