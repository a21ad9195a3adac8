"""Broken torch EXACT implementations (see __init__.BROKEN)."""

import math

import numpy as np
import torch


def _gauss_hermite(mu, sigma, labels, nodes):
    z, w = np.polynomial.hermite_e.hermegauss(nodes)  # ∫ e^{-z²/2} g(z) dz ≈ Σ w g(z)
    z = torch.as_tensor(z, dtype=torch.float64)
    w = torch.as_tensor(w / math.sqrt(2 * math.pi), dtype=torch.float64)
    mu64 = mu.double()
    my = mu64.gather(-1, labels.unsqueeze(-1))
    a = (my - mu64) / sigma  # (..., n)
    cdf = 0.5 * torch.erfc(-(z[:, None, None] + a.reshape(1, -1, a.shape[-1])) / math.sqrt(2))  # (nodes, rows, n)
    own = torch.nn.functional.one_hot(labels.reshape(-1), mu.shape[-1]).bool()
    cdf = torch.where(own, torch.ones_like(cdf), cdf)
    vals = (w[:, None] * cdf.prod(-1)).sum(0)
    return vals.reshape(mu.shape[:-1]).to(mu.dtype)


def exact_coarse_quadrature(mu, sigma, labels):
    return _gauss_hermite(mu, sigma, labels, 4)  # 4 nodes: right only to ~1e-3


def exact_monte_carlo(mu, sigma, labels):
    g = torch.Generator().manual_seed(0)
    eps = torch.randn((4096,) + tuple(mu.shape), generator=g, dtype=torch.float64)
    win = (mu.double() / sigma + eps).argmax(-1) == labels
    return win.double().mean(0).to(mu.dtype)  # sampling, not the integral


def exact_sigma_ignored(mu, sigma, labels):
    return _gauss_hermite(mu, 1.0, labels, 64)
