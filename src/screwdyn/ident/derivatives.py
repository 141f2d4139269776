"""Velocities and accelerations from sampled positions, by Savitzky-Golay filtering.

Around each sample, a polynomial of degree ``polyorder`` is fitted by least squares to the
``window`` positions centred on it; the smoothed position, velocity and acceleration are the
polynomial and its first two derivatives there. For uniform sampling each is a fixed FIR filter
of the positions (:func:`scipy.signal.savgol_filter`).
"""
from __future__ import annotations

import numpy as np
import scipy.signal

from ..errors import InputError

__all__ = ["estimate_derivatives"]


def _window(window, dt, polyorder):
    """The Savitzky-Golay window in samples (odd): ``window``, or the samples in 0.2 s."""
    return int(max(int(round(0.2 / dt)), polyorder + 3) if window is None else window) | 1


def estimate_derivatives(q, dt, *, window=None, polyorder=4):
    """Smoothed positions, velocities and accelerations from uniformly sampled positions.

    Savitzky-Golay filter (:func:`scipy.signal.savgol_filter`, a least-squares polynomial of
    degree ``polyorder`` fitted over ``window`` samples, differentiated): ``q (N, n)`` sampled
    every ``dt`` seconds -> ``(q_f, qd, qdd)``, each ``(N, n)``. ``window`` (odd) defaults to the
    samples in 0.2 s, at least ``polyorder + 3``: for ``polyorder = 4`` a low-pass with its -3 dB
    cutoff near ``(polyorder + 1) / (3.2 window dt) = 8`` Hz (Schafer 2011), well above the
    bandwidth of the usual excitation trajectories (a few harmonics of 0.1 Hz).
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 2:
        raise InputError(f"q must have shape (N, n) to be differentiated, got {q.shape}")
    window = _window(window, dt, polyorder)
    if window > q.shape[0]:
        raise InputError(f"the Savitzky-Golay window ({window} samples) is longer than the data ({q.shape[0]})")
    if window <= polyorder:
        raise InputError(f"window ({window}) must exceed polyorder ({polyorder})")
    kw = dict(window_length=window, polyorder=polyorder, delta=dt, axis=0, mode="interp")
    return (scipy.signal.savgol_filter(q, deriv=0, **kw), scipy.signal.savgol_filter(q, deriv=1, **kw),
            scipy.signal.savgol_filter(q, deriv=2, **kw))
