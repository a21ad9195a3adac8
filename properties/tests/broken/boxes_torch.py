"""Broken torch box-IoU implementations (see __init__.BROKEN for what each gets wrong).

Each validates its arguments like ours (so that only the named defect shows),
unless the defect is the validation itself."""

import math

import torch


def _check(a, b, order=True):
    for name, x in (("a", a), ("b", b)):
        if not x.is_floating_point() or x.shape[-1] != 4:
            raise ValueError(f"{name} must be floating boxes (..., 4)")
        if order and bool(((x[..., 2] < x[..., 0]) | (x[..., 3] < x[..., 1])).any()):
            raise ValueError(f"{name} has x2 < x1 or y2 < y1")
    return a.double(), b.double()


def _parts(a, b, plus=0.0):
    iw = (torch.minimum(a[..., 2], b[..., 2]) - torch.maximum(a[..., 0], b[..., 0]) + plus).clamp(min=0)
    ih = (torch.minimum(a[..., 3], b[..., 3]) - torch.maximum(a[..., 1], b[..., 1]) + plus).clamp(min=0)
    area_a = (a[..., 2] - a[..., 0] + plus) * (a[..., 3] - a[..., 1] + plus)
    area_b = (b[..., 2] - b[..., 0] + plus) * (b[..., 3] - b[..., 1] + plus)
    W = torch.maximum(a[..., 2], b[..., 2]) - torch.minimum(a[..., 0], b[..., 0])
    H = torch.maximum(a[..., 3], b[..., 3]) - torch.minimum(a[..., 1], b[..., 1])
    return iw * ih, area_a + area_b - iw * ih, W * H


def _guarded(num, den):
    return torch.where(den > 0, num / torch.where(den > 0, den, torch.ones_like(den)), torch.zeros_like(den))


def iou_union_not_minus_inter(a, b):
    a2, b2 = _check(a, b)
    inter, union, _ = _parts(a2, b2)
    return _guarded(inter, union + inter).to(a.dtype)  # |a| + |b|: the intersection counted twice


def iou_pixel_plus_one(a, b):
    a2, b2 = _check(a, b)
    inter, union, _ = _parts(a2, b2, plus=1.0)  # seed 001's get_iou: +1 on every width and height
    return _guarded(inter, union).to(a.dtype)


def iou_no_clamp(a, b):
    a2, b2 = _check(a, b)
    iw = torch.minimum(a2[..., 2], b2[..., 2]) - torch.maximum(a2[..., 0], b2[..., 0])  # may be negative
    ih = torch.minimum(a2[..., 3], b2[..., 3]) - torch.maximum(a2[..., 1], b2[..., 1])
    inter = iw * ih
    union = (a2[..., 2] - a2[..., 0]) * (a2[..., 3] - a2[..., 1]) + (b2[..., 2] - b2[..., 0]) * (b2[..., 3] - b2[..., 1]) - inter
    return _guarded(inter, union).to(a.dtype)


def iou_no_degenerate_guard(a, b):
    a2, b2 = _check(a, b)
    inter, union, _ = _parts(a2, b2)
    return (inter / union).to(a.dtype)  # 0/0 = NaN for two degenerate boxes


def iou_accepts_x2_lt_x1(a, b):
    a2, b2 = _check(a, b, order=False)
    inter, union, _ = _parts(a2, b2)
    return _guarded(inter, union).to(a.dtype)


def giou_wrong_corners(a, b):
    a2, b2 = _check(a, b)
    inter, union, _ = _parts(a2, b2)
    # "enclosing" box from max of the lower corners and min of the upper ones (the intersection's corners)
    W = (torch.minimum(a2[..., 2], b2[..., 2]) - torch.maximum(a2[..., 0], b2[..., 0])).abs()
    H = (torch.minimum(a2[..., 3], b2[..., 3]) - torch.maximum(a2[..., 1], b2[..., 1])).abs()
    C = W * H
    return (_guarded(inter, union) - _guarded(C - union, C)).to(a.dtype)


def giou_divides_by_union(a, b):
    a2, b2 = _check(a, b)
    inter, union, C = _parts(a2, b2)
    return (_guarded(inter, union) - _guarded(C - union, union)).to(a.dtype)  # ÷ |a ∪ b| instead of |C|


def diou_rho_not_squared(a, b):
    a2, b2 = _check(a, b)
    inter, union, _ = _parts(a2, b2)
    dx = (a2[..., 0] + a2[..., 2] - b2[..., 0] - b2[..., 2]) / 2
    dy = (a2[..., 1] + a2[..., 3] - b2[..., 1] - b2[..., 3]) / 2
    W = torch.maximum(a2[..., 2], b2[..., 2]) - torch.minimum(a2[..., 0], b2[..., 0])
    H = torch.maximum(a2[..., 3], b2[..., 3]) - torch.minimum(a2[..., 1], b2[..., 1])
    rho = torch.sqrt(dx * dx + dy * dy)
    return (_guarded(inter, union) - _guarded(rho, W * W + H * H)).to(a.dtype)  # ρ, not ρ²


def _ciou(a, b, detach):
    a2, b2 = _check(a, b)
    inter, union, _ = _parts(a2, b2)
    iou = _guarded(inter, union)
    dx = (a2[..., 0] + a2[..., 2] - b2[..., 0] - b2[..., 2]) / 2
    dy = (a2[..., 1] + a2[..., 3] - b2[..., 1] - b2[..., 3]) / 2
    W = torch.maximum(a2[..., 2], b2[..., 2]) - torch.minimum(a2[..., 0], b2[..., 0])
    H = torch.maximum(a2[..., 3], b2[..., 3]) - torch.minimum(a2[..., 1], b2[..., 1])
    diou = iou - _guarded(dx * dx + dy * dy, W * W + H * H)
    v = 4 / math.pi ** 2 * (torch.atan2(b2[..., 2] - b2[..., 0], b2[..., 3] - b2[..., 1])
                            - torch.atan2(a2[..., 2] - a2[..., 0], a2[..., 3] - a2[..., 1])) ** 2
    alpha = _guarded(v, (1 - iou) + v)
    if detach:
        alpha = alpha.detach()
    return (diou - alpha * v).to(a.dtype)


def ciou_alpha_in_gradient(a, b):
    return _ciou(a, b, detach=False)  # differentiates through α


def iou_half_native(a, b):
    """Right formula, computed in the input dtype: in float16 the areas of pixel-scale boxes (from
    256 × 256 = 65536 > 65504) overflow to inf, and inf / inf = NaN."""
    _check(a, b)
    inter, union, _ = _parts(a, b)
    return _guarded(inter, union)
