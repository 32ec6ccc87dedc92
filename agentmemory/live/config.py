"""What a live answering run is told: the readers, the judges, the prompts, the price table and the rules.

:class:`LiveOptions` is made once (from the command line's ``--reader``,
``--judge``, ``--reader-prompt``, ``--judge-prompt``, ``--judge-majority``,
``--offline``, ``--lenient-answers``, ``--prices``, or from Python) and
checked where it is made; an evaluation carries it as
:attr:`EvalOptions.live <agentmemory.evaluation.options.EvalOptions>`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from agentmemory.errors import ParameterError
from agentmemory.live.prices import PriceTable, read_prices
from agentmemory.live.prompts import PromptTemplate, load_prompt
from agentmemory.live.roles import RoleSpec, resolve_role

__all__ = ["LiveOptions"]


def _roles(value: object, role: str, option: str) -> tuple[RoleSpec, ...]:
    items: Sequence[Any]
    if value is None:
        items = ()
    elif isinstance(value, (str, RoleSpec)) or not isinstance(value, Sequence):
        items = (value,)
    else:
        items = value
    specs = tuple(resolve_role(item, role, option=option) for item in items)
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise ParameterError(
                option, spec.name, f"names two {role}s", f"give each {role} its own name: {role}[...,name=NAME]"
            )
        seen.add(spec.name)
    return specs


def _prompt(value: object, role: str, option: str) -> PromptTemplate:
    if isinstance(value, PromptTemplate):
        if value.role != role:
            raise ParameterError(option, value.source, f"is a {value.role} prompt", f"pass a {role} prompt")
        return value
    if value is None or isinstance(value, (str, PathLike)):
        return load_prompt(role, value, option)
    raise ParameterError(option, value, "is not a prompt", "pass a file's path, FILE.py:NAME, or None for the default")


@dataclass(frozen=True, init=False)
class LiveOptions:
    """A live answering run's options, checked when made.

    Attributes:
        readers: the readers (:func:`~agentmemory.live.roles.resolve_role`: a spec such as
            ``"openai[base_url=http://localhost:8000/v1,model=qwen]"``, a ``RoleSpec`` or a chat model
            object); each answers every question from every ranked system's top ``k``.  None: the judges grade
            the imported answer files' answers instead (``--judge`` without ``--reader``; their verdicts join
            the files' own as more judges).
        judges: the judges, in order (none: the answers are scored by F1/EM/BLEU-1 only).  A reader or a judge
            at least.
        reader_prompt, judge_prompt: the templates (:func:`~agentmemory.live.prompts.load_prompt`: a path,
            ``FILE.py:NAME``, a ``PromptTemplate``, or ``None`` for the shipped default).
        judge_majority: ``Judge`` is the majority of the judges' verdicts (0.5 on a tie) instead of the first
            judge's.
        offline: make no call: a call the cache does not hold is refused, naming the question and the call.
        lenient: a question whose calls finally failed is left out of the answer measures and counted, instead
            of failing the run.
        prices: a price table (:func:`~agentmemory.live.prices.read_prices`: a path or a ``PriceTable``), or
            ``None`` (token counts without cost).
        cache: the call cache's folder (default ``<cache>/chat``, :mod:`agentmemory.live.call_cache`).

    ``names`` (a keyword) maps a field to the name messages use (``{"lenient": "--lenient-answers"}``).
    """

    readers: tuple[RoleSpec, ...]
    judges: tuple[RoleSpec, ...]
    reader_prompt: PromptTemplate
    judge_prompt: PromptTemplate
    judge_majority: bool
    offline: bool
    lenient: bool
    prices: PriceTable | None
    cache: Path | None
    names: Mapping[str, str]

    def __init__(
        self,
        readers: object = (),
        judges: object = (),
        reader_prompt: object = None,
        judge_prompt: object = None,
        judge_majority: bool = False,
        offline: bool = False,
        lenient: bool = False,
        prices: object = None,
        cache: str | PathLike[str] | None = None,
        *,
        names: Mapping[str, str] | None = None,
    ) -> None:
        named = dict(names or {})

        def name(field: str) -> str:
            return named.get(field, field)

        made_readers = _roles(readers, "reader", name("readers"))
        made_judges = _roles(judges, "judge", name("judges"))
        if not made_readers and not made_judges:
            raise ParameterError(
                name("readers"),
                readers,
                f"names no reader, and {name('judges')} no judge",
                f"give one, e.g. openai[base_url=http://localhost:8000/v1,model=NAME]; {name('judges')} alone "
                "grades the answers of answer files",
            )
        for flag, given in (("judge_majority", judge_majority), ("offline", offline), ("lenient", lenient)):
            if not isinstance(given, bool):
                raise ParameterError(name(flag), given, "is not a bool", "pass True or False")
        if prices is not None and not isinstance(prices, PriceTable):
            if not isinstance(prices, (str, PathLike)):
                raise ParameterError(name("prices"), prices, "is not a price table", "pass a TOML file's path")
            prices = read_prices(prices)
        values = {
            "readers": made_readers,
            "judges": made_judges,
            "reader_prompt": _prompt(reader_prompt, "reader", name("reader_prompt")),
            "judge_prompt": _prompt(judge_prompt, "judge", name("judge_prompt")),
            "judge_majority": judge_majority,
            "offline": offline,
            "lenient": lenient,
            "prices": prices,
            "cache": None if cache is None else Path(cache),
            "names": named,
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def require_answers(self, given: bool) -> None:
        """Judges without a reader grade answer files' answers: refused when no answer file is ``given``.

        Raises:
            ParameterError: judges, no reader and no answer file (it names the judges and says what to add).
        """
        if self.readers or not self.judges or given:
            return
        raise ParameterError(
            self.name("judges"),
            self.judges[0].key,
            f"has no answers to grade: there is no {self.name('readers')} and no answer file",
            f"give a reader ({self.name('readers')}) to answer the questions, or answer files "
            f"({self.name('answers')}) whose answers the judges grade",
        )

    def name(self, field: str) -> str:
        """How messages name ``field`` (its flag on the command line)."""
        return self.names.get(field, field)
