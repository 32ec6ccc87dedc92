"""Numbers written as text: one strict rule for integers and one for decimal numbers, used everywhere.

Python's ``int()`` and ``float()`` read more than a number file or a command
line should mean: digit-group underscores (``int("1_0") == 10``), any
Unicode digit (``int("１") == 1``, ``float("٣.٥") == 3.5``), surrounding white
space (``int(" 5")``), ``float("nan")``.  trec_eval (``atol``/``atof``) reads
none of those the same way, so a file that Python reads one way and trec_eval
another would be scored differently by the two.  Every number agentmemory
reads from text (qrels grades, run scores, ``--k``, ``--seed``, format
options, notebook parameters) goes through this module instead:

* **integer** (:func:`parse_integer`): an optional ``+`` or ``-``, then one or
  more ASCII digits ``0-9``; nothing else, not even white space.  At most
  :data:`MAX_DIGITS` digits (CPython's limit on converting text to ``int``).
* **number** (:func:`parse_number`): an optional sign, then ASCII digits with
  an optional decimal point (``12``, ``12.5``, ``12.``, ``.5``) and an optional
  exponent (``1e-05``, ``2E3``), or ``inf``/``infinity`` in any case.  Not
  ``nan`` (a score that cannot be ranked), not hexadecimal, no underscores,
  no white space.  What this reads, C's ``atof`` reads to the same value.

Both raise :class:`NumberTextError`, a ``ValueError`` whose ``problem`` says
what is wrong in the words messages use (``"is not an integer"``,
``"has 5,000 digits, more than 4,300"``); callers add which field or option
it was and quote the text with :func:`agentmemory.errors.quote`.
"""

from __future__ import annotations

import re

from agentmemory.errors import NumberTextError

__all__ = ["INTEGER_FORM", "MAX_DIGITS", "NUMBER_FORM", "NumberTextError", "parse_integer", "parse_number"]

MAX_DIGITS = 4300
"""The most digits an integer may have (CPython's default ``sys.get_int_max_str_digits()``)."""

INTEGER_FORM = "an optional sign and ASCII digits"
"""How an integer must be written, as messages say it."""

NUMBER_FORM = "ASCII digits with an optional sign, decimal point and exponent, or inf"
"""How a number must be written, as messages say it."""

_INTEGER = re.compile(r"[+-]?([0-9]+)", re.ASCII)
_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity))", re.ASCII)


def parse_integer(text: str) -> int:
    """``text`` as an int under the integer rule (module docstring).

    Raises:
        NumberTextError: ``text`` is not a string, not written by the rule,
            or has more than :data:`MAX_DIGITS` digits.
    """
    match = _INTEGER.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise NumberTextError("is not an integer")
    digits = len(match[1])
    if digits > MAX_DIGITS:
        raise NumberTextError(f"has {digits:,} digits, more than {MAX_DIGITS:,}")
    return int(text)


def parse_number(text: str) -> float:
    """``text`` as a float under the number rule (module docstring); ``inf`` and ``-inf`` included, NaN never.

    Raises:
        NumberTextError: ``text`` is not a string or not written by the rule.
    """
    if not isinstance(text, str) or _NUMBER.fullmatch(text) is None:
        raise NumberTextError("is not a number")
    return float(text)
