"""Hypothesis profiles.  ``ci``: derandomised, fixed example budget (the
nox ``tests`` session and .ci/run); ``dev``: random, small, fast local runs;
``thorough``: random, large budget, before a release.  Select with
HYPOTHESIS_PROFILE=name (default ``ci``, so a bare ``pytest`` is reproducible).
"""

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

settings.register_profile("ci", max_examples=15, derandomize=True, database=None, **_COMMON)
settings.register_profile("dev", max_examples=10, **_COMMON)
settings.register_profile("thorough", max_examples=300, **_COMMON)


def load(name=None):
    name = name or os.environ.get("HYPOTHESIS_PROFILE", "ci")
    settings.load_profile(name)
    return name
