"""Free-flyer (floating base) and spherical joints: every algorithm against Pinocchio's
``JointModelFreeFlyer`` / ``JointModelSpherical``, the configuration space against Pinocchio's
``integrate`` / ``difference``, and the identities that hold on any tree."""
import warnings

import numpy as np
import pytest

import screwdyn
from screwdyn.errors import InputError
from helpers import pinocchio_velocity_order, random_model, to_pinocchio

pin = pytest.importorskip("pinocchio", reason="Pinocchio is the reference for floating-base dynamics")

LEGGED = ["solo12", "anymal", "hyq", "a1", "go1", "b1", "bolt", "talos_full_v2", "icub"]


def _legged(name):
    from screwdyn.io.urdf import example_robot_data_path

    path = str(example_robot_data_path(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = screwdyn.load_urdf(path, floating_base=True)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    return model, pm


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def _compare(model, pm, q_pin, v_pin, a_pin, tol=1e-10, fd=True):
    """Every quantity of screwdyn against Pinocchio at one state given in Pinocchio's layout."""
    pd = pm.createData()
    q, v = screwdyn.from_pinocchio(model, q_pin, v_pin, pin_model=pm)
    _, a = screwdyn.from_pinocchio(model, None, a_pin, pin_model=pm)

    def ours(x):   # a (nv,) or (nv, nv) Pinocchio quantity in screwdyn's layout
        if x.ndim == 1:
            return screwdyn.from_pinocchio(model, None, x, pin_model=pm)[1]
        rows = screwdyn.from_pinocchio(model, None, x.T, pin_model=pm)[1]
        return screwdyn.from_pinocchio(model, None, rows.T, pin_model=pm)[1]

    tau_p = pin.rnea(pm, pd, q_pin, v_pin, a_pin)
    tau = screwdyn.inverse_dynamics(model, q, v, a)
    assert _rel(tau, ours(tau_p)) < tol
    M_p = pin.crba(pm, pd, q_pin)
    M_p = np.triu(M_p) + np.triu(M_p, 1).T
    M = screwdyn.mass_matrix(model, q)
    assert _rel(M, ours(M_p)) < tol
    assert _rel(screwdyn.coriolis_matrix(model, q, v), ours(pin.computeCoriolisMatrix(pm, pd, q_pin, v_pin))) < tol
    assert _rel(screwdyn.gravity_torques(model, q), ours(pin.computeGeneralizedGravity(pm, pd, q_pin))) < tol
    assert abs(screwdyn.kinetic_energy(model, q, v) - pin.computeKineticEnergy(pm, pd, q_pin, v_pin)) < tol * (
        1 + abs(pd.kinetic_energy))
    assert abs(screwdyn.potential_energy(model, q) - pin.computePotentialEnergy(pm, pd, q_pin)) < tol * (
        1 + abs(pd.potential_energy))
    assert np.abs(screwdyn.center_of_mass(model, q) - pin.centerOfMass(pm, pd, q_pin)).max() < tol
    Ag = pin.computeCentroidalMap(pm, pd, q_pin)
    Ag_ours = screwdyn.centroidal_momentum_matrix(model, q)
    assert _rel(Ag_ours[[3, 4, 5, 0, 1, 2]], screwdyn.from_pinocchio(model, None, Ag, pin_model=pm)[1]) < tol
    if fd:   # forward dynamics: well conditioned models against Pinocchio, all by residual
        qdd = screwdyn.forward_dynamics(model, q, v, tau)
        assert _rel(qdd, a) < tol * max(1.0, np.linalg.cond(M) / 1e3)
        assert _rel(screwdyn.forward_dynamics(model, q, v, tau, method="crba"), a) < tol * max(
            1.0, np.linalg.cond(M) / 1e3)
    return q, v, a


@pytest.mark.parametrize("name", LEGGED)
def test_legged_robots_match_pinocchio_free_flyer(name):
    model, pm = _legged(name)
    assert model.joint_names[0] == "root_joint" and model.joint_type[0] == screwdyn.FREE_FLYER
    assert (model.nq, model.nv) == (pm.nq, pm.nv) and model.n == model.nv
    assert model.nqs[0] == 7 and model.nvs[0] == 6 and model.idx_qs[1] == 7 and model.idx_vs[1] == 6
    rng = np.random.default_rng(0)
    for _ in range(2):
        q_pin = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        _compare(model, pm, q_pin, rng.normal(size=pm.nv), rng.normal(size=pm.nv), fd=name != "icub")


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_with_spherical_joints_match_pinocchio(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=9, fixed=2, spherical=0.4, floating=seed % 2 == 0, armature=True)
    assert np.any(model.joint_type == screwdyn.SPHERICAL) or seed % 2 == 0
    pm = to_pinocchio(model)
    assert (pm.nq, pm.nv) == (model.nq, model.nv)
    P = pinocchio_velocity_order(model)
    q = screwdyn.random_configuration(model, rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    pd = pm.createData()
    Pinv = np.argsort(P)
    tau_p = pin.rnea(pm, pd, q, v[Pinv], a[Pinv])
    assert _rel(screwdyn.inverse_dynamics(model, q, v, a), tau_p[P]) < 1e-11
    M_p = pin.crba(pm, pd, q)
    M_p = np.triu(M_p) + np.triu(M_p, 1).T
    assert _rel(screwdyn.mass_matrix(model, q), M_p[np.ix_(P, P)]) < 1e-11
    assert _rel(screwdyn.coriolis_matrix(model, q, v), pin.computeCoriolisMatrix(pm, pd, q, v[Pinv])[np.ix_(P, P)]) < 1e-11
    assert _rel(screwdyn.forward_dynamics(model, q, v, tau_p[P]), a) < 1e-9
    assert _rel(screwdyn.mass_matrix_inverse(model, q), np.linalg.inv(M_p)[np.ix_(P, P)]) < 1e-9
    # external wrenches, one per body in its frame: Pinocchio's fext are per joint, (f, n)
    F = rng.normal(size=(model.nbodies, 6))
    fext = [pin.Force.Zero()] + [pin.Force(F[j, 3:], F[j, :3]) for j in range(model.nbodies)]
    tau_f = pin.rnea(pm, pd, q, v[Pinv], a[Pinv], fext)
    assert _rel(screwdyn.inverse_dynamics(model, q, v, a, f_ext=F), tau_f[P]) < 1e-11
    assert _rel(screwdyn.forward_dynamics(model, q, v, tau_f[P], f_ext=F), a) < 1e-9


def test_configuration_space_matches_pinocchio():
    model, pm = _legged("solo12")
    rng = np.random.default_rng(2)
    for _ in range(4):
        q0p = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        q1p = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        vp = 2 * rng.normal(size=pm.nv)
        q0, v = screwdyn.from_pinocchio(model, q0p, vp, pin_model=pm)
        q1, _ = screwdyn.from_pinocchio(model, q1p, None, pin_model=pm)
        qi, _ = screwdyn.to_pinocchio(model, screwdyn.integrate(model, q0, v, dt=0.3), pin_model=pm)
        assert np.abs(qi - pin.integrate(pm, q0p, 0.3 * vp)).max() < 1e-12
        _, d = screwdyn.to_pinocchio(model, None, screwdyn.difference(model, q0, q1), pin_model=pm)
        assert np.abs(d - pin.difference(pm, q0p, q1p)).max() < 1e-12
        back = screwdyn.integrate(model, q0, screwdyn.difference(model, q0, q1))
        assert np.abs(screwdyn.difference(model, q1, back)).max() < 1e-12
    n, _ = screwdyn.to_pinocchio(model, screwdyn.neutral(model), pin_model=pm)
    assert np.array_equal(n, pin.neutral(pm))


def test_configuration_functions_batch_and_check():
    rng = np.random.default_rng(5)
    model = random_model(rng, n=6, spherical=0.5, floating=True)
    Q = screwdyn.random_configuration(model, rng=7, size=(3, 2))
    assert Q.shape == (3, 2, model.nq)
    assert np.array_equal(Q, screwdyn.random_configuration(model, rng=np.random.default_rng(7), size=(3, 2)))
    quats = np.concatenate([model.idx_qs[model.joint_type == screwdyn.FREE_FLYER] + 3,
                            model.idx_qs[model.joint_type == screwdyn.SPHERICAL]])
    for k in quats:
        assert np.allclose(np.linalg.norm(Q[..., k:k + 4], axis=-1), 1.0)
    V = rng.normal(size=(3, 2, model.nv))
    Qi = screwdyn.integrate(model, Q, V, 0.1)
    for a in range(3):
        for b in range(2):
            assert np.array_equal(Qi[a, b], screwdyn.integrate(model, Q[a, b], V[a, b], 0.1))
    assert np.abs(screwdyn.difference(model, Q, Qi) - 0.1 * V).max() < 1e-12
    scaled = Q.copy()
    scaled[..., quats[0]:quats[0] + 4] *= 3.0
    assert np.allclose(screwdyn.normalize(model, scaled), Q)
    # a non-unit quaternion is the rotation of its unit one, in every function
    assert np.allclose(screwdyn.mass_matrix(model, scaled), screwdyn.mass_matrix(model, Q))
    with pytest.raises(InputError, match="q must have shape"):
        screwdyn.inverse_dynamics(model, np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv))
    with pytest.raises(InputError, match="zero quaternion"):
        screwdyn.normalize(model, np.zeros(model.nq))


def test_mujoco_layout_round_trip_and_power():
    rng = np.random.default_rng(3)
    model = random_model(rng, n=5, spherical=0.5, floating=True)
    q = screwdyn.random_configuration(model, rng)
    v, f = rng.normal(size=model.nv), rng.normal(size=model.nv)
    qpos, qvel, qfrc = screwdyn.to_mujoco(model, q, v, f)
    assert qpos[3] == q[6] and qpos[4] == q[3]      # scalar first
    assert np.isclose(qvel @ qfrc, v @ f)           # the same power in both layouts
    back = screwdyn.from_mujoco(model, qpos, qvel, qfrc)
    for x, y in zip(back, (q, v, f)):
        assert np.allclose(x, y, atol=1e-14)


def test_identities_on_floating_trees():
    rng = np.random.default_rng(11)
    model = random_model(rng, n=8, spherical=0.3, floating=True, armature=True)
    q = screwdyn.random_configuration(model, rng, size=5)
    v, a = rng.normal(size=(5, model.nv)), rng.normal(size=(5, model.nv))
    tau = screwdyn.inverse_dynamics(model, q, v, a)
    assert np.abs(screwdyn.forward_dynamics(model, q, v, tau) - a).max() < 1e-10
    for k in range(5):
        assert np.array_equal(tau[k], screwdyn.inverse_dynamics(model, q[k], v[k], a[k]))
    # M = dtau/dqdd and Mdot - 2C skew, Mdot along the tangent direction v
    M = screwdyn.mass_matrix(model, q[0])
    h = 1e-6
    Mp = screwdyn.mass_matrix(model, screwdyn.integrate(model, q[0], v[0], h))
    Mm = screwdyn.mass_matrix(model, screwdyn.integrate(model, q[0], v[0], -h))
    S = (Mp - Mm) / (2 * h) - 2 * screwdyn.coriolis_matrix(model, q[0], v[0])
    assert np.abs(S + S.T).max() < 1e-6 * np.abs(M).max()
    # g = dU/dq along the tangent coordinates
    g = screwdyn.gravity_torques(model, q[0])
    E = np.eye(model.nv)
    dU = [(screwdyn.potential_energy(model, screwdyn.integrate(model, q[0], E[k], h))
           - screwdyn.potential_energy(model, screwdyn.integrate(model, q[0], E[k], -h))) / (2 * h)
          for k in range(model.nv)]
    assert np.abs(np.array(dU) - g).max() < 1e-6 * max(1.0, np.abs(g).max())


def test_regressor_and_parameters_on_a_floating_tree():
    rng = np.random.default_rng(4)
    model = random_model(rng, n=6, spherical=0.4, floating=True)
    q = screwdyn.random_configuration(model, rng, size=3)
    v, a = rng.normal(size=(3, model.nv)), rng.normal(size=(3, model.nv))
    Y = screwdyn.regressor(model, q, v, a, viscous=True)
    pi = model.inertial_parameters(viscous=True)
    assert Y.shape == (3, model.nv, 10 * model.nbodies + model.nv) and pi.shape == (Y.shape[-1],)
    tau = screwdyn.inverse_dynamics(model, q, v, a) + model.damping * v
    assert np.abs(Y @ pi - tau).max() < 1e-10 * np.abs(tau).max()
    same = model.with_inertial_parameters(pi, viscous=True)
    assert np.allclose(screwdyn.mass_matrix(same, q[0]), screwdyn.mass_matrix(model, q[0]), atol=1e-13)


def test_zero_gravity_free_floating_robot_conserves_momentum_and_energy():
    """A free-floating humanoid (the bundled Talos, 38 DoF) in zero gravity: RK4 on the manifold
    over 5 s at 1 ms (the compiled rollout, 0.2 s) keeps the centroidal momentum and the kinetic
    energy to 1e-9 (4e-11 measured)."""
    model = screwdyn.models.load("talos_reduced").with_gravity([0.0, 0.0, 0.0])
    rng = np.random.default_rng(9)
    q = screwdyn.neutral(model)
    v = 0.5 * rng.normal(size=model.nv)
    h0 = screwdyn.centroidal_momentum(model, q, v)
    e0 = screwdyn.kinetic_energy(model, q, v)
    traj = screwdyn.simulate(model, q, v, duration=5.0, dt=1e-3, integrator="rk4", friction=False, joint_limits=False)
    hs = screwdyn.centroidal_momentum(model, traj.q, traj.qd)
    # linear momentum exactly (m cdot), angular about the moving CoM too
    assert np.abs(hs - h0).max() < 1e-9 * max(1.0, np.abs(h0).max())
    assert abs(screwdyn.kinetic_energy(model, traj.q[-1], traj.qd[-1]) - e0) < 1e-9 * max(1.0, e0)
    quats = traj.q[:, 3:7]
    assert np.allclose(np.linalg.norm(quats, axis=-1), 1.0, atol=1e-14)


@pytest.mark.parametrize("integrator", ["rk4", "euler", "semi_implicit_euler"])
def test_compiled_rollouts_on_the_manifold_equal_the_python_stages(integrator):
    """Free-flyer and spherical joints step in the compiled rollout kernel (RK4 as
    Runge-Kutta-Munthe-Kaas): equal to the integrators' Python stage loop (a controller of zeros
    called at every stage) to 1e-12, with per-body wrenches ``(nbodies, 6)``, joint limits and
    friction on; a batch equals its rollouts run one at a time bit for bit."""
    rng = np.random.default_rng(3)
    model = random_model(rng, n=7, spherical=0.4, floating=True, armature=True)
    assert model.nbodies < model.nv
    B = 5
    q0 = screwdyn.random_configuration(model, rng, size=B)
    qd0 = 0.5 * rng.normal(size=(B, model.nv))
    f_ext = 0.3 * rng.normal(size=(model.nbodies, 6))
    kw = {"duration": 0.05, "dt": 1e-3, "integrator": integrator, "f_ext": f_ext}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (random trees exceed their limits)
        batch = screwdyn.simulate(model, q0, qd0, **kw)
        stages = screwdyn.simulate(model, q0, qd0, tau=lambda t, q, qd: np.zeros(model.nv), **kw)
        ones = [screwdyn.simulate(model, q0[b], qd0[b], **kw) for b in range(B)]
    for x in ("q", "qd", "qdd"):
        assert np.abs(getattr(batch, x) - getattr(stages, x)).max() < 1e-12, x
        for b in range(B):
            assert np.array_equal(getattr(batch, x)[b], getattr(ones[b], x)), (x, b)
    free = model.idx_qs[model.joint_type == screwdyn.model.FREE_FLYER][0]
    assert np.allclose(np.linalg.norm(batch.q[..., free + 3:free + 7], axis=-1), 1.0, atol=1e-14)
    with pytest.raises(InputError, match=rf"f_ext must be \({model.nbodies}, 6\)"):
        screwdyn.simulate(model, q0[0], qd0[0], duration=0.01, f_ext=np.zeros((model.nv, 6)))


def test_floating_rollouts_are_compiled():
    """One rollout of a floating Solo12 steps in compiled code: 2,000 RK4 steps in well under a
    second (the Python stage loop took 2.5 ms a step)."""
    import time
    model = screwdyn.models.load("solo12")
    q0 = screwdyn.neutral(model)
    q0[2] = 0.3
    screwdyn.simulate(model, q0, None, duration=0.01)
    start = time.perf_counter()
    traj = screwdyn.simulate(model, q0, None, duration=2.0, joint_limits=False)
    assert time.perf_counter() - start < 1.0
    assert np.isfinite(traj.q).all()


def test_identification_of_a_floating_robot():
    """identify() on a floating tree with spherical joints: the base parameters reproduce the
    torques of noise-free data; without qd and qdd it says why it cannot differentiate q."""
    rng = np.random.default_rng(6)
    model = random_model(rng, n=4, fixed=0, spherical=0.5, floating=True)
    q = screwdyn.random_configuration(model, rng, size=60)
    qd, qdd = rng.normal(size=(60, model.nv)), rng.normal(size=(60, model.nv))
    tau = screwdyn.inverse_dynamics(model, q, qd, qdd)
    est = screwdyn.identify(model, q, qd, qdd, tau)
    assert np.abs(est.predict(q, qd, qdd) - tau).max() < 1e-8 * np.abs(tau).max()
    with pytest.raises(InputError, match="needs qd and qdd"):
        screwdyn.identify(model, q, tau=tau, dt=0.01)
