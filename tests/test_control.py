"""Controllers: computed torque tracks at solver precision with an exact model and its error
obeys e'' + Kd e' + Kp e = 0; PD + gravity compensation settles; gravity compensation holds."""
import numpy as np
import pytest

import screwdyn
from screwdyn import models
from screwdyn.control import (ComputedTorquePD, computed_torque_pd, gravity_compensation, gravity_compensation_pd)
from screwdyn.errors import InputError
from screwdyn.sim import simulate
from screwdyn.trajectory import JointTrajectory


@pytest.fixture(scope="module")
def panda():
    return models.load("panda")


@pytest.mark.parametrize("integrator, dt, bound", [("rk4", 1e-3, 1e-10), ("DOP853", 1e-2, 1e-10)])
def test_computed_torque_tracks_a_quintic_at_solver_precision(panda, integrator, dt, bound):
    """Exact model (friction included in both), zero initial error: the error stays at the
    integrator's precision (the closed loop is qdd = qdd_d exactly)."""
    q0 = models.home("panda")
    ref = JointTrajectory(q0, q0 + np.array([0.8, 0.5, -0.6, 0.7, 1.0, -0.5, 1.2]), 1.0)
    ctrl = computed_torque_pd(panda, ref, Kp=100.0, Kd=20.0)
    assert isinstance(ctrl, ComputedTorquePD) and ctrl.friction
    tr = simulate(panda, q0, None, 1.2, dt, tau=ctrl, integrator=integrator)
    q_d, qd_d, _ = ref(tr.t)
    assert np.abs(tr.q - q_d).max() < bound
    assert np.abs(tr.qd - qd_d).max() < 100 * bound
    # while moving, the recorded torques are the model's inverse dynamics along the reference
    # (at rest the Coulomb term sign(qd) of a 1e-12 velocity is +-f_c: compare the moving part)
    moving = (tr.t > 0.01) & (tr.t < 0.99)
    np.testing.assert_allclose(tr.tau[moving], ref.torques(panda, tr.t[moving], friction=True), atol=1e-6)


def test_computed_torque_error_dynamics(panda):
    """From an initial error e0 with Kp = w^2, Kd = 2 w: e(t) = e0 (1 + w t) exp(-w t)."""
    w = 10.0
    target = models.home("panda")
    e0 = np.linspace(-0.1, 0.1, 7)
    tr = simulate(panda, target - e0, None, 1.0, 1e-3, tau=computed_torque_pd(panda, target, w**2, 2 * w))
    t = tr.t[:, None]
    np.testing.assert_allclose(target - tr.q, e0 * (1 + w * t) * np.exp(-w * t), atol=1e-9)


def test_gain_matrices_are_accepted(panda):
    w = np.linspace(5, 11, 7)
    target = models.home("panda")
    e0 = np.full(7, 0.05)
    tr = simulate(panda, target - e0, None, 0.5, 1e-3,
                  tau=computed_torque_pd(panda, target, np.diag(w**2), np.diag(2 * w), friction=True))
    t = tr.t[:, None]
    np.testing.assert_allclose(target - tr.q, e0 * (1 + w * t) * np.exp(-w * t), atol=1e-9)


def test_pd_with_gravity_compensation_settles():
    arm = models.load("planar_2r")
    target = np.array([0.8, -0.6])
    ctrl = gravity_compensation_pd(arm, target, Kp=[200.0, 100.0], Kd=[40.0, 20.0])
    tr = simulate(arm, [0.0, 0.0], None, 4.0, 1e-3, tau=ctrl, friction=False)
    assert np.abs(tr.q[-1] - target).max() < 1e-4
    assert np.abs(tr.qd[-1]).max() < 1e-3
    # the final torque is the gravity torque at the target
    np.testing.assert_allclose(tr.tau[-1], screwdyn.gravity_torques(arm, target), atol=1e-2)


def test_gravity_compensation_holds_the_robot(panda):
    q0 = models.home("panda")
    tr = simulate(panda, q0, None, 1.0, 1e-3, tau=gravity_compensation(panda), friction=False)
    assert np.abs(tr.q - q0).max() < 1e-10
    np.testing.assert_allclose(tr.tau[0], screwdyn.gravity_torques(panda, q0), atol=1e-12)


def test_controller_errors(panda):
    with pytest.raises(InputError, match="Kp"):
        computed_torque_pd(panda, models.home("panda"), np.ones(3), 1.0)
    with pytest.raises(InputError, match="model"):
        computed_torque_pd("panda", np.zeros(7), 1.0, 1.0)
    with pytest.raises(InputError, match="joints"):
        computed_torque_pd(panda, JointTrajectory([0], [1], 1.0), 1.0, 1.0)
