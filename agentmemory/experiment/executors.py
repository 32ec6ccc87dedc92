"""Where tasks run: any :class:`concurrent.futures.Executor`, and the three ``--executor`` choices.

* ``serial``: :class:`SerialExecutor`, each task in this process when it is
  submitted (the experiment submits one at a time, so finished tasks are
  written as they finish);
* ``processes``: a :class:`~concurrent.futures.ProcessPoolExecutor` of
  ``workers`` processes started with ``spawn`` (a fresh interpreter each:
  no state forked from the client, the same on every platform);
* ``dask``: a Dask ``distributed`` client's executor
  (``Client.get_executor``), on a ``LocalCluster`` of ``workers``
  single-threaded worker processes, or on the cluster whose scheduler
  answers at ``scheduler`` (``tcp://host:8786``).  Dask retries a task
  whose worker died (``distributed.scheduler.allowed-failures``, 3 by
  default).  Needs the ``dask`` extra.

:func:`open_executor` opens one and closes it (and any cluster it started)
when the block ends.  ``import agentmemory`` and this module import no Dask.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any

from agentmemory.errors import ParameterError, UnknownNameError, check_positive_int

__all__ = ["EXECUTORS", "SerialExecutor", "as_executor", "open_executor", "parallelism"]

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
        with ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("spawn")) as pool:
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
