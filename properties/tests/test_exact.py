"""EXACT is computed, not sampled: our implementations agree with the spec's
integral to ≤ 1e-12 relative in float64 for up to 100 classes and sigma from
1e-2 to 1e2 (catalogue §2).  The expected values integrate the spec's own
integrand (spec.exact.exact_integrand) with the reference's quadrature at 30
digits, value only — the property tests cover gradients at n ≤ 3."""

import mpmath
import numpy as np
import pytest

from losscheck import impls, spec
from losscheck.properties import frameworks
from losscheck.spec.reference import Reference, compile_definition

Q = spec.get("exact_accuracy")
#: 1e-12 relative is the catalogue's requirement for float64 (issue 3); the quadrature
#: of our implementations is designed for it, the reference is good to ~30 digits here.
RTOL = 1e-12


def _expected(mu, sigma, y):
    c = compile_definition(Q, len(mu), (("labels", y),))
    with mpmath.workdps(30):
        return float(c.values_only([mpmath.mpf(float(v)) for v in mu] + [mpmath.mpf(sigma)])[0])


CASES = [(2, 1e-2, 1.0), (10, 1.0, 1.0), (10, 1e2, 10.0), (100, 1e-2, 1.0), (100, 1.0, 10.0), (100, 1e2, 1.0)]


@pytest.mark.parametrize("fw", frameworks.NAMES)
@pytest.mark.parametrize("n, sigma, spread", CASES, ids=[f"n{n}-sigma{s:g}-spread{m:g}" for n, s, m in CASES])
def test_exact_accuracy_matches_the_integral(fw, n, sigma, spread):
    f = frameworks.get(fw)
    if not f.available():
        pytest.skip(f"{fw} is not installed")
    mu = np.random.default_rng(n).standard_normal(n) * spread
    # the winner, a middling class and one just below the winner: values from ~1 down to tiny
    order = np.argsort(mu)
    labels = sorted({int(order[-1]), int(order[n // 2]), int(order[-2])})
    got = f.numpy(impls.get("exact_accuracy", fw)(f.array(np.tile(mu, (len(labels), 1)), "float64"), sigma,
                                                   f.int_array(np.array(labels))))
    for g, y in zip(got, labels):
        want = _expected(mu, sigma, y)
        assert abs(g - want) <= RTOL * abs(want) or (want < 1e-300 and abs(g) < 1e-290), (y, g, want)


def _far_class_gradient(mu, sigma, y):
    """d exact_accuracy / d mu from the spec's reference (its panels reach each class's own
    integrand phi(z) phi(z + a_j) prod Phi, wherever it lies), and the largest |a_j|."""
    args = {"mu": np.array(mu), "sigma": np.float64(sigma), "labels": np.array(y)}
    grad = Reference(Q).vjp(args, np.array(1.0), "mu")[0]
    return [float(v) for v in np.ravel(grad)], max(abs(mu[y] - m) / sigma for m in mu)


FAR = [([46.62, -55.31, -42.56], 6.543, 0), ([10.0, 0.0, -30.0, -5.0], 1.0, 0), ([5.0, -5.0], 0.3, 0),
       ([0.0, -15.0, -15.0, -15.0, -15.0], 1.0, 0), ([1.0, 2.0, 3.0, -60.0], 2.0, 2)]


@pytest.mark.parametrize("fw", frameworks.NAMES)
@pytest.mark.parametrize("mu, sigma, y", FAR, ids=[f"far{i}" for i in range(len(FAR))])
def test_exact_accuracy_gradient_of_a_class_that_cannot_compete(fw, mu, sigma, y):
    """Every entry of the gradient to its own relative accuracy, also for classes far behind
    (a_j = (mu_y - mu_j)/sigma from 10 to 60, derivatives down to 1e-161), whose integrand lies
    outside the value's quadrature window (session 14's OPEN finding, mu = [46.62, -55.31, -42.56]).
    (The reference matched a 40-digit mpmath.quad around each integrand's own mode on these cases.)"""
    f = frameworks.get(fw)
    if not f.available():
        pytest.skip(f"{fw} is not installed")
    want, amax = _far_class_gradient(mu, sigma, y)
    kwargs = {"mu": f.array(np.array(mu), "float64"), "sigma": sigma, "labels": f.int_array(np.array(y))}
    (g,) = f.vjp(impls.get("exact_accuracy", fw), kwargs, ("mu",), f.array(np.array(1.0), "float64"))
    got = f.numpy(g)
    # each a_j carries a rounding error of eps |a_j|, which moves log d/da_j by ~ eps a_j^2 / 2
    # (the integrand's Gaussian exp(-a_j^2 / 4)): 8 eps (1 + a_max^2) relative per entry
    tol = 8 * np.finfo(np.float64).eps * (1 + amax ** 2)
    for g, w in zip(got, want):
        assert abs(g - w) <= tol * abs(w), (list(got), want)
