"""screwdyn.compat.modern_robotics against the modern_robotics package itself: the book's
documented examples (the module's doctests) and random chains with prismatic joints."""
import doctest

import numpy as np
import pytest

import screwdyn
from helpers import random_chain
from screwdyn.compat import modern_robotics as smr

mr = pytest.importorskip("modern_robotics")


def test_doctests_of_the_compat_module():
    """Every docstring example (the book's documented numbers) runs and holds."""
    failed, attempted = doctest.testmod(smr, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted >= 10
    assert failed == 0


@pytest.mark.parametrize("seed", range(4))
def test_dynamics_functions_match_modern_robotics_on_random_chains(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    Ms, Gs, S = random_chain(rng, n)
    th, dth, tau = rng.normal(size=(3, n))
    g = rng.normal(size=3) * 5
    Ftip = rng.normal(size=6)
    checks = [
        (smr.MassMatrix(th, Ms, Gs, S), mr.MassMatrix(th, Ms, Gs, S)),
        (smr.VelQuadraticForces(th, dth, Ms, Gs, S), mr.VelQuadraticForces(th, dth, Ms, Gs, S)),
        (smr.GravityForces(th, g, Ms, Gs, S), mr.GravityForces(th, g, Ms, Gs, S)),
        (smr.EndEffectorForces(th, Ftip, Ms, Gs, S), mr.EndEffectorForces(th, Ftip, Ms, Gs, S)),
        (smr.ForwardDynamics(th, dth, tau, g, Ftip, Ms, Gs, S), mr.ForwardDynamics(th, dth, tau, g, Ftip, Ms, Gs, S)),
        (smr.InverseDynamics(th, dth, tau, g, Ftip, Ms, Gs, S), mr.InverseDynamics(th, dth, tau, g, Ftip, Ms, Gs, S)),
    ]
    for ours, ref in checks:
        assert np.allclose(ours, ref, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(ref).max()))


def test_euler_step_and_forward_dynamics_trajectory(rng):
    n = 4
    Ms, Gs, S = random_chain(rng, n)
    th, dth, ddth = rng.normal(size=(3, n))
    for ours, ref in zip(smr.EulerStep(th, dth, ddth, 0.01), mr.EulerStep(th, dth, ddth, 0.01)):
        assert np.array_equal(ours, ref)
    N = 5
    taumat = rng.normal(size=(N, n))
    Ftipmat = rng.normal(size=(N, 6))
    g = np.array([0, 0, -9.8])
    ours = smr.ForwardDynamicsTrajectory(th, 0.3 * dth, taumat, g, Ftipmat, Ms, Gs, S, 0.01, 3)
    ref = mr.ForwardDynamicsTrajectory(th, 0.3 * dth, taumat, g, Ftipmat, Ms, Gs, S, 0.01, 3)
    for a, b in zip(ours, ref):
        assert a.shape == (N, n)
        assert np.allclose(a, b, rtol=1e-8, atol=1e-8)
    # no tip wrench: a zero broadcasts
    th0, _ = smr.ForwardDynamicsTrajectory(th, dth, taumat, g, 0, Ms, Gs, S, 0.01, 2)
    th1, _ = smr.ForwardDynamicsTrajectory(th, dth, taumat, g, np.zeros((N, 6)), Ms, Gs, S, 0.01, 2)
    assert np.array_equal(th0, th1)


def test_bad_inputs_are_named(rng):
    Ms, Gs, S = random_chain(rng, 3)
    with pytest.raises(screwdyn.InputError, match="taumat"):
        smr.ForwardDynamicsTrajectory(np.zeros(3), np.zeros(3), np.zeros((4, 2)), [0, 0, -9.8], 0, Ms, Gs, S, 0.1, 1)
    with pytest.raises(screwdyn.InputError, match="intRes"):
        smr.ForwardDynamicsTrajectory(np.zeros(3), np.zeros(3), np.zeros((4, 3)), [0, 0, -9.8], 0, Ms, Gs, S, 0.1, 0)
    with pytest.raises(screwdyn.InputError, match="Ftipmat"):
        smr.ForwardDynamicsTrajectory(np.zeros(3), np.zeros(3), np.zeros((4, 3)), [0, 0, -9.8], np.zeros((3, 6)),
                                      Ms, Gs, S, 0.1, 1)
    with pytest.raises(screwdyn.InputError, match="Mlist"):
        smr.EndEffectorForces(np.zeros(3), np.ones(6), Ms[:3], Gs, S)
    with pytest.raises(screwdyn.InputError, match="thetalist|q"):
        smr.MassMatrix(np.zeros(2), Ms, Gs, S)


@pytest.mark.parametrize("seed", range(2))
def test_computed_torque_and_simulate_control_match_modern_robotics(seed, monkeypatch):
    """Chapter 11's controller on random chains: ComputedTorque at random states, and SimulateControl
    with a wrong model in the controller (other gravity, inertias), a tip wrench and a quintic
    reference, against the package (whose plot is switched off)."""
    plt = pytest.importorskip("matplotlib.pyplot")
    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    rng = np.random.default_rng(10 + seed)
    n = int(rng.integers(2, 5))
    Ms, Gs, S = random_chain(rng, n)
    th, dth, eint, thd, dthd, ddthd = rng.normal(size=(6, n))
    g = np.array([0.0, 0.0, -9.8])
    Kp, Ki, Kd = rng.uniform(1, 30, 3)
    ours = smr.ComputedTorque(th, dth, eint, g, Ms, Gs, S, thd, dthd, ddthd, Kp, Ki, Kd)
    ref = mr.ComputedTorque(th, dth, eint, g, Ms, Gs, S, thd, dthd, ddthd, Kp, Ki, Kd)
    assert np.allclose(ours, ref, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(ref).max()))
    N, dt = 30, 0.01
    thetamatd = np.array(mr.JointTrajectory(th, th + 0.5, (N - 1) * dt, N, 5))
    dthetamatd = np.gradient(thetamatd, dt, axis=0)
    ddthetamatd = np.gradient(dthetamatd, dt, axis=0)
    Gtilde = [G * rng.uniform(0.8, 1.2) for G in Gs]
    Ftipmat = rng.normal(size=(N, 6))
    args = (th, 0.1 * dth, g, Ftipmat, Ms, Gs, S, thetamatd, dthetamatd, ddthetamatd, g + [0.5, 0.0, 0.3], Ms,
            Gtilde, 20.0, 10.0, 18.0, dt, 4)
    for a, b in zip(smr.SimulateControl(*args), mr.SimulateControl(*args)):
        assert a.shape == (N, n) and np.allclose(a, b, rtol=1e-8, atol=1e-8 * max(1.0, np.abs(b).max()))
    plt.close("all")
