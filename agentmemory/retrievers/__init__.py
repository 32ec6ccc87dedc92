"""Retrievers behind one protocol, their open registry, and the one place that turns specs into retrievers.

Everything that takes retrievers (:func:`agentmemory.evaluate`,
:class:`agentmemory.MemoryStore`, batch retrieval, the command line, the
notebooks) accepts, through :func:`resolve_retrievers`:

* a registry name: ``"bm25"``, ``"tags"``, or one a user registered with
  :func:`register_retriever` or an installed package offers through the
  entry-point group ``agentmemory.retrievers``;
* a name with parameters: ``"bm25[k1=0.9,b=0.4]"`` (grammar in
  :mod:`agentmemory.retrievers.spec`), checked against the factory's signature;
* ``"package.module:attribute"``, with optional parameters
  (``"mypkg.memory:MyRetriever[dim=64]"``): a factory, or a retriever instance;
* a factory (a class or function returning a new, empty retriever) or a
  retriever instance.

Each becomes a :class:`RetrieverSpec`: a ``key`` unique within one
evaluation (the registry name when no parameter differs from the
factory's default, else the spec's canonical text, e.g.
``bm25[k1=0.9,b=0.4]``), a ``label`` for tables (``BM25``, or
``BM25 (k1=0.9, b=0.4)``), and a way to make new retrievers.  An instance
can serve one store partition only (one scope): collections with scopes
(LoCoMo, LongMemEval) need a factory.

**Plugins are guarded.**  A retriever that is not agentmemory's own (its
factory's or instance's module is outside the ``agentmemory`` package) is a
plugin: its spec's ``plugin`` holds the spec it was given as, and every
retriever it makes is a :class:`~agentmemory.retrievers.guard.GuardedRetriever`,
whose calls turn any exception into one
:class:`~agentmemory.errors.PluginError` and whose results are checked
(:mod:`agentmemory.retrievers.guard`).  Importing a ``module:attribute``
spec is guarded too (a module that raises, or calls ``sys.exit``, while it
is imported); a module that does not exist is a bad spec
(:class:`~agentmemory.errors.ParameterError`).

**Labels.**  A factory names its retrievers by its ``label`` attribute.  A
plugin factory without one (a function, or a class that sets ``label`` in
``__init__``) is asked once, at resolution: one retriever is made and its
own ``label`` is the spec's (so a function factory's retrievers keep the
label they declare); declare ``label`` on the factory to spare that call.
"""

from typing import TYPE_CHECKING

from agentmemory.retrievers.base import (
    CAPABILITIES,
    CAPABILITY_TABLE,
    Capability,
    Retriever,
    capabilities,
    capability,
    has_capability,
    select_top_k,
)
from agentmemory.retrievers.bm25 import BM25, TermContribution
from agentmemory.retrievers.guard import GuardedRetriever
from agentmemory.retrievers.registry import (
    DEFAULT_RETRIEVERS,
    RETRIEVERS,
    RetrieverDef,
    RetrieverLike,
    RetrieverSpec,
    full_label,
    make_retriever,
    parse_retrievers,
    register_retriever,
    resolve_retriever,
    resolve_retrievers,
)

if TYPE_CHECKING:  # at run time imported on first use (_LAZY), for type checkers here
    from agentmemory.retrievers.dense import Dense as Dense
    from agentmemory.retrievers.encoders import ENCODERS as ENCODERS
    from agentmemory.retrievers.encoders import Encoder as Encoder
    from agentmemory.retrievers.encoders import load_encoder as load_encoder
    from agentmemory.retrievers.encoders import register_encoder as register_encoder
    from agentmemory.retrievers.hybrid import Hybrid as Hybrid
    from agentmemory.retrievers.recency import Recency as Recency
    from agentmemory.retrievers.tags import TagOverlap as TagOverlap
    from agentmemory.retrievers.tags import TagScorer as TagScorer

_LAZY = {
    "Dense": "agentmemory.retrievers.dense",
    "ENCODERS": "agentmemory.retrievers.encoders",
    "Encoder": "agentmemory.retrievers.encoders",
    "load_encoder": "agentmemory.retrievers.encoders",
    "register_encoder": "agentmemory.retrievers.encoders",
    "Hybrid": "agentmemory.retrievers.hybrid",
    "Recency": "agentmemory.retrievers.recency",
    "TagOverlap": "agentmemory.retrievers.tags",
    "TagScorer": "agentmemory.retrievers.tags",
}
"""The names whose modules load on first use (PEP 562): a command that uses BM25 alone imports none of them."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentmemory.retrievers' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BM25",
    "Capability",
    "GuardedRetriever",
    "CAPABILITIES",
    "CAPABILITY_TABLE",
    "DEFAULT_RETRIEVERS",
    "ENCODERS",
    "RETRIEVERS",
    "Dense",
    "Encoder",
    "Hybrid",
    "Recency",
    "Retriever",
    "RetrieverDef",
    "RetrieverLike",
    "RetrieverSpec",
    "TagOverlap",
    "TagScorer",
    "TermContribution",
    "capabilities",
    "capability",
    "full_label",
    "has_capability",
    "load_encoder",
    "make_retriever",
    "parse_retrievers",
    "register_encoder",
    "register_retriever",
    "resolve_retriever",
    "resolve_retrievers",
    "select_top_k",
]
