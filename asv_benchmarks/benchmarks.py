"""airspeed velocity benchmarks, generated from the spec registry.

One class per quantity of ``spec.QUANTITIES`` (the class is named after the
quantity), each with ``time_forward`` and ``time_forward_backward`` (the sum
of the output differentiated with respect to the first differentiated argument),
parameterised by

* ``size``: ``"32x16"``, ``"4096x1000"``, ``"16384x1000"`` (batch x n);
* ``implementation``: ``"<framework>:<who>@<device>"``, e.g.
  ``"torch:losscheck@cpu"`` (ours, from ``impls.implementations``) or
  ``"jax:jax.nn.logsumexp@cpu"`` (a peer from :data:`PEERS`).

A new quantity in ``spec`` + ``impls`` gets its benchmarks with no edit here.
Inputs are built from the argument kinds (see :func:`make_inputs`); a few
quantities use other shapes (:data:`SIZE_OVERRIDES`).  jax runs are jitted (non-vector arguments are closed
over, so they are static) and warmed up in ``setup``; torch runs on CUDA when
available, else on the CPU, and synchronises inside the timed call.  A
framework that cannot be imported, or a quantity it does not implement, is
skipped (``NotImplementedError`` in ``setup``).

:func:`prepare` and :data:`PEERS` are shared with
``properties/tests/test_bench.py`` (pytest-benchmark).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Callable

import numpy as _np

if importlib.util.find_spec("losscheck") is not None:  # asv's environments, nox's, `pip install -e .`
    from losscheck import impls as _impls
    from losscheck import spec as _spec
elif importlib.util.find_spec("impls") is not None:  # asv benchmarking a commit from before the losscheck
    import impls as _impls  # namespace (ac557c8), whose wheel installs spec/ and impls/ as top-level packages
    import spec as _spec
else:
    raise ImportError("losscheck is not installed in this interpreter: pip install -e '.[torch,jax]' "
                      "(asv installs it into its own environments)")

#: The benchmarked sizes, as (batch, n).
SIZES = {"small": (32, 16), "medium": (4096, 1000), "large": (16384, 1000)}
#: What is timed: the forward pass, or forward + backward of ``out.sum()``.
MODES = ("forward", "forward_backward")
#: Our implementations' label (``"<framework>:losscheck"``).
OURS = "losscheck"
SEED = 0


def size_label(size) -> str:
    """``(4096, 1000)`` or ``"medium"`` -> ``"4096x1000"``."""
    batch, n = SIZES[size] if isinstance(size, str) and size in SIZES else parse_size(size)
    return f"{batch}x{n}"


def parse_size(size) -> tuple[int, int]:
    """``"4096x1000"`` (or a (batch, n) pair, or a SIZES key) -> (4096, 1000)."""
    if isinstance(size, str):
        if size in SIZES:
            return SIZES[size]
        batch, n = size.lower().split("x")
        return int(batch), int(n)
    batch, n = size
    return int(batch), int(n)


# --------------------------------------------------------------------------
# Peers: other libraries' implementations of a catalogue quantity.  Each
# factory imports its framework only when called and returns a callable with
# the quantity's signature (keyword arguments named as in spec).


def _torch_logsumexp():
    import torch

    def logsumexp(x, k=1.0):
        if k == 1:
            return torch.logsumexp(x, dim=-1)
        return torch.logsumexp(x * k, dim=-1) / k

    return logsumexp


def _torch_softmax():
    import torch

    def softmax(x, k=1.0):
        return torch.softmax(x if k == 1 else x * k, dim=-1)

    return softmax


def _jax_logsumexp():
    import jax

    def logsumexp(x, k=1.0):
        if k == 1:
            return jax.nn.logsumexp(x, axis=-1)
        return jax.nn.logsumexp(x * k, axis=-1) / k

    return logsumexp


def _jax_softmax():
    import jax

    def softmax(x, k=1.0):
        return jax.nn.softmax(x if k == 1 else x * k, axis=-1)

    return softmax


def _torch_fn(build):
    """A peer factory: ``build(torch, F)`` returns the callable (imports deferred)."""
    def factory():
        import torch
        import torch.nn.functional as F
        return build(torch, F)
    return factory


def _jax_fn(build):
    def factory():
        import jax
        import optax
        return build(jax, optax)
    return factory


def _sklearn_auc():
    from sklearn.metrics import roc_auc_score

    def auc(scores, labels):
        return _np.array([roc_auc_score(lab, s) for s, lab in zip(scores, labels)])
    return auc


def _optax_dice(jax, optax):
    jnp = jax.numpy

    def dice(probs, targets, smooth=0.0, squared=False):
        if squared:
            raise NotImplementedError("optax's dice_loss has no squared form")
        # apply_softmax=False validates the sums with a Python `if` (not jit-able), so the peer is
        # timed on its ordinary path: two-class logits (log(1 − p), log p), whose softmax is (1 − p, p)
        p, t = probs.reshape(1, -1), targets.reshape(1, -1)
        logits, two_t = jnp.stack([jnp.log1p(-p), jnp.log(p)], -1), jnp.stack([1 - t, t], -1)
        return 1 - optax.losses.dice_loss(logits, two_t, smooth=smooth / 2, ignore_background=True)[0]
    return dice


def _library(module, build):
    """A peer factory for a torch library that may be missing from the benchmark environment:
    ``build(library_module)`` returns the callable; NotImplementedError (a skip) without it."""
    def factory():
        try:
            lib = importlib.import_module(module)
        except ImportError as e:
            raise NotImplementedError(f"{module} is not installed: {e}") from e
        return build(lib)
    return factory


def _monai_dice(losses, jaccard=False):
    """monai's DiceLoss on the whole array as one sample (batch 1, one channel): dice = 1 − loss."""
    def dice(probs, targets, smooth=0.0, squared=False):
        loss = losses.DiceLoss(squared_pred=squared, jaccard=jaccard, smooth_nr=smooth, smooth_dr=smooth, reduction="none")
        return 1 - loss(probs.reshape(1, 1, -1), targets.reshape(1, 1, -1)).reshape(())
    return dice if not jaccard else (lambda probs, targets, smooth=0.0: dice(probs, targets, smooth))


def _kornia_lovasz_softmax(losses):
    """kornia applies a softmax inside: given log-probabilities it sees our probabilities."""
    def lovasz_softmax(probs, labels):
        c = probs.shape[-1]
        return losses.lovasz_softmax_loss(probs.log().reshape(1, -1, c).permute(0, 2, 1)[..., None],
                                          labels.reshape(1, -1, 1))
    return lovasz_softmax


def _torchvision_loss(name):
    """1 − torchvision.ops.<name>(a, b, reduction="none"): the quantity, pair by pair."""
    def build(ops):
        loss = getattr(ops, name)
        return lambda a, b: 1 - loss(a, b, reduction="none")
    return _library("torchvision.ops", build)


def _flat_ce(torch, F):
    def cross_entropy(logits, target):
        n = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, n), target.reshape(-1), reduction="none").reshape(logits.shape[:-1])
    return cross_entropy


#: quantity name -> {"<framework>:<peer name>": factory}.  Peers compute the same
#: quantity with the catalogue signature; "(same shape)" marks a different loss
#: timed at the same shape for scale (BCE beside ZLPR, as issue 3 asks).
PEERS: dict[str, dict[str, Callable[[], Callable]]] = {
    "logsumexp": {
        "torch:torch.logsumexp": _torch_logsumexp,
        "jax:jax.nn.logsumexp": _jax_logsumexp,
    },
    "softmax": {
        "torch:torch.softmax": _torch_softmax,
        "jax:jax.nn.softmax": _jax_softmax,
    },
    "cross_entropy": {
        "torch:F.cross_entropy": _torch_fn(_flat_ce),
        "jax:optax.softmax_cross_entropy_with_integer_labels": _jax_fn(
            lambda jax, optax: lambda logits, target: optax.softmax_cross_entropy_with_integer_labels(logits, target)),
    },
    "entropy": {
        "torch:torch.special.entr": _torch_fn(lambda torch, F: lambda p: torch.special.entr(p).sum(-1)),
        "jax:jax.scipy.special.entr": _jax_fn(lambda jax, optax: lambda p: jax.scipy.special.entr(p).sum(-1)),
    },
    "kl_divergence": {
        "torch:F.kl_div": _torch_fn(lambda torch, F: lambda p, q: F.kl_div(torch.log(q), p, reduction="none").sum(-1)),
        "jax:optax.kl_divergence": _jax_fn(lambda jax, optax: lambda p, q: optax.kl_divergence(jax.numpy.log(q), p)),
    },
    "soft_accuracy": {
        "torch:torch.softmax+gather": _torch_fn(
            lambda torch, F: lambda logits, labels: torch.softmax(logits, -1).gather(-1, labels[..., None])[..., 0]),
        "jax:jax.nn.softmax+take": _jax_fn(lambda jax, optax: lambda logits, labels: jax.numpy.take_along_axis(
            jax.nn.softmax(logits, -1), labels[..., None], -1)[..., 0]),
    },
    "logistic_loss": {
        "torch:F.soft_margin_loss": _torch_fn(lambda torch, F: lambda f, l: F.soft_margin_loss(f, l, reduction="none")),
        "jax:jax.nn.softplus": _jax_fn(lambda jax, optax: lambda f, l: jax.nn.softplus(-l * f)),
    },
    "hinge_loss": {
        "torch:torch.relu(1-l*f)": _torch_fn(lambda torch, F: lambda f, l: torch.relu(1 - l * f)),
        "jax:optax.hinge_loss": _jax_fn(lambda jax, optax: lambda f, l: optax.hinge_loss(f, l)),
    },
    "zlpr": {
        "torch:F.binary_cross_entropy_with_logits (same shape)": _torch_fn(
            lambda torch, F: lambda scores, targets: F.binary_cross_entropy_with_logits(scores, targets, reduction="none").sum(-1)),
        "jax:optax.sigmoid_binary_cross_entropy (same shape)": _jax_fn(
            lambda jax, optax: lambda scores, targets: optax.sigmoid_binary_cross_entropy(scores, targets).sum(-1)),
    },
    "zlpr_probability": {
        "torch:torch.sigmoid(2s)": _torch_fn(lambda torch, F: lambda scores: torch.sigmoid(2 * scores)),
        "jax:jax.nn.sigmoid(2s)": _jax_fn(lambda jax, optax: lambda scores: jax.nn.sigmoid(2 * scores)),
    },
    "auc": {
        "numpy:sklearn.metrics.roc_auc_score": _sklearn_auc,
    },
    # optax's Dice is (I + s)/(I + ½(P − I) + ½(T − I) + s) = (2I + 2s)/(P + T + 2s) per class:
    # our smooth is twice its smooth; one class (the foreground of a two-class stack), batch 1
    "dice": {
        "torch:monai.losses.DiceLoss": _library("monai.losses", _monai_dice),
        "jax:optax.losses.dice_loss": _jax_fn(lambda jax, optax: _optax_dice(jax, optax)),
    },
    "jaccard": {
        "torch:monai.losses.DiceLoss(jaccard=True)": _library("monai.losses", lambda m: _monai_dice(m, jaccard=True)),
    },
    # kornia averages per image; the whole array is one image here (one sort, as ours)
    "lovasz_hinge": {
        "torch:kornia.losses.lovasz_hinge_loss": _library(
            "kornia.losses", lambda k: lambda logits, labels: k.lovasz_hinge_loss(logits.reshape(1, 1, -1, 1),
                                                                                   labels.reshape(1, -1, 1))),
    },
    "lovasz_softmax": {
        "torch:kornia.losses.lovasz_softmax_loss (softmax inside)": _library("kornia.losses", _kornia_lovasz_softmax),
    },
    # torchvision.ops (torch 2.14.1 + torchvision 0.29.1, the thirdparty environment; skipped without it)
    "giou": {
        "torch:monai box_pair_giou": _library("monai.data.box_utils", lambda m: lambda a, b: m.box_pair_giou(a, b)),
        "torch:torchvision.ops.generalized_box_iou_loss": _torchvision_loss("generalized_box_iou_loss"),
    },
    "diou": {"torch:torchvision.ops.distance_box_iou_loss": _torchvision_loss("distance_box_iou_loss")},
    "ciou": {"torch:torchvision.ops.complete_box_iou_loss": _torchvision_loss("complete_box_iou_loss")},
}

#: Sizes per quantity where the default shapes do not fit: soft_auc forms all
#: n² pairs of a row (16384 rows × 10^6 pairs would be 64 GB), EXACT integrates
#: over quadrature nodes per class, and sklearn's AUC loops over rows in Python.
SIZE_OVERRIDES = {
    "soft_auc": {"medium": (64, 1000), "large": (256, 1000)},
    "auc": {"medium": (256, 1000), "large": (1024, 1000)},
    "exact_accuracy": {"medium": (256, 1000), "large": (1024, 1000)},
    # segmentation masks (layout "all"): a batch of 8 images of 512 × 512 from the medium size on
    # (pytest-benchmark's size); lovasz_softmax with 4 classes on the last axis
    **{q: {"small": (2, 32, 32), "medium": (8, 512, 512), "large": (16, 512, 512)}
       for q in ("dice", "jaccard", "lovasz_hinge")},
    "lovasz_softmax": {"small": (2, 32, 32, 4), "medium": (8, 512, 512, 4), "large": (16, 512, 512, 4)},
}


#: Sizes for quantities whose rows have a fixed length (spec.quantity.FIXED_LENGTH), by
#: argument kind: a detector scores ~10^5 box pairs per batch (e.g. 64 images × ~1500 anchors).
KIND_SIZES = {
    "box": {"small": (32, 4), "medium": (100_000, 4), "large": (1_000_000, 4)},
}


def quantity_size(quantity: str, size):
    """The array shape a benchmark of ``quantity`` uses for ``size``: (batch, n), or
    an override of any rank (:data:`SIZE_OVERRIDES`)."""
    key = size if isinstance(size, str) and size in SIZES else next(
        (k for k, v in SIZES.items() if v == parse_size(size)), None)
    q = _spec.QUANTITIES.get(quantity)
    kinds = {a.kind for a in q.args} if q is not None else set()
    by_kind = next((KIND_SIZES[k] for k in sorted(kinds) if k in KIND_SIZES), {})
    return SIZE_OVERRIDES.get(quantity, by_kind).get(key, parse_size(size))


def framework_of(label: str) -> str:
    """``"torch:torch.softmax@cuda"`` -> ``"torch"``."""
    return label.split(":", 1)[0]


def strip_device(label: str) -> str:
    """``"torch:losscheck@cpu"`` -> ``"torch:losscheck"``."""
    return label.split("@", 1)[0]


def labels(quantity: str) -> list[str]:
    """Implementation labels of ``quantity``, ours first within each framework."""
    out = []
    for fw in _impls.FRAMEWORKS:
        out.append(f"{fw}:{OURS}")
        out.extend(lab for lab in PEERS.get(quantity, {}) if framework_of(lab) == fw)
    out.extend(lab for lab in PEERS.get(quantity, {}) if lab not in out)
    return out


def available(framework: str) -> bool:
    """Whether ``framework`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(framework) is not None
    except (ImportError, ValueError):
        return False


_DEVICES: dict[str, str | None] = {}


def device(framework: str) -> str | None:
    """Where ``framework`` runs here (torch: "cuda" or "cpu"; jax: its default
    backend), or None when it cannot be imported."""
    if framework == "numpy":
        return "cpu"
    if framework not in _DEVICES:
        dev = None
        if available(framework):
            try:
                if framework == "torch":
                    # NVML-based check: does not initialise CUDA in this process.
                    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
                    import torch

                    dev = "cuda" if torch.cuda.is_available() else "cpu"
                elif framework == "jax":
                    import jax

                    dev = jax.default_backend()
            except Exception:  # a broken install counts as absent
                dev = None
        _DEVICES[framework] = dev
    return _DEVICES[framework]


def implementation(quantity: str, label: str) -> Callable:
    """The callable behind ``label`` (device suffix allowed);
    NotImplementedError when its framework or the implementation is missing."""
    label = strip_device(label)
    fw, who = label.split(":", 1)
    if device(fw) is None:
        raise NotImplementedError(f"{fw} is not importable")
    if who == OURS:
        try:
            impl = _impls.implementations(fw).get(quantity)
        except ImportError as e:
            raise NotImplementedError(f"impls for {fw} cannot be imported: {e}") from e
        if impl is None:
            raise NotImplementedError(f"no {fw} implementation of {quantity}")
        return impl
    factory = PEERS.get(quantity, {}).get(label)
    if factory is None:
        raise NotImplementedError(f"no peer {label!r} for {quantity}")
    return factory()


def _boxes(rng, batch, first=None):
    """float32 boxes (x1, y1, x2, y2) in a 1024×1024 image, sides log-uniform in
    [4, 512]; with ``first``, a prediction for each of its boxes: centre jittered
    by up to half a side, sides scaled by 2^U(−1, 1) (IoUs spread over [0, 1),
    with ~10% of pairs disjoint)."""
    if first is None:
        wh = _np.exp(rng.uniform(_np.log(4), _np.log(512), size=(batch, 2)))
        lo = rng.uniform(0, 1024 - wh)
    else:
        f = first.astype(_np.float64)
        wh0 = f[:, 2:] - f[:, :2]
        centre = (f[:, :2] + f[:, 2:]) / 2 + rng.uniform(-0.5, 0.5, size=(batch, 2)) * wh0
        wh = wh0 * 2.0 ** rng.uniform(-1, 1, size=(batch, 2))
        lo = centre - wh / 2
    return _np.concatenate([lo, lo + wh], axis=-1).astype(_np.float32)


def make_inputs(quantity: str, size) -> tuple[dict, dict]:
    """({array arg: NumPy array}, {scalar arg: Python value}) at ``size``.

    Floating arrays are float32 of shape (batch, n) (or an override's shape,
    last axis n): ``vector`` standard normal, ``simplex`` a softmax of one,
    ``unit`` uniform in [0, 1] with a quarter of the entries exactly 0 or 1
    (layouts "all"/"first": segmentation-like, see :func:`_latent_field` —
    targets are 0/1 blob masks, differentiated predictions noisy sigmoids
    agreeing with them),
    ``sign`` ±1; integer ones int64: ``binary`` 0/1 with a positive and a
    negative per row, ``label`` and ``target`` class indices of shape
    shape[:-1]; ``box`` (batch, 4) boxes, a second box argument predictions
    near the first (:func:`_boxes`; sizes from :data:`KIND_SIZES`).
    ``positive`` takes its default (else 1.0), ``nonnegative`` and ``flag``
    their defaults, ``count`` min(5, n).  The shape is the
    caller's layout (spec.quantity): for layout "all" the whole array is one
    sample, for "first" axis 0 is reduced."""
    shape = tuple(int(d) for d in quantity_size(quantity, size))  # an override may have any rank
    n = shape[-1]
    q = _spec.QUANTITIES[quantity]
    rng = _np.random.default_rng(SEED)
    arrays, consts = {}, {}
    latent = None
    for a in q.args:
        if a.kind == "vector":
            arrays[a.name] = rng.standard_normal(shape, dtype=_np.float32)
        elif a.kind == "simplex":
            e = _np.exp(rng.standard_normal(shape))
            arrays[a.name] = (e / e.sum(-1, keepdims=True)).astype(_np.float32)
        elif a.kind == "unit" and q.layout != "last":
            # segmentation-like: targets (not differentiated) are blob masks, predictions
            # (differentiated) noisy sigmoids of the same latent field
            if latent is None:
                latent = _latent_field(rng, shape)
            if a.grad:
                z = 4.0 * (latent - 0.5) + 0.5 * rng.standard_normal(shape)
                arrays[a.name] = (1.0 / (1.0 + _np.exp(-z))).astype(_np.float32)
            else:
                arrays[a.name] = (latent > 0.5).astype(_np.float32)
        elif a.kind == "unit":
            u = rng.random(shape)
            u[rng.random(shape) < 0.25] = rng.integers(0, 2)
            arrays[a.name] = u.astype(_np.float32)
        elif a.kind == "sign":
            arrays[a.name] = rng.choice(_np.array([-1.0, 1.0], dtype=_np.float32), size=shape)
        elif a.kind == "binary":
            b = rng.integers(0, 2, size=shape, dtype=_np.int64)
            b[..., 0], b[..., -1] = 1, 0
            arrays[a.name] = b
        elif a.kind in ("label", "target"):
            arrays[a.name] = rng.integers(0, n, size=shape[:-1], dtype=_np.int64)
        elif a.kind == "box":
            first = next((arrays[b.name] for b in q.args if b.kind == "box" and b.name in arrays), None)
            arrays[a.name] = _boxes(rng, shape[0], first)
        elif a.kind == "positive":
            consts[a.name] = 1.0 if a.required else a.default
        elif a.kind in ("nonnegative", "flag"):
            consts[a.name] = a.default if not a.required else (1.0 if a.kind == "nonnegative" else False)
        elif a.kind == "count":
            consts[a.name] = min(5, n)
        else:  # pragma: no cover - spec.quantity.ARG_KINDS grew
            raise NotImplementedError(f"argument kind {a.kind!r} of {quantity}.{a.name}")
    return arrays, consts


def _latent_field(rng, shape, block=16):
    """A smooth random field over the last two axes (blocks of ``block`` pixels plus fine
    noise): thresholded at 0.5 it gives blob masks with ~30 % foreground."""
    if len(shape) < 2:
        return rng.standard_normal(shape)
    h, w = shape[-2:]
    coarse = rng.standard_normal(tuple(shape[:-2]) + (-(-h // block), -(-w // block)))
    up = _np.repeat(_np.repeat(coarse, block, axis=-2), block, axis=-1)[..., :h, :w]
    return up + 0.3 * rng.standard_normal(shape)


def prepare(quantity: str, label: str, size, mode: str) -> Callable[[], object]:
    """A warmed-up zero-argument callable that runs one ``mode`` call of
    ``label``'s ``quantity`` at ``size`` and waits for the device.

    It returns the output (``forward``) or the gradient with respect to the
    quantity's first differentiated argument (``forward_backward``).
    NotImplementedError when the framework / implementation is missing or
    nothing is differentiable.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    q = _spec.QUANTITIES[quantity]
    if mode == "forward_backward" and not q.grad_args:
        raise NotImplementedError(f"{quantity} has no differentiated argument")
    f = implementation(quantity, label)
    fw = framework_of(label)
    arrays, consts = make_inputs(quantity, size)
    wrt = q.grad_args[0].name if q.grad_args else None
    prep = {"torch": _prepare_torch, "jax": _prepare_jax, "numpy": _prepare_numpy}[fw]
    run = prep(f, arrays, consts, mode, wrt)
    run()  # warm-up (jax: compiles)
    return run


def _prepare_torch(f, arrays, consts, mode, wrt):
    import torch

    dev = device("torch")
    tensors = {k: torch.from_numpy(v).to(dev) for k, v in arrays.items()}
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    if mode == "forward":
        def run():
            with torch.no_grad():
                out = f(**tensors, **consts)
            sync()
            return out
        return run
    x = tensors[wrt].requires_grad_(True)

    def run():
        x.grad = None
        f(**tensors, **consts).sum().backward()
        sync()
        return x.grad
    return run


def _prepare_jax(f, arrays, consts, mode, wrt):
    import jax

    names = list(arrays)
    values = [jax.device_put(v) for v in arrays.values()]

    def g(*vs):
        return f(**dict(zip(names, vs)), **consts)

    if mode == "forward":
        jitted = jax.jit(g)
    else:
        jitted = jax.jit(jax.grad(lambda *vs: g(*vs).sum(), argnums=names.index(wrt)))

    def run():
        return jitted(*values).block_until_ready()
    return run


def _prepare_numpy(f, arrays, consts, mode, wrt):
    if mode != "forward":
        raise NotImplementedError("NumPy peers have no gradient")
    return lambda: f(**arrays, **consts)


def to_numpy(value) -> _np.ndarray:
    """A torch tensor or jax array as a NumPy array (for finiteness checks)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
    return _np.asarray(value)


_RUNNERS: dict = {}


def _runner(quantity, label, size, mode):
    key = (quantity, strip_device(label), size_label(size), mode)
    if key not in _RUNNERS:
        _RUNNERS[key] = prepare(quantity, label, size, mode)
    return _RUNNERS[key]


def _param_label(label: str) -> str:
    dev = device(framework_of(label))
    return label if dev is None else f"{label}@{dev}"


def _timed(quantity: str, mode: str):
    """``time_<mode>`` of the class of ``quantity``.  Its asv ``setup`` is a
    function attribute (asv calls it with the params), so that a benchmark
    process prepares and warms up only the mode it times; runners are cached
    per process, since asv re-runs setup before every timed call."""
    state = {}

    def setup(size, implementation):
        state["run"] = _runner(quantity, implementation, size, mode)

    def timed(self, size, implementation):
        state["run"]()

    timed.setup = setup
    timed.__name__ = f"time_{mode}"
    timed.__qualname__ = f"{quantity}.time_{mode}"
    timed.__doc__ = (f"{quantity}: forward" if mode == "forward" else
                     f"{quantity}: forward + backward of the summed output")
    return timed


def _generate():
    for name, q in _spec.QUANTITIES.items():
        if name in globals():
            raise RuntimeError(f"quantity {name!r} clashes with a name of {__name__}")
        attrs = {
            "__module__": __name__,
            "__doc__": f"{q.signature}: {q.summary}",
            "quantity": name,
            "param_names": ["size", "implementation"],
            "params": [[size_label(s) for s in SIZES.values()],
                       [_param_label(lab) for lab in labels(name)]],
            # setup warms up; the largest cases take seconds per call on 2 cores
            "warmup_time": 0.0,
            "rounds": 1,
            "repeat": (1, 5, 10.0),
            "timeout": 600,
        }
        for mode in MODES:
            attrs[f"time_{mode}"] = _timed(name, mode)
        globals()[name] = type(name, (), attrs)


_generate()


def benchmarked_quantities() -> list[str]:
    """Names of the quantities that have a generated benchmark class here."""
    return [name for name in _spec.QUANTITIES if isinstance(globals().get(name), type)]
