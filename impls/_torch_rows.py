"""Helpers shared by the fused ``torch_*`` kernels (never by ``jax_*``): rows, tails.

The leading underscore keeps this module out of the registry in
``impls/__init__.py``, which imports ``torch_*`` modules only.
"""

from __future__ import annotations

import math

import torch

#: chunk length of :func:`first_argmax` (rows shorter than two chunks use ``argmax`` directly)
_CHUNK = 32


def first_argmax(x: torch.Tensor) -> torch.Tensor:
    """Index of the first maximal entry of each row of the 2-d ``x``, shape ``(rows, 1)``.

    The same index as ``x.argmax(-1, keepdim=True)`` (a NaN counts as the
    maximum, as there), found in two steps: the row is cut into chunks of
    ``_CHUNK`` entries, the first chunk with the largest maximum is taken
    (``amax`` per chunk, vectorised), then the first maximal entry inside
    it; a ragged tail is compared separately. On the CPU ``argmax`` over a
    long row is a scalar loop; this is several times faster.
    """
    rows, n = x.shape
    if n < 2 * _CHUNK or rows == 0:
        return x.argmax(-1, keepdim=True)
    m = n // _CHUNK
    n0 = m * _CHUNK
    main = x[:, :n0].reshape(rows, m, _CHUNK)
    chunk_max = main.amax(-1)
    j = chunk_max.argmax(-1, keepdim=True)
    chunk = main.gather(1, j.unsqueeze(-1).expand(rows, 1, _CHUNK)).squeeze(1)
    idx = j * _CHUNK + chunk.argmax(-1, keepdim=True)
    if n0 < n:
        best = chunk_max.gather(1, j)
        tail_max, tail_idx = x[:, n0:].max(-1, keepdim=True)
        # the tail wins only if strictly larger (it comes last), or if it holds a NaN the chunks do not
        later = (tail_max > best) | (torch.isnan(tail_max) & ~torch.isnan(best))
        idx = torch.where(later, tail_idx + n0, idx)
    return idx


def any_rows(mask: torch.Tensor) -> bool:
    """Whether a (small, per-row) boolean ``mask`` may hold a True: exact on the CPU, and
    True elsewhere (reading a device tensor would force a synchronisation)."""
    return mask.device.type != "cpu" or bool(mask.any())


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """``torch.softmax(x, -1)`` with the rows of ``-inf`` entries only (no mass) set to 0, where
    the kernel gives NaN (``-inf - -inf``); a NaN or ``+inf`` entry keeps its row NaN.  On the CPU
    only the rows whose first entry came out NaN are looked at (none, as a rule); elsewhere a pass
    over the row maxima, without a device synchronisation."""
    p = torch.softmax(x, -1)
    if p.device.type == "cpu":
        nan_rows = torch.isnan(p[..., :1])
        if bool(nan_rows.any()):
            p.masked_fill_(nan_rows & (x == -math.inf).all(dim=-1, keepdim=True), 0.0)
    else:
        p.masked_fill_(torch.amax(x, dim=-1, keepdim=True) == -math.inf, 0.0)
    return p


def sigmoid_lower_tail(y, u):
    """``sigmoid(u)`` (computed as ``y``) with its deep lower tail mended in place: where ``e^{-u}``
    overflows (``u < -log(max)``), torch's ``1 / (1 + e^{-u})`` is 0, and ``e^u`` (equal to
    ``sigmoid(u)`` to ``e^u`` relative, at most 1e-38) keeps the subnormal values.  On the CPU the
    mending costs one reduction over ``u`` (its minimum; NaN, which hides it, mends) where no entry
    is that far out."""
    limit = -math.log(torch.finfo(u.dtype).max) + 1.0
    if u.device.type != "cpu" or not float(u.amin()) >= limit:
        y = torch.where(u < limit, torch.exp(u), y)
    return y
