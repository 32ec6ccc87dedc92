"""``python -m agentmemory.eval ...`` is ``agentmemory eval ...``."""

import sys

from agentmemory.cli.app import main

if __name__ == "__main__":
    sys.exit(main(["eval", *sys.argv[1:]]))
