"""Broken torch smoothing primitives (see __init__.BROKEN for what each gets wrong)."""

import itertools

import torch


def _k_ok(k):
    if not k > 0:
        raise ValueError(f"k must be > 0, got {k}")


def lse_no_max_shift(x, k=1.0):
    _k_ok(k)
    return torch.log(torch.exp(k * x).sum(-1)) / k


def lse_forgot_inv_k(x, k=1.0):
    _k_ok(k)
    m = x.amax(-1, keepdim=True).detach()
    return (m + torch.log(torch.exp(k * (x - m)).sum(-1, keepdim=True))).squeeze(-1)


def lse_nan_all_masked(x, k=1.0):
    _k_ok(k)
    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    m = xf.amax(-1, keepdim=True).detach()
    return (m + torch.log(torch.exp(k * (xf - m)).sum(-1, keepdim=True)) / k).squeeze(-1).to(x.dtype)


def lse_shift_in_place(x, k=1.0):
    """Saves a temporary by shifting x in place (when no gradient is asked): the result is right,
    the caller's x is left shifted by its row maxima."""
    _k_ok(k)
    m = x.amax(-1, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    if x.requires_grad:
        z = x - m
    else:
        z = x.sub_(m)
    return (m + torch.log(torch.exp(k * z).sum(-1, keepdim=True)) / k).squeeze(-1)


_CALLS = itertools.count()


def lse_every_third_call_off(x, k=1.0):
    """Right on two calls of three, 2^-10 relative off on the third (a stale cache, a racy buffer)."""
    _k_ok(k)
    out = torch.logsumexp(k * x, dim=-1) / k
    return out * (1 + 2.0 ** -10) if next(_CALLS) % 3 == 0 else out


def lse_half_native(x, k=1.0):
    _k_ok(k)
    m = x.amax(-1, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    s = torch.exp(k * (x - m)).sum(-1, keepdim=True)  # stays in x.dtype: float16 sums
    return (m + torch.log(s) / k).squeeze(-1)


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        m = x.amax(-1, keepdim=True)
        e = torch.exp(k * (x - m))
        p = e / e.sum(-1, keepdim=True)
        ctx.save_for_backward(p)
        ctx.k = k
        return p

    @staticmethod
    def backward(ctx, w):
        (p,) = ctx.saved_tensors
        return ctx.k * p * w, None  # forgets − p·Σ_j w_j p_j


def softmax_wrong_backward(x, k=1.0):
    _k_ok(k)
    return _Softmax.apply(x, k)


def softmax_ignores_k(x, k=1.0):
    _k_ok(k)
    return torch.softmax(x.double(), -1).to(x.dtype)


def softmax_nan_all_masked(x, k=1.0):
    _k_ok(k)
    xf = x.double()
    m = xf.amax(-1, keepdim=True).detach()
    e = torch.exp(k * (xf - m))
    return (e / e.sum(-1, keepdim=True)).to(x.dtype)


def softmax_accepts_k0(x, k=1.0):
    m = x.amax(-1, keepdim=True).detach()
    e = torch.exp(k * (x - m))
    return e / e.sum(-1, keepdim=True)


def soft_argmax_one_based(x, k=1.0):
    _k_ok(k)
    xf = x.double()
    p = torch.softmax(k * xf, -1)
    idx = torch.arange(1, x.shape[-1] + 1, dtype=xf.dtype)
    return (p * idx).sum(-1).to(x.dtype)


def soft_topk_detached_min(x, topk, k=1.0):
    return _topk(x, topk, k, detach_min=True)


def soft_topk_in_input_dtype(x, topk, k=1.0):
    return _topk(x, topk, k, compute=None)


def _topk(x, topk, k, shift=True, k_every_pass=True, renorm=False, detach_min=False, compute=torch.float64):
    _k_ok(k)
    xf = x.to(compute) if compute is not None else x
    low = xf.amin(-1, keepdim=True)
    z = xf - (low.detach() if detach_min else low) if shift else xf
    p = torch.zeros_like(z)
    for t in range(topk):
        kk = k if (k_every_pass or t == 0) else 1.0
        q = torch.softmax(kk * (1 - p) * z, -1)
        if renorm:
            q = q / q.amax(-1, keepdim=True)
        p = p + q
    return p.to(x.dtype)


def soft_topk_no_min_shift(x, topk, k=1.0):
    return _topk(x, topk, k, shift=False)


def soft_topk_k_first_pass_only(x, topk, k=1.0):
    return _topk(x, topk, k, k_every_pass=False)


def soft_topk_renormalised(x, topk, k=1.0):
    return _topk(x, topk, k, renorm=True)


def lse_inf_as_empty_row(x, k=1.0):
    """Takes any non-finite row maximum for an all -inf (empty) row: right on every finite input and
    on masked rows, but a row holding +inf answers -inf, the empty row's value (ours did, session 11)."""
    _k_ok(k)
    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    m = xf.amax(-1, keepdim=True).detach()
    finite = torch.isfinite(m)
    m = torch.where(finite, m, torch.zeros_like(m))
    out = m + torch.log(torch.exp(k * (xf - m)).sum(-1, keepdim=True)) / k
    return torch.where(finite, out, -torch.inf).squeeze(-1).to(x.dtype)


def softmax_lse_off_by_ulps(x, k=1.0):
    """exp(k·x − L) with L sixteen ULPs of |L| above logsumexp(k·x) (an lse from a sloppier routine).
    Each entry is off by a relative 32·eps·|L|: within the comparison's tolerance wherever the logits
    are large and close (S ~ k|x|), but the entries sum to 1 − 32·eps·|L|, which no input gives."""
    _k_ok(k)
    L = torch.logsumexp(k * x, dim=-1, keepdim=True)
    L = L + 32 * torch.finfo(x.dtype).eps * L.abs()
    return torch.exp(k * x - L)
