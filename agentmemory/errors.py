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

import os
from collections.abc import Callable, Iterable, Sequence
from os import PathLike
from pathlib import Path

__all__ = [
    "TRACEBACK_ENV",
    "CacheWarning",
    "ChatCallError",
    "LiveCallError",
    "PluginError",
    "MemorySystemError",
    "RetrieverContractError",
    "SystemContractError",
    "NotebookFailed",
    "ReportParameterError",
    "NumberTextError",
    "StoreVersionError",
    "StoreLockedError",
    "StoreError",
    "AgentMemoryError",
    "InputError",
    "MissingFileError",
    "OutputError",
    "ParameterError",
    "UnknownNameError",
    "check_positive_int",
    "check_seed",
    "quote",
    "shorten",
    "traceback_wanted",
]

_SHOWN = 160  # characters of a long bad value quoted in a message (a long path still shows whole)


TRACEBACK_ENV = "AGENTMEMORY_TRACEBACK"
"""The environment variable that shows the full traceback of our errors: set it to ``1`` (the command line
prints it instead of the one line; a notebook cell shows IPython's traceback instead of the one line)."""


def traceback_wanted() -> bool:
    """Whether :data:`TRACEBACK_ENV` asks for full tracebacks (set, and not ``""``, ``0``, ``false`` or ``no``)."""
    return os.environ.get(TRACEBACK_ENV, "").strip().lower() not in ("", "0", "false", "no")


class AgentMemoryError(Exception):
    """Base class of every error agentmemory raises on bad input.

    In IPython and Jupyter, a cell that raises one shows one line, ``<class>: <message>`` (the message
    names the parameter or file first), instead of the frames inside the library: IPython renders an
    exception through its ``_render_traceback_``.  With :data:`TRACEBACK_ENV` set (``%env
    AGENTMEMORY_TRACEBACK=1`` in the notebook, or in the environment of the kernel) the full traceback
    is shown again.
    """

    @property
    def _render_traceback_(self) -> Callable[[], list[str]]:
        """What IPython calls to render this error: :meth:`one_line`, unless :data:`TRACEBACK_ENV` asks for the
        traceback; then there is no such attribute (IPython checks with ``hasattr``) and IPython renders its own."""
        if traceback_wanted():
            raise AttributeError(f"{TRACEBACK_ENV} is set: IPython renders the full traceback")
        return self.one_line

    def one_line(self) -> list[str]:
        """``["<class>: <message>"]``, the message's white space runs (newlines included) made single spaces."""
        return [f"{type(self).__name__}: {' '.join(str(self).split())}"]


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


class OutputError(AgentMemoryError, OSError):
    """A file could not be written: ``"<destination>: <problem>"``, naming the file asked for (never a temporary one).

    ``errno``/``strerror`` are those of the operating-system error behind it, when there was one.
    """

    def __init__(self, path: str | PathLike[str], problem: str, cause: OSError | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        if cause is not None and cause.errno is not None:
            super().__init__(cause.errno, cause.strerror)
        else:
            super().__init__(problem)
        self.filename = self.path
        self._message = f"{self.path}: {problem}"

    def __str__(self) -> str:  # OSError's own __str__ adds "[Errno ...]"
        return self._message


def shorten(text: str, limit: int = _SHOWN) -> str:
    """``text`` when at most ``limit`` characters, else its first ``limit`` and ``... (N characters)``.

    Messages quote bad values through this, so a 5 MB value gives a one-line
    message of about a hundred characters, not 5 MB of output.
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def quote(value: object, limit: int = _SHOWN) -> str:
    """``repr(value)`` for a message, shortened by :func:`shorten`: the one way a bad value is quoted.

    Every message that shows a value read from a file or given by a caller
    quotes it through this, so a 5 MB string gives a line of about two
    hundred characters: ``'xxx...x'... (5,000,000 characters)`` (the count
    is the value's length).  A value whose ``repr`` fails (an int of more digits
    than Python converts to text, a structure nested too deeply) is
    described instead: ``<int of 5,000 digits>``, ``<list too deeply nested to show>``.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        digits = _int_digits(value)
        if digits > _MAX_INT_DIGITS_SHOWN:
            return f"<int of {digits:,} digits>"
    if isinstance(value, str) and len(value) > limit:  # count the value's characters, not its repr's
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    try:
        text = repr(value)
    except RecursionError:
        return f"<{type(value).__name__} too deeply nested to show>"
    except ValueError:
        return f"<{type(value).__name__} too large to show>"
    return shorten(text, limit)


_MAX_INT_DIGITS_SHOWN = 4300  # CPython's default limit on int-to-text conversion


def _int_digits(value: int) -> int:
    """The number of decimal digits of ``abs(value)``, computed without converting it to text."""
    magnitude = abs(value)
    if magnitude < 10**_MAX_INT_DIGITS_SHOWN:
        return len(str(magnitude))
    digits = int(magnitude.bit_length() * 0.30102999566398120) + 1  # log10(2); exact to within one
    return digits - 1 if magnitude < 10 ** (digits - 1) else digits


_quoted = quote


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


_VIOLATIONS_SHOWN = 12  # violations of the retriever contract listed in the message (all are in .violations)


class StoreError(AgentMemoryError):
    """A store cannot do what was asked: ``"<where>: <problem>; <what to do>"``.

    ``where`` is the store's path (or ``in-memory store``).  Raised for a
    file that is not a store, a closed or read-only handle, a full disk, a
    write SQLite refused; nothing of the refused change is written.
    """

    def __init__(self, where: object, problem: str, advice: str) -> None:
        self.where = str(where)
        self.problem = problem
        self.advice = advice
        super().__init__(f"{self.where}: {problem}; {advice}")


class StoreLockedError(StoreError, TimeoutError):
    """Another process holds the store open for writing, and did not close it within the timeout."""


class StoreVersionError(StoreError):
    """The store's schema version is not the one this agentmemory writes (newer, or older and not migrated)."""


class NumberTextError(AgentMemoryError, ValueError):
    """Text that is not a number under this module's rules; ``problem`` says why (``"is not an integer"``)."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(problem)


class ReportParameterError(AgentMemoryError, ValueError):
    """A notebook parameter was rejected.

    ``str(err)`` is the message of the library error in :attr:`cause`,
    unchanged.  IPython shows it as one line (``_render_traceback_``), so a
    reader of the failed notebook sees the message, not a stack of frames
    (:meth:`AgentMemoryError._render_traceback_`, shared by every error of ours).
    """

    def __init__(self, cause: AgentMemoryError) -> None:
        self.cause = cause
        super().__init__(str(cause))


class NotebookFailed(AgentMemoryError):
    """A notebook stopped on an error: ``"<notebook>: cell <n> raised <ename>: <evalue>"`` (one line).

    ``bad_input`` is true when the cell refused a parameter (``ReportParameterError``).
    """

    def __init__(self, notebook: Path, ename: str, evalue: str, cell: object) -> None:
        self.bad_input = ename == "ReportParameterError"
        self.ename = ename
        where = f"cell {cell}" if cell is not None else "a cell"
        super().__init__(f"{notebook.as_posix()}: {where} raised {ename}: {shorten(' '.join(evalue.split()))}")


class RetrieverContractError(AgentMemoryError, AssertionError):
    """A retriever broke the contract of :func:`check_retriever`; ``violations`` lists how."""

    def __init__(self, label: str, violations: Sequence[str]) -> None:
        self.violations = tuple(violations)
        shown = [f"- {v}" for v in self.violations[:_VIOLATIONS_SHOWN]]
        if len(self.violations) > _VIOLATIONS_SHOWN:
            shown.append(f"- ... and {len(self.violations) - _VIOLATIONS_SHOWN} more (all in .violations)")
        super().__init__(
            f"check_retriever({label}): {len(self.violations)} violation(s) of the retriever contract:\n"
            + "\n".join(shown)
        )


class SystemContractError(AgentMemoryError, AssertionError):
    """A memory system broke the contract of :func:`agentmemory.testing.check_system`; ``violations`` lists how."""

    def __init__(self, label: str, violations: Sequence[str]) -> None:
        self.violations = tuple(violations)
        shown = [f"- {v}" for v in self.violations[:_VIOLATIONS_SHOWN]]
        if len(self.violations) > _VIOLATIONS_SHOWN:
            shown.append(f"- ... and {len(self.violations) - _VIOLATIONS_SHOWN} more (all in .violations)")
        super().__init__(
            f"check_system({label}): {len(self.violations)} violation(s) of the memory-system contract:\n"
            + "\n".join(shown)
        )


class CacheWarning(UserWarning):
    """A cache file was ignored (corrupt, from another version) or could not be written; the run goes on."""


class PluginError(AgentMemoryError):
    """A plugin's call raised, or gave back what the plugin boundary refuses.

    A plugin is code agentmemory calls but did not write: a retriever (from
    ``package.module:attribute``, a user's factory or instance, an entry
    point), and next a memory system.  Every call to one goes through
    :mod:`agentmemory.retrievers.guard`, which turns any exception of the
    call (``SystemExit`` from a module calling ``sys.exit`` on import
    included; not ``KeyboardInterrupt``) and any result the contract refuses
    into this one error.  ``str(err)`` is one line::

        <kind> plugin <spec!r> (<label>): <call> raised <Type>: <message>
        <kind> plugin <spec!r> (<label>): <call> returned <what is wrong>

    Attributes: ``kind`` (``"retriever"``), ``plugin`` (the spec it was given
    as), ``label`` (its display name; ``None`` before it is known, as on
    import), ``call`` (``import``, ``factory``, ``add``, ``search``,
    ``params``, ...), ``problem`` (the part after the call), and the
    exception behind it as ``__cause__``.  In a notebook it renders as that
    line (``_render_traceback_``); with ``AGENTMEMORY_TRACEBACK=1``, as the
    full traceback.
    """

    def __init__(self, kind: str, plugin: str, label: str | None, call: str, problem: str) -> None:
        self.kind = kind
        self.plugin = plugin
        self.label = label
        self.call = call
        self.problem = problem
        named = f"{kind} plugin {quote(plugin)}" + (f" ({shorten(label, 80)})" if label else "")
        super().__init__(f"{named}: {call} {problem}")

    @classmethod
    def raised(cls, kind: str, plugin: str, label: str | None, call: str, err: BaseException) -> PluginError:
        """The error for a call that raised ``err``: its type and message (on one line, shortened)."""
        text = " ".join(str(err).split())
        problem = f"raised {type(err).__name__}" + (f": {shorten(text, 200)}" if text else "")
        return cls(kind, plugin, label, call, problem)


class MemorySystemError(AgentMemoryError):
    """A memory system failed or broke its protocol: ``"<system>: <call> in scope <scope>: <problem>"`` (one line).

    ``system`` is the system's key, ``scope`` the scope being replayed
    (``-`` when the collection has none), ``call`` what was called
    (``ingest``, ``search 'query id'``, ``factory``, ``close``) and
    ``problem`` what went wrong, the bad value shortened.
    """

    def __init__(self, system: str, scope: str | None, call: str, problem: str) -> None:
        self.system = system
        self.scope = scope
        self.call = call
        self.problem = problem
        where = "-" if scope is None else scope
        super().__init__(f"{system}: {call} in scope {where}: {' '.join(problem.split())}")


class ChatCallError(AgentMemoryError):
    """One call of a reader's or judge's chat model failed: ``problem`` says how (``HTTP 500: ...``, ``no reply
    within 60 s``, ``the body is not JSON: ...``).

    A chat model (:mod:`agentmemory.live.endpoints`) raises it from ``complete``; ``retryable`` says whether the
    same call may succeed when made again (a 429, a 5xx, a timeout, a body that is not a chat completion), and
    ``retry_after`` the seconds the endpoint asked to wait (its ``Retry-After``), when it said.
    """

    def __init__(self, problem: str, *, retryable: bool = False, retry_after: float | None = None) -> None:
        self.problem = problem
        self.retryable = retryable
        self.retry_after = retry_after
        super().__init__(problem)


class LiveCallError(AgentMemoryError):
    """A reader's or judge's call for a question finally failed, or was not in the cache under ``--offline``.

    ``str(err)`` is one line: ``"<system>: the <role> call on question <id> (<who>) <problem>; <advice>"``.
    ``failed`` holds every ``(question id, reason)`` of the system (the first is the one named).
    """

    def __init__(
        self,
        system: str,
        role: str,
        question: str,
        who: str,
        problem: str,
        advice: str,
        failed: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.system = system
        self.role = role
        self.question = question
        self.who = who
        self.problem = problem
        self.failed = tuple(failed)
        super().__init__(
            f"{system}: the {role} call on question {question} ({who}) {' '.join(problem.split())}; {advice}"
        )
