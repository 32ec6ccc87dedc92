"""``sweep.ipynb``'s parameters, checked (see :mod:`agentmemory.report.params`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from os import PathLike
from typing import NamedTuple

from agentmemory.collection import Collection, default_collection_path
from agentmemory.datasets import load
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import (
    AgentMemoryError,
    NumberTextError,
    ParameterError,
    ReportParameterError,
    check_positive_int,
    quote,
)
from agentmemory.files.numbers import parse_integer
from agentmemory.report.results import SHIPPED
from agentmemory.retrievers import RetrieverSpec, resolve_retrievers


class SweepConfig(NamedTuple):
    """One synthetic collection shape of the seed sweep: entries and queries."""

    n_entries: int
    n_queries: int

    def __str__(self) -> str:
        return f"{self.n_entries} entries, {self.n_queries} queries"


@dataclass(frozen=True)
class SweepSetup:
    """The validated parameters of ``sweep.ipynb``.

    ``collection`` is the collection of the k sweep (``source`` as given);
    ``ks`` the cutoffs ``1 .. k_max``; ``seeds`` the synthetic generator
    seeds; ``configs`` the collection shapes, in the order given;
    ``seed`` the run seed of the k sweep (it names event ids only: no
    ranking depends on it).
    """

    collection: Collection
    source: str
    ks: tuple[int, ...]
    k: int
    seeds: tuple[int, ...]
    configs: tuple[SweepConfig, ...]
    mismatch_rate: float
    retrievers: tuple[RetrieverSpec, ...]
    progress: bool
    seed: int = 7


_SEEDS_HELP = 'pass a number of seeds such as 20 (seeds 0..19) or an inclusive range such as "100-199"'


def parse_seeds(seeds: object) -> tuple[int, ...]:
    """The generator seeds a ``seeds`` parameter names.

    An integer ``N >= 1`` (or its text, ``"20"``) means the seeds ``0 .. N-1``;
    the text ``"a-b"`` with ``0 <= a <= b`` means ``a .. b`` inclusive.  Text
    is ASCII digits only (:mod:`agentmemory.files.numbers`: no white space, no
    underscores, no other scripts' digits).

    Raises:
        ParameterError: anything else.
    """
    if isinstance(seeds, bool) or not isinstance(seeds, (int, str)):
        raise ParameterError("seeds", seeds, "is not a count or a range", _SEEDS_HELP)
    if isinstance(seeds, int):
        return tuple(range(check_positive_int("seeds", seeds)))
    match = _SEEDS.fullmatch(seeds)
    if match is None:
        raise ParameterError("seeds", seeds, "is not a count or a range", _SEEDS_HELP)
    try:
        low = parse_integer(match[1])
        high = None if match[2] is None else parse_integer(match[2])
    except NumberTextError as err:
        raise ParameterError("seeds", seeds, err.problem, _SEEDS_HELP) from None
    if high is None:
        if low < 1:
            raise ParameterError("seeds", seeds, "is less than 1", _SEEDS_HELP)
        return tuple(range(low))
    if low > high:
        raise ParameterError("seeds", seeds, "is an empty range", "the range's start must not exceed its end")
    return tuple(range(low, high + 1))


_SEEDS = re.compile(r"([0-9]+)(?:-([0-9]+))?", re.ASCII)


def _int_list(name: str, value: object, example: str) -> list[int]:
    """Comma-separated integers >= 1 (each by :func:`agentmemory.files.numbers.parse_integer`; spaces after commas allowed)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ParameterError(name, value, "is not a comma-separated list of integers", f"pass e.g. {quote(example)}")
    if isinstance(value, int):
        return [check_positive_int(name, value)]
    numbers = []
    for item in value.split(","):
        try:
            numbers.append(parse_integer(item.strip(" ")))
        except NumberTextError:
            raise ParameterError(
                name, value, "is not a comma-separated list of integers", f"pass e.g. {quote(example)}"
            ) from None
    return [check_positive_int(f"{name} item", n) for n in numbers]


def _configs(sizes: object, queries: object) -> tuple[SweepConfig, ...]:
    entries = _int_list("sizes", sizes, "16,200")
    counts = _int_list("queries", queries, "5,50")
    if len(counts) == 1:
        counts = counts * len(entries)
    if len(counts) != len(entries):
        raise ParameterError(
            "queries",
            queries,
            f"names {len(counts)} counts for {len(entries)} sizes",
            "give one number of queries for every size, or one per size",
        )
    configs = [SweepConfig(n, q) for n, q in zip(entries, counts)]
    repeated = next((c for i, c in enumerate(configs) if c in configs[:i]), None)
    if repeated is not None:
        raise ParameterError(
            "sizes", sizes, f"repeats the collection shape ({repeated})", "list each size and query count once"
        )
    return tuple(configs)


def _mismatch_rate(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ParameterError("mismatch_rate", value, "is not a probability", "use a number in [0, 1], e.g. 0.2")
    return float(value)


def sweep_setup(
    *,
    collection: str | PathLike[str] | None,
    k_max: object,
    k: object,
    seeds: object,
    sizes: object,
    queries: object,
    mismatch_rate: object,
    retrievers: object,
    progress: object,
) -> SweepSetup:
    """Validate ``sweep.ipynb``'s parameters and load the k sweep's collection.

    Checks, in order: ``k_max`` and ``k`` (integers >= 1), ``seeds``
    (:func:`parse_seeds`), ``sizes`` and ``queries`` (comma-separated
    integers >= 1, ``queries`` one for all sizes or one per size, no shape
    twice), ``mismatch_rate`` (in [0, 1]), ``retrievers``, ``progress`` (a
    bool), that :func:`agentmemory.datasets.synthetic.synthetic_collection` accepts
    every shape, and the collection (``""`` the shipped fixture, else any
    path :func:`agentmemory.datasets.load` reads).

    Raises:
        ReportParameterError: the first rejected value, with the library's message.
    """
    try:
        top = check_positive_int("k_max", k_max)
        cutoff = check_positive_int("k", k)
        seed_list = parse_seeds(seeds)
        configs = _configs(sizes, queries)
        rate = _mismatch_rate(mismatch_rate)
        names = resolve_retrievers(retrievers)  # type: ignore[arg-type]
        if not isinstance(progress, bool):
            raise ParameterError("progress", progress, "is not a bool", "pass True or False")
        for config in configs:
            try:
                synthetic_collection(
                    seed=seed_list[0], n_entries=config.n_entries, n_queries=config.n_queries, mismatch_rate=rate
                )
            except ParameterError as err:
                if err.name != "n_entries":
                    raise
                raise ParameterError(
                    "sizes", sizes, f"cannot hold {config.n_queries} queries in {config.n_entries} entries", err.allowed
                ) from None
        if collection is None or collection == "":
            loaded, source = load(default_collection_path()), SHIPPED
        elif isinstance(collection, (str, PathLike)):
            loaded, source = load(collection), str(collection)
        else:
            raise ParameterError(
                "collection", collection, "is not a path", 'pass a collection folder, or "" for the shipped fixture'
            )
    except ReportParameterError:
        raise
    except AgentMemoryError as err:
        raise ReportParameterError(err) from err
    return SweepSetup(loaded, source, tuple(range(1, top + 1)), cutoff, seed_list, configs, rate, names, progress)
