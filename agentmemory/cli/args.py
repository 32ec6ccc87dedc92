"""What every command of the command line shares: the parser class, the one usage error, integers, flags.

Integers on the command line are read by
:func:`agentmemory.files.numbers.parse_integer` (``1_0``, ``" 5"`` and
``"１"`` are not integers).  ``--format`` always names a collection format;
a command that prints in several forms takes ``--output-format``
(:data:`OUTPUT_FORMATS`), and refuses the old spelling ``--format`` there
with one line naming the new one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from agentmemory.errors import NumberTextError, ParameterError, UnknownNameError
from agentmemory.files.numbers import INTEGER_FORM, parse_integer

__all__ = [
    "OUTPUT_FORMATS",
    "PROG",
    "LazyHelp",
    "Parser",
    "UsageError",
    "add_output_format",
    "output_format",
    "parse_int",
    "progress",
]

PROG = "agentmemory"

OUTPUT_FORMATS = ("json", "table")
"""What ``--output-format`` takes (``score``, ``store stats``): a text table (the default) or JSON."""


class UsageError(Exception):
    """A command line argparse refuses (an unknown option, a missing argument): one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), raised instead of exiting.

    ``renamed`` maps an option this command no longer takes to the one that
    replaced it; giving the old one is refused before anything else is read.
    """

    renamed: dict[str, str]

    def __init__(self, *args: Any, renamed: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.renamed = dict(renamed or {})

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's, except that an unknown option gets the nearest option of its command: ``did you mean``."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self._command(parsed)
            near = _nearest(extras, command)
            command.error(f"unrecognized arguments: {' '.join(extras)}{near}")
        return parsed

    def _command(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The (sub)command parser that read the arguments: the chosen subcommand's, down to the last level."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
                if isinstance(chosen, Parser):
                    return chosen._command(parsed)
        return self

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        for text in sys.argv[1:] if args is None else args:
            if text == "--":
                break
            old = text.partition("=")[0]
            if old in self.renamed:
                raise UsageError(
                    f"{self.prog} {old} is now {self.renamed[old]} ({old} names a collection format, in eval and "
                    f"retrieve); write {self.renamed[old]} {' or '.join(OUTPUT_FORMATS)}"
                )
        return super().parse_known_args(args, namespace)


def _nearest(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """``"; did you mean --run?"`` for the first unknown option close to one ``parser`` takes, else ``""``."""
    import difflib  # only for a refused option

    known = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
    for text in extras:
        name = text.partition("=")[0]
        if not name.startswith("-"):
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if close:
            return f"; did you mean {close[0]}?"
    return ""


def parse_int(name: str, text: str, allowed: str = "an integer") -> int:
    """``text`` read by :func:`agentmemory.files.numbers.parse_integer`; a ParameterError naming ``name`` otherwise."""
    try:
        return parse_integer(text)
    except NumberTextError as err:
        raise ParameterError(name, text, err.problem, f"{name} must be {allowed} ({INTEGER_FORM})") from None


def progress(args: argparse.Namespace) -> bool:
    """``--progress``/``--no-progress`` as given, else on when stderr is a terminal."""
    return sys.stderr.isatty() if args.progress is None else bool(args.progress)


def add_output_format(parser: Parser) -> None:
    """``--output-format table|json`` (``--format``, its old spelling here, is refused naming it)."""
    parser.add_argument("--output-format", default="table", metavar="FORMAT", help="table (default) or json")
    parser.renamed["--format"] = "--output-format"


def output_format(args: argparse.Namespace) -> str:
    """The ``--output-format`` given, checked against :data:`OUTPUT_FORMATS`."""
    if args.output_format not in OUTPUT_FORMATS:
        raise UnknownNameError("--output-format", args.output_format, OUTPUT_FORMATS)
    return str(args.output_format)


class LazyHelp(argparse.Action):
    """A plain ``store`` option whose help text is computed when help is shown, not when the parser is built.

    ``--format``'s help lists every registered format, plugins' included;
    finding those reads every installed package's entry points (~30 ms),
    which a command that shows no help should not pay.
    """

    def __init__(self, option_strings: list[str], dest: str, help_text: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self._help_text = help_text

    @property
    def help(self) -> str:
        return self._help_text()

    @help.setter
    def help(self, value: object) -> None:  # argparse.Action.__init__ sets it; the text comes from help_text
        pass

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
