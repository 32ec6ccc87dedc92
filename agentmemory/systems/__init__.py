"""Memory systems: the protocol, the registry of systems, the replay of a collection into them, attribution."""

from agentmemory.systems.base import SYSTEM_CAPABILITIES, Memory, MemorySystem, Turn

__all__ = ["SYSTEM_CAPABILITIES", "Memory", "MemorySystem", "Turn"]
