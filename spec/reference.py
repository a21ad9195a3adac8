"""High-precision reference values and gradients, derived from the SymPy
definitions (never a second hand-written formula).

Each (quantity, n, structure) definition is differentiated with ``sympy.diff``
(holding stop-gradient symbols constant) and lambdified to mpmath once; the
compiled functions are then evaluated row by row at ``DPS`` significant
digits.  Masked entries (-inf) are passed to mpmath as -inf, where
exp(-inf) = 0; an all-masked row takes the quantity's ``Masking.empty`` value
with a zero gradient.

Besides values and gradients the reference returns *sensitivities*
S = sum_v |d out / d v| * |v| over every real input v (vector entries and
positive scalars).  S / |out| is the relative condition number of the
output; the properties turn it into a tolerance (a backward-stable
implementation commits errors of order eps * (|out| + S)).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from .quantity import Quantity

DPS = 60  # significant digits of every reference evaluation
# Relative step of the forward differences used for gradient sensitivities:
# at 60 digits a 1e-28 step leaves ~30 correct digits, far more than the
# 2-3 a tolerance needs.
_FD_STEP = mpmath.mpf("1e-28")
_MASKED = mpmath.mpf("-1e100")


def absolute(expr):
    """``expr`` with every sum replaced by the sum of the absolute values of its terms
    (and every product/power by that of absolute values): the first-order
    running-error scale of evaluating ``expr`` in floating point.  Rounding an
    intermediate sum s = a + b commits an error ~eps·(|a| + |b|), not eps·|s|,
    which is what a gradient like softmax's p·(w − Σ w p) suffers when it cancels."""
    if expr.is_Add:
        return sp.Add(*[absolute(a) for a in expr.args])
    if expr.is_Mul:
        return sp.Mul(*[absolute(a) for a in expr.args])
    if expr.is_Pow:
        return sp.Pow(absolute(expr.base), expr.exp)
    return sp.Abs(expr) if (expr.is_Function or expr.is_Symbol or expr.is_Number) else expr


@dataclass(frozen=True)
class _Step:
    symbol: Any
    args: tuple  # the symbols the step reads
    value: Any  # mpf args -> mpf
    partials: Any  # mpf args -> [d/d arg for each arg]
    partials_abs: Any  # mpf args -> [|d/d arg|_abs for each arg]
    frozen: bool  # stop-gradient: derivatives do not flow through it


@dataclass(frozen=True)
class Compiled:
    """A definition as a chain of small steps, each differentiated by
    ``sympy.diff``; derivatives are chained forward at evaluation time."""

    inputs: tuple  # flat inputs: (argname, entry index or None for a scalar)
    symbols: tuple  # the flat input symbols, same order
    steps: tuple
    outputs: tuple  # output symbols (the last len(outputs) steps)

    def run(self, xs, with_steps=True):
        """(values, jacobian, absolute jacobian, step scale) at the flat mpf inputs ``xs``.

        Derivatives are chained forward.  Each intermediate step also gets a
        column of its own, so that ``step scale``_j = Σ_steps |∂out_j/∂step|·|step|
        measures how a relative rounding of every intermediate (a pass of a
        recursion) reaches output j; it adds to the sensitivity to inputs.
        """
        m, inner = len(xs), len(self.steps) - len(self.outputs)
        width = m + inner if with_steps else m
        env = dict(zip(self.symbols, xs))
        zero = [mpmath.mpf(0)] * width
        D = {s: [mpmath.mpf(int(i == j)) for j in range(width)] for i, s in enumerate(self.symbols)}
        A = dict(D)
        for t, st in enumerate(self.steps):
            vals = [env[a] for a in st.args]
            env[st.symbol] = st.value(vals)
            d, da = list(zero), list(zero)
            if not st.frozen:
                for a, pa, pabs in zip(st.args, st.partials(vals), st.partials_abs(vals)):
                    Da, Aa = D[a], A[a]
                    for j in range(width):
                        if Da[j]:
                            d[j] += pa * Da[j]
                        if Aa[j]:
                            da[j] += abs(pabs) * Aa[j]
            if with_steps and t < inner:
                d[m + t] = mpmath.mpf(1)  # seed: this step's own rounding
            D[st.symbol], A[st.symbol] = d, da
        inner_vals = [abs(env[st.symbol]) for st in self.steps[:inner]]
        return ([env[o] for o in self.outputs], [D[o][:m] for o in self.outputs], [A[o][:m] for o in self.outputs],
                [sum((abs(c) * v for c, v in zip(D[o][m:], inner_vals)), mpmath.mpf(0)) for o in self.outputs])

    def value(self, xs):
        return self.run(xs)[0]

    def jacobian(self, xs):
        return self.run(xs, with_steps=False)[1]

    def jacobian_abs(self, xs):
        return self.run(xs, with_steps=False)[2]


def _flat_symbols(q: Quantity, d):
    flat, names = [], []
    for a in q.args:
        if a.kind == "count":
            continue
        s = d.symbols[a.name]
        if isinstance(s, (tuple, list)):
            flat.extend(s)
            names.extend((a.name, i) for i in range(len(s)))
        else:
            flat.append(s)
            names.append((a.name, None))
    return flat, tuple(names)


def _lambdify(args, expr):
    return sp.lambdify([list(args)], expr, modules="mpmath")


@functools.lru_cache(maxsize=1024)
def compile_definition(q: Quantity, n: int, structure: tuple) -> Compiled:
    """Build the definition for rows of n entries and differentiate every step."""
    d = q.build(n, **dict(structure))
    flat, names = _flat_symbols(q, d)
    outs = [sp.Symbol(f"_out{j}") for j in range(len(d.outputs))]
    chain = ([(s, e, False) for s, e in d.steps] + [(s, e, True) for s, e in d.stop_gradient.items()]
             + [(s, sp.sympify(e), False) for s, e in zip(outs, d.outputs)])
    steps = []
    for sym, expr, frozen in chain:
        args = tuple(sorted(expr.free_symbols, key=lambda t: t.name))
        partials = [sp.diff(expr, a) for a in args]
        steps.append(_Step(sym, args, _lambdify(args, expr), _lambdify(args, partials),
                           _lambdify(args, [absolute(p) for p in partials]), frozen))
    return Compiled(names, tuple(flat), tuple(steps), tuple(outs))


def _mp(v) -> mpmath.mpf:
    v = float(v)
    if math.isnan(v):
        raise ValueError("NaN is not a valid reference input")
    return mpmath.mpf(v)


class Reference:
    """Reference evaluation of one Quantity on concrete NumPy inputs.

    Inputs hold the *exact* values the implementation sees (already cast to
    its dtype).  Results are object arrays of mpmath numbers in the output
    shape, plus float64 sensitivities.
    """

    def __init__(self, quantity: Quantity):
        self.q = quantity

    # -- plumbing -----------------------------------------------------------
    def shapes(self, args):
        shapes = [np.shape(args[a.name]) for a in self.q.vector_args]
        return np.broadcast_shapes(*(s[:-1] for s in shapes)), shapes[0][-1]

    def output_shape(self, args):
        batch, n = self.shapes(args)
        return batch if self.q.output == "row" else batch + (n,)

    def rows(self, args):
        batch, n = self.shapes(args)
        arrays = {a.name: np.broadcast_to(np.asarray(args[a.name], dtype=np.float64), batch + (n,))
                  for a in self.q.vector_args}
        scalars = {a.name: args[a.name] for a in self.q.args if a.kind != "vector"}
        for idx in np.ndindex(*batch):
            yield idx, {**scalars, **{k: v[idx] for k, v in arrays.items()}}

    def _compiled(self, row) -> Compiled:
        n = len(row[self.q.vector_args[0].name])
        return compile_definition(self.q, n, tuple(sorted(self.q.structure_of(row).items())))

    def _empty(self, row) -> bool:
        m = self.q.masking
        return m is not None and bool(np.all(np.isneginf(np.asarray(row[m.arg], dtype=np.float64))))

    def _flat(self, c: Compiled, row):
        masked = self.q.masking.arg if self.q.masking is not None else None
        out = []
        for name, i in c.inputs:
            v = _mp(row[name][i] if i is not None else row[name])
            if name == masked and v == mpmath.ninf:
                # The limit x_i → −inf, evaluated at −10^100: e^{k·x_i} < 10^(−10^90) vanishes far
                # beyond DPS digits, while terms such as x_i·e^{k·x_i} (∂/∂k) stay 0 instead of NaN.
                v = _MASKED
            out.append(v)
        return out

    # -- per row --------------------------------------------------------------
    def row_value(self, row):
        """(outputs, jacobian, step scale) of one row, as mpf (see Compiled.run)."""
        c = self._compiled(row)
        with mpmath.workdps(DPS):
            if self._empty(row):
                nout = 1 if self.q.output == "row" else len(row[self.q.vector_args[0].name])
                zero = [mpmath.mpf(0)] * len(c.inputs)
                return [mpmath.mpf(self.q.masking.empty)] * nout, [zero] * nout, [mpmath.mpf(0)] * nout
            xs = self._flat(c, row)
            vals, jac, _, steps = c.run(xs)
            return vals, jac, steps

    def _vjp_at(self, c, xs, w, wrt):
        jac = c.jacobian(xs)
        cols = [k for k, (name, _) in enumerate(c.inputs) if name == wrt]
        return [sum(_mp(wj) * jac[j][col] for j, wj in enumerate(w)) for col in cols]

    # -- public -------------------------------------------------------------
    def evaluate(self, args):
        """Values (object array of mpf) and sensitivities (float64) in the output shape."""
        shape = self.output_shape(args)
        val = np.empty(shape, dtype=object)
        sens = np.zeros(shape, dtype=np.float64)
        for idx, row in self.rows(args):
            outs, jac, steps = self.row_value(row)
            c = self._compiled(row)
            absin = [mpmath.mpf(0) if v == _MASKED else abs(v) for v in self._flat(c, row)]
            for j, vj in enumerate(outs):
                key = idx if self.q.output == "row" else idx + (j,)
                val[key] = vj
                with mpmath.workdps(DPS):
                    sens[key] = float(sum(abs(d) * a for d, a in zip(jac[j], absin) if a != 0) + steps[j])
        return val, sens

    def vjp(self, args, cotangent, wrt: str):
        """Gradient of sum(cotangent * output) w.r.t. the vector arg ``wrt``
        (object array of mpf, shape of that arg) and its error scale: the
        sensitivity S_i = Σ_v |∂g_i/∂v|·|v| (by forward differences at DPS
        digits) plus the running-error scale Σ_j |w_j|·|J_ji|_abs (see
        :func:`absolute`) of the chain-rule sum itself."""
        batch, n = self.shapes(args)
        w = np.broadcast_to(np.asarray(cotangent, dtype=np.float64), self.output_shape(args))
        grad = np.empty(batch + (n,), dtype=object)
        sens = np.zeros(batch + (n,), dtype=np.float64)
        for idx, row in self.rows(args):
            wrow = [w[idx]] if self.q.output == "row" else list(w[idx])
            if self._empty(row):
                grad[idx] = [mpmath.mpf(0)] * n
                continue
            c = self._compiled(row)
            with mpmath.workdps(DPS):
                xs = self._flat(c, row)
                g0 = self._vjp_at(c, xs, wrow, wrt)
                jabs = c.jacobian_abs(xs)
                cols = [k for k, (name, _) in enumerate(c.inputs) if name == wrt]
                total = [sum(abs(_mp(wj)) * jabs[j][col] for j, wj in enumerate(wrow)) for col in cols]
                for k, v in enumerate(xs):
                    if v == _MASKED or v == 0:
                        continue
                    h = v * _FD_STEP
                    g1 = self._vjp_at(c, xs[:k] + [v + h] + xs[k + 1:], wrow, wrt)
                    for i in range(n):
                        total[i] += abs((g1[i] - g0[i]) / h) * abs(v)
            for i in range(n):
                grad[idx + (i,)] = g0[i]
                sens[idx + (i,)] = float(total[i])
        return grad, sens

    def value(self, **args):
        """Convenience: float64 values (for claims and reports)."""
        val, _ = self.evaluate(args)
        return np.vectorize(float, otypes=[np.float64])(val) if val.shape else np.float64(float(val[()]))
