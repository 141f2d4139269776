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
taking the next module's variants as it finishes one, the longest first; a module's variants share
one process, since typing their common helpers is most of each one's compile time.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

from .dispatch import Kernel, fewer_lanes, kernels

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

# the modules whose kernels take longest, longest first: a worker that starts a short one last waits less
_LONGEST = ("contact_rollout", "aba_derivatives", "constrained_derivatives", "rollout", "collide",
            "rnea_derivatives", "constrained_rollout", "rnea", "coriolis", "crba", "aba", "constrained")


def _lane_counts(kernel):
    """The batch lane counts of ``kernel``: LANES and each count below it that
    :meth:`~screwdyn.dispatch.Kernel.lanes` can choose (:func:`~screwdyn.dispatch.fewer_lanes`,
    down to 1), or ``(None,)`` for a kernel without lanes."""
    lanes = kernel.entry.lanes
    if not lanes:
        return (None,)
    counts = [lanes]
    while lanes > 1:
        lanes = fewer_lanes(lanes)
        counts.append(lanes)
    return tuple(counts)


def variants(selection="all"):
    """``[(module, key, which, lanes)]``: every entry point's variants (``"all"``), those of
    :data:`INSTALL` (``"install"``) or of a list of ``(key, which)`` like it, module by module,
    the longest to compile first."""
    found = []
    pairs = INSTALL if selection == "install" else selection
    for kernel in kernels():
        if selection != "all":
            whats = [(w, (kernel.entry.lanes or None) if w == "batch" else None)
                     for k, w in pairs if k == kernel.key]
        else:
            whats = [("one", None)] + [("batch", lanes) for lanes in _lane_counts(kernel)]
        found += [(kernel.module, kernel.key, w, lanes) for w, lanes in whats]

    return sorted(found, key=lambda v: (_rank(v[0]), v[1], v[2] == "one", -(v[3] or 0)))


def _rank(module):
    return _LONGEST.index(module) if module in _LONGEST else len(_LONGEST)


def variant_name(key, which, lanes):
    return f"{key} {which}" + (f" ({lanes} lanes)" if lanes else "")


def _compile(module, variants):
    """In a worker: ``variants`` (``[(key, which, lanes)]``, all of one module) into the cache, one
    after another (loaded where they are there): the later ones reuse the typing of the helpers
    they share with the first, which takes most of a variant's time (ABA's derivatives: 23 s for
    the first, 7 s for each other). Returns ``[(name, which, lanes, seconds)]``."""
    Kernel._said = True   # compiling is what was asked for
    times = []
    for key, which, lanes in variants:
        t0 = time.perf_counter()
        Kernel(module, key).bind(which, lanes)
        times.append((key if key == module else f"{module}.{key}", which, lanes, time.perf_counter() - t0))
    return times


def compile_ahead(selection="all", jobs=None, report=None):
    """Compile ``selection`` (:func:`variants`) into numba's cache in use (the package's, or
    ``NUMBA_CACHE_DIR``), over ``jobs`` processes (default: every core; 1: in this process), a
    module's variants in one process. ``report(name, seconds, done, total)`` hears of each
    kernel as its variants are ready (``name`` lists them with their seconds; ``seconds`` is their
    sum). Returns the wall time in seconds."""
    groups = {}
    for module, key, which, lanes in variants(selection):
        groups.setdefault(module, []).append((key, which, lanes))
    total = sum(len({v[0] for v in group}) for group in groups.values())
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(groups)))
    done = 0

    def heard(times):
        nonlocal done
        for key in dict.fromkeys(t[0] for t in times):
            mine = [t for t in times if t[0] == key]
            done += 1
            if report:
                parts = ", ".join(f"{which}" + (f" {lanes} lanes" if lanes else "") + f" {s:.1f} s"
                                  for _, which, lanes, s in mine)
                report(f"{key}: {parts}", sum(t[3] for t in mine), done, total)

    t0 = time.perf_counter()
    if jobs == 1:
        for module, group in groups.items():
            heard(_compile(module, group))
        return time.perf_counter() - t0
    # fork where there is one: the workers start with screwdyn imported (spawn re-imports it, 0.5 s each)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(method)) as pool:
        for future in as_completed([pool.submit(_compile, module, group) for module, group in groups.items()]):
            heard(future.result())
    return time.perf_counter() - t0
