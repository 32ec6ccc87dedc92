"""Text encoders for the ``dense`` retriever: a small protocol and an open registry.

An encoder turns texts into vectors::

    encoder.name            # registry name, e.g. "wordllama"
    encoder.dim             # vector length
    encoder.encode(texts)   # float32 array of shape (len(texts), dim), one row per text, in order
    encoder.params()        # JSON-ready: model, versions; part of the embedding cache key

:data:`ENCODERS` maps names to factories ``factory(model=...)`` (``model``
omitted for the encoder's default); :func:`register_encoder` adds one at run
time, and installed packages add theirs through the entry-point group
``agentmemory.encoders``.  Built in:

* ``wordllama`` (the default; a core dependency): WordLlama's
  ``l2_supercat`` 256-dimension token embeddings, shipped inside the
  ``wordllama`` wheel, so it works offline on a fresh machine.  A text's
  vector is the mean of its tokens' vectors (WordLlama's average pooling;
  tokens from the shipped Llama-2 tokenizer without special tokens); a text
  with no token (the empty text) gets the zero vector.
* ``model2vec`` (extra ``model2vec``): a static model2vec model, by hub
  name (default ``minishlab/potion-base-8M``, downloaded by model2vec on first
  use) or local folder (written by ``StaticModel.save_pretrained``).  The
  vector is model2vec's: the mean of the (weighted) token vectors after
  model2vec's truncation to ``max_length`` tokens; unknown tokens dropped.
* ``sentence-transformers`` (extra ``sentence-transformers``): any
  SentenceTransformer by hub name (default
  ``sentence-transformers/all-MiniLM-L6-v2``) or local folder.
* ``fastembed`` (extra ``fastembed``): a model fastembed supports, by name
  (default ``BAAI/bge-small-en-v1.5``); fastembed keeps its files in its
  own cache folder (``FASTEMBED_CACHE_PATH``), which is how it runs offline.

**Bit-for-bit vectors.**  ``wordllama`` and ``model2vec`` pool each text on
its own (token vectors summed in float64, in token order, divided by the
token count, rounded to float32), so a text's vector never depends on the
other texts of its batch: incremental adds give the very vectors one add
gives.  sentence-transformers and fastembed run padded batches; their
vectors can differ in the last float32 bits with the batch.

Not registered (it needs your data, so it is passed as an object:
``Dense(encoder=PrecomputedEncoder(texts, vectors))``):

* :class:`PrecomputedEncoder`: vectors computed elsewhere, looked up by
  text.

An encoder may set ``cacheable = False`` (``PrecomputedEncoder`` does): the
``dense`` retriever then never reads or writes the on-disk embedding cache
for it.

Libraries are imported when an encoder is made, never at ``import
agentmemory``; a loaded model is kept for the process (:func:`load_encoder`),
so a retriever per scope does not load it again.  A missing extra or a
model that does not exist or does not load is a one-line
:class:`~agentmemory.errors.ParameterError`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agentmemory.errors import ParameterError, shorten
from agentmemory.registry import Registry

__all__ = [
    "ENCODERS",
    "Encoder",
    "FastEmbedEncoder",
    "Model2VecEncoder",
    "PrecomputedEncoder",
    "SentenceTransformerEncoder",
    "WordLlamaEncoder",
    "check_encoder",
    "load_encoder",
    "mean_pool",
    "register_encoder",
]

DISTRIBUTION = "agentmemory-eval"
"""The name ``pip install`` knows this package by (extras are installed as ``agentmemory-eval[extra]``)."""


@runtime_checkable
class Encoder(Protocol):
    """What the ``dense`` retriever needs of an encoder."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One float32 row of length ``dim`` per text, in order."""

    def params(self) -> dict[str, Any]:
        """JSON-ready description (model, versions): shown in reports and part of the embedding cache key."""


def _check_factory(name: str, obj: Any) -> Callable[..., Any]:
    if not callable(obj) or isinstance(obj, Encoder) and not isinstance(obj, type):
        raise ParameterError(
            "encoder factory",
            obj,
            "is not an encoder factory",
            "register a class or function that takes model=... (optional) and returns an encoder",
        )
    return obj


ENCODERS: Registry[Callable[..., Any]] = Registry("encoder", "agentmemory.encoders", _check_factory)
"""Every encoder factory by name; list with ``ENCODERS.names()``."""


def register_encoder(name: str, factory: Callable[..., Any], *, replace: bool = False) -> Callable[..., Any]:
    """Register ``factory`` as encoder ``name``: ``factory()`` or ``factory(model=...)`` returns an :class:`Encoder`.

    Raises:
        ParameterError: a bad or taken name (unless ``replace``), or ``factory`` is not callable.
    """
    return ENCODERS.register(name, factory, replace=replace)


_LOADED: dict[tuple[str, str | None], Any] = {}
_LOCK = threading.Lock()


def load_encoder(name: str, model: str | None = None) -> Encoder:
    """The encoder ``name`` with ``model`` (its default when ``None``), loaded once per process and shared.

    Raises:
        UnknownNameError: ``name`` is not a registered encoder (the message lists them).
        ParameterError: the encoder's extra is not installed, the model does
            not exist or does not load, or the factory gives no encoder.
    """
    if not isinstance(name, str) or not name:
        raise ParameterError("encoder", name, "is not an encoder name", "choose from: " + ", ".join(ENCODERS.names()))
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ParameterError("model", model, "is not a model name or folder", "pass a model name or a local folder")
    key = (name, model)
    with _LOCK:
        found = _LOADED.get(key)
        if found is not None:
            return found
        factory = ENCODERS.get(name)
        try:
            encoder = factory() if model is None else factory(model=model)
        except ParameterError:
            raise
        except TypeError as err:
            raise ParameterError(
                "encoder",
                name,
                f"was refused by its factory: {shorten(str(err), 200)}",
                "check the encoder's parameters",
            ) from None
        _LOADED[key] = check_encoder(encoder, name, "gives")
        return encoder


def check_encoder(encoder: Any, name: Any, verb: str = "is") -> Encoder:
    """``encoder`` itself when it has what :class:`Encoder` needs; else a ParameterError naming ``name``.

    Raises:
        ParameterError: ``encoder`` lacks ``encode``, ``params``, a non-empty ``name`` or ``dim`` (an int >= 1).
    """
    problems = [m for m in ("encode", "params") if not callable(getattr(encoder, m, None))]
    if not isinstance(getattr(encoder, "name", None), str) or not encoder.name:
        problems.append("name")
    dim = getattr(encoder, "dim", None)
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        problems.append("dim")
    if problems:
        raise ParameterError(
            "encoder",
            name,
            f"{verb} a {type(encoder).__name__}, which is not an encoder (it lacks {', '.join(problems)})",
            "an encoder has name, dim (an int >= 1), encode(texts) and params()",
        )
    return encoder


def _forget_loaded() -> None:
    """Drop every loaded encoder (tests use it to load again, e.g. with the network disabled)."""
    with _LOCK:
        _LOADED.clear()


# -- pooling ----------------------------------------------------------------------

_BLOCK_ELEMENTS = 1 << 22  # float32 token vectors gathered at once per block (16 MB)


def mean_pool(
    lengths: np.ndarray, rows: np.ndarray, table: np.ndarray, token_weights: np.ndarray | None = None
) -> np.ndarray:
    """Mean of each text's token vectors: float32 ``(len(lengths), dim)``; a text of no token gets zeros.

    Text ``i`` owns the next ``lengths[i]`` entries of ``rows`` (row numbers
    of ``table``, the token vectors) and of ``token_weights`` (per-token
    factors, multiplied in float32 as model2vec does).  Each text's vectors
    are summed in float64 in token order, one addition per token, divided by
    its token count and rounded to float32: the result depends on the text
    alone, never on the other texts of the call (texts of one length are
    gathered together only to save Python work).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    n, dim = len(lengths), table.shape[1]
    out = np.zeros((n, dim), dtype=np.float32)
    starts = np.zeros(n, dtype=np.int64)
    if n > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    for length in np.unique(lengths[lengths > 0]).tolist():
        texts = np.flatnonzero(lengths == length)
        step = max(1, _BLOCK_ELEMENTS // (length * dim))
        for first in range(0, len(texts), step):
            chosen = texts[first : first + step]
            positions = starts[chosen][:, None] + np.arange(length)
            vectors = table[rows[positions]]  # (texts, length, dim)
            if token_weights is not None:
                vectors = vectors * token_weights[positions][:, :, None].astype(vectors.dtype)
            acc = vectors[:, 0].astype(np.float64)
            for j in range(1, length):
                acc += vectors[:, j]
            out[chosen] = acc / length
    return out


def _flatten(id_lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(ids) for ids in id_lists), dtype=np.int64, count=len(id_lists))
    flat = np.fromiter(itertools.chain.from_iterable(id_lists), dtype=np.int64, count=int(lengths.sum()))
    return lengths, flat


def _texts(texts: Sequence[str]) -> list[str]:
    out = list(texts)
    for text in out:
        if not isinstance(text, str):
            raise ParameterError("text", text, "is not a str", "encoders take texts")
    return out


def _missing_extra(encoder: str, module: str, extra: str) -> ParameterError:
    return ParameterError(
        "encoder",
        encoder,
        f"needs the {module} package, which is not installed",
        f"pip install '{DISTRIBUTION}[{extra}]'",
    )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version  # ~25 ms of imports: only when asked

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _folder_sha256(folder: Path) -> str:
    """sha256 over a model folder's files (relative path and bytes of each, sorted): the model's identity."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue  # hidden files (.cache, .gitattributes) do not change what the model computes
        digest.update(rel.encode("utf-8") + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def _local_folder(model: str) -> Path | None:
    """``model`` as an existing local path (None when it names none and reads as a hub name).

    Raises:
        ParameterError: ``model`` reads as a path (starts with ``/``, ``.``
            or ``~``, or has a backslash or two slashes) that does not exist.
    """
    path = Path(model).expanduser()
    if path.exists():
        return path.resolve()
    if model.startswith(("/", ".", "~")) or "\\" in model or model.count("/") > 1:
        raise ParameterError(
            "model", model, "is not an existing folder", "pass the folder of a saved model, or a model name"
        )
    return None


# -- precomputed vectors ----------------------------------------------------------


class PrecomputedEncoder:
    """Vectors computed elsewhere: the text ``texts[i]`` encodes to ``vectors[i]``, a lookup (no model).

    For dense retrieval over embeddings you already have (from an API, from
    another system, or random unit vectors in a benchmark): pass it as
    ``Dense(encoder=PrecomputedEncoder(texts, vectors))``.  Every text the
    retriever encodes, the entries' texts on ``add`` and the queries' texts
    on ``search``, must be one of ``texts`` (an entry's id works as its text
    when you key vectors by id).  The ``dense`` retriever normalises the
    vectors exactly as it does any encoder's, so its scores are the cosines
    of the given vectors.

    ``vectors`` is kept as given when it is already a C-contiguous float32
    array (it is not copied: do not change it while the encoder is in use),
    else converted once.  :meth:`encode` returns a read-only view of it when
    the texts are consecutive rows, in order (as when entries are added in
    the order of ``texts``), else a copy of the rows.  ``cacheable`` is
    False: a lookup costs less than the on-disk embedding cache.

    Raises:
        ParameterError: ``vectors`` is not a 2-D array of finite numbers with
            one row per text, a text is not a str, or a text repeats.
    """

    name = "precomputed"
    cacheable = False

    def __init__(self, texts: Sequence[str], vectors: Any) -> None:
        texts = _texts(texts)
        array = np.ascontiguousarray(vectors, dtype=np.float32)
        if array.ndim != 2 or len(array) != len(texts) or array.shape[1] < 1:
            raise ParameterError(
                "vectors",
                f"array of shape {array.shape}",
                f"is not one row per text ({len(texts)} texts)",
                "give a 2-D array of shape (len(texts), dim)",
            )
        if not all_finite(array):
            raise ParameterError("vectors", "array", "holds non-finite numbers", "give finite vectors")
        rows = dict(zip(texts, range(len(texts))))
        if len(rows) < len(texts):
            seen: set[str] = set()
            for text in texts:
                if text in seen:
                    raise ParameterError("texts", text, "is given twice", "give each text once (one vector per text)")
                seen.add(text)
        self._rows = rows
        self._vectors = array
        self.dim = int(array.shape[1])

    def __len__(self) -> int:
        return len(self._rows)

    def params(self) -> dict[str, Any]:
        return {"model": "precomputed", "texts": len(self._rows)}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The given vectors of ``texts`` (float32, one row per text, in order).

        Raises:
            ParameterError: a text has no vector.
        """
        texts = _texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        get = self._rows.get
        found = [get(t, -1) for t in texts]
        if -1 in found:
            missing = texts[found.index(-1)]
            raise ParameterError(
                "text", missing, "has no precomputed vector", "give PrecomputedEncoder every text it will encode"
            )
        rows = np.asarray(found, dtype=np.int64)
        first = int(rows[0])
        if int(rows[-1]) - first == len(rows) - 1 and (len(rows) == 1 or bool((np.diff(rows) == 1).all())):
            view = self._vectors[first : first + len(rows)]
            view.flags.writeable = False
            return view
        return self._vectors[rows]


def all_finite(vectors: np.ndarray, block: int = 1 << 16) -> bool:
    """True when every number of ``vectors`` is finite (checked ``block`` rows at a time, to bound the temporaries)."""
    return all(bool(np.isfinite(vectors[i : i + block]).all()) for i in range(0, len(vectors), block))


# -- wordllama ----------------------------------------------------------------------

WORDLLAMA_MODEL = "l2_supercat_256"
_WORDLLAMA_FILES = ("tokenizers/l2_supercat_tokenizer_config.json", "weights/l2_supercat_256.safetensors")


class WordLlamaEncoder:
    """WordLlama's shipped ``l2_supercat`` model (256 dimensions), read from the installed wheel: no download.

    WordLlama 0.4.0.post1's own ``WordLlama.load()`` looks for the tokenizer
    under ``wordllama/tokenizer/`` while the wheel ships it under
    ``wordllama/tokenizers/``, so it goes to the network; this encoder opens
    the shipped files directly (``tokenizers.Tokenizer.from_file``,
    ``safetensors.safe_open``), without importing ``wordllama`` itself (whose
    import configures the root logger).  Pooling: see :func:`mean_pool`
    (equal to ``WordLlamaInference.embed`` up to float32 rounding).
    """

    name = "wordllama"

    def __init__(self, model: str = WORDLLAMA_MODEL) -> None:
        if model != WORDLLAMA_MODEL:
            raise ParameterError(
                "model",
                model,
                "is not a wordllama model shipped in its wheel",
                f"use {WORDLLAMA_MODEL} (the default), or encoder=model2vec with a model name or folder",
            )
        spec = importlib.util.find_spec("wordllama") if _installed("wordllama") else None  # found, not imported
        if spec is None or not spec.submodule_search_locations:
            raise ParameterError(
                "encoder",
                "wordllama",
                "needs the wordllama package, which is not installed",
                f"it is a core dependency: pip install '{DISTRIBUTION}' (or pip install wordllama)",
            )
        root = Path(next(iter(spec.submodule_search_locations)))
        tokenizer_file, weights_file = (root / f for f in _WORDLLAMA_FILES)
        for path in (tokenizer_file, weights_file):
            if not path.is_file():
                raise ParameterError(
                    "model",
                    str(path),
                    "is missing from the installed wordllama package",
                    "reinstall wordllama (pip install --force-reinstall wordllama==0.4.0.post1)",
                )
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        with safe_open(str(weights_file), framework="np") as handle:
            self._table = np.ascontiguousarray(handle.get_tensor("embedding.weight"), dtype=np.float32)
        self.dim = int(self._table.shape[1])
        self.model = model

    def params(self) -> dict[str, Any]:
        return {"model": self.model, "wordllama": _version("wordllama"), "pooling": "mean"}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Mean of the token vectors of each text (tokens without special tokens; ids clipped to the vocabulary)."""
        texts = _texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batch = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        lengths, ids = _flatten([e.ids for e in batch(texts, add_special_tokens=False)])
        np.clip(ids, 0, len(self._table) - 1, out=ids)  # as WordLlamaInference does
        return mean_pool(lengths, ids, self._table)


# -- model2vec ----------------------------------------------------------------------

MODEL2VEC_DEFAULT = "minishlab/potion-base-8M"


class Model2VecEncoder:
    """A model2vec static model by hub name (downloaded by model2vec on first use) or local folder."""

    name = "model2vec"

    def __init__(self, model: str = MODEL2VEC_DEFAULT) -> None:
        if not _installed("model2vec"):
            raise _missing_extra("model2vec", "model2vec", "model2vec")
        folder = _local_folder(model)
        from model2vec import StaticModel

        try:
            loaded = StaticModel.from_pretrained(str(folder) if folder is not None else model, force_download=False)
        except Exception as err:  # model2vec's and the hub's errors, said as one line
            what = "is not a model2vec model folder" if folder is not None else "could not be loaded by model2vec"
            raise ParameterError(
                "model",
                model,
                f"{what} ({type(err).__name__}: {shorten(str(err), 200)})",
                "pass a folder written by StaticModel.save_pretrained, or a model name on the hub (needs the network once)",
            ) from None
        self._model = loaded
        self._table = np.ascontiguousarray(loaded.embedding, dtype=np.float32)
        weights, mapping = getattr(loaded, "weights", None), getattr(loaded, "token_mapping", None)
        self._weights = None if weights is None else np.asarray(weights, dtype=np.float32)
        self._mapping = None if mapping is None else np.asarray(mapping, dtype=np.int64)
        self.dim = int(self._table.shape[1])
        self.model = str(folder) if folder is not None else model
        self._fingerprint = _folder_sha256(folder) if folder is not None and folder.is_dir() else None

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.model, "model2vec": _version("model2vec"), "pooling": "mean"}
        if self._fingerprint is not None:
            out["model_sha256"] = self._fingerprint
        return out

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """model2vec's vectors (``StaticModel.encode`` without normalisation), pooled text by text."""
        texts = _texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._model
        if model.max_length is not None:  # model2vec cuts the characters first, then the tokenizer truncates
            limit = model.max_length * model.median_token_length
            texts = [t[:limit] for t in texts]
        lengths, ids = _flatten(model.tokenize(texts))
        rows = ids if self._mapping is None else self._mapping[ids]
        weights = None if self._weights is None else self._weights[ids]
        return mean_pool(lengths, rows, self._table, weights)


# -- sentence-transformers and fastembed ------------------------------------------

SENTENCE_TRANSFORMERS_DEFAULT = "sentence-transformers/all-MiniLM-L6-v2"


class SentenceTransformerEncoder:
    """A SentenceTransformer by hub name or local folder (``encode`` without normalisation, batches of 64)."""

    name = "sentence-transformers"

    def __init__(self, model: str = SENTENCE_TRANSFORMERS_DEFAULT) -> None:
        if not _installed("sentence_transformers"):
            raise _missing_extra("sentence-transformers", "sentence-transformers", "sentence-transformers")
        folder = _local_folder(model)
        from sentence_transformers import SentenceTransformer

        try:
            loaded = SentenceTransformer(str(folder) if folder is not None else model)
        except Exception as err:
            what = "is not a sentence-transformers model folder" if folder is not None else "could not be loaded"
            raise ParameterError(
                "model",
                model,
                f"{what} ({type(err).__name__}: {shorten(str(err), 200)})",
                "pass a folder written by SentenceTransformer.save, or a model name on the hub (needs the network once)",
            ) from None
        self._model = loaded
        get_dim = getattr(loaded, "get_sentence_embedding_dimension", None) or loaded.get_embedding_dimension
        self.dim = int(get_dim())
        self.model = str(folder) if folder is not None else model
        self._fingerprint = _folder_sha256(folder) if folder is not None and folder.is_dir() else None

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.model, "sentence_transformers": _version("sentence-transformers")}
        if self._fingerprint is not None:
            out["model_sha256"] = self._fingerprint
        return out

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = _texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=False, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


FASTEMBED_DEFAULT = "BAAI/bge-small-en-v1.5"


class FastEmbedEncoder:
    """A fastembed ``TextEmbedding`` model, by a name fastembed supports (batches of 256).

    fastembed picks pooling and files by the model's name, so it takes names
    only: to run offline, point ``FASTEMBED_CACHE_PATH`` at the folder where
    fastembed keeps the model's files (it downloads them there once).
    """

    name = "fastembed"

    def __init__(self, model: str = FASTEMBED_DEFAULT) -> None:
        if not _installed("fastembed"):
            raise _missing_extra("fastembed", "fastembed", "fastembed")
        if Path(model).expanduser().exists() or model.startswith(("/", ".", "~")):
            raise ParameterError(
                "model",
                model,
                "is a path, and fastembed loads models by name",
                "pass a name from fastembed's TextEmbedding.list_supported_models(); to run offline, set "
                "FASTEMBED_CACHE_PATH to the folder holding its files",
            )
        from fastembed import TextEmbedding

        try:
            loaded = TextEmbedding(model_name=model)
            probe = np.asarray(next(iter(loaded.embed(["dimension probe"]))), dtype=np.float32)
        except Exception as err:
            raise ParameterError(
                "model",
                model,
                f"could not be loaded by fastembed ({type(err).__name__}: {shorten(str(err), 200)})",
                "pass a name from TextEmbedding.list_supported_models() (needs the network once)",
            ) from None
        self._model = loaded
        self.dim = int(probe.shape[-1])
        self.model = model

    def params(self) -> dict[str, Any]:
        return {"model": self.model, "fastembed": _version("fastembed")}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = _texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([np.asarray(v, dtype=np.float32) for v in self._model.embed(texts, batch_size=256)])
