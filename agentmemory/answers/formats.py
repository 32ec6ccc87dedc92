"""The registry of answer formats and :func:`read_answers`: how another harness's answer file becomes an :class:`AnswerFile`.

An **answer format** is a record (:class:`AnswerFormat`): a name, a
``recognise(source) -> bool`` with the one-line ``rule`` it applies (``None``:
never detected, only named), a ``read(source, **options) -> AnswerFile``, its
declared options (:class:`~agentmemory.datasets.FormatOption`, as collection
formats declare theirs) and a one-line description.  :data:`ANSWER_FORMATS`
is a :class:`~agentmemory.registry.Registry` of them:
:func:`register_answer_format` adds one at run time, and an installed package
adds one through an entry point in the group ``agentmemory.answer_formats``
whose object is an :class:`AnswerFormat`.

Both functions receive an :class:`AnswerSource`: the path(s) given, each
file's bytes, text, JSON document or JSON lines read once and kept, so
detection and reading parse a file once between them.

**Detection** (``format=None`` or ``"auto"``): every registered format (then
every installed entry point) is asked; exactly one must recognise the
file(s).  None, or several, is refused in one line naming the formats tried
with their rules and how to name one.  Options name the format when only one
format declares them all: ``read_answers(path, mapping="m.toml")`` reads
with the ``mapping`` format.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple

from agentmemory.answers.records import AnswerFile
from agentmemory.datasets import FormatOption
from agentmemory.errors import InputError, MissingFileError, ParameterError, UnknownNameError, quote
from agentmemory.files.reading import decode_utf8, json_lines, parse_json, path_kind, read_bytes
from agentmemory.registry import Registry

__all__ = [
    "ANSWER_FORMATS",
    "AnswerFormat",
    "AnswerSource",
    "detect_answer_format",
    "read_answers",
    "register_answer_format",
]

_NOT_JSON: Any = object()


class AnswerSource:
    """The file(s) an answer format recognises or reads, each read once and kept.

    ``paths`` are the paths given (a reader of a pair, such as ``zep``, may
    read siblings it finds: it makes its own source with them).  Each
    accessor takes the file's index (0, the first, by default) and raises
    :class:`~agentmemory.errors.InputError` naming the file and line; a
    recogniser uses :meth:`first_record`, which never raises.
    """

    def __init__(self, paths: Sequence[str | PathLike[str]]) -> None:
        self.paths = tuple(Path(p) for p in paths)
        self._data: dict[int, bytes] = {}
        self._text: dict[int, str] = {}
        self._json: dict[int, Any] = {}
        self._lines: dict[int, list[tuple[int, Any]]] = {}
        self._not_json: set[int] = set()

    @property
    def path(self) -> Path:
        """The first file."""
        return self.paths[0]

    def data(self, index: int = 0) -> bytes:
        """The file's bytes."""
        if index not in self._data:
            self._data[index] = read_bytes(self.paths[index], "answer file")
        return self._data[index]

    def sha256(self, index: int = 0) -> str:
        """The file's sha256 (hex)."""
        return hashlib.sha256(self.data(index)).hexdigest()

    def text(self, index: int = 0) -> str:
        """The file's text (UTF-8)."""
        if index not in self._text:
            self._text[index] = decode_utf8(self.paths[index], self.data(index))
        return self._text[index]

    def json(self, index: int = 0) -> Any:
        """The file as one JSON document (strict: :func:`agentmemory.files.reading.parse_json`)."""
        if index not in self._json:
            self._json[index] = parse_json(self.text(index), self.paths[index], root="$")
        return self._json[index]

    def json_lines(self, index: int = 0) -> list[tuple[int, Any]]:
        """The file as JSON lines: ``(line number, value)`` of every non-blank line."""
        if index not in self._lines:
            expected = "; expected one JSON value per line"
            self._lines[index] = list(json_lines(self.paths[index], self.text(index), expected=expected))
        return self._lines[index]

    def is_json(self, index: int = 0) -> bool:
        """Whether the file is one JSON document (never raises)."""
        return self._json_or_not(index) is not _NOT_JSON

    def _json_or_not(self, index: int) -> Any:
        if index in self._not_json:
            return _NOT_JSON
        try:
            return self.json(index)
        except (InputError, MissingFileError):
            self._not_json.add(index)  # recognisers ask again: parse a file that is not one JSON document once
            return _NOT_JSON

    def first_record(self, index: int = 0) -> dict[str, Any] | None:
        """The file's first record, for recognisers (never raises): the document when it is an object, the first
        item of a top-level list that is an object, else the first line's value of a JSON-lines file; ``None``."""
        document = self._json_or_not(index)
        if document is _NOT_JSON:
            try:
                lines = self.json_lines(index)
            except (InputError, MissingFileError):
                return None
            document = lines[0][1] if lines else None
        if isinstance(document, list):
            document = document[0] if document else None
        return document if isinstance(document, dict) else None

    def answer_file(
        self,
        format: str,
        records: Iterable[Any],
        *,
        name: str | None = None,
        judges: Mapping[str, str] | None = None,
        notes: Iterable[str] = (),
        params: Mapping[str, Any] | None = None,
    ) -> AnswerFile:
        """The :class:`AnswerFile` of these files: paths as given (POSIX form) and each file's sha256; ``name``
        defaults to the first file's stem."""
        return AnswerFile(
            name=name or self.path.stem,
            paths=tuple(p.as_posix() for p in self.paths),
            sha256=tuple(self.sha256(i) for i in range(len(self.paths))),
            format=format,
            records=tuple(records),
            judges=dict(judges or {}),
            notes=tuple(notes),
            params=dict(params or {}),
        )


class AnswerFormat(NamedTuple):
    """An answer format: how to recognise it and how to read it (module docstring).

    Attributes:
        name: the registry name (``"mem0"``).
        recognise: ``recognise(source) -> bool`` (an :class:`AnswerSource`),
            or ``None`` if the format is only chosen by name.
        read: ``read(source, **options) -> AnswerFile``, called with every
            declared option (given or default).
        options: the declared options, as :class:`~agentmemory.datasets.FormatOption` records.
        description: what the format is, one line.
        rule: what ``recognise`` looks for, one line (required with a recogniser).
    """

    name: str
    recognise: Callable[[AnswerSource], bool] | None
    read: Callable[..., AnswerFile]
    options: tuple[FormatOption, ...] = ()
    description: str = ""
    rule: str | None = None

    def option(self, name: str) -> FormatOption | None:
        """The declared option called ``name``, or ``None``."""
        return next((o for o in self.options if o.name == name), None)


def _one_line(field: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        raise ParameterError(field, value, "is not one line of text", "give it as a non-empty one-line string")


def _check_answer_format(name: str, obj: object) -> AnswerFormat:
    """The registry's check: ``obj`` must be a complete :class:`AnswerFormat` named ``name``."""
    if not isinstance(obj, AnswerFormat):
        raise ParameterError(
            f"answer format {quote(name)}",
            obj,
            "is not an AnswerFormat record",
            "register an agentmemory.answers.AnswerFormat(name, recognise, read, options, description, rule)",
        )
    if name == "auto" or obj.name != name:
        raise ParameterError(
            f"answer format {quote(name)} name",
            obj.name,
            "differs from the name it is registered under (or is 'auto')",
            f"name it {quote(name)}",
        )
    if obj.recognise is not None and not callable(obj.recognise):
        raise ParameterError(
            f"answer format {quote(name)} recognise",
            obj.recognise,
            "is not callable",
            "pass a function source -> bool, or None",
        )
    if not callable(obj.read):
        raise ParameterError(
            f"answer format {quote(name)} read", obj.read, "is not callable", "pass a function source -> AnswerFile"
        )
    for option in obj.options:
        if not isinstance(option, FormatOption) or not option.name.isidentifier() or option.name in ("format", "name"):
            raise ParameterError(
                f"answer format {quote(name)} option",
                option,
                "is not a usable FormatOption",
                "declare FormatOption(name, type, default, help) with an identifier other than format and name",
            )
    _one_line(f"answer format {quote(name)} description", obj.description)
    if obj.recognise is not None:
        _one_line(f"answer format {quote(name)} rule", obj.rule)
    return obj._replace(options=tuple(obj.options))


ANSWER_FORMATS: Registry[AnswerFormat] = Registry("answer format", "agentmemory.answer_formats", _check_answer_format)
"""Every answer format by name: the built-ins, run-time registrations and installed entry points."""


def register_answer_format(
    name: str,
    recognise: Callable[[AnswerSource], bool] | None,
    read: Callable[..., AnswerFile],
    options: Iterable[FormatOption] = (),
    *,
    description: str,
    rule: str | None = None,
    replace: bool = False,
) -> AnswerFormat:
    """Register an answer format under ``name`` (see :class:`AnswerFormat`); return the stored record.

    Raises:
        ParameterError: ``name`` is taken (without ``replace=True``) or not a
            valid name, or a field of the declaration is not usable.
    """
    record = AnswerFormat(name, recognise, read, tuple(options), description, rule)
    return ANSWER_FORMATS.register(name, record, replace=replace)


def _all_formats() -> list[tuple[str, AnswerFormat]]:
    """Registered formats in registration order, then installed entry points not yet loaded (loaded now), by name."""
    found = list(ANSWER_FORMATS.registered().items())
    seen = {name for name, _ in found}
    return found + [(name, ANSWER_FORMATS.get(name)) for name in ANSWER_FORMATS.names() if name not in seen]


def detect_answer_format(source: AnswerSource, *, names: Mapping[str, str] | None = None) -> str:
    """The name of the one format that recognises ``source`` (module docstring).

    ``names`` says how messages name the format parameter (``{"format": "--answers-format"}``; default ``format``).

    Raises:
        ParameterError: no format, or more than one, recognises it; the one
            line lists the formats tried (with their rules) and how to name one.
    """
    option = (names or {}).get("format", "format")
    formats = _all_formats()
    accepted = [name for name, fmt in formats if fmt.recognise is not None and fmt.recognise(source)]
    shown = ", ".join(p.as_posix() for p in source.paths)
    if len(accepted) == 1:
        return accepted[0]
    if accepted:
        raise ParameterError(
            option,
            "auto",
            f"cannot tell the answer format of {quote(shown)}: it has the shape of {' and '.join(accepted)}",
            "name one: " + " or ".join(f"{option}={quote(n)}" for n in accepted),
        )
    tried = "; ".join(f"{name}: {fmt.rule}" for name, fmt in formats if fmt.recognise is not None)
    never = [name for name, fmt in formats if fmt.recognise is None]
    also = f" ({', '.join(never)} is never detected)" if never else ""
    raise ParameterError(
        option,
        "auto",
        f"cannot tell the answer format of {quote(shown)}; tried {tried}{also}",
        f"name one with {option}= ({', '.join(ANSWER_FORMATS.names())}), or describe the file in a mapping file "
        f"and pass {option}='mapping', mapping='FILE.toml'",
    )


def _paths(path_or_paths: object) -> tuple[Path, ...]:
    if isinstance(path_or_paths, (str, PathLike)):
        given: list[object] = [path_or_paths]
    elif isinstance(path_or_paths, Sequence) and not isinstance(path_or_paths, bytes):
        given = list(path_or_paths)
    else:
        given = [path_or_paths]
    if not given or not all(isinstance(p, (str, PathLike)) for p in given):
        raise ParameterError(
            "path",
            path_or_paths,
            "is not a path or a list of paths",
            "pass a file, or the files of one result (zep's pair)",
        )
    paths = tuple(Path(p) for p in given)  # type: ignore[arg-type]
    for path in paths:
        kind = path_kind(path) or ("a folder" if path.is_dir() else None)  # MissingFileError when nothing is there
        if kind is not None:
            raise InputError(path, None, f"is {kind}; expected an answer file")
    return paths


def _format_named_by(options: Mapping[str, Any]) -> str | None:
    """The one format declaring every option given, when options are given and exactly one does."""
    if not options:
        return None
    takers = [name for name, fmt in _all_formats() if all(fmt.option(key) is not None for key in options)]
    return takers[0] if len(takers) == 1 else None


def _checked_options(fmt: AnswerFormat, options: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in options.items():
        if fmt.option(key) is None:
            takes = ", ".join(o.name for o in fmt.options)
            allowed = f"the {fmt.name} format takes: {takes}" if takes else f"the {fmt.name} format takes no options"
            raise ParameterError(key, value, f"is not an option of the {fmt.name} answer format", allowed)
    return {o.name: o.check(options[o.name]) if o.name in options else o.default for o in fmt.options}


def read_answers(
    path_or_paths: str | PathLike[str] | Sequence[str | PathLike[str]],
    *,
    format: str | None = None,
    name: str | None = None,
    **options: Any,
) -> AnswerFile:
    """Read another harness's per-question answer file(s) into an :class:`AnswerFile`.

    Args:
        path_or_paths: the file, or the files of one result (Zep's grades
            and responses; given one, the ``zep`` reader finds the other beside it).
        format: a name in :data:`ANSWER_FORMATS`, or ``None``/``"auto"`` to
            detect it (module docstring).
        name: the system's label in tables (default: the reader's, usually the file's stem).
        **options: the chosen format's options (``mapping="m.toml"`` for ``mapping``).

    Raises:
        MissingFileError: a path does not exist.
        UnknownNameError: ``format`` is not registered.
        ParameterError: the format cannot be told, an option the format does not take, a bad value.
        InputError: the file is malformed or a record is bad (one line: the file, the record, what is wrong).
    """
    paths = _paths(path_or_paths)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ParameterError(
            "name", name, "is not a non-empty string", "pass the system's label, or None for the file's"
        )
    source = AnswerSource(paths)
    if format is None or format == "auto":
        format = _format_named_by(options) or detect_answer_format(source)
    if not isinstance(format, str) or format not in ANSWER_FORMATS:
        raise UnknownNameError("format", format, [*ANSWER_FORMATS.names(), "auto"])
    fmt = ANSWER_FORMATS.get(format)
    answers = fmt.read(source, **_checked_options(fmt, options))
    if not isinstance(answers, AnswerFile):
        raise ParameterError(
            "format",
            format,
            f"has a read function that returned {type(answers).__name__}, not an AnswerFile",
            "a reader must return an agentmemory.answers.AnswerFile",
        )
    return answers if name is None else dataclasses.replace(answers, name=name)
