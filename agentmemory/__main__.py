"""``python -m agentmemory ...`` is ``agentmemory ...``."""

from agentmemory.cli.app import entry_point

entry_point()
