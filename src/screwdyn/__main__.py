"""``python -m screwdyn``: the command line of :mod:`screwdyn.cli`."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
