"""How long the first run after installation takes: numba compiles each kernel the first time it
is called and caches it on disk. This script starts a new process with an empty cache
(``NUMBA_CACHE_DIR`` set to a new temporary directory) and times the first call of each public
function on UR5, one state and then a batch of 50 states.

    python bench/first_compile.py

Then it starts a second process on the same (now warm) cache and times the same calls, which is
what every later run pays.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import time, warnings
t0 = time.perf_counter()
import numpy as np
import screwdyn
from screwdyn.io.urdf import example_robot_data_path
print(f"import screwdyn: {time.perf_counter() - t0:.1f} s", flush=True)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = screwdyn.load_urdf(str(example_robot_data_path("ur5")))
n = m.n
rng = np.random.default_rng(0)
q, v, a = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
Q, V, A = rng.normal(size=(50, n)), rng.normal(size=(50, n)), rng.normal(size=(50, n))
calls = [
    ("inverse_dynamics", lambda: screwdyn.inverse_dynamics(m, q, v, a)),
    ("  its batch", lambda: screwdyn.inverse_dynamics(m, Q, V, A)),
    ("forward_dynamics", lambda: screwdyn.forward_dynamics(m, q, v, a)),
    ("  its batch", lambda: screwdyn.forward_dynamics(m, Q, V, A)),
    ("mass_matrix", lambda: screwdyn.mass_matrix(m, q)),
    ("  its batch", lambda: screwdyn.mass_matrix(m, Q)),
    ("coriolis_matrix", lambda: screwdyn.coriolis_matrix(m, q, v)),
    ("  its batch", lambda: screwdyn.coriolis_matrix(m, Q, V)),
    ("jacobian", lambda: screwdyn.jacobian(m, q, "tool0")),
    ("simulate (0.1 s of RK4)", lambda: screwdyn.simulate(m, q, v, 0.1, dt=1e-3, integrator="rk4")),
]
total = 0.0
for name, f in calls:
    t0 = time.perf_counter()
    f()
    dt = time.perf_counter() - t0
    total += dt
    print(f"{name:26s} {dt:8.2f} s", flush=True)
print(f"{'all first calls':26s} {total:8.2f} s", flush=True)
"""


def main():
    with tempfile.TemporaryDirectory(prefix="screwdyn-numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("empty cache (first run after installation)", "warm cache (every later run)"):
            print(f"--- {label}", flush=True)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", CHILD], env=env, check=True)
            print(f"process: {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
