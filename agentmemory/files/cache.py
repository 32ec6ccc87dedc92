"""The user's cache folder, and the embedding cache that lives in it.

**Where.**  ``$AGENTMEMORY_CACHE`` when set (used as given), else
``$XDG_CACHE_HOME/agentmemory``, else ``~/.cache/agentmemory``: the user's
cache, never a collection's folder or the repository.

**The embedding cache.**  :class:`~agentmemory.retrievers.dense.Dense`
embeds the entries of each ``add`` once per encoder and keeps the vectors in
``<cache>/embeddings/<encoder>-<key>.npz``, where ``key`` is the sha256 of
(this file format's version, the encoder's name, its ``params()`` (model,
versions), the sha256 of the texts).  So a second evaluation of the same
collection with the same encoder reads the vectors instead of computing them,
and any change of text, model or encoder version misses the cache.  Files are
written atomically (:func:`agentmemory.files.atomic.atomic_write_bytes`): a reader sees
a whole file or none.

A file that cannot be read, that fails its checks (its recorded key, shape,
dtype and the sha256 of its vectors), or that another version of this format
wrote, is never trusted: :func:`load_embeddings` emits one
:class:`CacheWarning` line naming it and returns ``None``, the caller
recomputes, and :func:`save_embeddings` replaces the file.  A cache folder
that cannot be written costs a warning, not the run.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentmemory.errors import CacheWarning, shorten
from agentmemory.files.atomic import atomic_write_bytes

__all__ = [
    "CACHE_ENV",
    "FORMAT_VERSION",
    "WARNING_SOURCE",
    "cache_dir",
    "embeddings_path",
    "load_embeddings",
    "save_embeddings",
    "texts_sha256",
]

CACHE_ENV = "AGENTMEMORY_CACHE"
"""The environment variable that moves the whole cache folder (tests point it at a temporary folder)."""

FORMAT_VERSION = 1
"""The version of the embedding cache file; a file of another version is recomputed (with a warning)."""


def cache_dir() -> Path:
    """The cache folder: ``$AGENTMEMORY_CACHE``, else ``$XDG_CACHE_HOME/agentmemory``, else ``~/.cache/agentmemory``.

    Empty variables count as unset; the folder is not created here.
    """
    own = os.environ.get(CACHE_ENV, "").strip()
    if own:
        return Path(own).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "agentmemory"


def texts_sha256(texts: Sequence[str]) -> str:
    """Hex sha256 of ``texts`` in order, each as its UTF-8 length (8 bytes, little-endian) then its UTF-8 bytes.

    The length prefix makes the digest unambiguous (``["ab", "c"]`` differs from ``["a", "bc"]``).
    """
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def _key(fields: Mapping[str, Any]) -> str:
    text = json.dumps({"format": FORMAT_VERSION, **fields}, sort_keys=True, ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def embeddings_path(encoder: str, fields: Mapping[str, Any]) -> Path:
    """The cache file of the vectors described by ``fields`` (JSON-ready) for ``encoder``."""
    slug = re.sub(r"[^A-Za-z0-9_.+-]+", "-", encoder).strip("-.") or "encoder"
    return cache_dir() / "embeddings" / f"{slug}-{_key({'encoder': encoder, **fields})[:40]}.npz"


WARNING_SOURCE = "agentmemory"
"""Where a :class:`CacheWarning` says it comes from: a name with no source file, so the warnings module
prints one line, ``agentmemory:0: CacheWarning: agentmemory: embedding cache file ...``, and not the
line of our code that warned beneath it (Python 3.11 has no ``skip_file_prefixes``)."""


def _warn(message: str) -> None:
    """Emit ``message`` as one :class:`CacheWarning` line (``warnings`` filters on the category and on
    the module ``agentmemory.files.cache`` apply as usual)."""
    warnings.warn_explicit(message, CacheWarning, WARNING_SOURCE, 0, module=__name__)


def _vectors_sha256(vectors: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(vectors).tobytes()).hexdigest()


def load_embeddings(encoder: str, fields: Mapping[str, Any], n: int, dim: int) -> np.ndarray | None:
    """The cached float32 ``(n, dim)`` vectors for ``fields``, or ``None`` (absent, or untrustworthy: warned).

    A file is used only when it parses, was written by this format version,
    records exactly ``encoder`` and ``fields``, holds a C-contiguous float32
    array of shape ``(n, dim)`` of finite numbers, and that array's sha256 is
    the one recorded beside it.
    """
    path = embeddings_path(encoder, fields)
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as data:  # our handle: always closed
            meta = json.loads(bytes(data["meta"]).decode("utf-8"))
            vectors = np.ascontiguousarray(data["vectors"])
    except Exception as err:  # any unreadable file is recomputed, never trusted
        reason = shorten(" ".join(str(err).split()), 100)
        _warn(
            f"agentmemory: embedding cache file {path} is unreadable ({type(err).__name__}: {reason}); recomputing it"
        )
        return None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
        found = meta.get("format") if isinstance(meta, dict) else None
        _warn(
            f"agentmemory: embedding cache file {path} was written by another version (format {found!r}, "
            f"this version reads {FORMAT_VERSION}); recomputing it"
        )
        return None
    problem = None
    if meta.get("encoder") != encoder or meta.get("fields") != json.loads(json.dumps(dict(fields))):
        problem = "its recorded encoder or key does not match its name"
    elif vectors.dtype != np.float32 or vectors.shape != (n, dim):
        problem = f"it holds {vectors.dtype} {vectors.shape}, expected float32 {(n, dim)}"
    elif meta.get("vectors_sha256") != _vectors_sha256(vectors):
        problem = "its vectors do not match their recorded sha256"
    elif not np.isfinite(vectors).all():
        problem = "it holds non-finite numbers"
    if problem is not None:
        _warn(f"agentmemory: embedding cache file {path} is corrupt ({problem}); recomputing it")
        return None
    return vectors


def save_embeddings(encoder: str, fields: Mapping[str, Any], vectors: np.ndarray) -> None:
    """Write ``vectors`` (float32, 2-D) as the cache file of ``fields``, atomically; a write error is a warning."""
    path = embeddings_path(encoder, fields)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    meta = {
        "format": FORMAT_VERSION,
        "encoder": encoder,
        "fields": dict(fields),
        "vectors_sha256": _vectors_sha256(vectors),
    }
    buffer = io.BytesIO()
    np.savez(buffer, vectors=vectors, meta=np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8))
    try:
        atomic_write_bytes(path, buffer.getvalue())
    except OSError as err:
        _warn(f"agentmemory: cannot write the embedding cache file {path} ({err}); continuing without caching it")
