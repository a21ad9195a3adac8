"""The mixed forward–backward criterion (properties.mixed): at an ill-conditioned input the
comparison with the reference allows errors of the size of the condition number, but a result no
nearby input produces — a softmax not summing to 1, an IoU above 1, a logsumexp gradient that is
not a probability vector — is still a finding, while the honest rounding of log-space formulas
(exp(x − lse), torch.logsumexp's backward) is not."""

import numpy as np
import pytest

from losscheck import spec
from losscheck.properties import frameworks, mixed
from losscheck.properties.checks import Target, check_gradient, check_value


def _torch():
    if not frameworks.get("torch").available():
        pytest.skip("torch is not installed")
    import torch
    return torch


# large, close logits: the typical domain (|x| ≤ 1e4), where softmax's sensitivity S ~ k·|x| makes the
# comparison's tolerance about 1e-3 in float32
_LARGE = np.array([-3000.0, -2999.75, -2999.0])


def _value(fn, quantity, args, dtype="float32"):
    return check_value(Target(fn, spec.get(quantity), "torch", label=fn.__name__), {"args": args, "dtype": dtype})


def _gradient(fn, quantity, args, cotangent, dtype="float32"):
    case = {"args": args, "dtype": dtype, "cotangent": np.asarray(cotangent, dtype=np.float64)}
    return check_gradient(Target(fn, spec.get(quantity), "torch", label=fn.__name__), case)


def test_softmax_that_does_not_sum_to_one_is_a_bug_where_the_comparison_allows_it():
    torch = _torch()

    def off_by_ulps(x, k=1.0):  # lse 32 eps·|lse| high: each entry within the tolerance, their sum 1 − 1e-4
        lse = torch.logsumexp(k * x, dim=-1, keepdim=True)
        return torch.exp(k * x - (lse + 32 * torch.finfo(x.dtype).eps * lse.abs()))

    out = _value(off_by_ulps, "softmax", {"x": _LARGE, "k": 1.0})
    assert not out.ok and out.severity == "bug"
    assert out.facts["check"] == "image sum" and out.facts["expected_value"] == 1.0
    assert abs(out.facts["got_value"] - 1.0) > 5e-5


def test_log_space_softmax_and_torch_logsumexp_gradient_pass():
    """exp(x − lse) sums to 1 − eps·|lse| (the rounding of lse, carried into every entry), as does
    torch.logsumexp's backward exp(x − result): both are honest, and pass."""
    torch = _torch()

    def log_space(x, k=1.0):
        return torch.exp(k * x - torch.logsumexp(k * x, dim=-1, keepdim=True))

    def lse(x, k=1.0):
        return torch.logsumexp(k * x, dim=-1) / k

    for x in (_LARGE, np.array([9999.5, 1e4]), np.array([1e4, 1e4, 1e4 - 3.0])):
        assert _value(log_space, "softmax", {"x": x, "k": 1.0}).ok
        out = _gradient(lse, "logsumexp", {"x": x, "k": 1.0}, 1.0)
        assert out.ok, out.message


def test_gradient_that_cannot_be_a_softmax_is_a_bug():
    torch = _torch()

    class _Lse(torch.autograd.Function):  # backward exp(x − lse)·(1 + 2^-8): entries sum to 1 + 3.9e-3
        @staticmethod
        def forward(ctx, x):
            out = torch.logsumexp(x, dim=-1)
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, w):
            x, out = ctx.saved_tensors
            return w.unsqueeze(-1) * torch.exp(x - out.unsqueeze(-1)) * (1 + 2.0 ** -8)

    def lse(x, k=1.0):
        return _Lse.apply(k * x) / k

    out = _gradient(lse, "logsumexp", {"x": _LARGE, "k": 1.0}, 1.0)
    # the comparison allows ~C(n)·eps·k|x| ≈ 8e-3 per entry here; the identity, 4·eps·k|x| ≈ 7e-4 of the sum
    assert not out.ok and out.facts["check"] == "invariance" and out.severity == "bug", out.message
    assert abs(out.facts["got_value"] - 1.0) > 3e-3


def test_iou_above_one_is_a_bug_where_the_comparison_allows_it():
    torch = _torch()

    def iou_scaled(a, b):  # a correct IoU times 1 + 2^-8
        wh = (torch.minimum(a[..., 2:], b[..., 2:]) - torch.maximum(a[..., :2], b[..., :2])).clamp(min=0)
        inter = wh[..., 0] * wh[..., 1]
        area = lambda z: (z[..., 2] - z[..., 0]) * (z[..., 3] - z[..., 1])  # noqa: E731
        return inter / (area(a) + area(b) - inter) * (1 + 2.0 ** -8)

    box = np.array([8000.0, 8000.0, 8000.5, 8000.5])  # identical small boxes at pixel scale: S ~ 8000/0.5
    out = _value(iou_scaled, "box_iou", {"a": box, "b": box})
    assert not out.ok and out.facts["check"] == "image" and out.severity == "bug"
    assert out.facts["expected_value"] == 1.0 and out.facts["got_value"] > 1.0


def test_violation_allowances():
    """The allowance of a bound is the result's own rounding, C(n)·eps·(|b| + 1); of a sum, that of
    its terms plus eps·E per unit of the terms (E: the exponents' size)."""
    q = spec.get("softmax")
    args = {"x": np.array([0.0, 1.0]), "k": 1.0}
    assert mixed.image_violation(q, args, np.array([0.25, 0.75 + 2e-7]), "float32", 2) is None  # 3 ULPs: rounding
    v = mixed.image_violation(q, args, np.array([0.25, 0.75 + 1e-4]), "float32", 2)
    assert v is not None and v.check == "image sum" and v.within_practical  # 1e-4 < 2^-12: accuracy
    v = mixed.image_violation(q, args, np.array([-0.01, 1.01]), "float32", 2)
    assert v is not None and v.check == "image" and v.expected == 0.0 and not v.within_practical
    lse = spec.get("logsumexp")
    big = {"x": np.array([1e4, 1e4]), "k": 1.0}
    # the gradient exp(x − lse) with lse rounded by 0.5 ULP (2^-11 at 1e4): within 4·eps·E
    assert mixed.shift_violation(lse, big, 1.0, {"x": np.full(2, 0.5 * np.exp(-2.0 ** -11))}, "float32", 2) is None
    assert mixed.shift_violation(lse, big, 1.0, {"x": np.full(2, 0.5 * 1.01)}, "float32", 2) is not None


def test_an_all_masked_row_is_exempt_from_the_invariance():
    """logsumexp of an all −inf row is the constant −inf with a zero gradient (the masking
    convention): Σ_i ∂/∂x_i = 1 holds only where some entry is finite."""
    lse = spec.get("logsumexp")
    args = {"x": np.array([[-np.inf, -np.inf], [0.0, 0.0]]), "k": 1.0}
    assert mixed.shift_violation(lse, args, np.ones(2), {"x": np.array([[0.0, 0.0], [0.5, 0.5]])}, "float32", 2) is None
    v = mixed.shift_violation(lse, args, np.ones(2), {"x": np.array([[0.0, 0.0], [0.5, 0.4]])}, "float32", 2)
    assert v is not None and v.index == (1,)
