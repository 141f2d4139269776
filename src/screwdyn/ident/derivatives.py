"""Velocities and accelerations from sampled positions, by Savitzky-Golay filtering.

Around each sample, a polynomial of degree ``polyorder`` is fitted by least squares to the
``window`` positions centred on it; the smoothed position, velocity and acceleration are the
polynomial and its first two derivatives there. For uniform sampling each is a fixed FIR filter
of the positions (:func:`scipy.signal.savgol_filter`).

Data of several runs (experiments, log files) carry a run label per sample: each run is filtered on
its own (:func:`filter_runs`), never across the jump from one run to the next, and the samples within
``trim`` of a run's ends are marked to be left out.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError

__all__ = ["estimate_derivatives", "filter_runs", "period", "run_bounds", "step_stats"]


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
    from scipy.signal import savgol_filter   # (imported here: 0.75 s that a user of the regressor alone need not pay)
    return (savgol_filter(q, deriv=0, **kw), savgol_filter(q, deriv=1, **kw), savgol_filter(q, deriv=2, **kw))


def run_bounds(runs, N):
    """``(start, stop)`` of each run in ``N`` samples: the stretches of equal labels ``runs (N,)``
    (None: one run)."""
    if runs is None:
        return [(0, N)] if N else []
    bounds = np.concatenate([[0], np.flatnonzero(runs[1:] != runs[:-1]) + 1, [N]])
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def filter_runs(q, dt, runs=None, *, window, polyorder, trim=0, differentiate=True, open_ends=(False, False)):
    """Savitzky-Golay filtering run by run, and the samples to keep.

    ``q (N, n)`` sampled every ``dt`` seconds, ``runs (N,)`` a label per sample (None: one run).
    Returns ``(q_f, qd, qdd, inside)``: each run filtered as :func:`estimate_derivatives` filters
    it alone (``q_f, qd, qdd`` None when not ``differentiate``), and ``inside (N,)``, the samples at
    least ``trim`` from both ends of their run.

    ``open_ends``: whether the data go on before the first / after the last sample (a chunk of a
    longer array, :mod:`.chunked`): a run there too short to filter is left out, not an error
    (the neighbouring chunk filters it).
    """
    from scipy.signal import savgol_filter
    N = q.shape[0]
    inside = np.zeros(N, dtype=bool)
    filtered = tuple(np.zeros_like(q) for _ in range(3)) if differentiate else (None, None, None)
    bounds = run_bounds(runs, N)
    for a, b in bounds:
        if differentiate:
            if b - a < window:
                if (open_ends[0] and a == 0) or (open_ends[1] and b == N):
                    continue
                what = "the data" if runs is None else f"run {_label(runs[a])}"
                raise InputError(f"the Savitzky-Golay window ({window} samples) is longer than {what} ({b - a})")
            kw = {"window_length": window, "polyorder": polyorder, "delta": dt, "axis": 0, "mode": "interp"}
            for d, out in enumerate(filtered):
                out[a:b] = savgol_filter(q[a:b], deriv=d, **kw)
        inside[a + trim:max(b - trim, a + trim)] = True
    return (*filtered, inside)


def _label(x):
    return f"{x:g}" if isinstance(x, (float, np.floating)) else str(x)


def step_stats(t, runs=None):
    """``(sum, count, min, max)`` of the time steps within runs (:func:`run_bounds`): what the
    sampling period and its uniformity are judged by (chunk by chunk, then added up)."""
    total, count, lo, hi = 0.0, 0, np.inf, -np.inf
    for a, b in run_bounds(runs, t.shape[0]):
        if b - a > 1:
            steps = np.diff(t[a:b])
            total, count = total + float(np.sum(steps)), count + b - a - 1
            lo, hi = min(lo, float(steps.min())), max(hi, float(steps.max()))
    return total, count, lo, hi


def period(stats):
    """The sampling period from :func:`step_stats` ``(sum, count, min, max)``, checked to be uniform."""
    total, count, lo, hi = stats
    if count == 0:
        raise InputError("t must have at least two samples in a run to give the sampling period")
    dt = total / count
    if dt <= 0 or max(hi - dt, dt - lo) > 1e-6 * dt + 1e-12:
        raise InputError("t must be uniformly sampled and increasing (within each run: label separate runs, "
                         "runs= or a run column) to differentiate q")
    return dt
