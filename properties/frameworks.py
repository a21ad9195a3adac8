"""The only place that knows torch and jax: moving NumPy inputs onto a
framework/device in a given dtype, calling a target, taking vector-Jacobian
products, jit, and writing inputs back as Python source for snippets.

Devices: torch uses "cpu" and "cuda" (when ``torch.cuda.is_available()``);
jax uses the platforms of ``jax.devices()`` ("cpu", "gpu").  Callers ask
:func:`devices` which exist and skip the rest visibly.
"""

from __future__ import annotations

import importlib

import numpy as np

NAMES = ("torch", "jax")


class Framework:
    name = ""
    array_type = ""  # what a target must return, for messages

    def module(self):
        return importlib.import_module(self.name)

    def output_problem(self, out, device: str) -> str:
        """What is wrong with a target's return value before its numbers are read ("" where
        nothing is): not the framework's array (a Python float, a list, None), or on another device."""
        if not self.is_array(out):
            shown = repr(out) if len(repr(out)) <= 60 else repr(out)[:57] + "..."
            return f"returned {type(out).__name__} {shown}, expected a {self.array_type}"
        on = self.device_of(out)
        return "" if on == device else f"returned an array on {on}, the inputs were on {device}"

    def available(self) -> bool:
        try:
            self.module()
            return True
        except ImportError:
            return False


class Torch(Framework):
    name = "torch"
    array_type = "torch.Tensor"

    def is_array(self, out) -> bool:
        return isinstance(out, self.module().Tensor)

    def device_of(self, out) -> str:
        return out.device.type

    def devices(self):
        torch = self.module()
        return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])

    def all_devices(self):
        return ["cpu", "cuda"]

    def dtype(self, name):
        return getattr(self.module(), name)

    def array(self, values, dtype, device="cpu"):
        """``values`` are float64 holding exact ``dtype`` values; the cast is exact."""
        torch = self.module()
        # a C-ordered copy (0-d stays 0-d): torch cannot wrap NumPy views with negative strides (x[::-1])
        return torch.as_tensor(np.array(values, dtype=np.float64, order="C")).to(device=device, dtype=self.dtype(dtype))

    def int_array(self, values, device="cpu"):
        return self.module().as_tensor(np.array(values, dtype=np.int64, order="C"), device=device)

    def numpy(self, out):
        torch = self.module()
        if not isinstance(out, torch.Tensor):
            out = torch.as_tensor(out)
        return out.detach().to(device="cpu", dtype=torch.float64).numpy()

    def dtype_name(self, out):
        return str(out.dtype).replace("torch.", "")

    def vjp(self, fn, kwargs, wrts, cotangent):
        """The vector-Jacobian products of ``fn(**kwargs)`` with ``cotangent`` w.r.t. each argument
        named in ``wrts`` (a tuple), from one backward pass."""
        torch = self.module()
        xs = {k: kwargs[k].detach().clone().requires_grad_(True) for k in wrts}
        out = fn(**{**kwargs, **xs})
        gs = torch.autograd.grad(out, [xs[k] for k in wrts], grad_outputs=cotangent.to(out.dtype), allow_unused=True)
        return tuple(torch.zeros_like(xs[k]) if g is None else g for k, g in zip(wrts, gs))

    def jit(self, fn, static):
        return None

    def jit_vjp(self, fn, wrts, static):
        return None

    def synchronize(self, device):
        if device == "cuda":
            self.module().cuda.synchronize()

    def literal(self, values, dtype, device="cpu"):
        dev = "" if device == "cpu" else f", device={device!r}"
        return f"torch.tensor({_pylist(values)}, dtype=torch.{dtype}{dev})"

    def int_literal(self, values, device="cpu"):
        dev = "" if device == "cpu" else f", device={device!r}"
        return f"torch.tensor({np.asarray(values).tolist()}, dtype=torch.int64{dev})"

    imports = "import torch"
    to_numpy_code = "out.detach().double().cpu().numpy()"


class Jax(Framework):
    name = "jax"
    array_type = "jax.Array"

    def is_array(self, out) -> bool:
        return isinstance(out, self.module().Array)

    def device_of(self, out) -> str:
        return next(iter(out.devices())).platform

    def module(self):
        jax = importlib.import_module("jax")
        if not self._configured:
            jax.config.update("jax_enable_x64", True)  # float64 inputs must stay float64
            _persistent_cache(jax)
            self._configured = True
        return jax

    _configured = False

    def devices(self):
        jax = self.module()
        return sorted({d.platform for d in jax.devices()} | {"cpu"})

    def all_devices(self):
        return ["cpu", "gpu"]

    def _device(self, device):
        jax = self.module()
        return jax.devices(device)[0] if device != "cpu" else jax.devices("cpu")[0]

    def dtype(self, name):
        import jax.numpy as jnp
        return getattr(jnp, name)

    def array(self, values, dtype, device="cpu"):
        """Cast on the host (NumPy, ml_dtypes for bfloat16): a jax astype compiles a conversion per shape."""
        jax = self.module()
        import ml_dtypes
        host = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
        return jax.device_put(np.asarray(values, dtype=np.float64).astype(host), self._device(device))

    def int_array(self, values, device="cpu"):
        jax = self.module()
        import jax.numpy as jnp
        return jax.device_put(jnp.asarray(np.asarray(values, dtype=np.int64)), self._device(device))

    def numpy(self, out):
        return np.asarray(np.asarray(out).astype(np.float64))

    def dtype_name(self, out):
        return str(out.dtype)

    def vjp(self, fn, kwargs, wrts, cotangent):
        """The vector-Jacobian products of ``fn(**kwargs)`` with ``cotangent`` w.r.t. each argument
        named in ``wrts`` (a tuple), from one pullback."""
        jax = self.module()
        rest = {k: v for k, v in kwargs.items() if k not in wrts}
        out, pullback = jax.vjp(lambda *xs: fn(**rest, **dict(zip(wrts, xs))), *[kwargs[k] for k in wrts])
        return tuple(pullback(cotangent.astype(out.dtype)))

    def jit(self, fn, static):
        return self.module().jit(fn, static_argnames=tuple(static))

    def jit_vjp(self, fn, wrts, static):
        """``(kwargs, cotangent) -> (out, vjps)``: ``fn(**kwargs)`` and its vector-Jacobian products
        w.r.t. each ``kwargs[k]``, k in ``wrts``, forward and pullback in one ``jax.jit`` program (the
        ``static`` arguments as jit's static arguments): compiled once per shape and dtype, where
        :meth:`vjp` of a jitted ``fn`` traces its linearisation again on every call, and once for all
        the arguments (box losses: a and b) and for the value too (``properties.checks.value``)."""
        jax = self.module()

        def pullback(dynamic, fixed, cotangent):
            rest = {k: v for k, v in dynamic.items() if k not in wrts}
            out, pb = jax.vjp(lambda *xs: fn(**rest, **dict(fixed), **dict(zip(wrts, xs))), *[dynamic[k] for k in wrts])
            return out, tuple(pb(cotangent.astype(out.dtype)))
        jitted = jax.jit(pullback, static_argnames=("fixed",))

        def run(kwargs, cotangent):
            fixed = tuple(sorted((k, v) for k, v in kwargs.items() if k in static))
            return jitted({k: v for k, v in kwargs.items() if k not in static}, fixed, cotangent)
        return run

    def synchronize(self, device):
        pass

    def literal(self, values, dtype, device="cpu"):
        return f"jnp.asarray({_pylist(values)}, dtype=jnp.{dtype})"

    def int_literal(self, values, device="cpu"):
        return f"jnp.asarray({np.asarray(values).tolist()}, dtype=jnp.int64)"

    imports = "import jax\njax.config.update('jax_enable_x64', True)\nimport jax.numpy as jnp"
    to_numpy_code = "np.asarray(out, dtype=np.float64)"


def _persistent_cache(jax):
    """jax's persistent compilation cache in losscheck's cache folder (``spec.cache``), unless
    the user set one: the programs of an audit's shapes and dtypes are compiled once across
    processes (pytest-xdist workers, later audits), not once in each."""
    from losscheck.spec import cache
    d = cache.directory()
    if d is None or jax.config.jax_compilation_cache_dir:
        return
    jax.config.update("jax_compilation_cache_dir", str(d / "jax"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # eager primitives compile in ~30 ms
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _pylist(values):
    """Python source for a nested list of floats (repr round-trips; -inf as float('-inf'))."""
    a = np.asarray(values, dtype=np.float64)

    def one(v):
        v = float(v)
        if v != v:
            return "float('nan')"
        if v in (float("inf"), float("-inf")):
            return f"float('{v}')"
        return repr(v)

    def rec(x):
        return "[" + ", ".join(rec(t) for t in x) + "]" if isinstance(x, np.ndarray) and x.ndim else one(x)
    return rec(a) if a.ndim else one(a)


FRAMEWORKS = {"torch": Torch(), "jax": Jax()}


def get(name: str) -> Framework:
    if name not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {NAMES}, got {name!r}")
    return FRAMEWORKS[name]


def infer(fn) -> str:
    """Guess the framework of a callable from the modules its code refers to."""
    import inspect
    seen = set()
    mod = inspect.getmodule(fn)
    names = [getattr(fn, "__module__", "") or ""]
    namespace = vars(mod) if mod is not None else getattr(fn, "__globals__", {})
    if namespace:
        for v in namespace.values():
            m = getattr(v, "__name__", "") if inspect.ismodule(v) else getattr(v, "__module__", "") or ""
            names.append(m)
    for n in names:
        root = n.split(".")[0]
        if root in NAMES:
            seen.add(root)
        elif root in ("jaxlib", "flax", "optax"):
            seen.add("jax")
    if len(seen) == 1:
        return seen.pop()
    raise ValueError(f"cannot infer the framework of {getattr(fn, '__qualname__', fn)!r} "
                     f"(its module refers to {sorted(seen) or 'neither torch nor jax'}); pass --framework torch|jax")

