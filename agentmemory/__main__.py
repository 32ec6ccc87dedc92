"""``python -m agentmemory ...`` is ``agentmemory ...``."""

from .cli import entry_point

entry_point()
