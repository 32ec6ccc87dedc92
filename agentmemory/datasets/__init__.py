"""Collection formats: an open registry of readers, and :func:`load` for all of them.

* :mod:`~agentmemory.datasets.beir`: a BEIR-style folder (format ``beir``,
  option ``split``), its reader and its writer.
* :mod:`~agentmemory.datasets.locomo`: the LoCoMo benchmark's JSON file
  (format ``locomo``, options ``repair`` and ``include_captions``).
* :mod:`~agentmemory.datasets.longmemeval`: a LongMemEval JSON file (format
  ``longmemeval``, options ``granularity``, ``all_turns``,
  ``user_turns_only`` and ``repair``).
* :mod:`~agentmemory.datasets.beam`: a BEAM chat folder or a folder of them
  (format ``beam``, options ``updates``, ``all_turns``, ``user_turns_only``
  and ``repair``).
* :mod:`~agentmemory.datasets.synthetic`: seeded synthetic collections (a
  generator, not a format: it reads no file).
* :mod:`~agentmemory.datasets.base`: the registry :data:`FORMATS`,
  :func:`register_format`, :func:`detect_format` and :func:`load`.
* :mod:`~agentmemory.datasets.sniff`: cheap looks inside JSON files for recognisers.

Add a format at run time::

    from agentmemory.datasets import FormatOption, register_format

    register_format(
        "mine", recognise, read, [FormatOption("variant", str, "full", "which variant to read")],
        description="my benchmark's JSON file", rule="a .json file whose first record has 'haystack'",
    )

or from an installed package, with an entry point in the group
``agentmemory.formats`` whose object is a :class:`Format`.
"""

from __future__ import annotations

from agentmemory.datasets.base import FORMATS, OPTION_TYPES, Format, FormatOption, detect_format, load, register_format

__all__ = [
    "BUILTIN_FORMATS",
    "FORMATS",
    "OPTION_TYPES",
    "Format",
    "FormatOption",
    "detect_format",
    "load",
    "register_format",
]

BUILTIN_FORMATS: tuple[str, ...] = FORMATS.builtin_names
"""The formats this package registers itself, in detection order (the command line makes flags of their options)."""
