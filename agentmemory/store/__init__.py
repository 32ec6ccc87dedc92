"""The memory store: entries, provenance, the event log, and where a store keeps them (memory or SQLite)."""

from agentmemory.errors import StoreError, StoreLockedError
from agentmemory.store.core import MemoryStore

__all__ = ["MemoryStore", "StoreError", "StoreLockedError"]
