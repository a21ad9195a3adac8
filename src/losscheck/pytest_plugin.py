"""The pytest plugin (entry point ``pytest11: losscheck``): losscheck inside a library's own tests.

One line in a test module::

    import losscheck
    from mylib import dice_loss

    test_dice_loss = losscheck.check(dice_loss, "dice", loss=True)

collects one test per property of the quantity (``test_dice_loss[value[float64]]``,
``test_dice_loss[gradient[float32]]``, ...).  A property that fails at the gate is one pytest
failure whose message is the finding: severity, error in ULPs against the reference, and a
runnable snippet of the counterexample; a property that does not apply is a visible skip.  The
examples are derandomised (the same on every run).  Options:

- ``--losscheck-max-examples N``: examples per property (default 15, as losscheck's own CI);
- ``--losscheck-seed S``: random examples from seed S instead;
- ``--losscheck-gate bug|accuracy|range``: the severity that fails (default: the check's, ``bug``).
"""

from __future__ import annotations

import warnings

import pytest


class FindingWarning(UserWarning):
    """A finding below the gate (an accuracy or range finding at the default gate): reported as a
    pytest warning, not a failure."""

#: the default budget per property: losscheck's CI profile (properties/profiles.py)
DEFAULT_MAX_EXAMPLES = 15


def pytest_addoption(parser):
    group = parser.getgroup("losscheck", "losscheck audits (losscheck.check)")
    group.addoption("--losscheck-max-examples", type=int, default=None, metavar="N",
                    help=f"Hypothesis examples per losscheck property (default {DEFAULT_MAX_EXAMPLES})")
    group.addoption("--losscheck-seed", type=int, default=None, metavar="S",
                    help="random examples from seed S (default: derandomised)")
    group.addoption("--losscheck-gate", choices=("bug", "accuracy", "range"), default=None,
                    help="the severity at which a losscheck property fails (default: bug)")


def _option(config, name):
    try:
        return config.getoption(name)
    except ValueError:  # the plugin is not registered (pytest -p no:losscheck): the defaults
        return None


def property_tests(fn, quantity: str, **options):
    """A pytest test function parametrised by the property names of ``quantity`` for ``fn``
    (see :func:`losscheck.check`).  ValueError at collection for an unknown quantity or a
    target whose framework cannot be inferred."""
    import losscheck
    from losscheck import spec
    from losscheck.properties import engine, frameworks
    spec.get(quantity)
    framework = options.get("framework") or frameworks.infer(fn)
    only, chosen = options.pop("only", None), options.pop("names", None)
    names = [n for n in engine.property_names(quantity, framework)
             if (not only or only in n) and (chosen is None or n in chosen)]
    if not names:
        raise ValueError(f"only={only!r}, names={chosen!r} match no property of {quantity}")

    @pytest.mark.parametrize("losscheck_property", names)
    def test(losscheck_property, request):
        config = request.config
        kw = dict(options)
        max_examples = _option(config, "losscheck_max_examples")
        kw["max_examples"] = max_examples or kw.get("max_examples", DEFAULT_MAX_EXAMPLES)
        if (seed := _option(config, "losscheck_seed")) is not None:
            kw["seed"] = seed
        if gate := _option(config, "losscheck_gate"):
            kw["gate"] = gate
        kw["framework"] = framework
        result = losscheck.audit(fn, quantity, names=[losscheck_property], **kw)
        (r,) = result.results
        if r.verdict == "skipped":
            pytest.skip(f"{r.property}: {r.message}")
        if not r.passes(result.gate, result.strict):
            pytest.fail(f"{getattr(fn, '__qualname__', fn)} as {quantity}: {r.describe()}", pytrace=False)
        if r.verdict == "fails":
            warnings.warn(FindingWarning(f"{r.property}: {r.severity} finding (below the gate {result.gate}): {r.message}"),
                          stacklevel=1)

    test.__name__ = f"test_{getattr(fn, '__name__', 'target')}_{quantity}"
    test.__doc__ = f"losscheck: {getattr(fn, '__qualname__', fn)} as {quantity}, one case per property."
    return test
