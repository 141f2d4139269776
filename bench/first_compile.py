"""What the first calls in a new process cost: loading the kernels from numba's cache, or compiling
them when there is none.

    python bench/first_compile.py            # empty cache, then the same cache again
    python bench/first_compile.py --installed

Each run starts a new Python process that times ``import screwdyn`` and the first call of each of
``inverse_dynamics``, ``mass_matrix``, ``forward_dynamics``, ``coriolis_matrix``,
``gravity_torques``, ``jacobian``, ``kinetic_energy`` and ``regressor`` on UR5, one state and then
a ``(64, n)`` batch. By default the first process gets an empty ``NUMBA_CACHE_DIR`` (what an
editable install or a new cache directory pays: everything compiles) and the second the cache the
first one filled. ``--installed`` runs one process on the cache the package was installed with
(``pip install .`` compiles into the package: see setup.py), leaving ``NUMBA_CACHE_DIR`` unset.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import time
t0 = time.perf_counter()
import numpy as np
import screwdyn
print(f"import screwdyn {time.perf_counter() - t0:27.2f} s", flush=True)
m = screwdyn.models.load("ur5")
rng = np.random.default_rng(0)
one = rng.normal(size=(3, m.n))
batch = rng.normal(size=(3, 64, m.n))
calls = [("inverse_dynamics", lambda q, v, a: screwdyn.inverse_dynamics(m, q, v, a)),
         ("mass_matrix", lambda q, v, a: screwdyn.mass_matrix(m, q)),
         ("forward_dynamics", lambda q, v, a: screwdyn.forward_dynamics(m, q, v, a)),
         ("coriolis_matrix", lambda q, v, a: screwdyn.coriolis_matrix(m, q, v)),
         ("gravity_torques", lambda q, v, a: screwdyn.gravity_torques(m, q)),
         ("jacobian", lambda q, v, a: screwdyn.jacobian(m, q, "tool0")),
         ("kinetic_energy", lambda q, v, a: screwdyn.kinetic_energy(m, q, v)),
         ("regressor", lambda q, v, a: screwdyn.regressor(m, q, v, a))]
total, worst = 0.0, 0.0
for name, f in calls:
    for label, x in (("one state", one), ("(64, n)", batch)):
        t = time.perf_counter()
        f(*x)
        dt = time.perf_counter() - t
        total, worst = total + dt, max(worst, dt)
        print(f"{name:18s} {label:10s} {dt:8.2f} s", flush=True)
print(f"all first calls {total:.2f} s, the slowest {worst:.2f} s", flush=True)
"""


def run(label, env):
    print(f"--- {label}", flush=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD], env=env, check=True)
    print(f"process: {time.perf_counter() - t0:.1f} s", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--installed", action="store_true", help="one process on the cache the package was installed with")
    args = ap.parse_args()
    if args.installed:
        run("the installed package's cache", {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"})
        return
    with tempfile.TemporaryDirectory(prefix="screwdyn-numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        run("empty cache (everything compiles)", env)
        run("the same cache again", env)


if __name__ == "__main__":
    main()
