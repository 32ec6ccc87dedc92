"""Tests of agentmemory.answers (a package, so its conftest does not shadow the root one)."""
