"""Where tasks run: any :class:`concurrent.futures.Executor`, and the three ``--executor`` choices.

* ``serial``: :class:`SerialExecutor`, each task in this process when it is
  submitted (the experiment submits one at a time, so finished tasks are
  written as they finish);
* ``processes``: a :class:`WarmPool` of ``workers`` processes started with
  ``spawn`` (a fresh interpreter each: no state forked from the client, the
  same on every platform), started at once, each importing what tasks need
  while the client plans, and kept for the whole grid;
* ``dask``: a Dask ``distributed`` client's executor
  (``Client.get_executor``), on a ``LocalCluster`` of ``workers``
  single-threaded worker processes, or on the cluster whose scheduler
  answers at ``scheduler`` (``tcp://host:8786``).  Dask retries a task
  whose worker died (``distributed.scheduler.allowed-failures``, 3 by
  default).  Needs the ``dask`` extra.

:func:`open_executor` opens one and closes it (and any cluster it started)
when the block ends.  ``import agentmemory`` and this module import no Dask.

**Addressing a worker.**  :func:`slots` lists the workers of a
:class:`WarmPool` or a Dask client's executor, and :func:`submit_to` hands a
call to one of them (on Dask, a loose restriction: another worker may take
it when that one is gone): the plan loads each collection on one worker and
the run hands that collection's tasks to it first, so a collection is read
once per grid, not once per worker (each worker keeps what it loaded, see
:mod:`agentmemory.experiment.task`).  Any other executor gets calls as they
come.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor
from typing import Any

from agentmemory.errors import ParameterError, UnknownNameError, check_positive_int

__all__ = [
    "EXECUTORS",
    "SerialExecutor",
    "WarmPool",
    "as_executor",
    "open_executor",
    "parallelism",
    "slots",
    "submit_to",
]

EXECUTORS = ("serial", "processes", "dask")
"""The ``--executor`` choices."""


class SerialExecutor(Executor):
    """Runs each task in the calling process, at once, when it is submitted; the future is done on return."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        try:
            result = fn(*args, **kwargs)
        except BaseException as err:  # as a pool would: the caller sees it through the future
            future.set_exception(err)
        else:
            future.set_result(result)
        return future


def warm_worker() -> None:
    """A worker's start: import what every task needs (the task module: the readers, the evaluation, the
    built-in retrievers), so the first task pays none of it."""
    import agentmemory.experiment.task  # noqa: F401


def _started() -> int:
    return os.getpid()


class WarmPool(Executor):
    """``workers`` processes (``spawn``), each a one-process :class:`~concurrent.futures.ProcessPoolExecutor`
    of its own, so that a call can go to a given one (:meth:`submit_to`); all started at once, each running
    :func:`warm_worker` first.  :meth:`submit` gives a call to the worker with the fewest calls pending."""

    def __init__(self, workers: int, initializer: Callable[[], Any] | None = warm_worker) -> None:
        check_positive_int("workers", workers)
        context = multiprocessing.get_context("spawn")
        self._pools = [
            ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=initializer) for _ in range(workers)
        ]
        self._max_workers = workers
        self._pending = [0] * workers  # calls not done, per worker (counted down from the pools' threads)
        self._lock = threading.Lock()
        for pool in self._pools:  # a pool starts its process at its first call: all of them now, in parallel
            pool.submit(_started)

    @property
    def slots(self) -> tuple[int, ...]:
        """The workers, by number."""
        return tuple(range(len(self._pools)))

    def submit_to(self, slot: int, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """``fn(*args, **kwargs)`` on worker ``slot`` (a future holding the error when that worker is gone)."""
        try:
            future = self._pools[slot].submit(fn, *args, **kwargs)
        except BrokenExecutor as err:  # the worker died: the caller sees it through the future, as for a call
            future = Future()  # that was running when it died
            future.set_exception(err)
            return future
        with self._lock:
            self._pending[slot] += 1
        future.add_done_callback(lambda _: self._done(slot))
        return future

    def _done(self, slot: int) -> None:
        with self._lock:
            self._pending[slot] -= 1

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        slot = min(self.slots, key=lambda i: self._pending[i])
        return self.submit_to(slot, fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for pool in self._pools:
            pool.shutdown(wait=False, cancel_futures=cancel_futures)
        if wait:
            for pool in self._pools:
                pool.shutdown(wait=True)


def slots(executor: Executor) -> dict[Any, int]:
    """The workers :func:`submit_to` can address, each with how many calls it runs at once: a
    :class:`WarmPool`'s numbers (1 each), a Dask client executor's worker addresses (sorted) and threads;
    empty for any other executor."""
    if isinstance(executor, WarmPool):
        return dict.fromkeys(executor.slots, 1)
    client = getattr(executor, "_client", None)
    if client is not None and callable(getattr(client, "nthreads", None)):
        return dict(sorted(client.nthreads().items()))
    return {}


def submit_to(executor: Executor, slot: Any, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
    """``fn(*args)`` on the worker ``slot`` of :func:`slots` (on Dask, there when it can)."""
    if isinstance(executor, WarmPool):
        return executor.submit_to(slot, fn, *args)
    client = executor._client  # type: ignore[attr-defined]  # a Dask ClientExecutor, see slots()
    return client.get_executor(pure=False, workers=[slot], allow_other_workers=True).submit(fn, *args)


def as_executor(executor: Any) -> Executor:
    """``executor`` as a :class:`concurrent.futures.Executor`: a Dask ``Client`` becomes its executor.

    Raises:
        ParameterError: neither an Executor nor a Dask client.
    """
    if executor is None:
        return SerialExecutor()
    if isinstance(executor, Executor):
        return executor
    if callable(getattr(executor, "get_executor", None)):  # a dask.distributed Client
        return executor.get_executor(pure=False)
    raise ParameterError(
        "executor",
        executor,
        "is not an executor",
        "pass a concurrent.futures.Executor (ProcessPoolExecutor, a Dask client's get_executor()) or a Dask Client",
    )


def parallelism(executor: Executor) -> int | None:
    """How many tasks ``executor`` runs at once, when it says (1 for :class:`SerialExecutor`), else ``None``."""
    if isinstance(executor, SerialExecutor):
        return 1
    workers = getattr(executor, "_max_workers", None)
    if isinstance(workers, int):
        return workers
    client = getattr(executor, "_client", None)
    if client is not None and callable(getattr(client, "nthreads", None)):
        return sum(client.nthreads().values()) or None
    return None


def _dask() -> Any:
    try:
        import distributed
    except ImportError:
        raise ParameterError(
            "--executor",
            "dask",
            "needs Dask's distributed scheduler, which is not installed",
            "pip install 'agentmemory-eval[dask]'",
        ) from None
    return distributed


@contextlib.contextmanager
def open_executor(
    kind: str, *, workers: int | None = None, scheduler: str | None = None, timeout: float = 10.0
) -> Iterator[Executor]:
    """The executor ``kind`` names (see the module docstring), closed when the block ends.

    ``workers`` (default: the number of CPUs) sizes a process pool or a
    local Dask cluster; ``scheduler`` connects to a running Dask scheduler
    instead, waiting at most ``timeout`` seconds for it to answer.

    Raises:
        UnknownNameError: ``kind`` is not one of :data:`EXECUTORS`.
        ParameterError: ``workers`` is not an integer >= 1, is given with
            ``scheduler`` or for ``serial``; ``scheduler`` without ``dask``;
            the scheduler does not answer in time; Dask is not installed.
    """
    if kind not in EXECUTORS:
        raise UnknownNameError("--executor", kind, EXECUTORS)
    if workers is not None:
        check_positive_int("--workers", workers)
        if kind == "serial":
            raise ParameterError(
                "--workers", workers, "does not apply to --executor serial", "use --executor processes or dask"
            )
    if scheduler is not None and kind != "dask":
        raise ParameterError("--scheduler", scheduler, f"needs --executor dask, not {kind}", "add --executor dask")
    if scheduler is not None and workers is not None:
        raise ParameterError(
            "--workers",
            workers,
            "sizes a local cluster, but --scheduler names a running one",
            "start the cluster's workers with dask worker; drop --workers",
        )
    count = workers or os.cpu_count() or 1
    if kind == "serial":
        yield SerialExecutor()
    elif kind == "processes":
        with WarmPool(count) as pool:
            yield pool
    else:
        distributed = _dask()
        with contextlib.ExitStack() as stack:
            if scheduler is not None:
                client = _connect(distributed, scheduler, timeout)
            else:
                cluster = distributed.LocalCluster(
                    n_workers=count,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                stack.callback(cluster.close)
                client = distributed.Client(cluster)
            stack.callback(client.close)
            yield client.get_executor(pure=False)


def _connect(distributed: Any, address: str, timeout: float) -> Any:
    """A client of the scheduler at ``address``, or one line saying it did not answer within ``timeout`` seconds."""
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # its retries log a warning each; the one line below says it all
    try:
        return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as err:
        raise ParameterError(
            "--scheduler",
            address,
            f"does not answer within {timeout:g} s ({type(err).__name__})",
            "start one with `dask scheduler` (it prints its address) and workers with `dask worker ADDRESS`",
        ) from None
    finally:
        logger.setLevel(level)
