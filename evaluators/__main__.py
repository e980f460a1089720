"""``python -m evaluators ...``: see :mod:`evaluators.cli`."""

import sys

from evaluators.cli import main

if __name__ == "__main__":
    sys.exit(main())
