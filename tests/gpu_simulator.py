"""Run by tests/test_gpu.py in a process of its own, under numba-cuda's simulator
(``NUMBA_ENABLE_CUDASIM=1 NUMBA_DISABLE_JIT=1``): the GPU drivers on a few states of each model,
through the public functions with numba device arrays. Writes the inputs and the results to
``<out>/<model>.npz``; the test compares them with the CPU kernels in its own process.

    python tests/gpu_simulator.py OUT_DIR SEED
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

import screwdyn                      # noqa: E402
from numba import cuda               # noqa: E402
from screwdyn import gpu, models     # noqa: E402

from helpers import random_model     # noqa: E402

B = 4
STEPS, DT = 3, 2e-3


def the_models(rng):
    return {"panda": models.load("panda"), "ur5": models.load("ur5"),
            "tree": random_model(rng, n=6, fixed=1, prismatic=0.3, branching=0.6, armature=True),
            "floating": random_model(rng, n=4, fixed=0, spherical=0.3, floating=True)}


def main(out, seed):
    assert cuda.is_available() and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    gpu.MIN_BATCH = 1
    rng = np.random.default_rng(seed)
    for name, m in the_models(rng).items():
        q = np.stack([screwdyn.random_configuration(m, rng=rng) for _ in range(B)])
        qd, qdd, tau = (rng.normal(size=(B, m.n)) for _ in range(3))
        F = rng.normal(size=(B, m.nbodies, 6))
        d = {k: cuda.to_device(v) for k, v in dict(q=q, qd=qd, qdd=qdd, tau=tau).items()}
        res = dict(q=q, qd=qd, qdd=qdd, tau=tau, F=F)
        res["id"] = screwdyn.inverse_dynamics(m, d["q"], d["qd"], d["qdd"]).copy_to_host()
        res["gravity"] = screwdyn.gravity_torques(m, d["q"]).copy_to_host()
        res["fd"] = screwdyn.forward_dynamics(m, d["q"], d["qd"], d["tau"]).copy_to_host()
        res["M"] = screwdyn.mass_matrix(m, d["q"]).copy_to_host()
        if m._one_dof:
            res["id_fext"] = screwdyn.inverse_dynamics(m, d["q"], d["qd"], d["qdd"], cuda.to_device(F)).copy_to_host()
            res["fd_fext"] = screwdyn.forward_dynamics(m, d["q"], d["qd"], d["tau"], cuda.to_device(F)).copy_to_host()
        for method in ("rk4", "semi_implicit_euler"):
            q1, v1 = gpu.rollout(m, d["q"], d["qd"], d["tau"], DT, STEPS, method)
            res[f"{method}_q"], res[f"{method}_v"] = q1.copy_to_host(), v1.copy_to_host()
        f32 = {k: cuda.to_device(v.astype(np.float32)) for k, v in dict(q=q, qd=qd, qdd=qdd, tau=tau).items()}
        res["id32"] = screwdyn.inverse_dynamics(m, f32["q"], f32["qd"], f32["qdd"]).copy_to_host()
        res["fd32"] = screwdyn.forward_dynamics(m, f32["q"], f32["qd"], f32["tau"]).copy_to_host()
        res["M32"] = screwdyn.mass_matrix(m, f32["q"]).copy_to_host()
        bad = q.copy()
        bad[2, 0] = np.nan
        try:
            screwdyn.inverse_dynamics(m, cuda.to_device(bad), d["qd"], d["qdd"])
            res["nan_error"] = np.array("no error")
        except screwdyn.InputError as e:
            res["nan_error"] = np.array(str(e))
        np.savez(os.path.join(out, f"{name}.npz"), **res)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
