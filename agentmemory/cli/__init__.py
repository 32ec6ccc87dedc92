"""The ``agentmemory`` command line: ``main(argv)`` runs it, ``entry_point()`` is the console script."""

from agentmemory.cli.app import entry_point, main

__all__ = ["entry_point", "main"]
