"""One exception base for everything agentmemory rejects.

Every error a user can cause derives from :class:`AgentMemoryError`; the
subclasses also derive from the built-in exception a Python user would
expect (``ValueError``, ``FileNotFoundError``), so ``except ValueError`` keeps
working.  The command line turns any ``AgentMemoryError`` into one line on
stderr and exit status 2.

Messages follow one shape so they can be tested to the letter:

* file content: ``<path>:<line>: <what is wrong>; <what is expected>``
* parameters:   ``<name>: <bad value!r> (<type>) <what is wrong>; <what is allowed>``
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike

__all__ = [
    "AgentMemoryError",
    "InputError",
    "MissingFileError",
    "ParameterError",
    "UnknownNameError",
    "check_positive_int",
    "check_seed",
    "shorten",
]

_SHOWN = 160  # characters of a long bad value quoted in a message (a long path still shows whole)


class AgentMemoryError(Exception):
    """Base class of every error agentmemory raises on bad input."""


class InputError(AgentMemoryError, ValueError):
    """A file's content is malformed.

    ``str(err)`` is ``"<path>:<line>: <message>"`` (``<path>: <message>`` when
    the problem is not tied to one line).
    """

    def __init__(self, path: str | PathLike[str], line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")


class MissingFileError(AgentMemoryError, FileNotFoundError):
    """A file or folder the caller named does not exist."""

    def __init__(self, path: str | PathLike[str], what: str = "file") -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: no such {what}")

    def __str__(self) -> str:  # FileNotFoundError's own __str__ adds "[Errno ...]"
        return self.args[0]


def shorten(text: str, limit: int = _SHOWN) -> str:
    """``text`` when at most ``limit`` characters, else its first ``limit`` and ``... (N characters)``.

    Messages quote bad values through this, so a 5 MB value gives a one-line
    message of about a hundred characters, not 5 MB of output.
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def _quoted(value: object) -> str:
    """``repr(value)``, shortened; a value whose repr fails (a 5,000-digit int) is described instead."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        return f"<{type(value).__name__} too large to show>"
    return shorten(text)


class ParameterError(AgentMemoryError, ValueError):
    """A parameter has a value outside what is allowed.

    ``str(err)`` is ``"<name>: <value!r> (<type>) <problem>; <allowed>"``; the
    value's ``repr`` is cut to its first 160 characters when longer (see :func:`shorten`).
    """

    def __init__(self, name: str, value: object, problem: str, allowed: str) -> None:
        self.name = name
        self.value = value
        self.problem = problem
        self.allowed = allowed
        super().__init__(f"{name}: {_quoted(value)} ({type(value).__name__}) {problem}; {allowed}")


class UnknownNameError(ParameterError):
    """A name (retriever, metric, format) is not in its registry."""

    def __init__(self, name: str, value: object, choices: Iterable[str]) -> None:
        self.choices = sorted(choices)
        super().__init__(name, value, "is not a known name", "choose from: " + ", ".join(self.choices))


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` if it is an int >= 1 (bools rejected), else raise ParameterError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(name, value, "is not an integer", f"{name} must be an integer >= 1")
    if value < 1:
        raise ParameterError(name, value, "is less than 1", f"{name} must be an integer >= 1")
    return value


def check_seed(value: object, name: str = "seed") -> int:
    """Return ``value`` if it is an int >= 0 (bools rejected), else raise ParameterError.

    Seeds feed ``numpy.random.default_rng``, which takes non-negative integers only.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(name, value, "is not an integer", f"{name} must be an integer >= 0")
    if value < 0:
        raise ParameterError(name, value, "is negative", f"{name} must be an integer >= 0")
    return value
