"""What each compiled variant of a kernel costs to compile and what it buys in speed.

    python bench/variants.py [--robots panda ur5 talos_full_v2] [--kernels rnea crba ...] [--markdown]

For every kernel entry (``screwdyn.dispatch.kernels()``) and each variant ``screwdyn compile``
builds (the one-state entry, the batch entry at each lane count LANES, LANES / 2, ..., 1):

* its cold compile time: a new process with an empty ``NUMBA_CACHE_DIR`` compiles that variant
  alone (what a first call pays, helpers included);
* its speed: per state, the batch entry at each lane count on ``B`` = 1,000 states (2 threads; the
  counts that fit the model's stack), against the batch entry at one lane; and the one-state entry
  against the one-lane batch entry called with one state (what the one-state variant buys).
  Variants are timed in interleaved rounds in one process (medians), so that a loaded machine
  slows them alike.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

COMPILE = """
import time, sys
from screwdyn.dispatch import Kernel
module, key, which, lanes = sys.argv[1:5]
k = Kernel(module, key)
k.entry
t0 = time.perf_counter()
k.bind(which, None if lanes == "-" else int(lanes))
print(time.perf_counter() - t0)
"""


def cold_compile(module, key, which, lanes):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        r = subprocess.run([sys.executable, "-c", COMPILE, module, key, which, "-" if lanes is None else str(lanes)],
                           env=env, capture_output=True, text=True, check=True)
    return float(r.stdout.split()[-1])


def _arguments(kernel, model, B, rng):
    """The batch entry's arguments for ``B`` random states of ``model`` (outputs and status included),
    and the one-state entry's for the first state."""
    import screwdyn
    from screwdyn.dispatch import _NO_FEXT, _NO_FEXT3
    entry = kernel.entry
    if entry.params:
        return None      # kernels with frames or rollouts' arrays: not timed here
    rows = []
    for name in entry.states:
        if name == "q":
            rows.append(np.ascontiguousarray(screwdyn.random_configuration(model, rng, size=B)))
        else:
            rows.append(rng.uniform(-1, 1, (B, model.n)))
    n = model.n
    shapes = [(n,) * d if d <= 2 else (3, n, n) for d in entry.outputs]
    if kernel.key == "energy":
        shapes = [(14,)]
    outs = [np.empty((B,) + s) for s in shapes]
    fext = [_NO_FEXT3, False] if entry.fext else []
    one_fext = [_NO_FEXT, False] if entry.fext else []
    batch = [model._kd, *rows, *fext, *outs, np.zeros(B, dtype=np.int64)]
    one = [model._kd, *(r[0] for r in rows), *one_fext, *(o[0] for o in outs)]
    return batch, one


def _median_rounds(calls, rounds=7):
    """Per-call median seconds of each callable in ``calls``, timed in interleaved rounds."""
    times = {name: [] for name in calls}
    for f in calls.values():
        f()
    for _ in range(rounds):
        for name, (f, number) in ((k, (v, v.number)) for k, v in calls.items()):
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            times[name].append((time.perf_counter() - t0) / number)
    return {name: statistics.median(t) for name, t in times.items()}


class _Timed:
    def __init__(self, f, number):
        self.f, self.number = f, number

    def __call__(self):
        return self.f()


def speeds(kernel, model, B, rng):
    """``{variant: seconds per state}`` of the batch lane counts that fit and of the one-state
    entry against the one-lane batch entry on one state."""
    from screwdyn.algorithms.work import STACK_LIMIT
    args = _arguments(kernel, model, B, rng)
    if args is None:
        return {}
    batch, one = args
    entry = kernel.entry
    calls = {}
    counts = [None] if not entry.lanes else [L for L in (entry.lanes >> s for s in range(8)) if L >= 1]
    for L in counts:
        if L is not None and L * entry.work_floats(model.n) > STACK_LIMIT:
            continue
        f = kernel.batch(L)
        calls[f"batch ({L} lanes)" if L else "batch"] = _Timed(
            (lambda f=f, L=L: f(*batch, L)) if L else (lambda f=f: f(*batch)), max(1, 20000 // B))
    per_state = {k: v / B for k, v in _median_rounds(calls).items()}
    f1 = kernel.bind("one")
    one_lane = kernel.batch(1 if entry.lanes else None)
    single = [a[:1] if isinstance(a, np.ndarray) and a.ndim and a.shape[0] == B and a is not model._kd else a
              for a in batch]
    pair = {"one": _Timed(lambda: f1(*one), 2000),
            "batch of one": _Timed((lambda: one_lane(*single, 1)) if entry.lanes else (lambda: one_lane(*single)), 2000)}
    per_state.update(_median_rounds(pair))
    return per_state


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--robots", nargs="+", default=["panda", "ur5", "talos_full_v2"])
    p.add_argument("--kernels", nargs="*", default=None,
                   help="kernel keys, or module.key where two modules share a key (default: all)")
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--no-compile", action="store_true", help="skip the cold compile times")
    p.add_argument("--compile-only", action="store_true", help="only the cold compile times")
    args = p.parse_args(argv)
    import numba

    import screwdyn
    from screwdyn import models
    from screwdyn.dispatch import kernels
    from screwdyn.precompile import variants
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    rng = np.random.default_rng(0)
    robots = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.robots:   # NAME:floating with a free-flyer root joint
            spec, _, kind = name.partition(":")
            robots[name] = models.load(models.resolve(spec, kinds=("example-robot-data", "urdf")),
                                       floating_base=kind == "floating")
    print(f"# variants: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}, numba {numba.__version__} ({numba.get_num_threads()} threads), "
          f"B = {args.batch}, screwdyn {screwdyn.__version__}")
    print("| kernel | variant | cold compile s | " + " | ".join(f"{r} us/state" for r in robots) + " |")
    print("|---|---|---:|" + "---:|" * len(robots))
    for kernel in kernels():
        if args.kernels and kernel.key not in args.kernels and f"{kernel.module}.{kernel.key}" not in args.kernels:
            continue
        table = {}
        for name, model in ({} if args.compile_only else robots).items():
            for variant, seconds in speeds(kernel, model, args.batch, rng).items():
                table.setdefault(variant, {})[name] = seconds * 1e6
        for module, key, which, lanes in variants("all"):
            if (module, key) != (kernel.module, kernel.key):
                continue
            variant = "one" if which == "one" else (f"batch ({lanes} lanes)" if lanes else "batch")
            cold = "" if args.no_compile else f"{cold_compile(kernel.module, key, which, lanes):.1f}"
            cells = " | ".join(f"{table.get(variant, {}).get(r, float('nan')):.3f}" for r in robots)
            name = key if key == module else f"{module}.{key}"
            print(f"| {name} | {variant} | {cold} | {cells} |", flush=True)
        if "batch of one" in table:
            cells = " | ".join(f"{table['batch of one'].get(r, float('nan')):.3f}" for r in robots)
            print(f"| {kernel.key} | (one state through the one-lane batch entry) | | {cells} |", flush=True)


if __name__ == "__main__":
    main()
