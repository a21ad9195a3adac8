"""Rooflines of the benchmarks: the least time a call could take on this machine.

A benchmark of a quantity with no peer has nothing to be compared with but the
machine itself (issue 18).  Its roofline is the largest of three lower bounds,
each from work that any implementation must do and a rate measured here:

* **bytes**: the call's input arrays read once, its output written once (and,
  forward + backward, the gradient written once), at the bandwidth of a large
  copy (``torch`` ``Tensor.copy_``, all threads; NumPy where torch is missing);
* **transcendentals**: the ``exp``/``log``/``erfc``/``atan`` evaluations the
  quantity's formula needs (:data:`TRANSCENDENTALS`, counted per call from its
  inputs), at the rate of a float32 ``exp`` on data held in the L1 cache, times
  the threads (the best of torch and NumPy);
* **sorts**: for the sort-based quantities (Lovász, AUC) one sort of the
  elements they rank (:data:`SORTED`), timed as ``torch.sort`` (``numpy.sort``
  without torch) at the same shape.

Each is a bound, not an estimate: every transcendental costs at least an
``exp``, and a fused kernel keeps a row (``n`` floats) in cache between its
passes, so it streams each array once.  (EXACT's count is that of the
quadrature, 80 nodes, that keeps float64 accuracy: a bound for that method.)
``ours / roofline`` is how far an implementation is from that; the report and
``python -m asv_benchmarks.ratios`` print it beside the time.
"""

from __future__ import annotations

import functools
import os
import time

import numpy as np


def _pairs(labels) -> float:
    """Positive-negative pairs summed over the rows of 0/1 ``labels`` (last axis)."""
    pos = np.asarray(labels).sum(-1).astype(np.float64)
    return float((pos * (labels.shape[-1] - pos)).sum())


#: quantity -> (arrays, constants, mode) -> transcendental evaluations per call, from the formula
#: (catalogue): one exp per entry for a softmax or a logsumexp (the rows' logs are n times fewer and
#: left out), one per pass of soft_topk, a sigmoid per positive-negative pair of soft_auc, an atan
#: per box of ciou, log Phi at each of EXACT's 80 quadrature nodes per class (impls/torch_exact.py:
#: fewer lose float64 accuracy at n = 1000) and, backward, the density's exp at each; the backward
#: pass of the others reuses the forward's exponentials (the softmax is the derivative of the
#: logsumexp).  Quantities without one (hinge, Dice, box IoU, Lovász, AUC) are absent: 0.
TRANSCENDENTALS = {
    "logsumexp": lambda a, c, m: a["x"].size,
    "softmax": lambda a, c, m: a["x"].size,
    "soft_argmax": lambda a, c, m: a["x"].size,
    "soft_topk": lambda a, c, m: c["topk"] * a["x"].size,
    "cross_entropy": lambda a, c, m: a["logits"].size,
    "soft_accuracy": lambda a, c, m: a["logits"].size,
    "entropy": lambda a, c, m: a["p"].size,  # log p
    "kl_divergence": lambda a, c, m: a["p"].size,  # log(p / q)
    "logistic_loss": lambda a, c, m: 2 * a["f"].size,  # log1p(exp(-|z|))
    "zlpr": lambda a, c, m: a["scores"].size,  # exp(+-s) for the two logsumexps
    "zlpr_probability": lambda a, c, m: a["scores"].size,  # sigmoid(2s)
    "soft_auc": lambda a, c, m: _pairs(a["labels"]),  # sigmoid((s_i - s_j) / tau)
    "ciou": lambda a, c, m: 2 * a["a"].shape[0],  # atan(w/h) of each box
    "exact_accuracy": lambda a, c, m: 80 * a["mu"].size * (1 if m == "forward" else 2),
}

#: quantity -> (arrays, constants) -> (array to sort, axis): what a sort-based quantity ranks
SORTED = {
    "lovasz_hinge": lambda a, c: (a["logits"].reshape(-1), -1),  # layout "all": one problem
    "lovasz_softmax": lambda a, c: (a["probs"].reshape(-1, a["probs"].shape[-1]), 0),  # each class's errors
    "auc": lambda a, c: (a["scores"], -1),
}


def _median_seconds(fn, repeat=7) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


@functools.cache
def machine() -> dict:
    """{"bandwidth": bytes/s, "exp_rate": float32 exps/s, "threads": n}, measured once per process."""
    torch = _torch()
    size = 1 << 24  # 64 MB of float32: far beyond the caches
    if torch is not None:
        threads = torch.get_num_threads()
        src, dst = torch.ones(size), torch.empty(size)
        copy = _median_seconds(lambda: dst.copy_(src))
    else:
        threads = os.cpu_count() or 1
        src, dst = np.ones(size, np.float32), np.empty(size, np.float32)
        copy = _median_seconds(lambda: np.copyto(dst, src))
    bandwidth = 2 * src.nbytes / copy  # read and written
    chunk, loops = 4096, 64  # 16 kB: in L1; one thread (torch splits only far larger arrays)
    x = np.linspace(-4, 4, chunk, dtype=np.float32)
    out = np.empty_like(x)

    def numpy_exps():
        for _ in range(loops):
            np.exp(x, out=out)
    rates = [chunk * loops / _median_seconds(numpy_exps)]
    if torch is not None:
        tx, tout = torch.from_numpy(x), torch.empty(chunk)

        def torch_exps():
            for _ in range(loops):
                torch.exp(tx, out=tout)
        rates.append(chunk * loops / _median_seconds(torch_exps))
    return {"bandwidth": bandwidth, "exp_rate": max(rates) * threads, "threads": threads}


def _sort_seconds(values: np.ndarray, axis: int) -> float:
    torch = _torch()
    if torch is not None:
        t = torch.from_numpy(np.ascontiguousarray(values))
        return _median_seconds(lambda: torch.sort(t, dim=axis), repeat=3)
    return _median_seconds(lambda: np.sort(values, axis=axis), repeat=3)


def roofline(quantity: str, mode: str, arrays: dict, consts: dict) -> dict:
    """The bounds of one benchmark call of ``quantity`` (a name) in ``mode`` ("forward" or
    "forward_backward"), at the inputs the benchmark passes (``arrays``: NumPy, ``consts``: Python
    scalars): ``{"seconds": the largest bound, "bound": its name, "bytes", "transcendentals", "sort":
    each bound in seconds}``.  Forward + backward also writes the gradient of the first differentiated
    argument (float32), the one the benchmark asks for."""
    from losscheck import spec
    from losscheck.spec.reference import Reference

    q = spec.QUANTITIES[quantity]
    rates = machine()
    output = Reference(q).output_shape({**arrays, **consts})  # the spec's: one value per row of its layout
    moved = sum(v.nbytes for v in arrays.values()) + 4 * int(np.prod(output))
    if mode != "forward" and q.grad_args:
        moved += arrays[q.grad_args[0].name].size * 4
    bounds = {"bytes": moved / rates["bandwidth"],
              "transcendentals": TRANSCENDENTALS.get(quantity, lambda a, c, m: 0)(arrays, consts, mode) / rates["exp_rate"],
              "sort": _sort_seconds(*SORTED[quantity](arrays, consts)) if quantity in SORTED else 0.0}
    bounds["seconds"] = max(bounds.values())
    bounds["bound"] = max(("bytes", "transcendentals", "sort"), key=bounds.get)
    return bounds
