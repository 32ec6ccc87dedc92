"""Numbers as a reader reads them, in every committed report: no raw float, no Python repr, no significant
difference that reads 0.00."""

from __future__ import annotations

import html
import re

import pytest
from conftest import REPO_ROOT

REPORTS = REPO_ROOT / "reports"
COMMITTED = sorted(page.name for page in REPORTS.glob("*.html"))

_NOT_TEXT = re.compile(r"<(style|script)\b.*?</\1>|data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")
RAW_FLOAT = re.compile(r"(?<![\w.])\d+\.\d{7,}(?![\w.])")
"""A float with more than six decimals: a value printed with ``str()`` (``0.06972477064220184``)."""
REPR = re.compile(r"np\.float64\(|np\.int64\(|<agentmemory\.[\w.]+ object at|\{'[a-z_]+': ")
"""Python and numpy reprs a reader should never see."""
ZERO_SIGNIFICANT = re.compile(
    r"(?<![\d.])[+−-]?0\.0+ \[[^\]]*\] p\s?[\d.e−-]+ \*"  # the paired matrix: 0.00 [-0.01, 0.00] p 0.0018 *
    r"|(?<![\d.])[+−-]?0\.0+ \[[^\]]*\][^;]{0,40}\bsignificantly\b"  # the verdict: +0.000 [...] (p = ..., significantly
)
"""A difference printed as zero beside the marker that says it is significant."""


def report_text(name: str) -> str:
    """The text a reader sees in a committed report: tags, styles, scripts and embedded images removed."""
    page = (REPORTS / name).read_text(encoding="utf-8")
    return html.unescape(_TAGS.sub(" ", _NOT_TEXT.sub(" ", page)))


@pytest.mark.parametrize("name", COMMITTED)
def test_no_raw_float_or_python_repr_in_a_report(name):
    """No float with more than six decimals and no repr anywhere a reader looks."""
    text = report_text(name)
    assert RAW_FLOAT.findall(text) == []
    assert REPR.findall(text) == []


@pytest.mark.parametrize("name", COMMITTED)
def test_no_significant_difference_reads_zero(name):
    """A significant paired difference always shows the digits that make it non-zero."""
    assert ZERO_SIGNIFICANT.findall(report_text(name)) == []


@pytest.mark.parametrize(
    "text,raw,zero",
    [
        ("judged_at_k = 0.06972477064220184", True, False),
        ("0.0697", False, False),
        ("sha256 7cd7040c7c48352023ba07d6d2236698956f", False, False),
        ("0.00 [−0.01, 0.00] p\u00a00.0018 *", False, True),
        ("−0.004 [−0.007, −0.001] p\u00a00.0018 *", False, False),
        ("Dense +0.000 [+0.000, +0.001] (p = 0.001, significantly better)", False, True),
        ("Dense 0.000 [−0.02, +0.03] (p = 0.43, not significant)", False, False),
    ],
)
def test_the_scanners_catch_what_they_are_for(text, raw, zero):
    """The patterns of the scans above on small cases, so a scan that finds nothing is not a scan that cannot."""
    assert bool(RAW_FLOAT.search(text)) is raw
    assert bool(ZERO_SIGNIFICANT.search(text)) is zero


@pytest.mark.parametrize(
    "name,own,others",
    [
        ("collection.html", "LoCoMo: one per conversation", ("LongMemEval:", "BEAM:", "question type")),
        ("collection-longmemeval.html", "LongMemEval: one per question", ("LoCoMo:", "BEAM:", "per category")),
        (
            "collection-beam.html",
            "BEAM: one per chat",
            ("LoCoMo:", "LongMemEval:", "per category", "LongMemEval's are"),
        ),
    ],
)
def test_each_formats_report_speaks_of_its_own_format(name, own, others):
    """A report names its own format's scopes and groups, never another format's boilerplate."""
    text = report_text(name)
    assert own in text
    assert [word for word in others if word in text] == []
