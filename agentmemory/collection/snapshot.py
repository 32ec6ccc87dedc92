"""A loaded collection written once to a file that other processes of the machine map instead of reading it again.

:func:`write_snapshot` writes a :class:`~agentmemory.collection.Collection`
as a pickle (protocol 5) whose large arrays lie beside it, out of band:
the entries' ids (as :class:`~agentmemory.collection.columns.PackedIds`,
one UTF-8 buffer and offsets, not a string each), their texts' spans or
buffer, the scope codes.  :func:`read_snapshot` maps the file read-only and
rebuilds the collection over the mapping, so those arrays are the page
cache's, one copy for every process that maps the file; only what a
process then takes from them (a part's ids, say) becomes its own.  What
an experiment's workers use to share a collection that one of them read
(:mod:`agentmemory.experiment.task`); not an archive format (a snapshot
is read by the agentmemory that wrote it, and names the collection's
digest and the key it was written under, which a reader checks).

Layout: ``AMSNAP1\\n``; the pickle and each buffer, each starting at a
multiple of 64 bytes; the header (JSON: ``version``, ``digest``, ``key``,
``pickle`` and ``buffers`` as ``[offset, length]``); last, the header's
offset and length (8 bytes each, little-endian).  A pickle runs code when
read: a snapshot is only read from a folder its run made for itself
(``tempfile.mkdtemp``: the user's alone).
"""

from __future__ import annotations

import copyreg
import io
import json
import mmap
import os
import pickle
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentmemory._version import __version__
from agentmemory.collection.columns import BufferTexts, Entries, PackedIds
from agentmemory.collection.record import Collection

__all__ = ["read_snapshot", "write_snapshot"]

MAGIC = b"AMSNAP1\n"
_ALIGN = 64


def _proxy(mapping: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(mapping)


def _reduce_proxy(proxy: MappingProxyType[str, Any]) -> tuple[Any, tuple[dict[str, Any]]]:
    return _proxy, (dict(proxy),)


class _Pickler(pickle.Pickler):
    """Protocol 5, read-only mappings (``MappingProxyType``) as what they wrap."""

    dispatch_table = copyreg.dispatch_table.copy()
    dispatch_table[MappingProxyType] = _reduce_proxy


def _packed(collection: Collection) -> Collection:
    """``collection`` with its entries' ids packed and a text buffer as an array (both then go out of band)."""
    import dataclasses

    import numpy as np

    entries = collection.entries
    if not isinstance(entries, Entries):
        return collection
    texts = entries.texts
    if isinstance(texts, BufferTexts) and isinstance(texts._buf, (bytes, bytearray)):
        texts = BufferTexts(np.frombuffer(texts._buf, dtype=np.uint8), texts._starts, texts._ends, texts._ascii)
    ids = entries.ids if isinstance(entries.ids, PackedIds) else PackedIds.of(entries.ids)
    return dataclasses.replace(collection, entries=Entries(ids, texts, **entries.columns))


def write_snapshot(collection: Collection, path: str | os.PathLike[str], key: str) -> None:
    """Write ``collection`` to ``path`` (atomically: a temporary file in the same folder, then renamed) under
    ``key`` (what :func:`read_snapshot` must be given to accept it: the source it was read from, say)."""
    buffers: list[pickle.PickleBuffer] = []
    data = io.BytesIO()
    _Pickler(data, protocol=5, buffer_callback=buffers.append).dump(_packed(collection))
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as file:
            file.write(MAGIC)
            spans = []
            for part in (data.getbuffer(), *(b.raw() for b in buffers)):
                at = -(-file.tell() // _ALIGN) * _ALIGN
                file.seek(at)
                file.write(part)
                spans.append([at, memoryview(part).nbytes])
            header = {"version": __version__, "digest": collection.digest, "key": key}
            text = json.dumps({**header, "pickle": spans[0], "buffers": spans[1:]}).encode()
            where = file.tell()
            file.write(text + where.to_bytes(8, "little") + len(text).to_bytes(8, "little"))
        os.replace(temporary, target)
    finally:
        if temporary.exists():
            temporary.unlink()


def read_snapshot(path: str | os.PathLike[str], digest: str, key: str) -> Collection | None:
    """The collection :func:`write_snapshot` wrote at ``path``, over a read-only mapping of the file; ``None``
    when there is no such file, or it is not a snapshot of this agentmemory with this ``digest`` and ``key``
    (the caller then reads the collection from its files)."""
    try:
        with open(path, "rb") as file:
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    view = memoryview(mapped)
    try:
        if len(view) < len(MAGIC) + 16 or bytes(view[: len(MAGIC)]) != MAGIC:
            return None
        where = int.from_bytes(view[-16:-8], "little")
        length = int.from_bytes(view[-8:], "little")
        header = json.loads(bytes(view[where : where + length]))
        if (header.get("version"), header.get("digest"), header.get("key")) != (__version__, digest, key):
            return None
        offset, size = header["pickle"]
        buffers = [view[o : o + n] for o, n in header["buffers"]]
        collection = pickle.loads(view[offset : offset + size], buffers=buffers)
    except (ValueError, KeyError, TypeError, AttributeError, ImportError, pickle.UnpicklingError, EOFError):
        # a damaged file, or a collection whose classes this process cannot import (another plugin set)
        return None
    return collection if isinstance(collection, Collection) and collection.digest == digest else None
