"""The derivatives of forward dynamics (docs/theory.md §14.4) against Pinocchio's
``computeABADerivatives`` on every example-robot-data URDF both libraries load and on random trees,
against central differences of ``forward_dynamics``, and the identities
``dqdd/dx = -M^{-1} dtau/dx`` at ``qdd = FD(q, qd, tau)`` and ``dqdd/dtau = M^{-1}``."""
import numpy as np
import pytest

import screwdyn
from helpers import central, erd_pair, pinocchio_velocity_order, random_model, random_state, rel, to_pin, to_pinocchio
from screwdyn.io.urdf import EXAMPLE_ROBOTS

pin = pytest.importorskip("pinocchio")


@pytest.mark.parametrize("name", sorted(EXAMPLE_ROBOTS))
def test_matches_pinocchio_on_example_robot_data(name, rng):
    """Each URDF both libraries load (fixed base): dqdd/dq, dqdd/dqd and M^{-1} at two random states
    equal Pinocchio's to 1e-9 relative. A robot with massless joints (romeo's hands: M singular) has
    no forward dynamics, and says so as forward_dynamics does."""
    pair = erd_pair(name)
    if pair is None:
        pytest.skip(f"{name}: not loaded by both libraries as the same fixed-base tree")
    model, pm, idx, q_to_pin = pair
    try:
        screwdyn.forward_dynamics(model, np.zeros(model.n), np.zeros(model.n), np.zeros(model.n))
    except screwdyn.ModelError:
        with pytest.raises(screwdyn.ModelError, match="singular"):
            screwdyn.forward_dynamics_derivatives(model, np.zeros(model.n), np.zeros(model.n), np.zeros(model.n))
        pytest.skip(f"{name}: M is singular (massless joints): no forward dynamics to compare")
    pd = pm.createData()
    P = np.ix_(idx, idx)
    for _ in range(2):
        q, qd, tau = random_state(rng, model.n)
        ours = screwdyn.forward_dynamics_derivatives(model, q, qd, tau)
        theirs = pin.computeABADerivatives(pm, pd, q_to_pin(q), to_pin(qd, idx), to_pin(tau, idx))
        for mine, ref in zip(ours, theirs):
            assert rel(mine, ref[P]) < 1e-9


def test_matches_pinocchio_on_random_trees_with_armature_and_wrenches():
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        model = random_model(rng, n=int(rng.integers(1, 12)), fixed=int(rng.integers(0, 3)), armature=True,
                             gravity=rng.normal(size=3) * 5)
        pm = to_pinocchio(model)
        pd = pm.createData()
        q, qd, tau = random_state(rng, model.n)
        F = rng.normal(size=(model.n, 6)) * 3
        forces = [pin.Force.Zero()] + [pin.Force(np.concatenate([f[3:], f[:3]])) for f in F]
        ours = screwdyn.forward_dynamics_derivatives(model, q, qd, tau, F)
        for mine, ref in zip(ours, pin.computeABADerivatives(pm, pd, q, qd, tau, forces)):
            assert rel(mine, ref) < 1e-11


@pytest.mark.parametrize("seed", range(2))
def test_free_flyer_and_spherical_joints_match_pinocchio_and_tangent_differences(seed):
    """Random trees with spherical joints, on a free-flyer (seed 0) or fixed: Pinocchio's
    computeABADerivatives to 1e-9, and central differences of forward_dynamics along the tangent
    directions of the configuration (screwdyn.integrate)."""
    rng = np.random.default_rng(10 + seed)
    model = random_model(rng, n=6, fixed=1, spherical=0.4, floating=seed == 0, armature=True)
    pm = to_pinocchio(model)
    pd = pm.createData()
    P = pinocchio_velocity_order(model)
    Pinv = np.argsort(P)
    q = screwdyn.random_configuration(model, rng)
    qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    ours = screwdyn.forward_dynamics_derivatives(model, q, qd, tau)
    for mine, theirs in zip(ours, pin.computeABADerivatives(pm, pd, q, qd[Pinv], tau[Pinv])):
        assert rel(mine, np.asarray(theirs)[np.ix_(P, P)]) < 1e-9
    tangent = central(lambda e: screwdyn.forward_dynamics(model, screwdyn.integrate(model, q, e), qd, tau),
                      np.zeros(model.nv))
    assert rel(ours[0], tangent) < 1e-6


def test_central_differences_of_forward_dynamics(rng):
    """Central differences of forward_dynamics (friction on, wrenches held) in q, qd and tau."""
    model = random_model(rng, n=6, fixed=2, armature=True)
    q, qd, tau = random_state(rng, model.n)
    F = rng.normal(size=(model.n, 6))
    dq, dv, dt = screwdyn.forward_dynamics_derivatives(model, q, qd, tau, F, friction=True)

    def fd(q=q, qd=qd, tau=tau):
        return screwdyn.forward_dynamics(model, q, qd, tau, F, friction=True)
    assert rel(dq, central(lambda x: fd(q=x), q)) < 1e-7
    assert rel(dv, central(lambda x: fd(qd=x), qd)) < 1e-7
    assert rel(dt, central(lambda x: fd(tau=x), tau, eps=1.0)) < 1e-10


def test_implicit_function_identities(rng):
    """At qdd = FD(q, qd, tau): dqdd/dq = -M^{-1} dtau/dq, dqdd/dqd = -M^{-1} dtau/dqd (friction on
    both sides), and dqdd/dtau is the inverse mass matrix, exactly symmetric."""
    model = random_model(rng, n=8, fixed=1, armature=True)
    q, qd, tau = random_state(rng, model.n)
    qdd = screwdyn.forward_dynamics(model, q, qd, tau, friction=True)
    Tq, Tv, M = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, friction=True)
    Fq, Fv, Minv = screwdyn.forward_dynamics_derivatives(model, q, qd, tau, friction=True)
    assert rel(Fq, -np.linalg.solve(M, Tq)) < 1e-12
    assert rel(Fv, -np.linalg.solve(M, Tv)) < 1e-12
    assert np.array_equal(Minv, Minv.T)
    assert rel(Minv, screwdyn.mass_matrix_inverse(model, q)) < 1e-13


@pytest.mark.parametrize("extra", [0, 1])
def test_dense_and_sparse_solves_agree(extra, rng):
    """Models whose lanes of work fit the stack (aba_derivatives.dense: up to 28 DoF) solve as M^{-1}
    and dense products in lanes, larger ones by M^{-1} and BLAS products over each tree's block:
    both give -M^{-1} dtau and M^{-1}
    (exactly symmetric) to 1e-12, on a forest of several trees (a fixed base with branches), with
    external wrenches, one state and a batch with a partial group of lanes."""
    from screwdyn.algorithms.aba_derivatives import SOLVE_LANES, dense
    largest = max(n for n in range(1, 200) if dense(n))
    assert dense(largest) and not dense(largest + 1)
    model = random_model(rng, n=largest + extra, fixed=2, branching=0.8)
    Q, QD, T = random_state(rng, model.n, (SOLVE_LANES + 2,))
    F = rng.normal(size=(SOLVE_LANES + 2, model.n, 6))
    batch = screwdyn.forward_dynamics_derivatives(model, Q, QD, T, F)
    for k in (0, SOLVE_LANES + 1):
        qdd = screwdyn.forward_dynamics(model, Q[k], QD[k], T[k], F[k])
        Tq, Tv, M = screwdyn.inverse_dynamics_derivatives(model, Q[k], QD[k], qdd, F[k])
        Fq, Fv, Minv = screwdyn.forward_dynamics_derivatives(model, Q[k], QD[k], T[k], F[k])
        assert rel(Fq, -np.linalg.solve(M, Tq)) < 1e-12
        assert rel(Fv, -np.linalg.solve(M, Tv)) < 1e-12
        assert rel(Minv, np.linalg.inv(M)) < 1e-12 and np.array_equal(Minv, Minv.T)
        for a, b in zip(batch, (Fq, Fv, Minv)):
            assert np.array_equal(a[k], b)
    for k in range(1, SOLVE_LANES + 1):   # every group (the sparse route reuses its work across groups)
        for a, b in zip(batch, screwdyn.forward_dynamics_derivatives(model, Q[k], QD[k], T[k], F[k])):
            assert np.array_equal(a[k], b)


def test_a_batch_past_the_cache_is_streamed_and_equals_single_states(rng):
    """Above 28 DoF an output larger than work.STREAM_BYTES is solved into work a state at a time and
    copied into D by non-temporal stores: into an out= whose start is not on a cache line, with a
    partial last group, each state equals its own call bit for bit."""
    from screwdyn.algorithms.aba_derivatives import dense
    from screwdyn.algorithms.work import STREAM_BYTES
    model = random_model(rng, n=40, fixed=2, branching=0.7)
    n = model.n
    assert not dense(n)
    B = (STREAM_BYTES // (24 * n * n) // 4 + 1) * 4 + 3   # (a partial last group of LANES = 4)
    Q, QD, T = random_state(rng, n, (B,))
    buf = np.full(B * 3 * n * n + 1, np.nan)
    batch = screwdyn.forward_dynamics_derivatives(model, Q, QD, T, out=buf[1:].reshape(B, 3, n, n))
    for k in sorted({0, 1, 3, 4, 5, 127, 128, B // 2, B - 4, B - 3, B - 2, B - 1}):
        for a, b in zip(batch, screwdyn.forward_dynamics_derivatives(model, Q[k], QD[k], T[k])):
            assert np.array_equal(a[k], b)
    assert np.isnan(buf[0])


def test_batches_equal_single_states_and_singular_states_are_reported(rng):
    """A batch in lanes equals its single states bit for bit; a state whose mass matrix is singular
    raises the error of forward_dynamics, naming its batch index."""
    from screwdyn.algorithms.aba_derivatives import LANES, SOLVE_LANES
    model = random_model(rng, n=7, fixed=1)
    B = 2 * max(LANES, SOLVE_LANES) + 3
    Q, QD, T = random_state(rng, model.n, (B,))
    batch = screwdyn.forward_dynamics_derivatives(model, Q, QD, T)
    for k in range(B):
        for a, b in zip(batch, screwdyn.forward_dynamics_derivatives(model, Q[k], QD[k], T[k])):
            assert np.array_equal(a[k], b)
    b = screwdyn.ModelBuilder("massless_tip")
    b.add_body("l1", "base", "j1", "revolute", axis=[0, 0, 1], inertial=screwdyn.inertia.RigidBody(1.0, [1, 0, 0],
                                                                                                     np.eye(3)))
    b.add_body("l2", "l1", "j2", "revolute", axis=[0, 0, 1], origin=np.eye(4))
    massless = b.build()
    with pytest.raises(screwdyn.ModelError, match="singular") as single:
        screwdyn.forward_dynamics(massless, [0, 0], [0, 0], [0, 0])
    with pytest.raises(screwdyn.ModelError, match="singular") as ours:
        screwdyn.forward_dynamics_derivatives(massless, [0, 0], [0, 0], [0, 0])
    assert str(ours.value) == str(single.value)
    with pytest.raises(screwdyn.ModelError, match=r"singular or not positive definite \(batch index \(0,\)\)"):
        screwdyn.forward_dynamics_derivatives(massless, np.zeros((3, 2)), [0, 0], [0, 0])
