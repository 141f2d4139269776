"""Compiling ahead: kernels' entry points compiled into numba's cache before a first call needs them.

Every entry point compiles on its first use (seconds) and is cached for every later process
(:mod:`screwdyn.algorithms.target`). Two sets are compiled ahead:

* :data:`INSTALL`, what ``pip install .`` compiles into the package while it builds it (``setup.py``):
  the entry points of the README's first command and of its main calls, one state and a batch
  (inverse dynamics and gravity, the mass matrix, forward dynamics, the Coriolis matrix, a Jacobian,
  ``simulate`` of one rollout and of a batch with its default integrator, and the energies its plot
  shows), so that those first calls load in milliseconds. Nothing else: ``tests/test_precompile.py``
  fails when this set grows, so that a new kernel stays lazy unless someone decides otherwise.
* :func:`variants`, what ``screwdyn compile`` compiles: every entry point of every kernel module,
  one state and each batch lane count a model can run (:meth:`screwdyn.dispatch.Kernel.lanes`), for a
  Docker image or a cluster's workers.

:func:`compile_ahead` compiles a set over several processes at once (one per core by default), each
taking the next variant as it finishes one, the longest first.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

from .dispatch import Kernel, kernels

__all__ = ["INSTALL", "variants", "variant_name", "compile_ahead"]

# (kernel key, "one" | "batch"): the batch with the kernel's LANES (or without lanes)
INSTALL = (
    ("rnea", "one"), ("rnea", "batch"),                  # inverse dynamics, gravity, bias torques
    ("crba", "one"), ("crba", "batch"),                  # the mass matrix
    ("aba", "one"), ("aba", "batch"),                    # forward dynamics
    ("coriolis", "one"), ("coriolis", "batch"),          # the Coriolis matrix
    ("jacobian", "one"), ("jacobian", "batch"),          # a frame's Jacobian
    ("rollout", "one"), ("rollout", "batch"),            # simulate: one rollout, a batch (rk4, the default)
    ("energy", "batch"),                                 # the energies of a trajectory (simulate --plot)
)

# compiled first (each takes several seconds): a process that starts a short one last waits less
_LONGEST = ("rollout", "aba_derivatives", "rnea_derivatives", "aba", "coriolis", "crba", "rnea")


def _lane_counts(kernel):
    """The batch lane counts of ``kernel``: LANES, LANES / 2, ..., 1 (the counts
    :meth:`~screwdyn.dispatch.Kernel.lanes` can choose), or ``(None,)`` for a kernel without lanes."""
    lanes = kernel.entry.lanes
    if not lanes:
        return (None,)
    counts = []
    while lanes >= 1:
        counts.append(lanes)
        lanes //= 2
    return tuple(counts)


def variants(selection="all"):
    """``[(module, key, which, lanes)]``: every entry point's variants (``"all"``), those of
    :data:`INSTALL` (``"install"``) or of a list of ``(key, which)`` like it, the longest to
    compile first."""
    found = []
    pairs = INSTALL if selection == "install" else selection
    for kernel in kernels():
        if selection != "all":
            whats = [(w, (kernel.entry.lanes or None) if w == "batch" else None)
                     for k, w in pairs if k == kernel.key]
        else:
            whats = [("one", None)] + [("batch", lanes) for lanes in _lane_counts(kernel)]
        found += [(kernel.module, kernel.key, w, lanes) for w, lanes in whats]

    def order(v):
        _, key, which, lanes = v
        rank = _LONGEST.index(key) if key in _LONGEST else len(_LONGEST)
        return which == "one", rank, -(lanes or 0)
    return sorted(found, key=order)


def variant_name(key, which, lanes):
    return f"{key} {which}" + (f" ({lanes} lanes)" if lanes else "")


def _compile(module, key, which, lanes):
    """In a worker: one variant into the cache (loaded if it is there). Returns its seconds."""
    Kernel._said = True   # compiling is what was asked for
    t0 = time.perf_counter()
    Kernel(module, key).bind(which, lanes)
    return time.perf_counter() - t0


def compile_ahead(selection="all", jobs=None, report=None):
    """Compile ``selection`` (:func:`variants`) into numba's cache in use (the package's, or
    ``NUMBA_CACHE_DIR``), over ``jobs`` processes (default: every core; 1: in this process).
    ``report(name, seconds, done, total)`` hears of each variant as it finishes. Returns the wall
    time in seconds."""
    todo = variants(selection)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    t0 = time.perf_counter()
    if jobs == 1:
        for done, v in enumerate(todo, 1):
            seconds = _compile(*v)
            if report:
                report(variant_name(*v[1:]), seconds, done, len(todo))
        return time.perf_counter() - t0
    # fork where there is one: the workers start with screwdyn imported (spawn re-imports it, 0.5 s each)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(method)) as pool:
        futures = {pool.submit(_compile, *v): v for v in todo}
        for done, future in enumerate(as_completed(futures), 1):
            seconds = future.result()
            if report:
                report(variant_name(*futures[future][1:]), seconds, done, len(todo))
    return time.perf_counter() - t0
