"""Energies, centre of mass and momentum: Pinocchio's ``computeKineticEnergy``,
``computePotentialEnergy``, ``centerOfMass`` and ``computeCentroidalMomentum``; the identities
``T = 1/2 qd^T M qd``, ``g = dU/dq``, ``dE/dt = qd^T (tau - tau_friction)`` and
``qd^T (tau - g) = dT/dt``; conservation along a simulated motion; the pendulum of docs/theory.md §7.5."""
import numpy as np
import pytest

import screwdyn
from helpers import random_model, random_state, to_pin, to_pinocchio, urdf_robot
from screwdyn.inertia import RigidBody

pin = pytest.importorskip("pinocchio")


@pytest.mark.parametrize("name", ["panda", "ur5", "talos_full_v2"])
def test_energies_com_and_momentum_match_pinocchio_on_real_robots(name, rng):
    model, pm, idx = urdf_robot(name, armature=True)
    pd = pm.createData()
    for _ in range(3):
        q, qd, _ = random_state(rng, model.n)
        qp, qdp = to_pin(q, idx), to_pin(qd, idx)
        # Pinocchio 4 includes the armature in the kinetic energy, as screwdyn does
        T = pin.computeKineticEnergy(pm, pd, qp, qdp)
        assert np.isclose(screwdyn.kinetic_energy(model, q, qd), T, rtol=1e-10)
        U = pin.computePotentialEnergy(pm, pd, qp)
        assert np.isclose(screwdyn.potential_energy(model, q), U, rtol=1e-10, atol=1e-10)
        assert np.isclose(screwdyn.mechanical_energy(model, q, qd), T + U, rtol=1e-10, atol=1e-10)
        assert np.allclose(screwdyn.center_of_mass(model, q), pin.centerOfMass(pm, pd, qp), rtol=1e-10, atol=1e-12)
        pin.computeCentroidalMomentum(pm, pd, qp, qdp)
        hg = np.concatenate([pd.hg.angular, pd.hg.linear])
        assert np.allclose(screwdyn.momentum(model, q, qd, about="com"), hg, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_energies_match_pinocchio_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=int(rng.integers(1, 14)), fixed=int(rng.integers(0, 4)), armature=True,
                         gravity=rng.normal(size=3) * 5)
    pm = to_pinocchio(model)
    pd = pm.createData()
    q, qd, _ = random_state(rng, model.n)
    # Pinocchio 4.1 drops the armature term of RevoluteUnaligned joints from computeKineticEnergy
    # (it does include it for the axis-aligned joints a URDF gives): compare the links' energy
    # without armature, and the total with 1/2 qd^T M qd.
    pm.armature = np.zeros(model.n)
    T_links = pin.computeKineticEnergy(pm, pd, q, qd)
    T = screwdyn.kinetic_energy(model, q, qd)
    assert np.isclose(T, T_links + 0.5 * model.armature @ qd**2, rtol=1e-10)
    assert np.isclose(T, 0.5 * qd @ screwdyn.mass_matrix(model, q) @ qd, rtol=1e-10)
    assert np.isclose(screwdyn.potential_energy(model, q), pin.computePotentialEnergy(pm, pd, q), rtol=1e-10,
                      atol=1e-10)
    assert np.allclose(screwdyn.center_of_mass(model, q), pin.centerOfMass(pm, pd, q), rtol=1e-10, atol=1e-12)


def test_gravity_is_the_gradient_of_potential_energy(rng):
    model = random_model(rng, n=8, fixed=2, gravity=rng.normal(size=3) * 5)
    q, _, _ = random_state(rng, model.n)
    h = 1e-6
    U = screwdyn.potential_energy
    grad = np.array([(U(model, q + h * e) - U(model, q - h * e)) / (2 * h) for e in np.eye(model.n)])
    g = screwdyn.gravity_torques(model, q)
    assert np.allclose(grad, g, rtol=1e-6, atol=1e-6 * np.abs(g).max())


def test_power_balance(rng):
    """dE/dt = qd^T (tau - tau_friction) and dT/dt = qd^T (tau - tau_friction - g) along the motion
    (central differences along q(t) = q + t qd + t^2/2 qdd, qd(t) = qd + t qdd)."""
    model = random_model(rng, n=7, armature=True)
    q, qd, _ = random_state(rng, model.n)
    tau = rng.normal(size=model.n) * 5
    qdd = screwdyn.forward_dynamics(model, q, qd, tau, friction=True)
    h = 1e-5

    def along(f, t):
        return f(q + t * qd + 0.5 * t * t * qdd, qd + t * qdd)

    def E(a, b):
        return screwdyn.mechanical_energy(model, a, b)

    def T(a, b):
        return screwdyn.kinetic_energy(model, a, b)

    power = qd @ (tau - screwdyn.friction_torques(model, qd))
    assert np.isclose((along(E, h) - along(E, -h)) / (2 * h), power, rtol=1e-6, atol=1e-6)
    g = screwdyn.gravity_torques(model, q)
    assert np.isclose((along(T, h) - along(T, -h)) / (2 * h), power - qd @ g, rtol=1e-6, atol=1e-6)


def test_energy_is_conserved_by_the_unforced_frictionless_motion(rng):
    model = random_model(rng, n=5, armature=True).replace(damping=np.zeros(5), friction=np.zeros(5))
    q, qd, _ = random_state(rng, model.n)
    qd *= 0.5
    E0 = screwdyn.mechanical_energy(model, q, qd)
    dt = 1e-3
    zero = np.zeros(model.n)

    def f(x):
        return np.concatenate([x[model.n:], screwdyn.forward_dynamics(model, x[:model.n], x[model.n:], zero)])

    x = np.concatenate([q, qd])
    for _ in range(200):  # RK4, 0.2 s
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    E1 = screwdyn.mechanical_energy(model, x[:model.n], x[model.n:])
    assert abs(E1 - E0) < 1e-7 * max(1.0, abs(E0))
    assert np.linalg.norm(x[:model.n] - q) > 1e-2    # it did move


def test_actuated_pendulum_energies_of_note_004():
    # T = 1/2 (I_l + m d^2 + I_m n_r^2) thd^2,  U = -m g0 d cos th (zero at the pivot height):
    # docs/theory.md eq. (7.17)
    m, d, I_l, I_m, n_r, g0 = 1.5, 0.3, 0.02, 1e-4, 50.0, 9.81
    b = screwdyn.ModelBuilder("pendulum", gravity=(0, -g0, 0))
    b.add_body("link", "base", "theta", "revolute", inertial=RigidBody(m, [0, -d, 0], np.diag([I_l / 2, I_l / 2, I_l])),
               rotor_inertia=I_m, gear_ratio=n_r)
    model = b.build()
    for th, thd in [(0.7, -1.3), (-2.0, 0.4)]:
        assert np.isclose(screwdyn.kinetic_energy(model, [th], [thd]), 0.5 * (I_l + m * d**2 + I_m * n_r**2) * thd**2,
                          rtol=1e-14)
        assert np.isclose(screwdyn.potential_energy(model, [th]), -m * g0 * d * np.cos(th), rtol=1e-14)
        assert np.allclose(screwdyn.center_of_mass(model, [th]), [d * np.sin(th), -d * np.cos(th), 0.0], atol=1e-15)


def test_momentum_about_the_base_and_about_the_com(rng):
    """The linear momentum is m v_com; the angular momentum moves with the reference point:
    L_base = L_com + c x p."""
    model = random_model(rng, n=6, armature=True)
    q, qd, _ = random_state(rng, model.n)
    P0 = screwdyn.momentum(model, q, qd)
    Pc = screwdyn.momentum(model, q, qd, about="com")
    c = screwdyn.center_of_mass(model, q)
    h = 1e-6
    v_com = (screwdyn.center_of_mass(model, q + h * qd) - screwdyn.center_of_mass(model, q - h * qd)) / (2 * h)
    assert np.allclose(P0[3:], model.total_mass * v_com, rtol=1e-6, atol=1e-8)
    assert np.allclose(P0[3:], Pc[3:])
    assert np.allclose(P0[:3], Pc[:3] + np.cross(c, Pc[3:]), rtol=1e-12, atol=1e-12)
    # P = sum_i [Ad_{T_i0}]^T G_i V_i, body by body
    poses = screwdyn.body_poses(model, q)
    P = np.zeros(6)
    for i in range(model.n):
        J = screwdyn.jacobian(model, q, model.link_names[i], "body")
        V = J @ qd
        G = model.spatial_inertias[i]
        Tinv = screwdyn.spatial.inverse_transform(poses[i])
        P += screwdyn.spatial.Ad(Tinv).T @ (G @ V)
    assert np.allclose(P0, P, rtol=1e-10, atol=1e-10)


def test_batches_and_scalar_results(rng):
    model = random_model(rng, n=5)
    Q, QD, _ = random_state(rng, model.n, (3, 2))
    T = screwdyn.kinetic_energy(model, Q, QD)
    U = screwdyn.potential_energy(model, Q)
    E = screwdyn.mechanical_energy(model, Q, QD)
    c = screwdyn.center_of_mass(model, Q)
    P = screwdyn.momentum(model, Q, QD, about="com")
    assert T.shape == U.shape == E.shape == (3, 2) and c.shape == (3, 2, 3) and P.shape == (3, 2, 6)
    for a in range(3):
        for b in range(2):
            t = screwdyn.kinetic_energy(model, Q[a, b], QD[a, b])
            assert isinstance(t, float) and t == T[a, b]
            assert screwdyn.potential_energy(model, Q[a, b]) == U[a, b]
            assert screwdyn.mechanical_energy(model, Q[a, b], QD[a, b]) == E[a, b]
            assert np.array_equal(screwdyn.center_of_mass(model, Q[a, b]), c[a, b])
            assert np.array_equal(screwdyn.momentum(model, Q[a, b], QD[a, b], about="com"), P[a, b])


def test_massless_model_has_no_center_of_mass():
    b = screwdyn.ModelBuilder("massless")
    b.add_body("a", "base", "j", "revolute")
    model = b.build()
    with pytest.raises(screwdyn.ModelError, match="no mass"):
        screwdyn.center_of_mass(model, [0.0])
    with pytest.raises(screwdyn.InputError, match="about"):
        screwdyn.momentum(model, [0.0], [0.0], about="tip")
