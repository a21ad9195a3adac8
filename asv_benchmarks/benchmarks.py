"""airspeed velocity benchmarks, generated from the spec registry.

One class per quantity of ``spec.QUANTITIES`` (the class is named after the
quantity), each with ``time_forward`` and ``time_forward_backward`` (the sum
of the output differentiated with respect to the first vector argument),
parameterised by

* ``size``: ``"32x16"``, ``"4096x1000"``, ``"16384x1000"`` (batch x n);
* ``implementation``: ``"<framework>:<who>@<device>"``, e.g.
  ``"torch:losscheck@cpu"`` (ours, from ``impls.implementations``) or
  ``"jax:jax.nn.logsumexp@cpu"`` (a peer from :data:`PEERS`).

A new quantity in ``spec`` + ``impls`` gets its benchmarks with no edit here.
Inputs are built from the argument kinds: ``vector`` -> standard normal
float32 of shape (batch, n); ``positive`` -> its default, else 1.0;
``count`` -> min(5, n).  jax runs are jitted (non-vector arguments are closed
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
import sys
from typing import Callable

import numpy as _np

try:
    import impls as _impls
    import spec as _spec
except ImportError:  # `asv run --python=same` or a bare checkout: the working tree
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import impls as _impls
    import spec as _spec

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


#: quantity name -> {"<framework>:<peer name>": factory}.
PEERS: dict[str, dict[str, Callable[[], Callable]]] = {
    "logsumexp": {
        "torch:torch.logsumexp": _torch_logsumexp,
        "jax:jax.nn.logsumexp": _jax_logsumexp,
    },
    "softmax": {
        "torch:torch.softmax": _torch_softmax,
        "jax:jax.nn.softmax": _jax_softmax,
    },
}


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


def make_inputs(quantity: str, size) -> tuple[dict, dict]:
    """({vector arg: float32 array (batch, n)}, {other arg: Python value})."""
    batch, n = parse_size(size)
    q = _spec.QUANTITIES[quantity]
    rng = _np.random.default_rng(SEED)
    vectors, consts = {}, {}
    for a in q.args:
        if a.kind == "vector":
            vectors[a.name] = rng.standard_normal((batch, n), dtype=_np.float32)
        elif a.kind == "positive":
            consts[a.name] = 1.0 if a.required else a.default
        elif a.kind == "count":
            consts[a.name] = min(5, n)
        else:  # pragma: no cover - spec.quantity.ARG_KINDS grew
            raise NotImplementedError(f"argument kind {a.kind!r} of {quantity}.{a.name}")
    return vectors, consts


def prepare(quantity: str, label: str, size, mode: str) -> Callable[[], object]:
    """A warmed-up zero-argument callable that runs one ``mode`` call of
    ``label``'s ``quantity`` at ``size`` and waits for the device.

    It returns the output (``forward``) or the gradient with respect to the
    first vector argument (``forward_backward``).  NotImplementedError when
    the framework / implementation is missing or nothing is differentiable.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    f = implementation(quantity, label)
    fw = framework_of(label)
    vectors, consts = make_inputs(quantity, size)
    if not vectors and mode == "forward_backward":
        raise NotImplementedError(f"{quantity} has no vector argument to differentiate")
    run = (_prepare_torch if fw == "torch" else _prepare_jax)(f, vectors, consts, mode)
    run()  # warm-up (jax: compiles)
    return run


def _prepare_torch(f, vectors, consts, mode):
    import torch

    dev = device("torch")
    tensors = {k: torch.from_numpy(v).to(dev) for k, v in vectors.items()}
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    if mode == "forward":
        def run():
            out = f(**tensors, **consts)
            sync()
            return out
        return run
    x = next(iter(tensors.values())).requires_grad_(True)

    def run():
        x.grad = None
        f(**tensors, **consts).sum().backward()
        sync()
        return x.grad
    return run


def _prepare_jax(f, vectors, consts, mode):
    import jax

    names = list(vectors)
    arrays = [jax.device_put(v) for v in vectors.values()]

    def g(*vs):
        return f(**dict(zip(names, vs)), **consts)

    if mode == "forward":
        jitted = jax.jit(g)
    else:
        jitted = jax.jit(jax.grad(lambda *vs: g(*vs).sum(), argnums=0))

    def run():
        return jitted(*arrays).block_until_ready()
    return run


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
