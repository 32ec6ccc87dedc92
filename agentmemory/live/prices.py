"""A price table: what each model's tokens cost, so token counts become a cost.

``--prices FILE`` is TOML: an optional ``currency`` (default ``"USD"``), then
one table per model, named as the reader or judge asks for it (quote a name
with a dot: ``["gpt-4.1"]``), with the price per **million** tokens::

    currency = "USD"

    [gpt-4o-mini]
    input = 0.15
    output = 0.60

A call's cost is ``input_tokens * input / 1e6 + output_tokens * output / 1e6``
from the endpoint's ``usage``; a call without usage, or to a model the table
does not list, has no cost (counted, never guessed).  The card names the
file and its sha256.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from agentmemory.errors import InputError, quote
from agentmemory.files.reading import decode_utf8, read_bytes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - python 3.10
    import tomli as tomllib

__all__ = ["Price", "PriceTable", "read_prices"]

_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_KEYS = ("input", "output")


@dataclass(frozen=True)
class Price:
    """One model's price per million ``input`` and ``output`` tokens."""

    input: float
    output: float


@dataclass(frozen=True)
class PriceTable:
    """A read price table: the file's name and sha256, the currency, each model's :class:`Price`."""

    name: str
    sha256: str
    currency: str
    prices: Mapping[str, Price] = field(default_factory=dict)
    given: str = field(default="", compare=False)
    """The path as it was given (what the artifact's command line repeats)."""

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """The cost of one call, or ``None`` (no usage, or a model the table does not list)."""
        price = self.prices.get(model)
        if price is None or input_tokens is None or output_tokens is None:
            return None
        return input_tokens * price.input / 1e6 + output_tokens * price.output / 1e6

    def describe(self) -> dict[str, object]:
        """What the card states: the file, its sha256, the currency."""
        return {"file": self.name, "sha256": self.sha256, "currency": self.currency}


def _line_of(lines: list[str], pattern: str) -> int | None:
    rx = re.compile(pattern)
    return next((i + 1 for i, line in enumerate(lines) if rx.match(line)), None)


def read_prices(path: str | PathLike[str]) -> PriceTable:
    """The price table in ``path`` (see the module docstring).

    Raises:
        MissingFileError: no such file.
        InputError: not TOML, or a value that is not what the table takes (the file and line named).
    """
    path = Path(path)
    data = read_bytes(path, "prices file")
    text = decode_utf8(path, data)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        found = _TOML_LINE.search(str(err))
        raise InputError(
            path, int(found[1]) if found else None, f"is not TOML: {_TOML_LINE.sub('', str(err)).strip()}"
        ) from None
    lines = text.splitlines()
    currency = document.pop("currency", "USD")
    if not isinstance(currency, str) or not currency.strip():
        raise InputError(
            path,
            _line_of(lines, r"\s*currency\s*="),
            f'currency: {quote(currency)} is not a name; write e.g. currency = "USD"',
        )
    prices: dict[str, Price] = {}
    for model, table in document.items():
        head = _line_of(lines, r"\s*\[\s*\"?" + re.escape(model) + r"\"?\s*\]")
        if not isinstance(table, dict):
            raise InputError(
                path,
                _line_of(lines, r"\s*\"?" + re.escape(model) + r"\"?\s*="),
                f"{quote(model)} is not a table; write [{model}] with input = and output = (per million tokens)",
            )
        unknown = sorted(set(table) - set(_KEYS))
        if unknown:
            raise InputError(
                path,
                head,
                f"[{model}] has the key {quote(unknown[0])}; a model's table takes input and output (per million tokens)",
            )
        values = {}
        for key in _KEYS:
            value = table.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise InputError(
                    path, head, f"[{model}] {key}: {quote(value)} is not a price; give a number >= 0 per million tokens"
                )
            values[key] = float(value)
        prices[model] = Price(values["input"], values["output"])
    return PriceTable(path.name, hashlib.sha256(data).hexdigest(), currency.strip(), prices, given=str(path))
