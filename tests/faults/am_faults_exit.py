"""A plugin module that calls sys.exit(3) while it is imported (the library must say so in one line)."""

import sys

sys.exit(3)
