"""One rollout of the bundled Panda: 2 s from its 'ready' pose, RK4 at dt = 1 ms; the simulate call
(its energies are computed when read), passive and under a computed-torque controller, CPU
microseconds a step, the median of 7 calls. Run it with each tree on PYTHONPATH to compare:

    PYTHONPATH=src python bench/simulate_one.py
"""
import inspect
import statistics
import time
import warnings

import screwdyn
from screwdyn import models
from screwdyn.control import computed_torque_pd
from screwdyn.trajectory import JointTrajectory

warnings.simplefilter("ignore")   # the passive fall exceeds the velocity limits: not the point here
panda = models.load("panda")
q0 = models.home("panda")
ctrl = computed_torque_pd(panda, JointTrajectory(q0, q0 + 0.3, 1.6), 100.0, 20.0)
cases = [("passive", {}), ("computed torque", {"tau": ctrl})]
if "joint_limits" in inspect.signature(screwdyn.simulate).parameters:
    cases[1:1] = [("passive, no limits", {"joint_limits": False})]
    cases.append(("computed torque, hold", {"tau": ctrl, "hold": True}))
for label, kw in cases:
    screwdyn.simulate(panda, q0, None, 0.01, 1e-3, **kw)
    cpu = []
    for _ in range(7):
        c0 = time.process_time()
        screwdyn.simulate(panda, q0, None, 2.0, 1e-3, **kw)
        cpu.append(time.process_time() - c0)
    print(f"{label:22s} {statistics.median(cpu) / 2000 * 1e6:7.2f} us a step (CPU)")
