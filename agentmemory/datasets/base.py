"""The format registry and :func:`load`: how a collection on disk becomes a :class:`~agentmemory.collection.Collection`.

A **format** is a record (:class:`Format`): a name, a one-line description,
a ``recognise(path) -> bool`` that says whether a path looks like this
format (``None``: never detected, only chosen by name) together with the
one-line ``rule`` it applies, a ``read(path, **options) -> Collection``, and
its **declared options** (:class:`FormatOption`: name, type, default,
one-line help).  :data:`FORMATS` is a :class:`~agentmemory.registry.Registry`
of them: :func:`register_format` adds one at run time, and an installed
package adds one through an entry point in the group ``agentmemory.formats``
whose object is a :class:`Format`.

:func:`load` checks every option against the chosen format's own
declaration before anything is read: an option the format does not declare
is an error naming the options it does take, and a value of the wrong type
is an error naming the option, the value and what is allowed.  Options not
given take their declared defaults, so ``read`` always receives every
declared option.  ``read`` also receives ``progress`` when its signature has
a parameter of that name.

**Detection** (``format="auto"``, :func:`detect_format`): the formats
registered so far are asked in registration order (the built-in ``beir``,
``locomo``, ``longmemeval`` and ``beam`` first, then formats registered at run time and
entry points already loaded, in the order they arrived), then the installed entry points
not yet loaded, by name; the first whose ``recognise`` returns true wins.
A recogniser may look inside a file, but cheaply (see
:mod:`agentmemory.datasets.sniff`): it runs on every path ``auto`` is given.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from agentmemory.collection import Collection
from agentmemory.errors import InputError, MissingFileError, NumberTextError, ParameterError, UnknownNameError, quote
from agentmemory.files.numbers import INTEGER_FORM, NUMBER_FORM, parse_integer, parse_number
from agentmemory.files.reading import path_kind
from agentmemory.registry import Registry

__all__ = [
    "FORMATS",
    "OPTION_TYPES",
    "Format",
    "FormatOption",
    "detect_format",
    "load",
    "option_flag_arguments",
    "option_flags",
    "register_format",
]

OPTION_TYPES: tuple[type, ...] = (bool, int, float, str)
"""The types an option may declare: each has a text form, so the command line can pass any option."""

_RESERVED_OPTIONS = frozenset({"path", "format", "progress"})  # load()'s own parameters
_BOOL_TEXT = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
_WHAT = {bool: "a bool", int: "an integer", float: "a number", str: "a string"}


class FormatOption(NamedTuple):
    """One option a format declares: its keyword name, type, default and one-line help.

    ``type`` is one of :data:`OPTION_TYPES`.  A ``bool`` option takes only
    ``True``/``False``; an ``int`` option only ints (not bools); a ``float``
    option ints or floats (not bools), passed on as a float; a ``str``
    option only strings.
    """

    name: str
    type: type
    default: Any
    help: str

    def check(self, value: object) -> Any:
        """``value`` as this option takes it.

        Raises:
            ParameterError: ``value`` is not of the declared type; the
                message names the option, the value and what is allowed.
        """
        kind = self.type
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            raise ParameterError(self.name, value, f"is not {_WHAT[kind]}", self.allowed)
        return float(value) if kind is float else value  # type: ignore[arg-type]

    @property
    def flag(self) -> str:
        """The command-line flag of this option when it has its own: ``--include-captions`` for ``include_captions``."""
        return "--" + self.name.replace("_", "-")

    @property
    def allowed(self) -> str:
        """What a value must be, as a message ends: ``pass repair=True or repair=False``."""
        if self.type is bool:
            return f"pass {self.name}=True or {self.name}=False"
        return f"pass {_WHAT[self.type]}, e.g. {self.name}={quote(self.default)}"

    def parse(self, text: str, name: str | None = None) -> Any:
        """The value written as ``text`` (on a command line), read with the declared type.

        A bool is one of ``true``/``false``, ``yes``/``no``, ``on``/``off``,
        ``1``/``0`` (any case); an int or float is read by the strict rules of
        :mod:`agentmemory.files.numbers` (ASCII digits, no underscores, no white
        space); a str is ``text`` itself.  ``name`` is how messages call the
        option (default its own name).

        Raises:
            ParameterError: ``text`` is not a value of the declared type.
        """
        shown = self.name if name is None else name
        if self.type is str:
            return text
        if self.type is bool:
            value = _BOOL_TEXT.get(text.strip().lower())
            if value is None:
                raise ParameterError(shown, text, "is not a bool", "write true or false (or yes/no, on/off, 1/0)")
            return value
        parse = parse_integer if self.type is int else parse_number
        try:
            return parse(text)
        except NumberTextError as err:
            form = INTEGER_FORM if self.type is int else NUMBER_FORM
            raise ParameterError(
                shown, text, err.problem, f"write {_WHAT[self.type]} ({form}), e.g. {quote(self.default)}"
            ) from None


class Format(NamedTuple):
    """A collection format: how to recognise it and how to read it.

    Attributes:
        name: the registry name (``"beir"``).
        recognise: ``recognise(path) -> bool`` for ``format="auto"``, called
            with an existing :class:`~pathlib.Path`; ``None`` if the format
            is never detected and only chosen by name.
        read: ``read(path, **options) -> Collection``, called with a
            :class:`~pathlib.Path` and every declared option (given or
            default), plus ``progress`` when it has a parameter of that name.
        options: the declared :class:`FormatOption`\\ s, in the order help lists them.
        description: what the format is, one line.
        rule: what ``recognise`` looks for, one line (required with a
            recogniser; shown when no format recognises a path).
    """

    name: str
    recognise: Callable[[Path], bool] | None
    read: Callable[..., Collection]
    options: tuple[FormatOption, ...] = ()
    description: str = ""
    rule: str | None = None

    def option(self, name: str) -> FormatOption | None:
        """The declared option called ``name``, or ``None``."""
        return next((o for o in self.options if o.name == name), None)

    @property
    def takes_progress(self) -> bool:
        """Whether ``read`` has a parameter named ``progress`` (then :func:`load` passes its ``progress``)."""
        try:
            return "progress" in inspect.signature(self.read).parameters
        except (TypeError, ValueError):  # a builtin without a signature
            return False

    def parse_options(self, pairs: Iterable[str], where: str = "--format-option") -> dict[str, Any]:
        """The options written as ``KEY=VALUE`` texts (a command line's ``--format-option``, a notebook's
        ``format_options``), each value read with its declared type (:meth:`FormatOption.parse`).

        Only the syntax and the types are checked here: an option the format
        does not declare is kept as text, for :meth:`check_options` (and so
        :func:`load`) to refuse with the list of those it takes.

        Raises:
            ParameterError: a text without ``=`` or a key, a key given twice,
                or a value that is not of the declared type; ``where`` names
                the parameter.
        """
        options: dict[str, Any] = {}
        for text in pairs:
            key, sep, raw = text.partition("=")
            key = key.strip()
            if not sep or not key:
                lead = f"{where} " if where.startswith("--") else ""  # a flag is repeated before each pair
                raise ParameterError(where, text, "is not KEY=VALUE", self.option_example(lead))
            if key in options:
                raise ParameterError(
                    where, text, f"sets {key} a second time", f"give each option of the {self.name} format once"
                )
            declared = self.option(key)
            options[key] = raw if declared is None else declared.parse(raw, f"{where} {key}")
        return options

    def option_example(self, lead: str = "") -> str:
        """How to write ``KEY=VALUE`` for this format, from its first declared option (for messages);
        ``lead`` goes before the pair (``"--format-option "``)."""
        if not self.options:
            return f"the {self.name} format takes no options"
        first = self.options[0]
        value = "true" if first.type is bool else str(first.default)
        return (
            f"write e.g. {lead}{first.name}={value} (the {self.name} format takes: "
            + ", ".join(o.name for o in self.options)
            + ")"
        )

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Every declared option's value: those in ``options`` checked, the rest their defaults.

        Raises:
            ParameterError: an option this format does not declare (the
                message names the ones it does, and which registered formats
                take that option), or a value of the wrong type.
        """
        for key, value in options.items():
            if self.option(key) is None:
                takes = ", ".join(o.name for o in self.options)
                allowed = (
                    f"the {self.name} format takes: {takes}" if takes else f"the {self.name} format takes no options"
                )
                others = sorted(n for n, f in FORMATS.registered().items() if f.option(key) is not None)
                if others:
                    allowed += f" ({key} is an option of: {', '.join(others)})"
                raise ParameterError(key, value, f"is not an option of the {self.name} format", allowed)
        return {o.name: o.check(options[o.name]) if o.name in options else o.default for o in self.options}


def _one_line(field: str, value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        raise ParameterError(field, value, "is not one line of text", f"give {what} as a non-empty one-line string")
    return value


def _checked_option(option: object, format_name: str) -> FormatOption:
    if isinstance(option, tuple) and not isinstance(option, FormatOption) and len(option) == 4:
        option = FormatOption(*option)
    if not isinstance(option, FormatOption):
        raise ParameterError(
            f"format {quote(format_name)} option",
            option,
            "is not a FormatOption",
            "declare each option as FormatOption(name, type, default, help)",
        )
    where = f"format {quote(format_name)} option"
    if not isinstance(option.name, str) or not option.name.isidentifier() or option.name in _RESERVED_OPTIONS:
        raise ParameterError(
            f"{where} name",
            option.name,
            "is not a usable keyword",
            "use a Python identifier other than " + ", ".join(sorted(_RESERVED_OPTIONS)),
        )
    if option.type not in OPTION_TYPES:
        raise ParameterError(
            f"{where} {option.name} type",
            option.type,
            "is not a supported option type",
            "declare one of: " + ", ".join(t.__name__ for t in OPTION_TYPES),
        )
    try:
        option.check(option.default)
    except ParameterError:
        raise ParameterError(
            f"{where} {option.name} default",
            option.default,
            f"is not {_WHAT[option.type]}",
            f"declare a default of the option's type, {option.type.__name__}",
        ) from None
    _one_line(f"{where} {option.name} help", option.help, "the help")
    return option


def _check_format(name: str, obj: object) -> Format:
    """The registry's check: ``obj`` must be a complete :class:`Format` named ``name``."""
    if not isinstance(obj, Format):
        raise ParameterError(
            f"format {quote(name)}",
            obj,
            "is not a Format record",
            "register a agentmemory.datasets.Format, or call register_format(name, recognise, read, options, ...)",
        )
    if name == "auto":
        raise ParameterError("format name", name, "is reserved", "'auto' asks for detection; choose another name")
    if obj.name != name:
        raise ParameterError(
            f"format {quote(name)} name",
            obj.name,
            "differs from the name it is registered under",
            f"name it {quote(name)}",
        )
    if obj.recognise is not None and not callable(obj.recognise):
        raise ParameterError(
            f"format {quote(name)} recognise", obj.recognise, "is not callable", "pass a function path -> bool, or None"
        )
    if not callable(obj.read):
        raise ParameterError(
            f"format {quote(name)} read", obj.read, "is not callable", "pass a function path -> Collection"
        )
    if not isinstance(obj.options, Iterable) or isinstance(obj.options, (str, bytes, Mapping)):
        raise ParameterError(
            f"format {quote(name)} options", obj.options, "is not a sequence", "pass a tuple of FormatOption records"
        )
    options = tuple(_checked_option(o, name) for o in obj.options)
    names = [o.name for o in options]
    repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if repeated is not None:
        raise ParameterError(f"format {quote(name)} options", repeated, "is declared twice", "declare each option once")
    _one_line(f"format {quote(name)} description", obj.description, "the description")
    rule = obj.rule
    if obj.recognise is not None:
        _one_line(
            f"format {quote(name)} rule", rule, "the rule recognise applies (e.g. 'a folder holding corpus.jsonl')"
        )
    return obj._replace(options=options)


FORMATS: Registry[Format] = Registry("format", "agentmemory.formats", _check_format)
"""Every collection format by name: the built-ins, run-time registrations and installed entry points."""


def register_format(
    name: str,
    recognise: Callable[[Path], bool] | None,
    read: Callable[..., Collection],
    options: Iterable[FormatOption] = (),
    *,
    description: str,
    rule: str | None = None,
    replace: bool = False,
) -> Format:
    """Register a collection format under ``name``; return its :class:`Format` record.

    Args:
        name: the registry name (letters, digits, ``_ . + -``).
        recognise: ``recognise(path) -> bool`` for ``format="auto"``, or
            ``None`` if the format is only chosen by name.
        read: ``read(path, **options) -> Collection`` (``progress`` too if it
            has a parameter of that name).
        options: the options ``read`` takes, as :class:`FormatOption` records
            (or ``(name, type, default, help)`` tuples).
        description: what the format is, one line.
        rule: what ``recognise`` looks for, one line; required with a recogniser.
        replace: replace a format already registered under ``name``.

    Raises:
        ParameterError: ``name`` is taken (without ``replace=True``) or not a
            valid name, or a field of the declaration is not usable.
    """
    record = Format(name, recognise, read, tuple(options), description, rule)
    return FORMATS.register(name, record, replace=replace)


def _unknown_format(value: object) -> UnknownNameError:
    return UnknownNameError("format", value, [*FORMATS.names(), "auto"])


def detect_format(path: str | PathLike[str], *, names: Mapping[str, str] | None = None) -> str:
    """The name of the first format whose ``recognise`` accepts ``path`` (order in the module docstring).

    ``names`` says how messages name the two parameters, ``{"path": ..., "format": ...}``
    (default ``path=`` and ``format=``; the command line passes ``--collection`` and ``--format``, a
    notebook ``collection =`` and ``format =``): a name ending in ``=`` is followed by a quoted value.

    Raises:
        MissingFileError: ``path`` does not exist.
        InputError: ``path`` is neither a file nor a folder (a FIFO, a
            symbolic link loop, ...: said which).
        ParameterError: no format recognises it; the one-line message lists
            every format's rule and every name ``format=`` accepts; when
            ``path`` is a folder holding exactly one ``.json`` file that a
            format recognises, it names that file to pass instead.
    """
    named = {"path": "path=", "format": "format=", **(names or {})}
    target = Path(path)
    try:
        kind = path_kind(target)
    except MissingFileError:
        raise MissingFileError(target, "collection file or folder") from None
    if kind is not None:
        raise InputError(target, None, f"is {kind}; expected a collection file or folder")
    for name, fmt in FORMATS.registered().items():
        if fmt.recognise is not None and fmt.recognise(target):
            return name
    for name in FORMATS.names():
        if name in FORMATS.registered():
            continue
        fmt = FORMATS.get(name)  # an installed entry point, loaded now
        if fmt.recognise is not None and fmt.recognise(target):
            return name
    inside = _one_json_inside(target)
    if inside is not None:
        file, name = inside
        option = named["path"]
        quoted = option.endswith("=") or option.endswith("= ")
        given = f"{option}{quote(file.as_posix())}" if quoted else f"{option} {file.as_posix()}"
        raise ParameterError(
            option.rstrip("= "),
            str(target),
            f"is a folder holding one .json file, {quote(file.name)}, which is a {name} collection",
            f"pass the file: {given}",
        )
    rules = "; ".join(
        f"{name}: {fmt.rule if fmt.recognise is not None else 'never detected, choose it by name'}"
        for name, fmt in FORMATS.registered().items()
    )
    raise ParameterError(
        named["format"].rstrip("= "),
        "auto",
        f"cannot tell the format of {quote(str(target))}",
        f"{rules}; pass {named['format']} one of: {', '.join(FORMATS.names())}",
    )


def _one_json_inside(folder: Path) -> tuple[Path, str] | None:
    """``(file, format)`` when ``folder`` holds exactly one ``.json`` file and a registered format recognises it."""
    if not folder.is_dir():
        return None
    try:
        found = [p for p in folder.iterdir() if p.suffix.lower() == ".json" and p.is_file()]
    except OSError:
        return None
    if len(found) != 1:
        return None
    for name, fmt in FORMATS.registered().items():
        if fmt.recognise is not None and fmt.recognise(found[0]):
            return found[0], name
    return None


def load(path: str | PathLike[str], format: str = "auto", *, progress: bool = False, **options: Any) -> Collection:
    """Load a collection in any registered format.

    Args:
        path: the folder or file to read.
        format: a name in :data:`FORMATS`, or ``"auto"`` to detect it
            (:func:`detect_format`).
        progress: show a progress bar while reading, for formats whose
            ``read`` supports one (off by default).
        **options: options of the chosen format, as it declares them
            (``FORMATS[name].options``): ``split`` for ``beir``,
            ``repair`` and ``include_captions`` for ``locomo``,
            ``granularity``, ``all_turns``, ``user_turns_only`` and
            ``repair`` for ``longmemeval``; ``updates``, ``all_turns``,
            ``user_turns_only`` and ``repair`` for ``beam``.

    The collection records the format's name and every option it was read
    with, defaults included (``Collection.format``, ``Collection.format_options``).

    Raises:
        UnknownNameError: ``format`` is not registered (nor ``"auto"``).
        ParameterError: ``path`` is recognised by no format; an option the
            format does not declare; a value of the wrong type; ``progress``
            not a bool; ``read`` returned something other than a Collection,
            or one :meth:`Collection.check` refuses (two entries or queries
            with one id, a query in a scope no entry has, a judgment naming
            no entry or no query), named in one line with the format.
        MissingFileError, InputError: from the format's reader.
    """
    if not isinstance(format, str) or (format != "auto" and format not in FORMATS):
        raise _unknown_format(format)
    if not isinstance(progress, bool):
        raise ParameterError("progress", progress, "is not a bool", "pass progress=True or progress=False")
    name = detect_format(path) if format == "auto" else format
    fmt = FORMATS.get(name)
    values = fmt.check_options(options)
    if fmt.takes_progress:
        values["progress"] = progress
    collection = fmt.read(Path(path), **values)
    if not isinstance(collection, Collection):
        raise ParameterError(
            "format",
            name,
            f"has a read function that returned {type(collection).__name__}, not a Collection",
            "a format's read must return an agentmemory.Collection",
        )
    if collection.format is None:  # the built-in readers record their own (so does any path to them)
        declared = {o.name: values[o.name] for o in fmt.options}  # what the card states: every option, defaults too
        collection = dataclasses.replace(collection, format=name, format_options=MappingProxyType(declared))
    return collection.check()  # every format's result, a plugin's included


def option_flags(format_names: Iterable[str]) -> dict[str, list[tuple[str, FormatOption]]]:
    """Each option name the formats ``format_names`` declare -> the ``(format, declaration)`` pairs declaring it.

    The command line gives each of these options its own flag
    (:attr:`FormatOption.flag`) for the built-in formats.
    """
    flags: dict[str, list[tuple[str, FormatOption]]] = {}
    for name in format_names:
        for option in FORMATS[name].options:
            flags.setdefault(option.name, []).append((name, option))
    return flags


def option_flag_arguments(options: Mapping[str, object], format_names: Iterable[str]) -> list[str]:
    """The command-line arguments that set the format ``options`` (name -> value given).

    An option of the formats ``format_names`` (those with their own flags:
    ``agentmemory.datasets.BUILTIN_FORMATS``) uses its flag (``--repair``,
    ``--no-x``, ``--split dev``); any other option, or a bool flag set to
    ``False`` that has no ``--no-`` form (its default is ``False``),
    ``--format-option NAME=VALUE``.
    """
    flags = option_flags(format_names)
    out: list[str] = []
    for name, value in options.items():
        no_negative = value is False and name in flags and flags[name][0][1].default is False
        if name not in flags or no_negative:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            out += ["--format-option", f"{name}={text}"]
        elif isinstance(value, bool):
            flag = flags[name][0][1].flag
            out.append(flag if value else "--no-" + flag[2:])
        else:
            out += [flags[name][0][1].flag, str(value)]
    return out
