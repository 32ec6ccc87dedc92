"""One entry point for every input format: :func:`load` and the :data:`FORMATS` registry.

* ``beir``: a BEIR-style folder (corpus.jsonl, queries.jsonl,
  qrels/<split>.tsv), read by :func:`~agentmemory.collection.load_collection`;
  option ``split``.
* ``locomo``: a LoCoMo JSON file (``locomo10.json`` or one conversation),
  read by :func:`~agentmemory.locomo.load_locomo`; options ``repair`` and
  ``include_captions``.

``format="auto"`` asks each registered format, in registry order, whether
it recognises the path: a folder is ``beir``, a file ending in ``.json``
(any case) is ``locomo``.  An option that does not apply to the chosen
format must stay at its default; anything else is an error rather than
silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from .collection import Collection, load_collection
from .errors import MissingFileError, ParameterError, UnknownNameError
from .locomo import load_locomo

__all__ = ["FORMATS", "Format", "detect_format", "load"]


class Format(NamedTuple):
    """A registered input format.

    ``options`` names the keyword arguments of :func:`load` that ``read``
    takes; ``recognises`` tells ``format="auto"`` whether a path looks like
    this format.
    """

    name: str
    description: str
    options: tuple[str, ...]
    recognises: Callable[[Path], bool]
    read: Callable[..., Collection]


def _read_beir(path: str | PathLike[str], *, split: str, progress: bool) -> Collection:
    return load_collection(path, split=split, progress=progress)


def _read_locomo(path: str | PathLike[str], *, repair: bool, include_captions: bool, progress: bool) -> Collection:
    return load_locomo(path, repair=repair, include_captions=include_captions)  # one JSON document: no bar


#: Every input format :func:`load` reads, by name.
FORMATS: Mapping[str, Format] = MappingProxyType(
    {
        "beir": Format("beir", "a folder is read as beir", ("split",), lambda p: p.is_dir(), _read_beir),
        "locomo": Format(
            "locomo",
            "a .json file as locomo",
            ("repair", "include_captions"),
            lambda p: p.is_file() and p.suffix.lower() == ".json",
            _read_locomo,
        ),
    }
)

_DEFAULTS: Mapping[str, Any] = MappingProxyType({"split": "test", "repair": False, "include_captions": False})


def detect_format(path: str | PathLike[str]) -> str:
    """The name of the first format in :data:`FORMATS` that recognises ``path``.

    Raises:
        MissingFileError: ``path`` does not exist.
        ParameterError: no format recognises it.
    """
    target = Path(path)
    if not target.exists():
        raise MissingFileError(target, "collection file or folder")
    for name, fmt in FORMATS.items():
        if fmt.recognises(target):
            return name
    rules = ", ".join(fmt.description for fmt in FORMATS.values())
    raise ParameterError(
        "format",
        "auto",
        f"cannot tell the format of {str(target)!r}",
        f"{rules}; pass format= one of: {', '.join(sorted(FORMATS))}",
    )


def load(
    path: str | PathLike[str],
    *,
    format: str = "auto",
    split: str = "test",
    repair: bool = False,
    include_captions: bool = False,
    progress: bool = False,
) -> Collection:
    """Load a collection in any registered format (see the module docstring).

    Args:
        path: the folder or file to read.
        format: a name in :data:`FORMATS`, or ``"auto"`` to detect it.
        split: beir only: which ``qrels/<split>.tsv`` to read.
        repair: locomo only: repair malformed evidence (see :mod:`agentmemory.locomo`).
        include_captions: locomo only: append image captions to turn texts.
        progress: show a tqdm bar while reading a large corpus (off by default).

    Raises:
        UnknownNameError: ``format`` is not registered (nor ``"auto"``).
        ParameterError: a bad option value, or an option that does not apply
            to the format set away from its default.
        MissingFileError, InputError: from the format's reader.
    """
    if not isinstance(format, str) or (format != "auto" and format not in FORMATS):
        raise UnknownNameError("format", format, [*FORMATS, "auto"])
    if not isinstance(split, str) or not split or any(c in split for c in "/\\") or split.startswith("."):
        raise ParameterError(
            "split", split, "is not a split name", "a split names a file qrels/<split>.tsv, e.g. 'test' or 'dev'"
        )
    for option, value in (("repair", repair), ("include_captions", include_captions)):
        if not isinstance(value, bool):
            raise ParameterError(option, value, "is not a bool", f"pass {option}=True or {option}=False")
    name = detect_format(path) if format == "auto" else format
    fmt = FORMATS[name]
    given = {"split": split, "repair": repair, "include_captions": include_captions}
    for option, value in given.items():
        if option not in fmt.options and value != _DEFAULTS[option]:
            users = sorted(n for n, f in FORMATS.items() if option in f.options)
            raise ParameterError(
                option,
                value,
                f"does not apply to the {name} format",
                f"{option} applies to: {', '.join(users)}; leave it at {_DEFAULTS[option]!r} for {name}",
            )
    return fmt.read(path, progress=progress, **{option: given[option] for option in fmt.options})
