"""The strict number rules: what is an integer and what is a number, wherever agentmemory reads one from text."""

from __future__ import annotations

import ctypes
import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agentmemory.errors import NumberTextError
from agentmemory.files.numbers import MAX_DIGITS, parse_integer, parse_number

# Spellings Python's int() reads that are not "an optional sign and ASCII digits".
PYTHON_ONLY_INTEGERS = [
    "1_0",  # digit-group underscore: int() gives 10
    " 5",  # surrounding white space
    "5 ",
    "\t5\n",
    "\uff11",  # FULLWIDTH DIGIT ONE
    "\u0663",  # ARABIC-INDIC DIGIT THREE
    "\u096a",  # DEVANAGARI DIGIT FOUR
    "1\u00a0",  # a no-break space after it
    "+1_000",
]
# Neither Python nor the rule reads these.
NOT_INTEGERS = ["", "+", "-", "1.0", "1e3", "0x10", "²", "1,000", "one", "--1", "+-1", "1 2"]


@pytest.mark.parametrize("text", PYTHON_ONLY_INTEGERS)
def test_python_reads_these_as_integers_but_the_rule_does_not(text: str) -> None:
    """int() accepts each (so the old parsing did); parse_integer refuses each with 'is not an integer'."""
    int(text)
    with pytest.raises(NumberTextError) as info:
        parse_integer(text)
    assert info.value.problem == "is not an integer"
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("text", NOT_INTEGERS)
def test_other_non_integers_are_refused(text: str) -> None:
    """Empty text, a lone sign, decimals, hexadecimal, superscripts, words: not integers."""
    with pytest.raises(NumberTextError, match="^is not an integer$"):
        parse_integer(text)


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("7", 7), ("-3", -3), ("+5", 5), ("007", 7), ("-0", 0)])
def test_integers_by_the_rule(text: str, value: int) -> None:
    """An optional sign and ASCII digits; leading zeros are digits too."""
    assert parse_integer(text) == value


def test_too_many_digits_says_how_many() -> None:
    """More than MAX_DIGITS digits is refused by count (int() itself would raise its own limit error)."""
    assert parse_integer("9" * MAX_DIGITS) == int("9" * MAX_DIGITS)
    with pytest.raises(NumberTextError, match="^has 5,000 digits, more than 4,300$"):
        parse_integer("-" + "1" * 5000)


# Spellings Python's float() reads and C's atof (what trec_eval uses) reads differently or not at all.
PYTHON_ONLY_NUMBERS = [
    "1_000.5",  # atof stops at the underscore: 1.0
    "\uff11.5",  # fullwidth digit: atof reads 0
    "\u0663.\u0665",  # Arabic-Indic digits
    " 1.5",  # white space (atof skips leading, not Python's Unicode spaces; refused for both)
    "1.5\n",
    "nan",  # atof reads NaN, which cannot be ranked
    "NaN",
    "-nan",
]
NOT_NUMBERS = ["", ".", "e3", "1e", "1e+", "0x1p3", "1.5f", "1,5", "--1", "in", "infinite", "1.2.3", "∞"]


@pytest.mark.parametrize("text", PYTHON_ONLY_NUMBERS)
def test_python_reads_these_as_floats_but_the_rule_does_not(text: str) -> None:
    """float() accepts each; parse_number refuses each."""
    float(text)
    with pytest.raises(NumberTextError, match="^is not a number$"):
        parse_number(text)


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_other_non_numbers_are_refused(text: str) -> None:
    """Hexadecimal floats, suffixes, commas, partial words: not numbers."""
    with pytest.raises(NumberTextError, match="^is not a number$"):
        parse_number(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12.5", 12.5),
        ("-3", -3.0),
        ("+3", 3.0),
        ("1e-05", 1e-05),
        ("2E3", 2000.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("inf", math.inf),
        ("-Infinity", -math.inf),
        ("INF", math.inf),
        ("1e999", math.inf),
    ],
)
def test_numbers_by_the_rule(text: str, value: float) -> None:
    """ASCII decimal and exponent notation, and inf/infinity in any case."""
    assert parse_number(text) == value


try:
    _ATOF = ctypes.CDLL(None).atof  # the C library of this process (POSIX)
except (OSError, AttributeError, TypeError):  # pragma: no cover - Windows
    _ATOF = None


_NUMBER_LIKE = st.one_of(
    st.from_regex(r"[+-]?([0-9]{1,20}\.?[0-9]{0,20}|\.[0-9]{1,20})([eE][+-]?[0-9]{1,4})?", fullmatch=True),
    st.floats(allow_nan=False).map(repr),
    st.sampled_from(["inf", "-Infinity", "+INF", "iNfInItY"]),
    st.text(alphabet="0123456789+-.eE_ infINF\u0663\uff11", max_size=12),  # mostly refused: assume() drops those
)


@given(_NUMBER_LIKE)
def test_what_the_rule_reads_atof_reads_to_the_same_value(text: str) -> None:
    """Every text parse_number accepts, C's atof (trec_eval's reader) reads to the same double."""
    try:
        value = parse_number(text)
    except NumberTextError:
        assume(False)  # the rule refuses it: nothing for atof to agree with
    if _ATOF is None:  # pragma: no cover - no C library to compare with
        pytest.skip("no C library")
    _ATOF.restype = ctypes.c_double
    _ATOF.argtypes = [ctypes.c_char_p]
    assert _ATOF(text.encode("ascii")) == value


@given(st.integers())
def test_every_int_written_by_python_is_read_back(value: int) -> None:
    """str(n) of any int of at most MAX_DIGITS digits is an integer by the rule, read back exactly."""
    assert parse_integer(str(value)) == value
