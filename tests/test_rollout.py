"""The rollout kernel (src/screwdyn/algorithms/rollout.py) through screwdyn.simulate: a batch equals
its rollouts run one at a time bit for bit, the compiled loop equals the integrators that call
back into Python, its record of the limits equals one made from the samples, and it integrates the
same equations as MuJoCo's RK4."""
import warnings

import numpy as np
import pytest

import screwdyn
from screwdyn import models
from screwdyn.algorithms.rollout import WATCH
from screwdyn.sim import _watch, simulate


@pytest.fixture(scope="module")
def panda():
    return models.load("panda")


@pytest.fixture(scope="module")
def batch_inputs(panda):
    rng = np.random.default_rng(7)
    B, T = 5, 120
    return {"q0": models.home("panda") + 0.4 * rng.standard_normal((B, 7)), "qd0": 2.0 * rng.standard_normal((B, 7)),
            "tau": 25.0 * rng.standard_normal((B, T, 7)), "f_ext": rng.standard_normal((T, 7, 6))}


def _quiet(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", screwdyn.sim.SimulationWarning)
        return simulate(**kw)


@pytest.mark.parametrize("integrator", ["rk4", "euler", "semi_implicit_euler"])
def test_a_batch_equals_its_rollouts_one_at_a_time_bit_for_bit(panda, batch_inputs, integrator):
    """Per-rollout torques, shared per-step wrenches, friction, joint limits (some are hit) and
    effort saturation (some torques are clipped): every array of every rollout identical."""
    kw = {"model": panda, "duration": 0.12, "dt": 1e-3, "integrator": integrator, "saturate": True}
    x = batch_inputs
    batch = _quiet(**kw, **x)
    assert batch.q.shape == (5, 121, 7) and not batch.info["diverged"]
    assert np.abs(batch.tau).max() == pytest.approx(87.0)                  # saturated somewhere
    for b in range(5):
        one = _quiet(**kw, q0=x["q0"][b], qd0=x["qd0"][b], tau=x["tau"][b], f_ext=x["f_ext"])
        for key in ("q", "qd", "qdd", "tau"):
            np.testing.assert_array_equal(getattr(batch, key)[b], getattr(one, key), err_msg=f"{key}[{b}]")


def test_the_compiled_loop_equals_the_integrators_that_call_back(panda, batch_inputs):
    """A callable evaluated at every stage goes through Python (a batch call per stage); held over
    each step it goes through the compiled loop, a call per step. Both give the compiled loop's
    numbers bit for bit; method="crba" (Python, CRBA's forward dynamics) agrees to 1e-12."""
    x = batch_inputs
    const = x["tau"][:, :1]                                               # (B, 1, n): a constant per rollout
    kw = {"model": panda, "q0": x["q0"], "qd0": x["qd0"], "duration": 0.12, "dt": 1e-3, "f_ext": x["f_ext"],
          "saturate": True}
    compiled = _quiet(**kw, tau=const)
    stages = _quiet(**kw, tau=lambda t, q, qd: const[:, 0])
    calls = []

    def held(t, q, qd):
        calls.append(t)
        return x["tau"][:, min(len(calls) - 1, 119)]

    hold = _quiet(**kw, tau=held, hold=True)
    per_step = _quiet(**kw, tau=x["tau"])
    crba = _quiet(**kw, tau=const, method="crba")
    for key in ("q", "qd", "qdd", "tau"):
        np.testing.assert_array_equal(getattr(stages, key), getattr(compiled, key), err_msg=key)
        np.testing.assert_array_equal(getattr(hold, key), getattr(per_step, key), err_msg=key)
    assert len(calls) == 121 and calls == pytest.approx(np.arange(121) * 1e-3)   # once per step and at the end
    np.testing.assert_allclose(crba.q, compiled.q, atol=1e-12)


def test_the_kernels_record_of_the_limits_is_that_of_its_samples(panda):
    rng = np.random.default_rng(3)
    q0 = rng.uniform(panda.q_lower, panda.q_upper, (6, 7))
    tr = _quiet(model=panda, q0=q0, qd0=3.0 * rng.standard_normal((6, 7)), duration=0.3, dt=1e-3)
    from screwdyn.sim import _limit_table
    lim = _limit_table(panda, True, True, False, 1e-3)
    W = _watch(lim, tr.q, tr.qd)
    assert W.shape == (6, WATCH, 7) and (W[:, 0] >= 0).any() and (W[:, 2] >= 0).any()
    report = tr.info["limits"]
    for kind, first, peak in (("position", 0, 1), ("velocity", 2, 3)):
        for j, name in enumerate(panda.joint_names):
            hit = W[:, first, j] >= 0
            assert (name in report[kind]) == hit.any()
            if hit.any():
                e = report[kind][name]
                assert e["rollouts"] == np.flatnonzero(hit).tolist()
                assert e["max"] == W[hit, peak, j].max()
                assert e["t"] == tr.t[int(W[hit, first, j].min())]


def test_rk4_integrates_the_same_equations_as_mujoco(panda):
    """MuJoCo's RK4 on the same URDF (contacts and constraints off; screwdyn without friction and
    limits): the states agree after 200 steps of a fast fall (1e-9: the rounding of two libraries,
    amplified by the motion)."""
    pytest.importorskip("mujoco", reason="MuJoCo is not in the test extra (pip install mujoco)")
    import mujoco
    from mujoco import rollout

    from screwdyn.bench_rollouts import _columns, mujoco_model
    mj = mujoco_model(str(models.path("panda")))
    iq, iv = _columns(mj, panda.joint_names)
    rng = np.random.default_rng(1)
    q0, qd0 = rng.uniform(panda.q_lower, panda.q_upper, (4, 7)), rng.normal(size=(4, 7))
    state = np.zeros((4, mujoco.mj_stateSize(mj, mujoco.mjtState.mjSTATE_FULLPHYSICS)))
    state[:, 1 + iq], state[:, 1 + mj.nq + iv] = q0, qd0
    theirs = rollout.rollout(mj, mujoco.MjData(mj), state, nstep=200)[0]
    ours = _quiet(model=panda, q0=q0, qd0=qd0, duration=0.2, dt=1e-3, friction=False, joint_limits=False)
    np.testing.assert_allclose(ours.q[:, 1:], theirs[:, :, 1 + iq], atol=1e-9)
    np.testing.assert_allclose(ours.qd[:, 1:], theirs[:, :, 1 + mj.nq + iv], atol=1e-8)


def test_a_trajectory_that_does_not_fit_in_memory_is_refused_before_any_step(panda, monkeypatch):
    """A batch of rollouts, or one long rollout, whose trajectory would not fit in memory raises the
    TooLargeError of the batch functions (a MemoryError), naming its size and what to change,
    before any step; numpy's own failure to allocate said neither."""
    from screwdyn import dispatch
    from screwdyn.errors import TooLargeError
    monkeypatch.setattr(dispatch, "available_memory", lambda: 100 << 20)
    q0 = np.zeros((2000, panda.nq))
    with pytest.raises(TooLargeError, match=r"simulate: the trajectory of 2000 rollouts of 1001 samples .* need "
                                            r"428 MiB, more than the 100 MiB .*split the batch"):
        simulate(panda, q0, None, 1.0)
    with pytest.raises(MemoryError, match=r"1 rollout of 1000001 samples .*a shorter time or with a larger dt"):
        simulate(panda, q0[0], None, 1000.0)
    assert simulate(panda, q0[:10], None, 0.1).q.shape == (10, 101, panda.nq)
