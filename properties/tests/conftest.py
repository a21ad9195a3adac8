"""pytest entry points: load the Hypothesis profile (HYPOTHESIS_PROFILE, default ``ci``)."""

from properties import profiles

PROFILE = profiles.load()


def pytest_report_header(config):
    from hypothesis import settings
    s = settings.default
    return f"losscheck: hypothesis profile {PROFILE!r}: max_examples={s.max_examples}, derandomize={s.derandomize}"
