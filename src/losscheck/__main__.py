"""``python -m losscheck``: the command line (:mod:`losscheck.reports.cli`)."""

import sys

from losscheck.reports.cli import main

if __name__ == "__main__":
    sys.exit(main())
