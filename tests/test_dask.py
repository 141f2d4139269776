"""screwdyn._dask: Dask arrays through the batched functions, chunk by chunk.

Each function on Dask arrays must give, once computed, the numbers of the same function on the
NumPy arrays (the same kernels on each chunk: bit for bit), lazily (nothing computed until asked),
with NumPy's broadcasting between NumPy and Dask arguments, errors that name the argument and the
batch index in the whole array, and a model and kernels that pickle small for distributed workers.
"""
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers import random_model

import screwdyn
from screwdyn.control import gravity_compensation_pd
from screwdyn.errors import InputError
from screwdyn.sim import SimulationWarning

da = pytest.importorskip("dask.array", reason="Dask is an optional extra (pip install 'screwdyn[dask]'); the test extras include it")
dask = pytest.importorskip("dask")


@pytest.fixture(scope="module")
def panda():
    return screwdyn.models.load("panda")


def functions(model):
    """Every batched public function, as ``f(q, qd, x)`` (``x`` a third state: qdd or tau)."""
    frame = model.frame_names[-1]
    sd = screwdyn
    return {
        "inverse_dynamics": lambda q, qd, x: sd.inverse_dynamics(model, q, qd, x),
        "inverse_dynamics(friction)": lambda q, qd, x: sd.inverse_dynamics(model, q, qd, x, friction=True),
        "forward_dynamics": lambda q, qd, x: sd.forward_dynamics(model, q, qd, x),
        "forward_dynamics(crba, friction)": lambda q, qd, x: sd.forward_dynamics(model, q, qd, x, method="crba",
                                                                                 friction=True),
        "mass_matrix": lambda q, qd, x: sd.mass_matrix(model, q),
        "mass_matrix_inverse": lambda q, qd, x: sd.mass_matrix_inverse(model, q),
        "coriolis_matrix": lambda q, qd, x: sd.coriolis_matrix(model, q, qd),
        "gravity_torques": lambda q, qd, x: sd.gravity_torques(model, q),
        "bias_torques": lambda q, qd, x: sd.bias_torques(model, q, qd),
        "friction_torques": lambda q, qd, x: sd.friction_torques(model, q + x),
        "kinetic_energy": lambda q, qd, x: sd.kinetic_energy(model, q, qd),
        "potential_energy": lambda q, qd, x: sd.potential_energy(model, q),
        "mechanical_energy": lambda q, qd, x: sd.mechanical_energy(model, q, qd),
        "center_of_mass": lambda q, qd, x: sd.center_of_mass(model, q),
        "momentum": lambda q, qd, x: sd.momentum(model, q, qd),
        "momentum(com)": lambda q, qd, x: sd.momentum(model, q, qd, about="com"),
        "forward_kinematics": lambda q, qd, x: sd.forward_kinematics(model, q),
        "body_poses": lambda q, qd, x: sd.body_poses(model, q),
        "frame_pose": lambda q, qd, x: sd.frame_pose(model, q, frame),
        "jacobian": lambda q, qd, x: sd.jacobian(model, q, frame, "world_aligned"),
        "frame_velocity": lambda q, qd, x: sd.frame_velocity(model, q, qd, frame),
        "jdot_qd": lambda q, qd, x: sd.jdot_qd(model, q, qd, frame, "body"),
        "joint_torques_from_wrench": lambda q, qd, x: sd.joint_torques_from_wrench(model, q, frame, x[..., :6]),
        "regressor": lambda q, qd, x: sd.regressor(model, q, qd, x, viscous=True),
    }


def test_every_batched_function_takes_dask_arrays_and_gives_the_numpy_numbers(panda, rng):
    """A batch (3, 5) in chunks (2, 2) of q, a NumPy qd (5, n) and a Dask third state: each result is
    a Dask array of the right shape, dtype and batch chunks, equal bit for bit to the NumPy call."""
    model = panda.replace(damping=np.full(panda.n, 0.3), friction=np.full(panda.n, 0.2))
    n = model.n
    Q, QD, X = rng.normal(size=(3, 5, n)), rng.normal(size=(5, n)), rng.normal(size=(3, 5, n))
    q, x = da.from_array(Q, chunks=(2, 2, 3)), da.from_array(X, chunks=(3, 5, n))
    with dask.config.set(scheduler="threads"):
        for name, f in functions(model).items():
            y, ref = f(q, QD, x), f(Q, QD, X)
            assert isinstance(y, da.Array), name
            assert y.shape == ref.shape and y.dtype == np.float64 and y.chunks[:2] == ((2, 1), (2, 2, 1)), name
            np.testing.assert_array_equal(y.compute(), ref, err_msg=name)


def test_a_floating_base_model(rng):
    """A free-flyer (solo12): q has nq entries, qd and tau nv; wrenches one per body."""
    from screwdyn.configuration import random_configuration
    model = screwdyn.models.load("solo12")
    Q = random_configuration(model, rng, 9)
    V, F = rng.normal(size=(9, model.nv)), rng.normal(size=(9, model.nbodies, 6))
    q, v = da.from_array(Q, chunks=(4, 5)), da.from_array(V, chunks=4)
    frame = model.frame_names[-1]
    with dask.config.set(scheduler="sync"):
        for f in (lambda q, v: screwdyn.inverse_dynamics(model, q, v, v, f_ext=F),
                  lambda q, v: screwdyn.inverse_dynamics(model, q, v, v, f_ext={frame: F[:, 0]}),
                  lambda q, v: screwdyn.mass_matrix(model, q), lambda q, v: screwdyn.forward_kinematics(model, q),
                  lambda q, v: screwdyn.regressor(model, q, v, v),
                  lambda q, v: screwdyn.joint_torques_from_wrench(model, q, frame, v[..., :6])):
            np.testing.assert_allclose(f(q, v).compute(), f(Q, V), rtol=1e-13, atol=1e-12)
    with pytest.raises(InputError, match=rf"q must have shape \({model.nq},\)"):
        screwdyn.mass_matrix(model, v)
    # NumPy's broadcasting too: q (9, 1, nq) against qd (3, nv), the last axes of other lengths
    tau = screwdyn.inverse_dynamics(model, Q[:, None], V[:3], V[0])
    assert tau.shape == (9, 3, model.nv)
    np.testing.assert_array_equal(tau[:, 1], screwdyn.inverse_dynamics(model, Q, np.tile(V[1], (9, 1)), V[[0] * 9]))


def test_external_wrenches_as_dask_arrays_and_dicts(panda, rng):
    n = panda.n
    Q, F, W = rng.normal(size=(7, n)), rng.normal(size=(7, n, 6)), rng.normal(size=(7, 6))
    frame = panda.frame_names[-1]
    q, f, w = da.from_array(Q, chunks=3), da.from_array(F, chunks=(2, n, 3)), da.from_array(W, chunks=(4, 6))
    with dask.config.set(scheduler="sync"):
        np.testing.assert_array_equal(screwdyn.inverse_dynamics(panda, q, Q, Q, f_ext=f).compute(),
                                      screwdyn.inverse_dynamics(panda, Q, Q, Q, f_ext=F))
        lazy = screwdyn.inverse_dynamics(panda, Q, q, Q, f_ext={frame: w, panda.frame_names[3]: np.arange(6.0)})
        ref = screwdyn.inverse_dynamics(panda, Q, Q, Q, f_ext={frame: W, panda.frame_names[3]: np.arange(6.0)})
        np.testing.assert_allclose(lazy.compute(), ref, rtol=1e-12, atol=1e-12)


def test_results_are_lazy_and_each_chunk_runs_once(panda, rng):
    """Nothing runs while the graph is built: a counter in the inputs' chunks stays at 0, then each
    chunk runs once for one compute; a batch of 10^9 states gives its graph at once."""
    n = panda.n
    ran = []

    def chunk(block):
        ran.append(block.shape[0])
        return block

    Q = rng.normal(size=(50, n))
    q = da.from_array(Q, chunks=(10, n)).map_blocks(chunk, dtype=float, meta=np.empty((0, 0)))
    tau = screwdyn.inverse_dynamics(panda, q, Q, Q)
    M = screwdyn.mass_matrix(panda, q)
    assert ran == []
    with dask.config.set(scheduler="sync"):
        tau.compute()
    assert sorted(ran) == [10] * 5
    huge = da.zeros((10**9, n), chunks=(10**6, n))
    y = screwdyn.forward_dynamics(panda, huge, huge, huge)
    assert y.shape == (10**9, n) and y.numblocks == (1000, 1) and M.shape == (50, n, n)


def test_numpy_and_dask_broadcast_as_numpy_does(panda, rng):
    """Batch axes broadcast from the right, length 1 stretches; a state axis in several chunks is
    put in one; other dtypes are converted."""
    n = panda.n
    Q, QD, QDD = rng.normal(size=(4, 1, n)), rng.normal(size=(5, n)), rng.normal(size=n)
    q = da.from_array(Q, chunks=(2, 1, 3))                  # the state axis in 3 chunks
    qdd = da.from_array(QDD.astype(np.float32), chunks=4)
    with dask.config.set(scheduler="sync"):
        tau = screwdyn.inverse_dynamics(panda, q, QD, qdd)
        assert tau.shape == (4, 5, n)
        np.testing.assert_array_equal(tau.compute(), screwdyn.inverse_dynamics(panda, Q, QD, QDD.astype(np.float32)))
        one = screwdyn.kinetic_energy(panda, da.from_array(Q[0, 0]), QD[0])   # one state: a 0-d Dask array
        assert isinstance(one, da.Array) and one.shape == () and one.compute() == screwdyn.kinetic_energy(panda, Q[0, 0], QD[0])


def test_errors_name_the_argument_and_the_batch_index_in_the_whole_array(panda):
    n = panda.n
    Q = np.zeros((40, n))
    Q[27, 3] = np.nan
    q, zero = da.from_array(Q, chunks=(10, 4)), np.zeros(n)
    with dask.config.set(scheduler="sync"):
        with pytest.raises(InputError, match=r"q contains NaN or inf \(batch index \(27,\)\)"):
            screwdyn.inverse_dynamics(panda, q, zero, zero).compute()
        Q2 = np.zeros((4, 10, n))
        Q2[2, 7, 1] = np.inf
        with pytest.raises(InputError, match=r"qd contains NaN or inf \(batch index \(2, 7\)\)"):
            screwdyn.coriolis_matrix(panda, zero, da.from_array(Q2, chunks=(3, 4, n))).compute()
        with pytest.raises(InputError, match=r"qd contains NaN or inf \(batch index \(2, 7\)\)"):
            screwdyn.friction_torques(panda, da.from_array(Q2, chunks=(3, 4, n))).compute()
    # checked when the graph is built, with the shapes given
    with pytest.raises(InputError, match=rf"q must have shape \({n},\) or \(\.\.\., {n}\) .* got shape \(40, 5\)"):
        screwdyn.inverse_dynamics(panda, q[:, :5], zero, zero)
    with pytest.raises(InputError, match=r"do not broadcast.*q \(40, 7\), qd \(3, 7\)"):
        screwdyn.inverse_dynamics(panda, q, np.zeros((3, n)), zero)
    with pytest.raises(InputError, match="out= takes a NumPy array"):
        screwdyn.inverse_dynamics(panda, q, zero, zero, out=np.zeros((40, n)))
    with pytest.raises(InputError, match="must be an array of numbers"):
        screwdyn.mass_matrix(panda, q.astype(complex))
    with pytest.raises(InputError, match="unknown chunk sizes"):
        screwdyn.mass_matrix(panda, q[q[:, 0] > 0])
    with pytest.raises(InputError, match="unknown link or frame 'nope'"):
        screwdyn.inverse_dynamics(panda, q, zero, zero, f_ext={"nope": da.zeros(6)})
    with pytest.raises(InputError, match=rf"f_ext must have shape \({n}, 6\)"):
        screwdyn.inverse_dynamics(panda, q, zero, zero, f_ext=da.zeros((40, 5, 6)))


def test_a_model_pickles_small_without_anything_compiled(panda, rng):
    """What a Dask task sends to a worker: the model's own fields (no packed arrays, no caches, no
    compiled kernels); a kernel by its name."""
    model = random_model(rng, n=40)
    screwdyn.jacobian(model, np.zeros(model.n), model.frame_names[-1])
    screwdyn.inverse_dynamics(model, np.zeros((3, model.n)), np.zeros(model.n), np.zeros(model.n))
    assert model._derived
    data = pickle.dumps(model)
    assert len(data) < 25 * model.n * 8 * 6 and b"numba" not in data   # ~ the fields' float64s
    back = pickle.loads(data)
    assert back._derived == {} and np.array_equal(back._kd, model._kd)
    q = rng.normal(size=model.n)
    np.testing.assert_array_equal(screwdyn.inverse_dynamics(back, q, q, q), screwdyn.inverse_dynamics(model, q, q, q))
    from screwdyn.dynamics import _RNEA
    kernel = pickle.loads(pickle.dumps(_RNEA))
    assert (kernel.module, kernel.key) == ("rnea", "rnea") and len(pickle.dumps(_RNEA)) < 200


def test_nothing_imports_dask_unless_a_dask_array_is_given():
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import screwdyn, screwdyn.cli, screwdyn.ident
        m = screwdyn.models.load("planar_2r")
        q = np.random.default_rng(0).normal(size=(200, 2))
        screwdyn.inverse_dynamics(m, q, q, q)
        screwdyn.inverse_dynamics(m, q[0], q[0], q[0])
        print(sorted(k for k in sys.modules if k.split(".")[0] in ("dask", "distributed")))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_rollouts_in_chunks_equal_the_numpy_batch(panda, rng):
    """simulate with a Dask batch of initial states (and torques per rollout): the rollouts of each
    chunk are one simulate call, lazily; the numbers, energies and diverged rollouts are those of
    the batch in memory, bit for bit."""
    B = 9
    Q0 = screwdyn.models.home("panda") + rng.uniform(-0.2, 0.2, (B, panda.n))
    QD0 = rng.normal(0.0, 0.3, (B, panda.n))
    QD0[5] = 1e200                                  # diverges
    TAU = rng.normal(0.0, 1.0, (B, 41, panda.n))
    with pytest.warns(SimulationWarning, match="1 of 9 rollouts diverged"):
        ref = screwdyn.simulate(panda, Q0, QD0, 0.04, 1e-3, tau=TAU)
    traj = screwdyn.simulate(panda, da.from_array(Q0, chunks=4), QD0, 0.04, 1e-3,
                             tau=da.from_array(TAU, chunks=(3, -1, -1)))
    assert isinstance(traj.q, da.Array) and traj.q.shape == ref.q.shape and traj.info["limits"] is None
    got = dask.compute(traj.q, traj.qd, traj.qdd, traj.tau, traj.kinetic_energy, traj.potential_energy,
                       traj.info["diverged"], scheduler="threads")
    for a, b in zip(got, (ref.q, ref.qd, ref.qdd, ref.tau, ref.kinetic_energy, ref.potential_energy)):
        np.testing.assert_array_equal(a, b)
    assert np.flatnonzero(got[-1]).tolist() == ref.info["diverged"] == [5]
    np.testing.assert_array_equal(traj[2].q.compute(), ref[2].q)
    F = rng.normal(0.0, 1.0, (B, 11, panda.nbodies, 6))   # wrenches per rollout, split with them
    lazy = screwdyn.simulate(panda, da.from_array(Q0, chunks=4), None, 0.01, 1e-3,
                             f_ext=da.from_array(F, chunks=(5, -1, -1, -1)))
    np.testing.assert_array_equal(lazy.q, screwdyn.simulate(panda, Q0, None, 0.01, 1e-3, f_ext=F).q)
    shared = {panda.frame_names[-1]: np.ones(6)}           # two batch axes, a shared dict of wrenches
    grid = Q0[:6].reshape(2, 3, panda.n)
    lazy = screwdyn.simulate(panda, da.from_array(grid, chunks=(1, 3, panda.n)), None, 0.01, 1e-3, f_ext=shared)
    assert lazy.info["diverged"].shape == (2, 3)
    np.testing.assert_array_equal(lazy.q, screwdyn.simulate(panda, grid, None, 0.01, 1e-3, f_ext=shared).q)
    with pytest.raises(InputError, match="one state"):
        screwdyn.simulate(panda, da.from_array(Q0[0]), None, 0.01)
    with pytest.raises(InputError, match="per rollout"):
        screwdyn.simulate(panda, da.from_array(Q0), None, 0.01, tau=da.from_array(TAU[0]))


def test_a_local_cluster_of_worker_processes(panda, rng):
    """Workers in other processes: the model and the kernels travel by pickle, the kernels load from
    numba's cache there; inverse dynamics and an identification equal the in-process ones."""
    distributed = pytest.importorskip("distributed", reason="dask.distributed is in the 'dask' and 'test' extras")
    from screwdyn.ident import identify
    Q = rng.uniform(-1, 1, size=(3000, panda.n))
    tau = screwdyn.inverse_dynamics(panda, Q, Q, Q) + 0.1 * rng.normal(size=Q.shape)
    q = da.from_array(Q, chunks=(700, panda.n))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        lazy = screwdyn.inverse_dynamics(panda, q, Q, Q)
        np.testing.assert_array_equal(lazy.compute(), screwdyn.inverse_dynamics(panda, Q, Q, Q))
        est = identify(panda, q, q, q, da.from_array(tau, chunks=(700, panda.n)))
        Q0 = screwdyn.models.home("panda") + 0.1 * Q[:6]     # rollouts on the workers, a controller pickled to them
        ctrl = gravity_compensation_pd(panda, screwdyn.models.home("panda"), 50.0, 5.0)
        rolled = screwdyn.simulate(panda, da.from_array(Q0, chunks=2), None, 0.02, 1e-3, tau=ctrl).q.compute()
    np.testing.assert_array_equal(rolled, screwdyn.simulate(panda, Q0, None, 0.02, 1e-3, tau=ctrl).q)
    ref = identify(panda, Q, Q, Q, tau)
    np.testing.assert_allclose(est.beta, ref.beta, rtol=0, atol=1e-9 * np.abs(ref.beta).max())
    np.testing.assert_allclose(est.std, ref.std, rtol=1e-9)
