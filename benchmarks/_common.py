"""Helpers shared by the per-engine benchmark scripts (each runs in its own process)."""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

K = 10
MARK = "BENCH-RESULT "
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",  # OpenMP (faiss, and the OpenBLAS faiss bundles)
    "OPENBLAS_NUM_THREADS": "1",  # numpy's OpenBLAS
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",  # the Rust tokenizer behind wordllama
    "RAYON_NUM_THREADS": "1",
}


def single_thread() -> None:
    """Limit BLAS, OpenMP and the tokenizer to one thread: call it before numpy or faiss loads (they read it once).

    Raises:
        RuntimeError: numpy is already imported (the limit would not apply).
    """
    if "numpy" in sys.modules:
        raise RuntimeError("single_thread() must run before numpy is imported")
    os.environ.update(ONE_THREAD)


def os_threads() -> int:
    """Threads of this process now (Linux ``Threads:``; 0 where unknown): 1 when BLAS and OpenMP started none."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:  # pragma: no cover - not Linux
        pass
    return 0


def rss_mb() -> float:
    """Current resident set size in MiB (from /proc, or psutil)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        import psutil

        return psutil.Process().memory_info().rss / 2**20


def peak_mb() -> float:
    """Peak resident set size since the last :func:`settle` (Linux VmHWM), in MiB.

    Falls back to the process's lifetime peak (ru_maxrss) where VmHWM cannot be reset.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def settle() -> float:
    """Collect garbage, reset the peak-RSS mark, return the current RSS (a build's baseline)."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
    except OSError:  # pragma: no cover - not Linux
        pass
    return rss_mb()


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def query_passes(run_all, passes: int, n_queries: int, budget_s: float | None = None) -> list[float]:
    """Queries per second of ``passes`` passes of ``run_all()`` (which answers all queries)."""
    out = []
    for _ in range(passes):
        seconds, _ = timed(run_all)
        out.append(n_queries / seconds)
        if budget_s is not None and seconds * (len(out) + 1) > budget_s:
            break
    return out


def emit(result: dict) -> None:
    """Print the result as one JSON line the runner picks up."""
    print(MARK + json.dumps(result), flush=True)


def summary(result: dict, qps: list[float]) -> dict:
    result["qps_passes"] = [round(q, 1) for q in qps]
    result["qps"] = statistics.median(qps) if qps else None
    return result
