"""pytest entry points: load the Hypothesis profile (HYPOTHESIS_PROFILE, default ``ci``)."""

import sys
from pathlib import Path

from losscheck.properties import profiles

# The tests run against the installed losscheck; only the benchmarks, which do not ship, are imported
# from the checkout (appended, so nothing of the checkout shadows an installed module).
sys.path.append(str(Path(__file__).resolve().parents[2]))

PROFILE = profiles.load()


def pytest_report_header(config):
    from hypothesis import settings
    s = settings.default
    return f"losscheck: hypothesis profile {PROFILE!r}: max_examples={s.max_examples}, derandomize={s.derandomize}"
