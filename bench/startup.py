"""Start-up time: ``import screwdyn`` plus the first ``inverse_dynamics`` in a new process.

    python bench/startup.py        (run it twice: the first run after an install compiles)
"""
import time

t0 = time.perf_counter()
import numpy as np  # noqa: E402

import screwdyn  # noqa: E402

t1 = time.perf_counter()
b = screwdyn.ModelBuilder("one_link")
b.add_body("a", "base", "j1", "revolute", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-3)
model = b.build()
t2 = time.perf_counter()
screwdyn.inverse_dynamics(model, np.zeros(1), np.zeros(1), np.zeros(1))
t3 = time.perf_counter()
print(f"import {t1 - t0:.3f} s, model {t2 - t1:.3f} s, first inverse_dynamics {t3 - t2:.3f} s, total {t3 - t0:.3f} s")
