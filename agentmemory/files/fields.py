"""The fields every collection file has, parsed one way for every format: an id, a timestamp.

* :func:`parse_id`: an id a TREC file can hold (:data:`~agentmemory.files.trec.TREC_ID_RULE`),
  from a line of a file (a number is taken as its text);
* :func:`parse_timestamp`: an ISO 8601 timestamp with a timezone, from a line of a file;
* :func:`parse_time`: the same, or a bare date, given as a parameter (``--since``).
"""

from __future__ import annotations

import re
from datetime import datetime
from os import PathLike

from agentmemory.errors import InputError, ParameterError, quote
from agentmemory.files.trec import TREC_ID_RULE, trec_id_problem
from agentmemory.records import TIME_RANGE, usable_time

__all__ = ["parse_id", "parse_time", "parse_timestamp"]


def parse_id(value: object, path: str | PathLike[str], line: int, field: str = "_id") -> str:
    """``value`` as an id: a non-empty string (an int is taken as its text) that a TREC file can hold.

    Raises:
        InputError: ``<path>:<line>: <field> <value> is not a non-empty string; ...`` or
            ``... <field> <value> contains whitespace; <TREC_ID_RULE>``.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise InputError(
            path, line, f"{field} {quote(value)} is not a non-empty string; every line needs a string {field}"
        )
    text = value if isinstance(value, str) else str(value)
    problem = trec_id_problem(text)
    if problem is not None:
        raise InputError(path, line, f"{field} {quote(value)} {problem}; {TREC_ID_RULE}")
    return text


_TIMESTAMP_TEXT = re.compile(r"[0-9T:.,+\-Zz W]+", re.ASCII)


def parse_timestamp(value: object, path: str | PathLike[str], line: int, field: str = "created_at") -> datetime:
    """An ISO 8601 timestamp with a timezone (``Z`` allowed), as an aware datetime in UTC.

    Raises:
        InputError: not a string, not ISO 8601 (ASCII digits and separators
            only), no timezone, or outside :data:`agentmemory.records.TIME_RANGE`
            (``9999-12-31T23:00:00-05:00`` is in the year 10000 in UTC).
    """
    if not isinstance(value, str):
        raise InputError(
            path, line, f"{field} {quote(value)} is not a string; expected ISO 8601 like 2026-03-01T09:30:00Z"
        )
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        if _TIMESTAMP_TEXT.fullmatch(value) is None:
            raise ValueError(value)
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            path, line, f"{field} {quote(value)} is not ISO 8601; expected e.g. 2026-03-01T09:30:00Z"
        ) from None
    if parsed.tzinfo is None:
        raise InputError(path, line, f"{field} {quote(value)} has no timezone; add one, e.g. 2026-03-01T09:30:00Z")
    utc = usable_time(parsed)
    if utc is None:
        raise InputError(path, line, f"{field} {quote(value)} is out of range; expected {TIME_RANGE}")
    return utc


def parse_time(text: str, name: str = "time") -> datetime:
    """An ISO 8601 time with a timezone (``2026-03-01T09:30:00Z``), or a date (``2026-03-01``: midnight UTC).

    Raises:
        ParameterError: anything else, a time without a timezone included.
    """
    allowed = "write an ISO 8601 time with a timezone, e.g. 2026-03-01T09:30:00Z, or a date such as 2026-03-01"
    if not isinstance(text, str):
        raise ParameterError(name, text, "is not a time", allowed)
    value = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        value += "T00:00:00+00:00"
    elif value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ParameterError(name, text, "is not an ISO 8601 time", allowed) from None
    if moment.tzinfo is None:
        raise ParameterError(name, text, "has no timezone", allowed)
    return moment
