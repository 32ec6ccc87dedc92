"""The package's version, in the bottom layer: every module that records it (the store, a grid's tasks, the
command line's ``--version``) takes it from here, never up the layers from the package face."""

__all__ = ["__version__"]

__version__ = "0.1.0"
