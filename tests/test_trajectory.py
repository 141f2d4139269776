"""Time scaling and joint trajectories (Modern Robotics ch. 9), checked against the
modern_robotics package and by differentiation."""
import numpy as np
import pytest

import screwdyn
from screwdyn import models
from screwdyn.errors import InputError
from screwdyn.trajectory import (JointTrajectory, as_reference, cubic_time_scaling, joint_trajectory,
                                 quintic_time_scaling, time_scaling)


def test_time_scalings_match_modern_robotics():
    mr = pytest.importorskip("modern_robotics")
    for Tf in (0.5, 2.0, 7.3):
        for t in np.linspace(0, Tf, 9):
            assert cubic_time_scaling(Tf, t) == pytest.approx(mr.CubicTimeScaling(Tf, t), abs=1e-15)
            assert quintic_time_scaling(Tf, t) == pytest.approx(mr.QuinticTimeScaling(Tf, t), abs=1e-15)


@pytest.mark.parametrize("method", [3, 5])
def test_joint_trajectory_matches_modern_robotics(method):
    mr = pytest.importorskip("modern_robotics")
    start = np.array([1, 0, 0, 1, 1, 0.2, 0, 1])
    end = np.array([1.2, 0.5, 0.6, 1.1, 2, 2, 0.9, 1])
    np.testing.assert_allclose(joint_trajectory(start, end, 4, 6, method),
                               np.array(mr.JointTrajectory(start, end, 4, 6, method)), atol=1e-14)


@pytest.mark.parametrize("method", ["cubic", "quintic"])
def test_derivatives_and_boundary_conditions(method):
    traj = JointTrajectory([0.1, -1.0, 2.0], [1.1, 0.5, -1.0], duration=1.5, method=method)
    t = np.linspace(0.01, 1.49, 300)
    h = 1e-6
    q, qd, qdd = traj(t)
    qp, qdp, _ = traj(t + h)
    qm, qdm, _ = traj(t - h)
    np.testing.assert_allclose(qd, (qp - qm) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(qdd, (qdp - qdm) / (2 * h), atol=1e-7)
    q0, qd0, qdd0 = traj(0.0)
    q1, qd1, qdd1 = traj(1.5)
    np.testing.assert_allclose(q0, traj.q_start)
    np.testing.assert_allclose(q1, traj.q_end)
    assert not qd0.any() and not qd1.any()
    if method == "quintic":       # zero acceleration at both ends too
        assert not qdd0.any() and not qdd1.any()
    else:
        assert np.abs(qdd0).max() > 0
    # it rests at its ends outside [0, T]
    q, qd, qdd = traj(np.array([-1.0, 3.0]))
    np.testing.assert_allclose(q, [traj.q_start, traj.q_end])
    assert not qd.any() and not qdd.any()
    s, sd, sdd = time_scaling(1.5, 0.75, method)
    assert s == pytest.approx(0.5)


def test_torques_along_a_trajectory_are_inverse_dynamics():
    panda = models.load("panda")
    q0 = models.home("panda")
    traj = JointTrajectory(q0, q0 + 0.4, 2.0)
    t, q, qd, qdd = traj.sample(11)
    tau = traj.torques(panda, t)
    assert tau.shape == (11, 7)
    for k in (0, 4, 10):
        np.testing.assert_allclose(tau[k], screwdyn.inverse_dynamics(panda, q[k], qd[k], qdd[k]), atol=1e-12)
    np.testing.assert_allclose(tau[0], screwdyn.gravity_torques(panda, q0), atol=1e-12)   # at rest


def test_references_and_errors():
    ref = as_reference([1.0, 2.0], 2)
    q, qd, qdd = ref(0.3)
    np.testing.assert_allclose(q, [1, 2])
    assert not qd.any() and not qdd.any()
    np.testing.assert_allclose(as_reference(0.5, 3)(0)[0], [0.5] * 3)
    with pytest.raises(InputError):
        as_reference([1.0], 2)
    with pytest.raises(InputError, match="same length"):
        JointTrajectory([0, 0], [1], 1.0)
    with pytest.raises(InputError, match="positive"):
        JointTrajectory([0], [1], 0.0)
    with pytest.raises(InputError, match="cubic"):
        JointTrajectory([0], [1], 1.0, method=7)
    with pytest.raises(InputError, match="N must"):
        JointTrajectory([0], [1], 1.0).sample(1)
    with pytest.raises(InputError, match="joints"):
        as_reference(JointTrajectory([0], [1], 1.0), 2)
