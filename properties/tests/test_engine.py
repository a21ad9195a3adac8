"""The audit engine's own behaviour: bounded shrinking, early exits, usage errors, progress, the
on-disk cache of compiled definitions and jax targets called under jit."""

import io
import json
import time

import mpmath
import numpy as np
import pytest

from losscheck import spec
from losscheck.properties import engine, frameworks
from losscheck.properties.checks import Target, properties_for


def _torch():
    if not frameworks.get("torch").available():
        pytest.skip("torch is not installed")
    import torch
    return torch


def _lse_no_max_shift():
    torch = _torch()

    def lse(x, k=1.0):
        return torch.log(torch.exp(k * x).sum(-1)) / k
    return lse


def _run(prop_name, fn, **kw):
    q = spec.get("logsumexp")
    prop = {p.name: p for p in properties_for(q, "torch")}[prop_name]
    target = Target(fn, q, "torch", "cpu", "lse_no_max_shift")
    settings = engine.make_settings(max_examples=kw.pop("max_examples", 15), shrink=kw.pop("shrink", True))[0]
    return engine.run_property(prop, target, settings, **kw)


def test_shrinking_stops_at_its_call_budget():
    """A failing property shrinks for at most ``shrink_calls`` further calls, reports the smallest
    counterexample found so far, and says it was cut short; ``calls`` counts every call."""
    rec = _run("value[float16]", _lse_no_max_shift(), shrink_calls=3)
    assert rec["verdict"] == "fails" and rec["shrunk"] == "calls"
    assert rec["counterexample"] and "fn(" in rec["counterexample"]["snippet"]
    assert rec["calls"] <= engine.planned(*_prop_target("value[float16]"), engine.make_settings(15)[0]) + 3 + 1


def _prop_target(name):
    q = spec.get("logsumexp")
    return {p.name: p for p in properties_for(q, "torch")}[name], Target(_lse_no_max_shift(), q, "torch")


def test_shrinking_stops_at_its_time_budget():
    rec = _run("value[float16]", _lse_no_max_shift(), shrink_seconds=1e-9)
    assert rec["verdict"] == "fails" and rec["shrunk"] == "time"


def test_shrinking_unbounded_finishes_and_says_so():
    rec = _run("value[float16]", _lse_no_max_shift(), shrink_calls=10 ** 6)
    assert rec["verdict"] == "fails" and rec["shrunk"] == "full"
    off = _run("value[float16]", _lse_no_max_shift(), shrink=False)
    assert off["verdict"] == "fails" and off["shrunk"] == "off" and off["calls"] <= rec["calls"]


def test_a_root_cause_shrunk_once_is_shrunk_briefly_again():
    """One root cause seen in several properties (a missing max-shift: an infinity at every dtype) is
    shrunk with the whole budget where it is first found; the later properties get REPEAT_SHARE of it,
    say which property shrank it, and the finding's representative is the one shrunk in full."""
    from losscheck.properties.results import AuditResult, group_findings
    res = engine.audit(_lse_no_max_shift(), "logsumexp", "torch", only="value[", max_examples=15)
    failing = [r for r in res["results"] if r["verdict"] == "fails"]
    assert len(failing) >= 2 and "repeat_of" not in failing[0]
    assert all(r["repeat_of"] == failing[0]["property"] for r in failing[1:] if r.get("shrunk") != "off")
    repeats = [r for r in failing[1:] if r.get("repeat_of")]
    assert repeats
    group = next(g for g in group_findings(AuditResult.from_record(res).results) if len(g.results) > 1)
    assert not group.representative.repeat_of


def test_the_observer_hears_of_a_failure_before_it_is_shrunk():
    seen = []

    class Found(engine.Observer):
        def failure_found(self, name, outcome, shrink_seconds):
            seen.append((name, outcome.severity, shrink_seconds, time.perf_counter()))

        def property_done(self, record):
            seen.append((record["property"], "done", record["seconds"], time.perf_counter()))

    engine.audit(_lse_no_max_shift(), "logsumexp", "torch", only="value[float16]", max_examples=5, observer=Found(),
                 shrink_seconds=3.0)
    (name, severity, budget, at), (done, _, _, end) = seen
    assert name == done == "value[float16]" and severity == "bug" and budget == 3.0 and at <= end


def test_draws_do_not_depend_on_the_modules_loaded():
    """Hypothesis draws constants from the source of the 'local' modules loaded at the time; the engine
    pins that pool to the audited callable's module, so a derandomised audit draws the same examples
    whatever was imported before (an editable checkout and an installed package drew different ones)."""
    import sys
    import types
    torch = _torch()
    drawn = []

    def lse(x, k=1.0):
        drawn.append(x.detach().clone())
        return torch.logsumexp(k * x, -1) / k

    def run():
        drawn.clear()
        engine.audit(lse, "logsumexp", "torch", only="value[float64]", max_examples=30, derandomize=True)
        return [t.tolist() for t in drawn]
    first = run()
    mod = types.ModuleType("losscheck_test_constants")  # a 'local' module full of float constants
    mod.__file__ = __file__.replace("tests", "elsewhere")
    sys.modules[mod.__name__] = mod
    try:
        exec("A = (1.7, 2.25, -3.125, 17.0, 99.5, 0.0625, 12.75, -41.0, 7.5, 3.3)", mod.__dict__)
        assert run() == first
    finally:
        del sys.modules[mod.__name__]


def test_fail_fast_stops_at_the_first_failing_property():
    res = engine.audit(_lse_no_max_shift(), "logsumexp", "torch", stop_at_failure=True, max_examples=5, shrink=False)
    assert [r["verdict"] for r in res["results"]][-1] == "fails"
    assert all(r["verdict"] == "holds" for r in res["results"][:-1])
    assert len(res["results"]) < len(properties_for(spec.get("logsumexp"), "torch"))


def test_only_matching_no_property_is_a_usage_error():
    _torch()
    from losscheck import impls
    with pytest.raises(ValueError, match="matches no property"):
        engine.audit(impls.get("logsumexp", "torch"), "logsumexp", "torch", only="nosuchproperty")


def test_observer_sees_every_example_and_result():
    _torch()
    from losscheck import impls

    class Seen(engine.Observer):
        def __init__(self):
            self.plan, self.examples, self.done = None, 0, []

        def audit_started(self, properties):
            self.plan = properties

        def example_done(self, name, examples, failing):
            self.examples += 1

        def property_done(self, record):
            self.done.append(record["property"])

    seen = Seen()
    res = engine.audit(impls.get("logsumexp", "torch"), "logsumexp", "torch", only="value", max_examples=3, observer=seen)
    assert list(seen.plan) == seen.done == [r["property"] for r in res["results"]]
    assert seen.examples == sum(r["examples"] for r in res["results"]) > 0
    assert all(seen.plan[r["property"]] >= 3 for r in res["results"])


def test_progress_prints_plain_lines_off_a_terminal():
    from losscheck.reports.progress import AuditProgress
    _torch()
    from losscheck import impls
    out = io.StringIO()
    with AuditProgress(stream=out) as observer:  # a StringIO is no terminal: no bar, a line per property
        engine.audit(impls.get("logsumexp", "torch"), "logsumexp", "torch", only="value[float64]", max_examples=2,
                     observer=observer)
    assert not observer.bar
    assert out.getvalue().splitlines() == [line for line in out.getvalue().splitlines() if line.startswith("  PASS")]
    assert "value[float64]" in out.getvalue()


def test_progress_bar_on_a_terminal():
    from losscheck.reports.progress import AuditProgress
    _torch()
    from losscheck import impls
    out = io.StringIO()
    with AuditProgress(stream=out, bar=True) as observer:
        engine.audit(impls.get("logsumexp", "torch"), "logsumexp", "torch", only="value[float64]", max_examples=2,
                     observer=observer)
    assert "value[float64]" in out.getvalue() and "PASS" in out.getvalue()


def test_compiled_definitions_are_cached_on_disk(tmp_path, monkeypatch):
    """A definition derived once is stored under the spec's fingerprint and loaded, not derived, by
    the next process; the loaded one evaluates to the same digits."""
    from losscheck.spec import cache, reference
    monkeypatch.setenv("LOSSCHECK_CACHE", str(tmp_path))
    q, args = spec.get("softmax"), {"x": np.array([0.5, -2.0, 3.0]), "k": 1.5}
    reference.compile_definition.cache_clear()
    derived = spec.Reference(q).evaluate(args)[0]
    [entry] = (tmp_path / "definitions").glob("*.json")
    assert json.loads(entry.read_text())["key"] == repr(("softmax", 3, ()))
    reference.compile_definition.cache_clear()
    monkeypatch.setattr(reference, "_plan", lambda *a: pytest.fail("derived again instead of loaded"))
    loaded = spec.Reference(q)._compiled({"x": args["x"], "k": 1.5})
    import mpmath
    with mpmath.workdps(70):
        values = loaded.values_only([mpmath.mpf(0.5), mpmath.mpf(-2.0), mpmath.mpf(3.0), mpmath.mpf(1.5)])
    assert [float(v) for v in values] == [float(v) for v in derived]
    reference.compile_definition.cache_clear()
    monkeypatch.setenv("LOSSCHECK_CACHE", "off")
    assert cache.directory() is None and cache.load(("softmax", 3, ())) is None


def test_jax_targets_run_under_jit_unless_they_do_not_trace():
    """Value and gradient properties call a jax target under jax.jit (one compilation per shape);
    a target that does not trace (a Python check on a value) is called eagerly and still judged."""
    if not frameworks.get("jax").available():
        pytest.skip("jax is not installed")
    from losscheck import impls
    from losscheck.properties import checks
    q = spec.get("logsumexp")
    value = {p.name: p for p in properties_for(q, "jax")}["value[float32]"]
    ours = Target(impls.get("logsumexp", "jax"), q, "jax")
    assert engine.run_property(value, ours, engine.make_settings(max_examples=3)[0])["verdict"] == "holds"
    assert checks.compiled(ours) is not None
    def concrete(x, k=1.0):  # our logsumexp behind a check that reads k's value: does not trace
        if float(k) <= 0:
            raise ValueError(f"k must be > 0, got {k}")
        return impls.get("logsumexp", "jax")(x, k)
    theirs = Target(concrete, q, "jax")
    rec = engine.run_property(value, theirs, engine.make_settings(max_examples=3)[0])
    assert rec["verdict"] == "holds", rec["message"]
    assert checks.compiled(theirs) is None  # fell back to eager calls


def test_jax_values_come_from_the_gradient_program_and_a_failure_from_the_forward_one():
    """A jax target's value is the output of the forward-and-pullback program the gradient
    properties compile (one program per shape and dtype, not two); a value that fails there is
    judged again from ``jax.jit(fn)``, whose outcome stands.  The target here is a custom_vjp whose
    forward rule returns a value 1 % off while its primal is right: the joint program's value is
    off, the value property holds (it is about ``jax.jit(fn)``), and a bug in the primal fails."""
    if not frameworks.get("jax").available():
        pytest.skip("jax is not installed")
    import jax
    import numpy as np

    from losscheck import impls
    from losscheck.properties import checks
    lse = impls.get("logsumexp", "jax")

    def target_with(primal_scale):
        @jax.custom_vjp
        def f(x):
            return lse(x) * primal_scale

        def fwd(x):
            return lse(x) * 1.01, x
        f.defvjp(fwd, lambda x, g: (g[..., None] * jax.nn.softmax(x),))
        return Target(lambda x, k=1.0: f(x), spec.get("logsumexp"), "jax", fixed={"k": 1.0})
    q = spec.get("logsumexp")
    args = {"x": np.array([[0.5, -1.0, 2.0]]), "k": 1.0}
    right = target_with(1.0)
    joint, _ = checks.value(right, args, "float64")
    assert np.allclose(np.asarray(joint), 1.01 * np.asarray(lse(args["x"])))  # from the joint program
    prop = {p.name: p for p in properties_for(q, "jax")}["value[float64]"]
    assert engine.run_property(prop, right, engine.make_settings(max_examples=3)[0])["verdict"] == "holds"
    wrong = target_with(1.001)
    assert engine.run_property(prop, wrong, engine.make_settings(max_examples=3)[0])["verdict"] == "fails"


def _lse_nan_when_large_and_inexact():
    """A logsumexp 1e-12 off (relative) everywhere — an accuracy finding in float64 — that returns NaN
    where some |x| lies in (100, 1e4]: a bug on the typical domain's large magnitudes."""
    torch = _torch()

    def lse(x, k=1.0):
        out = torch.logsumexp(k * x, dim=-1) / k * (1 + 1e-12)
        large = ((x.abs() > 100) & (x.abs() <= 1e4)).any(dim=-1)
        return torch.where(large, torch.full_like(out, float("nan")), out)
    return lse


def test_a_bug_is_not_hidden_behind_an_accuracy_finding():
    """The search goes on past accuracy and range findings and stops at a bug; the shrunk
    counterexample stays a bug (on the typical domain), and the accuracy finding is reported beside."""
    rec = _run("stability[float64]", _lse_nan_when_large_and_inexact())
    assert rec["verdict"] == "fails" and rec["severity"] == "bug", rec
    assert rec["off_domain"] == "" and "nan" in rec["message"]
    assert rec["shrunk"] in ("full", "time", "calls")
    assert {o["severity"] for o in rec.get("others", [])} <= {"accuracy", "range"}


def test_a_float16_gradient_beyond_its_range_is_a_range_finding_where_float32_holds():
    """A quotient's derivative forms 1/y² (torch's reciprocal backward: −g·r², r = 1/y), which
    overflows float16 once |y| < 2^-8 though the gradient is of order 1: natively in float16 that is
    float16's range (the same case holds in float32), not a bug; a target held to float32 compute
    (ours: native_half False) and a derivative wrong in float32 too stay bugs."""
    torch = _torch()
    from losscheck.properties.checks import check_gradient

    def dice(probs, targets, smooth=0.0, squared=False, wrong=0.0):
        num = 2 * (probs * targets).sum() + smooth
        den = probs.sum() + targets.sum() + smooth
        empty = den == 0
        r = torch.where(empty, 1.0, den).reciprocal()
        return torch.where(empty, 1.0, num * r + wrong * (r - r.detach())).to(probs.dtype)

    def wrong(probs, targets, smooth=0.0, squared=False):  # the value right, an extra −1e-3/y² in the gradient
        return dice(probs, targets, smooth, squared, wrong=1e-3)
    q = spec.get("dice")
    case = {"args": {"probs": np.array([0.0, 2.0 ** -9]), "targets": np.array([0.0, 2.0 ** -9]), "smooth": 0.0,
                     "squared": False}, "dtype": "float16", "cotangent": np.array(1.0)}
    out = check_gradient(Target(dice, q, "torch", native_half=True), case)
    assert not out.ok and "inf" in out.got, out  # −inf where the gradient is of order 1
    assert out.severity == "range" and out.off_domain.startswith("float16's range"), out
    assert check_gradient(Target(dice, q, "torch", native_half=True), {**case, "dtype": "float32"}).ok
    held = check_gradient(Target(dice, q, "torch"), case)
    assert not held.ok and held.severity == "bug", held
    bad = check_gradient(Target(wrong, q, "torch", native_half=True), case)
    assert not bad.ok and bad.severity == "bug", bad
    assert not check_gradient(Target(wrong, q, "torch", native_half=True), {**case, "dtype": "float32"}).ok


def test_findings_below_the_gate_are_reported_not_counted():
    """An accuracy-only target: the record fails with severity accuracy (as found, the search having
    gone on for a bug); the audit passes at the default gate and fails at --gate accuracy, where the
    finding is searched for again and shrunk."""
    torch = _torch()

    def lse(x, k=1.0):
        return torch.logsumexp(k * x, dim=-1) / k * (1 + 1e-12)
    res = engine.audit(lse, "logsumexp", "torch", only="value[float64]", max_examples=10)
    [rec] = res["results"]
    assert rec["verdict"] == "fails" and rec["severity"] == "accuracy" and rec["shrunk"] == "off", rec
    assert engine.conformance_ok(res) and not engine.conformance_ok(res, gate="accuracy")
    strict = engine.audit(lse, "logsumexp", "torch", only="value[float64]", max_examples=10, gate="accuracy")
    [rec] = strict["results"]
    assert rec["severity"] == "accuracy" and rec["shrunk"] in ("full", "time", "calls")
    assert not engine.conformance_ok(strict)
    with pytest.raises(ValueError, match="gate"):
        engine.audit(lse, "logsumexp", "torch", only="value[float64]", gate="strict")


def test_the_typical_domain_table():
    """Each bound of properties/domain.py classifies as stated: inside, beyond the top, below the bottom;
    zeros and masked −inf entries are typical; a tiny result answered by a tiny one is off the domain."""
    from losscheck.properties import domain
    q = spec.get("logsumexp")
    assert domain.tier(q, {"x": np.array([0.0, -np.inf, 1e4]), "k": 1.0}, "float32") == ""
    assert "> 1e+04" in domain.tier(q, {"x": np.array([2e4]), "k": 1.0}, "float32")
    assert "< 1e-30" in domain.tier(q, {"x": np.array([1e-31, 1.0]), "k": 1.0}, "float64")
    assert "(k)" in domain.tier(q, {"x": np.array([1.0]), "k": 1e3}, "float64")
    assert "> 256" in domain.tier(q, {"x": np.array([2000.0]), "k": 1.0}, "float16")
    assert domain.tiny_output(1e-40, "float64") and not domain.tiny_output(1e-20, "float64")
    # an exact result beyond the dtype's largest finite value (soft top-k's float16 gradient of 6.4e6 at
    # typical inputs): no answer in the dtype is right, so its NaN or inf is a range finding
    assert domain.huge_output(mpmath.mpf("6.4e6"), "float16") and not domain.huge_output(mpmath.mpf("6.4e4"), "float16")
    assert not domain.huge_output(mpmath.mpf("-inf"), "float16")  # an exact −inf (an all-masked logsumexp) is a value
    # a pair with a point or a flat box (catalogue §5: only finite results there), located per sample
    boxes = {"a": np.array([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 0.0, 2.0]]), "b": np.array([1.0, 1.0, 3.0, 3.0])}
    assert domain.degenerate_box(spec.get("ciou"), boxes, (1,)) and domain.degenerate_box(spec.get("ciou"), boxes, (1, 2))
    assert not domain.degenerate_box(spec.get("ciou"), boxes, (0,)) and not domain.degenerate_box(q, {"x": np.ones(3)}, (0,))
    assert all(r["reason"] for r in domain.rows())
