"""screwdyn.gpu: the GPU drivers run by numba-cuda's simulator (tests/gpu_simulator.py, in a process
of its own: ``NUMBA_ENABLE_CUDASIM=1 NUMBA_DISABLE_JIT=1``) on a few states of the Panda, the UR5
and random trees, against the CPU kernels in this process; and arrays of other libraries (PyTorch,
JAX: CPU tensors here) through the batched functions."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import screwdyn
from screwdyn import _gpu, models

from helpers import random_model

HERE = os.path.dirname(__file__)
SEED = 7
FP32_BOUND = 1e-5   # the float32 error bound stated in screwdyn.gpu's docstring (relative to the largest entry)


def _rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed (pip install 'screwdyn[gpu]'): its simulator runs the GPU drivers")
    out = tmp_path_factory.mktemp("gpu")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", NUMBA_DISABLE_JIT="1",
               PYTHONPATH=os.pathsep.join([os.path.join(HERE, "..", "src"), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, os.path.join(HERE, "gpu_simulator.py"), str(out), str(SEED)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    sys.path.insert(0, HERE)
    from gpu_simulator import the_models
    rng = np.random.default_rng(SEED)
    return {name: (m, dict(np.load(out / f"{name}.npz"))) for name, m in the_models(rng).items()}


MODELS = ("panda", "ur5", "tree", "floating")


@pytest.mark.parametrize("name", MODELS)
def test_simulated_drivers_equal_cpu_kernels(simulated, name):
    m, r = simulated[name]
    q, qd, qdd, tau = r["q"], r["qd"], r["qdd"], r["tau"]
    assert _rel(r["id"], screwdyn.inverse_dynamics(m, q, qd, qdd)) < 1e-12
    assert _rel(r["gravity"], screwdyn.gravity_torques(m, q)) < 1e-12
    assert _rel(r["fd"], screwdyn.forward_dynamics(m, q, qd, tau)) < 1e-12
    assert _rel(r["M"], screwdyn.mass_matrix(m, q)) < 1e-12
    if "id_fext" in r:
        assert _rel(r["id_fext"], screwdyn.inverse_dynamics(m, q, qd, qdd, r["F"])) < 1e-12
        assert _rel(r["fd_fext"], screwdyn.forward_dynamics(m, q, qd, tau, r["F"])) < 1e-12
    assert "q contains NaN or inf (batch index (2,))" in str(r["nan_error"])


@pytest.mark.parametrize("name", MODELS)
def test_simulated_float32_within_stated_error(simulated, name):
    m, r = simulated[name]
    q, qd, qdd, tau = r["q"], r["qd"], r["qdd"], r["tau"]
    assert r["id32"].dtype == np.float32
    assert _rel(r["id32"], screwdyn.inverse_dynamics(m, q, qd, qdd)) < FP32_BOUND
    assert _rel(r["fd32"], screwdyn.forward_dynamics(m, q, qd, tau)) < FP32_BOUND
    assert _rel(r["M32"], screwdyn.mass_matrix(m, q)) < FP32_BOUND


@pytest.mark.parametrize("name", ["panda", "floating"])
@pytest.mark.parametrize("method", ["rk4", "semi_implicit_euler"])
def test_simulated_rollout_equals_simulate(simulated, name, method):
    """gpu.rollout's steps are simulate's without friction, limits and saturation."""
    from gpu_simulator import DT, STEPS
    m, r = simulated[name]
    for k in range(len(r["q"])):
        traj = screwdyn.simulate(m, r["q"][k], r["qd"][k], duration=DT * STEPS, dt=DT, tau=r["tau"][k],
                                 integrator=method, friction=False, joint_limits=False)
        assert _rel(r[f"{method}_q"][k], traj.q[-1]) < 1e-12
        assert _rel(r[f"{method}_v"][k], traj.qd[-1]) < 1e-12


# ---------------------------------------------------------------------------------- other libraries
def test_numpy_arrays_are_not_foreign():
    assert not _gpu.any_foreign(np.zeros(3), [1.0], 2.0, np.float64(1.0), {"a": np.zeros(6)})


def test_torch_cpu_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    m = models.load("ur5")
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.normal(size=(5, 6)) for _ in range(3))
    tq = torch.from_numpy(q)
    tau = screwdyn.inverse_dynamics(m, tq, torch.from_numpy(qd), qdd)
    assert isinstance(tau, torch.Tensor) and tau.dtype == torch.float64
    assert np.array_equal(tau.numpy(), screwdyn.inverse_dynamics(m, q, qd, qdd))
    M = screwdyn.mass_matrix(m, tq.float())      # float32 in, float32 out (computed in float64 on the CPU)
    assert M.dtype == torch.float32 and M.shape == (5, 6, 6)
    D = screwdyn.inverse_dynamics_derivatives(m, tq, qd, qdd)
    assert all(isinstance(x, torch.Tensor) for x in D)
    with pytest.raises(screwdyn.InputError, match="qd contains NaN"):
        screwdyn.forward_dynamics(m, tq, torch.full((5, 6), float("nan"), dtype=torch.float64), qdd)


def test_jax_cpu_arrays_in_and_out():
    jnp = pytest.importorskip("jax.numpy")
    import jax
    jax.config.update("jax_enable_x64", True)
    m = random_model(np.random.default_rng(1), n=5)
    rng = np.random.default_rng(2)
    q, qd, tau = (rng.normal(size=(3, 5)) for _ in range(3))
    qdd = screwdyn.forward_dynamics(m, jnp.asarray(q), jnp.asarray(qd), jnp.asarray(tau))
    assert isinstance(qdd, jax.Array)
    assert np.array_equal(np.asarray(qdd), screwdyn.forward_dynamics(m, q, qd, tau))
