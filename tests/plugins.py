"""Helpers for tests of the open registries: installed plugins, and registries put back as they were.

An installed package shows its entry points to :mod:`importlib.metadata`
through a ``<name>-<version>.dist-info`` folder on ``sys.path`` holding
``METADATA`` and ``entry_points.txt``.  :func:`install` writes exactly that
(and the plugin's modules) into a temporary folder, so the registries find
plugins the way they find real ones, with nothing mocked.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from agentmemory.registry import Registry


def install(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    entry_points: Mapping[str, Mapping[str, str]],
    modules: Mapping[str, str] = {},  # noqa: B006 - read only
    *,
    dist: str = "am_test_plugin",
) -> None:
    """Install the distribution ``dist`` into ``root`` and put ``root`` first on ``sys.path``.

    Args:
        entry_points: group -> (entry-point name -> ``module:attribute``).
        modules: module name -> source, written as ``root/<name>.py``; they
            leave ``sys.modules`` again when the test ends.
    """
    info = root / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {value}" for name, value in points.items())
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for name, source in modules.items():
        (root / f"{name}.py").write_text(source)
        # Record the module as absent, so that the test's import of it is undone when the test ends.
        monkeypatch.setitem(sys.modules, name, None)
        del sys.modules[name]
    monkeypatch.syspath_prepend(str(root))  # also clears importlib's caches of sys.path folders
    importlib.invalidate_caches()


@contextlib.contextmanager
def restored(registry: Registry) -> Iterator[None]:
    """Put ``registry`` back as it was when the block ends: added names removed, replaced ones restored."""
    before = registry.registered()
    try:
        yield
    finally:
        for name in registry.registered():
            if name not in before:
                registry.unregister(name)  # first, so that nothing added can clash with what comes back
        now = registry.registered()
        for name, obj in before.items():
            if now.get(name) is not obj:
                registry.register(name, obj, replace=True)
