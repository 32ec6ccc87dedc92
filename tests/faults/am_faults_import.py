"""A plugin module that raises while it is imported."""

raise ValueError("this plugin module cannot be imported on purpose")
