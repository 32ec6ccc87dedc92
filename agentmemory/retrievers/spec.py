"""Retriever specs: the text that names a retriever and its parameters.

Grammar (white space around items is ignored)::

    specs  := spec ("," spec)*             a list splits only at commas outside brackets
    spec   := target ["[" [param ("," param)*] "]"]
    target := NAME                         a registry name: "bm25", "tags"
            | MODULE ":" ATTRIBUTE         an importable object: "mypkg.memory:MyRetriever"
    param  := KEY "=" value                KEY a Python identifier, each at most once
    value  := item ("+" item)*             two or more items make a list: "weights=0.5+0.5"
    item   := JSON string ("a b")          a string, any characters
            | spec with brackets           a nested spec ("of=bm25[k1=0.9]+dense"), kept as its text
            | JSON number, true, false, null
            | bare token [A-Za-z0-9_./:-]+ a string ("encoder=model2vec", "model=/path/to/model")

So ``"bm25,bm25[k1=0.9,b=0.4]"`` is two specs, and
``"hybrid[of=bm25[k1=0.9]+dense,weights=0.5+0.5]"`` one.  A nested spec
reaches the factory as its canonical text (``"bm25[k1=0.9]"``), which the
factory resolves with :func:`agentmemory.retrievers.make_retriever`.
A number in exponent form must not use ``+`` (write ``1e5``, not ``1e+5``:
``+`` joins list items).

:func:`parse_spec` and :func:`split_specs` only read text; checking the
names and the parameters against the factory happens in
:mod:`agentmemory.retrievers`.

**Which option.**  Their messages name what they read in the library's words
(``retriever spec: 'bm25[' (str) has a '[' without its ']'; ...``).  A caller
that read the spec from an option (``--system``, ``--attribution``, a grid
key such as ``systems``) resolves it inside :func:`option_named`, so the
message names the option the user typed instead: the spec's own name
becomes the option (``--system: 'bm25[' (str) ...``), and a name inside it
follows the option (``--system bm25 parameter: 'x' (str) is not a known
name; ...``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from agentmemory.errors import ParameterError, shorten

__all__ = ["SPEC_NAMES", "Spec", "format_value", "option_named", "parse_spec", "renamed", "split_specs"]

_BARE = re.compile(r"[A-Za-z0-9_./:-]+")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
_GRAMMAR = (
    "write NAME, NAME[key=value,...] or package.module:attribute[key=value,...]; "
    'a value is a number, true, false, null, a "quoted string", a bare token, a nested spec, '
    "or items joined by '+'"
)


SPEC_NAMES = frozenset({"retriever spec", "retriever", "retrievers", "system spec", "system", "systems", "attribution"})
"""The names the resolvers' messages give a spec itself (not one of its parameters): :func:`renamed` puts the
option in their place."""


def renamed(err: ParameterError, option: str) -> ParameterError:
    """``err`` as the error of the option ``option``: its name replaced (one of :data:`SPEC_NAMES`) or prefixed.

    The copy keeps ``err``'s class and fields (an :class:`~agentmemory.errors.UnknownNameError`'s ``choices``);
    only ``name`` and the message's head change.
    """
    if err.name == option or err.name.startswith(f"{option} "):  # named already (an inner call was told too)
        return err
    name = option if err.name in SPEC_NAMES else f"{option} {err.name}"
    text = str(err)
    message = name + text[len(err.name) :] if text.startswith(f"{err.name}: ") else f"{option}: {text}"
    copy = type(err).__new__(type(err))
    copy.__dict__.update(err.__dict__)
    copy.name = name
    copy.args = (message,)
    return copy


@contextmanager
def option_named(option: str | None) -> Iterator[None]:
    """Run the body; a :class:`~agentmemory.errors.ParameterError` it raises names ``option`` (:func:`renamed`).

    ``None`` leaves the errors as they are (a library call that was given no option name).
    """
    try:
        yield
    except ParameterError as err:
        if option is None:
            raise
        raise renamed(err, option) from None


@dataclass(frozen=True)
class Spec:
    """One parsed spec: its target (a registry name or ``module:attribute``) and its parameters, in the given order."""

    target: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def is_import(self) -> bool:
        """True for ``module:attribute`` targets."""
        return ":" in self.target

    def text(self, params: dict[str, Any] | None = None) -> str:
        """The canonical text: ``target`` or ``target[key=value,...]`` (``params`` defaults to the spec's own)."""
        shown = self.params if params is None else params
        if not shown:
            return self.target
        return self.target + "[" + ",".join(f"{k}={format_value(v)}" for k, v in shown.items()) + "]"


def format_value(value: Any) -> str:
    """A parameter value as spec text that :func:`parse_spec` reads back to an equal value."""
    if isinstance(value, (list, tuple)):
        return "+".join(format_value(v) for v in value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ParameterError("value", value, "is not finite", "use a finite number")
        return repr(value).replace("e+", "e") if isinstance(value, float) else str(value)
    if isinstance(value, str):
        if _BARE.fullmatch(value) and _scalar(value) is None:
            return value
        if "[" in value:
            try:
                spec = parse_spec(value)
            except ParameterError:
                pass
            else:
                if spec.text() == value:
                    return value
        return json.dumps(value, ensure_ascii=False)
    raise ParameterError("value", value, "cannot be written in a spec", "use a number, bool, None, str or list")


def _scalar(token: str) -> tuple[Any] | None:
    """``(value,)`` when ``token`` is a JSON number, true, false or null; else None."""
    if token in ("true", "false", "null"):
        return (json.loads(token),)
    if re.fullmatch(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE]-?[0-9]+)?", token):
        try:
            value = json.loads(token)
        except ValueError:  # an integer of more digits than Python converts (4,300)
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return (value,)
    return None


def _error(whole: str, problem: str) -> ParameterError:
    return ParameterError("retriever spec", whole, problem, _GRAMMAR)


def _top_level(text: str, separators: str, whole: str) -> list[str]:
    """``text`` split at ``separators`` outside brackets and quoted strings (pieces not stripped)."""
    pieces: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            try:
                _, end = json.JSONDecoder().raw_decode(text, i)
            except json.JSONDecodeError:
                raise _error(whole, "has an unterminated or malformed quoted string") from None
            i = end
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise _error(whole, "has a ']' without its '['")
        elif char in separators and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
        i += 1
    if depth:
        raise _error(whole, "has a '[' without its ']'")
    pieces.append(text[start:])
    return pieces


def split_specs(text: str) -> list[str]:
    """``"bm25,bm25[k1=0.9,b=0.4]"`` -> ``["bm25", "bm25[k1=0.9,b=0.4]"]``: split at commas outside brackets, stripped.

    Raises:
        ParameterError: unbalanced brackets or quotes, or an empty item.
    """
    if not isinstance(text, str):
        raise ParameterError("retrievers", text, "is not text", "pass e.g. 'bm25,tags'")
    pieces = [p.strip() for p in _top_level(text, ",", text)]
    if not text.strip() or any(not p for p in pieces):
        raise ParameterError(
            "retrievers", text, "has an empty item", "separate specs by single commas, e.g. 'bm25,bm25[k1=0.9]'"
        )
    return pieces


def _item(token: str, whole: str) -> Any:
    token = token.strip()
    if not token:
        raise _error(whole, "has an empty value")
    if token.startswith('"'):
        try:
            value, end = json.JSONDecoder().raw_decode(token)
        except json.JSONDecodeError:
            raise _error(whole, f"has a malformed quoted string {shorten(token)}") from None
        if end != len(token) or not isinstance(value, str):
            raise _error(whole, f"has text after a quoted string: {shorten(token)}")
        return value
    if "[" in token:
        return parse_spec(token).text()
    scalar = _scalar(token)
    if scalar is not None:
        return scalar[0]
    if not _BARE.fullmatch(token):
        raise _error(
            whole,
            f"has the value {shorten(token)!r}, which is neither a number, true, false, null, a quoted string nor a bare token",
        )
    return token


def _value(text: str, whole: str) -> Any:
    items = [_item(piece, whole) for piece in _top_level(text, "+", whole)]
    return items[0] if len(items) == 1 else items


def parse_spec(text: str) -> Spec:
    """Read one spec (see the module docstring); ``parse_spec("bm25[k1=0.9]") == Spec("bm25", {"k1": 0.9})``.

    Raises:
        ParameterError: the text does not follow the grammar; names the whole spec.
    """
    if not isinstance(text, str):
        raise ParameterError("retriever spec", text, "is not text", _GRAMMAR)
    whole = text
    text = text.strip()
    if not text:
        raise _error(whole, "is empty")
    _top_level(text, "", whole)  # brackets and quotes balanced before anything else is read
    head, bracket, rest = text.partition("[")
    target = head.strip()
    params: dict[str, Any] = {}
    if bracket:
        if not rest.endswith("]"):
            raise _error(whole, "has text after its closing ']'" if "]" in rest else "has a '[' without its ']'")
        inner = rest[:-1]
        _top_level(inner, ",", whole)  # balance check of the whole parameter list
        if inner.strip():
            for piece in _top_level(inner, ",", whole):
                key, equals, value = piece.partition("=")
                key = key.strip()
                if not equals or not _KEY.fullmatch(key):
                    raise _error(whole, f"has the parameter {shorten(piece.strip())!r}, which is not key=value")
                if key in params:
                    raise _error(whole, f"gives the parameter {key!r} twice")
                params[key] = _value(value, whole)
    if ":" in target:
        module, _, attribute = target.partition(":")
        if not _MODULE.fullmatch(module) or not _MODULE.fullmatch(attribute):
            raise _error(whole, f"names {shorten(target)!r}, which is not package.module:attribute")
    elif not _NAME.fullmatch(target):
        raise _error(whole, f"names {shorten(target)!r}, which is not a registry name")
    return Spec(target, params)
