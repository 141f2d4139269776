"""What the first call of each public function costs in a new process: loading its kernels from
numba's cache, or compiling what it uses when they are not there.

    python bench/first_compile.py                 # each function alone, in a new process, empty cache
    python bench/first_compile.py --installed     # one process on the installed package's cache
    python bench/first_compile.py --only simulate inverse_dynamics

Empty cache (the default): every function's first call, one state and then a batch of 64, runs in a
process of its own with an empty ``NUMBA_CACHE_DIR``, so that each figure is what that function
compiles and nothing else (what an editable install or a new cache directory pays). ``--installed``:
the README's main calls in one process on the cache the package was installed with (``pip install
.`` compiles them: ``screwdyn.precompile.INSTALL``), ``NUMBA_CACHE_DIR`` unset.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

SETUP = r"""
import time, warnings
t0 = time.perf_counter()
import numpy as np
import screwdyn
IMPORT = time.perf_counter() - t0
warnings.simplefilter("ignore")
arm = screwdyn.models.load("panda")
qa = screwdyn.models.home("panda")
za = np.zeros(arm.n)
QA = np.tile(qa, (64, 1))
ZA = np.zeros_like(QA)
solo = screwdyn.models.load("solo12")
qs = screwdyn.models.home("solo12")
zs = np.zeros(solo.nv)
QS = np.tile(qs, (64, 1))
ZS = np.zeros((64, solo.nv))
feet = [screwdyn.PointContact(solo, f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
ground = screwdyn.Environment(screwdyn.Ground())
obstacles = screwdyn.Environment(screwdyn.Ground(), screwdyn.Box((0.5, 0, 0.05), (0.1, 0.4, 0.1)))
"""

# name: (one state, batch), expressions in SETUP's names
CALLS = {
    "inverse_dynamics": ("screwdyn.inverse_dynamics(arm, qa, za, za)", "screwdyn.inverse_dynamics(arm, QA, ZA, ZA)"),
    "gravity_torques": ("screwdyn.gravity_torques(arm, qa)", "screwdyn.gravity_torques(arm, QA)"),
    "mass_matrix": ("screwdyn.mass_matrix(arm, qa)", "screwdyn.mass_matrix(arm, QA)"),
    "forward_dynamics": ("screwdyn.forward_dynamics(arm, qa, za, za)", "screwdyn.forward_dynamics(arm, QA, ZA, ZA)"),
    "coriolis_matrix": ("screwdyn.coriolis_matrix(arm, qa, za)", "screwdyn.coriolis_matrix(arm, QA, ZA)"),
    "jacobian": ("screwdyn.jacobian(arm, qa, 'panda_link8')", "screwdyn.jacobian(arm, QA, 'panda_link8')"),
    "simulate": ("screwdyn.simulate(arm, qa, None, duration=0.01)", "screwdyn.simulate(arm, QA, None, duration=0.01)"),
    "simulate semi_implicit_euler": ("screwdyn.simulate(arm, qa, None, duration=0.01, integrator='semi_implicit_euler')",
                                     "screwdyn.simulate(arm, QA, None, duration=0.01, integrator='semi_implicit_euler')"),
    "forward_dynamics crba": ("screwdyn.forward_dynamics(arm, qa, za, za, method='crba')",
                              "screwdyn.forward_dynamics(arm, QA, ZA, ZA, method='crba')"),
    "mass_matrix_inverse": ("screwdyn.mass_matrix_inverse(arm, qa)", "screwdyn.mass_matrix_inverse(arm, QA)"),
    "kinetic_energy": ("screwdyn.kinetic_energy(arm, qa, za)", "screwdyn.kinetic_energy(arm, QA, ZA)"),
    "forward_kinematics": ("screwdyn.forward_kinematics(arm, qa)", "screwdyn.forward_kinematics(arm, QA)"),
    "frame_velocity": ("screwdyn.frame_velocity(arm, qa, za, 'panda_link8')",
                       "screwdyn.frame_velocity(arm, QA[0], ZA[0], 'panda_link8')"),
    "centroidal_momentum_matrix": ("screwdyn.centroidal_momentum_matrix(solo, qs)",
                                   "screwdyn.centroidal_momentum_matrix(solo, QS)"),
    "regressor": ("screwdyn.regressor(arm, qa, za, za)", "screwdyn.regressor(arm, QA, ZA, ZA)"),
    "inverse_dynamics_derivatives": ("screwdyn.inverse_dynamics_derivatives(arm, qa, za, za)",
                                     "screwdyn.inverse_dynamics_derivatives(arm, QA, ZA, ZA)"),
    "forward_dynamics_derivatives": ("screwdyn.forward_dynamics_derivatives(arm, qa, za, za)",
                                     "screwdyn.forward_dynamics_derivatives(arm, QA, ZA, ZA)"),
    "linearize": ("screwdyn.linearize(arm, qa, za)", "screwdyn.linearize(arm, QA, ZA)"),
    "constraint_jacobian": ("screwdyn.constraint_jacobian(solo, qs, feet)", "screwdyn.constraint_jacobian(solo, QS, feet)"),
    "delassus": ("screwdyn.delassus(solo, qs, feet)", "screwdyn.delassus(solo, QS, feet)"),
    "constrained_forward_dynamics": ("screwdyn.constrained_forward_dynamics(solo, qs, zs, zs, feet)",
                                     "screwdyn.constrained_forward_dynamics(solo, QS, ZS, ZS, feet)"),
    "impulse_dynamics": ("screwdyn.impulse_dynamics(solo, qs, zs, feet)", "screwdyn.impulse_dynamics(solo, QS, ZS, feet)"),
    "constrained_inverse_dynamics": ("screwdyn.constrained_inverse_dynamics(solo, qs, zs, zs, feet, strict=False)",
                                     "screwdyn.constrained_inverse_dynamics(solo, QS, ZS, ZS, feet, strict=False)"),
    "constrained_forward_dynamics_derivatives": (
        "screwdyn.constrained_forward_dynamics_derivatives(solo, qs, zs, zs, feet)",
        "screwdyn.constrained_forward_dynamics_derivatives(solo, QS, ZS, ZS, feet)"),
    "detect": ("screwdyn.detect(solo, qs, ground)", "screwdyn.detect(solo, QS, ground)"),
    "simulate constraints": ("screwdyn.simulate(solo, qs, None, duration=0.01, constraints=feet, joint_limits=False)",
                             "screwdyn.simulate(solo, QS, None, duration=0.01, constraints=feet, joint_limits=False)"),
    "step": ("screwdyn.step(solo, qs, zs, zs, 1e-3, ground)", "screwdyn.step(solo, QS, ZS, ZS, 1e-3, ground)"),
    "simulate environment": ("screwdyn.simulate(solo, qs, None, duration=0.01, environment=ground)",
                             "screwdyn.simulate(solo, QS, None, duration=0.01, environment=ground)"),
    "simulate environment (a box)": ("screwdyn.simulate(solo, qs, None, duration=0.01, environment=obstacles)",
                                     "screwdyn.simulate(solo, QS, None, duration=0.01, environment=obstacles)"),
}

CHILD = SETUP + r"""
import sys
for name in sys.argv[1:]:
    for label, expr in zip(("one state", "(64, n)"), CALLS[name]):
        t = time.perf_counter()
        eval(expr)
        print(f"{name:42s} {label:10s} {time.perf_counter() - t:7.2f} s", flush=True)
"""

MAIN_CALLS = ("inverse_dynamics", "gravity_torques", "mass_matrix", "forward_dynamics", "coriolis_matrix", "jacobian",
              "simulate")


def run(names, env):
    code = f"CALLS = {CALLS!r}\n" + CHILD
    r = subprocess.run([sys.executable, "-c", code, *names], env=env, capture_output=True, text=True)
    if r.returncode:
        print(f"{' '.join(names)}: failed\n{r.stderr[-2000:]}", flush=True)
    else:
        print(r.stdout, end="", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--installed", action="store_true", help="the README's main calls, on the installed cache")
    ap.add_argument("--only", nargs="*", default=None, help="these functions only")
    args = ap.parse_args()
    names = args.only or (MAIN_CALLS if args.installed else list(CALLS))
    if args.installed:
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        t0 = time.perf_counter()
        run(names, env)
        print(f"process: {time.perf_counter() - t0:.1f} s")
        return
    for name in names:
        with tempfile.TemporaryDirectory(prefix="screwdyn-numba-cache-") as cache:
            run([name], dict(os.environ, NUMBA_CACHE_DIR=cache))


if __name__ == "__main__":
    main()
