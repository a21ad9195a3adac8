"""Catalogue §2, EXACT (seed 000: Su, "How to Train Your Accuracy?"): the
probability that the label wins the arg-max of mu/sigma plus i.i.d. standard
normal noise, stated as the one-dimensional integral

    exact_accuracy(mu, sigma, y) = ∫ φ(z) Π_{j≠y} Φ(z + (mu_y − mu_j)/sigma) dz.

(Condition on the label's own noise ε_y = z: the label wins iff every other
ε_j < z + (mu_y − mu_j)/sigma.)  Φ is written with erfc, which keeps its
lower tail accurate; the reference integrates the integrand and its partial
derivatives in one Gauss–Legendre pass (spec.reference._integral_step).

Derivatives (what impls/torch_exact.py and impls/jax_exact.py compute, with
a_j = (mu_y − mu_j)/sigma): differentiating under the integral,

    ∂/∂a_j exact_accuracy = ∫ φ(z) φ(z + a_j) Π_{k≠y,j} Φ(z + a_k) dz,

log-concave like the value's integrand.  Since φ(z) φ(z + a) =
φ(√2 (z + a/2)) e^{−a²/4} / √(2π), for a class that cannot compete (a_j ≳ 10)
it is a Gaussian near z = −a_j/2 of size below e^{−a_j²/4}: it lies outside
the window that holds the value's integrand, so each entry to its own
relative accuracy needs a window of its own there (the implementations test
each class with the log-concavity tail bound h(end)/|(log h)'(end)| and give
one only to the classes that need it).  The rounding of a_j (eps·|a_j|)
moves that entry by ~eps·a_j²/2 relative: its conditioning.  Cost: O(n) per
node for each class on a window of its own (none for standard-normal mu at
σ = 1, a fifth of the classes at a spread of 3σ); within 7e-14 relative of this
reference at a_j up to 60 (properties/tests/test_exact.py).
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import sympy as sp

from .quantity import Arg, ClaimResult, Comparison, Definition, Image, NumericalClaim, Quantity, Shift, SymbolicClaim, exponent_size

SEED000 = "seed 000 (Su, 'How to Train Your Accuracy?', EXACT); catalogue §2"
EPS64 = float(np.finfo(np.float64).eps)
SIGMA = sp.Symbol("sigma", positive=True)
Z = sp.Symbol("z", real=True)


def Phi(x):
    """Standard normal CDF as erfc(−x/√2)/2 (no cancellation in the lower tail)."""
    return sp.erfc(-x / sp.sqrt(2)) / 2


def phi(x):
    return sp.exp(-x ** 2 / 2) / sp.sqrt(2 * sp.pi)


def exact_integrand(mu, sigma, y, z=Z):
    out = phi(z)
    for j, mj in enumerate(mu):
        if j != y:
            out *= Phi(z + (mu[y] - mj) / sigma)
    return out


def _build_exact(n, labels):
    mu = sp.symbols(f"mu0:{n}", real=True)
    return Definition({"mu": mu, "sigma": SIGMA}, [sp.Integral(exact_integrand(mu, SIGMA, labels), (Z, -sp.oo, sp.oo))])


# -- symbolic claims -----------------------------------------------------------------
A = sp.Symbol("a", real=True)


def claim_two_class():
    # d/da ∫ φ(z) Φ(z + a) dz = ∫ φ(z) φ(z + a) dz (differentiation under the integral, dominated by φ);
    # SymPy integrates that Gaussian product, and it equals d/da Φ(a/√2); both sides → 0 as a → −∞.
    lhs = sp.integrate(phi(Z) * phi(Z + A), (Z, -sp.oo, sp.oo))
    rhs = sp.diff(Phi(A / sp.sqrt(2)), A)
    if sp.simplify(lhs - rhs) == 0 and sp.limit(Phi(A / sp.sqrt(2)), A, -sp.oo) == 0:
        return ClaimResult("proved", "∂/∂a of both sides agree (∫ φ(z) φ(z + a) dz = φ(a/√2)/√2, integrated by SymPy) and both "
                           "vanish as a → −∞, so ∫ φ(z) Φ(z + a) dz = Φ(a/√2) with a = (mu_y − mu_j)/sigma")
    return ClaimResult("refuted", f"∂ lhs = {lhs}, ∂ rhs = {rhs}")


def claim_two_class_sum():
    if sp.simplify(Phi(A / sp.sqrt(2)) + Phi(-A / sp.sqrt(2)) - 1) == 0:
        return ClaimResult("proved on instances", "n = 2: Φ(a/√2) + Φ(−a/√2) = 1; general n is the numerical claim sum_one")
    return ClaimResult("refuted", "Φ(a) + Φ(−a) ≠ 1")


def claim_sigma_limit():
    d = sp.Symbol("d", positive=True)
    win, lose = sp.limit(Phi(d / (SIGMA * sp.sqrt(2))), SIGMA, 0, "+"), sp.limit(Phi(-d / (SIGMA * sp.sqrt(2))), SIGMA, 0, "+")
    if (win, lose) == (1, 0):
        return ClaimResult("proved on instances", "n = 2, gap d > 0: Φ(±d/(σ√2)) → 1, 0 as σ → 0⁺ — onehot(argmax mu)")
    return ClaimResult("refuted", f"limits {win}, {lose}")


# -- numerical claims ------------------------------------------------------------------
def _check_sum_one(impl, mu, sigma, labels):
    n = mu.shape[-1]
    total = sum(impl(labels=np.full(labels.shape, y, dtype=np.int64)) for y in range(n))
    # each value carries ≤ ~16 eps of quadrature + rounding error (relative, values ≤ 1): 16·n·eps absolute.
    return [Comparison(total, np.ones_like(total), 16 * n * EPS64, "Σ_y exact_accuracy = 1")]


def _check_sigma_limit(impl, mu, sigma, labels):
    # claim-grid mu are distinct multiples of 2^-10: at sigma = 2^-40 every gap/sigma ≥ 2^30, so
    # Φ(−gap/sigma) < 1e-10^17 — the limit onehot(argmax mu) is exact in float64.
    expected = (np.argmax(mu, axis=-1) == labels).astype(float)
    return [Comparison(impl(sigma=2.0 ** -40), expected, 0.0, "sigma → 0: onehot(argmax mu)[label]")]


def _check_two_class(impl, mu, sigma, labels):
    other = 1 - labels
    a = (np.take_along_axis(mu, labels[..., None], -1) - np.take_along_axis(mu, other[..., None], -1))[..., 0] / sigma
    expected = np.vectorize(lambda t: 0.5 * math.erfc(-t / 2))(a)
    dens = np.exp(-a * a / 4) / (2 * math.sqrt(math.pi))
    # math.erfc is accurate to a few ulp; the input a carries 2 roundings, moving Φ(a/√2) by |a|·density·2·eps.
    tol = 16 * EPS64 * (expected + np.abs(a) * dens)
    return [Comparison(impl(), expected, tol, "n = 2: Φ((mu_y − mu_j)/(sigma·√2))")]


def _two_classes(mu, sigma, labels):
    return mu.shape[-1] == 2


def _check_monte_carlo(impl, mu, sigma, labels):
    """Statistical: the frequency of label = argmax(mu/sigma + ε) over M = 20000 standard normal draws
    lies within 6 standard errors of the value (false alarm ≤ 2e-9 per row, normal approximation with
    variance floor 1/M); draws are seeded from the input bytes, so the check is deterministic."""
    m = 20000
    p = impl()
    rng = np.random.default_rng(zlib.crc32(mu.tobytes()))
    eps = rng.standard_normal((m,) + mu.shape)
    freq = (np.argmax(mu / sigma + eps, axis=-1) == labels).mean(axis=0)
    se = np.sqrt(np.maximum(p * (1 - p), 1.0 / m) / m)
    return [Comparison(freq, p, 6 * se, "P(label = argmax(mu/sigma + ε)) by sampling")]


EXACT_ACCURACY = Quantity(
    name="exact_accuracy", family="classification",
    summary="EXACT: probability that the label wins argmax(mu/sigma + ε), ε ~ N(0, I)",
    formula="EXACT(mu, σ, y) = ∫ φ(z) Π_{j≠y} Φ(z + (mu_y − mu_j)/σ) dz",
    args=(Arg("mu", "vector"), Arg("sigma", "positive"), Arg("labels", "label")),
    output="row", build=_build_exact,
    image=Image("a probability: EXACT ∈ [0, 1]", 0.0, 1.0),
    shifts=(Shift("EXACT depends on mu only through the differences mu_y − mu_j, so Σ_i ∂/∂mu_i = 0",
                  {"mu": None}, 0.0, lambda mu, sigma=1.0, **_: exponent_size(mu, 1.0 / sigma)),),
    claims=(
        SymbolicClaim("two_class_closed_form", "n = 2: EXACT = Φ((mu_y − mu_j)/(σ√2))", claim_two_class, SEED000),
        SymbolicClaim("two_class_sum", "n = 2: the two labels' probabilities sum to 1", claim_two_class_sum, SEED000),
        SymbolicClaim("sigma_limit_symbolic", "σ → 0⁺: EXACT → onehot(argmax mu)", claim_sigma_limit, SEED000),
        NumericalClaim("sum_one", "Σ_y exact_accuracy(mu, σ, y) = 1", _check_sum_one, "16·n·eps absolute: n values ≤ 1"),
        NumericalClaim("sigma_limit", "σ → 0⁺: exact_accuracy → onehot(argmax mu)[label]", _check_sigma_limit,
                       "exact: at σ = 2^-40 every other class loses by ≥ 2^30 standard deviations"),
        NumericalClaim("two_class", "n = 2: exact_accuracy = Φ((mu_y − mu_j)/(σ√2))", _check_two_class,
                       "16·eps·(Φ + |a|·density): erfc's few ulp plus the rounding of a", precondition=_two_classes),
        NumericalClaim("monte_carlo", "sampling argmax(mu/σ + ε) agrees with the integral", _check_monte_carlo,
                       "6 standard errors of 20000 draws: false alarm ≤ 2e-9 per row"),
    ),
    conventions=("computed exactly (quadrature), never by sampling",
                 "sigma > 0 broadcasts against the batch shape; labels are integers of shape mu.shape[:-1]"),
    reference=SEED000,
    invalid={"sigma": [0.0, -1.0, float("inf")], "labels": ["label n", "label -1"], "mu": ["integer array"]},
    max_n=3, max_rows=2, span_digits=False, budget=0.2,
)

QUANTITIES = (EXACT_ACCURACY,)
