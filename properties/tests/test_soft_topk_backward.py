"""soft_topk's second reverse pass, on its own: a correct gradient, not only a NaN filler.

Our soft_topk takes the entries of its gradient from a pass that carries each
adjoint with a per-row exponent (``_soft_topk_vjp_wide``) only where the
ordinary reverse pass gives NaN, so the properties meet it only there.  Here
a variant whose backward is that pass alone is audited by the same gradient
and stability properties (float64 and float32, the regression rows first),
with our own bound (``native_half=False``).
"""

import pytest

from losscheck.properties import frameworks
from losscheck.properties.engine import audit

HERE = "properties/tests/test_soft_topk_backward.py"


def soft_topk_wide_torch(x, topk, k=1.0):
    import torch

    from losscheck.impls import torch_smoothing as ts

    class WideOnly(torch.autograd.Function):
        @staticmethod
        def forward(ctx, xc):
            ctx.steps = []
            p = ts._soft_topk(xc, topk, k, ctx.steps)
            ctx.save_for_backward(xc)
            return p

        @staticmethod
        def backward(ctx, w):
            (xc,) = ctx.saved_tensors
            return ts._soft_topk_vjp_wide(xc, k, ctx.steps, w)

    return WideOnly.apply(x.to(torch.float64)).to(x.dtype)


def soft_topk_wide_jax(x, topk, k=1.0):
    import jax
    import jax.numpy as jnp

    from losscheck.impls import jax_smoothing as js

    kc = jnp.asarray(k, jnp.float64)

    @jax.custom_vjp
    def wide_only(xc):
        return js._soft_topk_recursion(xc, topk, kc)[0]

    def fwd(xc):
        p, steps = js._soft_topk_recursion(xc, topk, kc)
        return p, (xc, steps)

    def bwd(residuals, w):
        xc, steps = residuals
        return (js._soft_topk_vjp_wide(xc, kc, steps, w),)

    wide_only.defvjp(fwd, bwd)
    return wide_only(jnp.asarray(x).astype(jnp.float64)).astype(jnp.asarray(x).dtype)


@pytest.mark.parametrize("fw, prop", [
    # the jax items and torch's stability[float64] took 18-42 s each (session 11): the slow tier (tiers.py)
    pytest.param(fw, prop, marks=[pytest.mark.slow] if fw == "jax" or prop == "stability[float64]" else [])
    for fw in ("torch", "jax") for prop in ("gradient[float64]", "gradient[float32]", "stability[float64]", "stability[float32]")])
def test_the_wide_reverse_pass_alone_is_the_gradient(fw, prop):
    if not frameworks.get(fw).available():
        pytest.skip(f"{fw} is not installed")
    fn = {"torch": soft_topk_wide_torch, "jax": soft_topk_wide_jax}[fw]
    res = audit(fn, "soft_topk", fw, label=f"{fw} wide reverse pass", target_spec=f"{HERE}:{fn.__name__}",
                only=prop, native_half=False)
    [rec] = [r for r in res["results"] if r["property"] == prop]
    assert rec["verdict"] == "holds", rec["message"] + "\n" + str(rec.get("counterexample"))
    assert rec["examples"] > 0
