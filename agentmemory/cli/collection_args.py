"""The collection options of ``eval`` and ``retrieve``: ``--collection``, ``--format`` and the format options.

The options come from the format declarations
(:data:`agentmemory.datasets.FORMATS`): every option of a built-in format
gets its own flag (:func:`agentmemory.datasets.base.option_flags`), and
``--format-option KEY=VALUE`` (repeatable) passes an option of any format,
a plugin's included, read with the type the format declares.
"""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

from agentmemory.cli.args import LazyHelp
from agentmemory.collection import Collection, default_collection_path
from agentmemory.datasets import BUILTIN_FORMATS, FORMATS, detect_format, load
from agentmemory.datasets.base import FormatOption, option_flags
from agentmemory.errors import ParameterError, UnknownNameError

__all__ = ["add_collection_arguments", "collection_path", "load_collection"]


def _format_help() -> str:
    """``--format``'s help: plugins' names come from entry points, read only when help is shown."""
    rules = "; ".join(f"{n}: {f.rule}" for n, f in FORMATS.registered().items() if f.recognise is not None)
    return (
        f"collection format: auto (default) or one of {', '.join(FORMATS.names())}; "
        f"auto takes the first that recognises the path ({rules})"
    )


def _add_option_flag(parser: argparse.ArgumentParser, name: str, users: list[tuple[str, FormatOption]]) -> None:
    """The flag of one built-in format option, its help naming every format that declares it."""
    option = users[0][1]
    if len({o.help for _, o in users}) == 1:
        said = f"{' and '.join(f for f, _ in users)} format: {option.help}"
    else:  # each format says what the option does to it
        said = "; ".join(f"{f} format: {o.help}" for f, o in users)
    dest = f"format_option_{name}"
    if option.type is bool and option.default is False:
        parser.add_argument(option.flag, dest=dest, action="store_true", default=None, help=said)
    elif option.type is bool:
        parser.add_argument(
            option.flag,
            dest=dest,
            action=argparse.BooleanOptionalAction,
            default=None,
            help=f"{said} (default {option.default})",
        )
    else:
        same = len({repr(o.default) for _, o in users}) == 1  # else each format's help states its own default
        default = f" (default {option.default})" if same else ""
        parser.add_argument(option.flag, dest=dest, metavar=name.upper(), help=f"{said}{default}")


def add_collection_arguments(parser: argparse.ArgumentParser, *, collection_flag: bool = True) -> None:
    """--collection, --format, one flag per built-in format option (from its declaration) and --format-option.

    ``collection_flag=False`` leaves ``--collection`` out, for a command that takes the collection as a
    positional argument of its own (``store import STORE COLLECTION``, the same ``collection`` destination).
    """
    if collection_flag:
        parser.add_argument(
            "--collection",
            metavar="PATH",
            help="collection folder or file, in any registered format (default: the shipped fixture)",
        )
    parser.add_argument("--format", default="auto", metavar="NAME", action=LazyHelp, help_text=_format_help)
    for name, users in option_flags(BUILTIN_FORMATS).items():
        _add_option_flag(parser, name, users)
    parser.add_argument(
        "--format-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the chosen format (any format, a plugin's too), read with the type "
        "the format declares; repeat for several",
    )


_FLAGS = {"path": "--collection", "format": "--format"}
"""How messages about the collection name its options here: by their flags."""


def collection_path(args: argparse.Namespace) -> str | Path:
    """The path ``--collection`` names (default: the shipped fixture)."""
    return args.collection if args.collection else default_collection_path()


def load_collection(args: argparse.Namespace, progress: bool) -> Collection:
    """The collection named by --collection, --format and the format options (default: the shipped fixture).

    ``auto`` is resolved first so that option values can be read with the
    chosen format's declared types; :func:`agentmemory.datasets.load` then
    checks every option against that declaration.
    """
    path = collection_path(args)
    if args.format != "auto" and args.format not in FORMATS:
        raise UnknownNameError("--format", args.format, [*FORMATS.names(), "auto"])
    name = detect_format(path, names=_FLAGS) if args.format == "auto" else args.format
    fmt = FORMATS[name]
    options: dict[str, object] = {}
    for option_name, users in option_flags(BUILTIN_FORMATS).items():
        value = getattr(args, f"format_option_{option_name}")
        if value is None:  # not given: the format's declared default applies
            continue
        declared = fmt.option(option_name)
        if isinstance(value, str) and declared is not None:
            value = declared.parse(value, users[0][1].flag)
        options[option_name] = value  # an option the format does not take is refused by load, naming those it does
    for text in args.format_option:  # an option set by its own flag too: the text as given, named
        key = text.partition("=")[0].strip()
        if key in options:
            raise ParameterError(
                "--format-option", text, f"sets {key} a second time", f"give each option of the {name} format once"
            )
    options.update(fmt.parse_options(args.format_option))
    gc.disable()
    try:
        return load(path, format=name, progress=progress, **options)
    finally:
        # The collection lives as long as the command: its objects go to the collector's permanent generation
        # instead of being walked by its collections again and again (0.2 s of a 100k-entry retrieve).
        gc.freeze()
        gc.enable()
