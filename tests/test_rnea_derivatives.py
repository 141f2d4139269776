"""The analytic derivatives of inverse dynamics (docs/theory.md §14) against Pinocchio's
``computeRNEADerivatives`` on every example-robot-data URDF both libraries load and on random
trees with armature and external wrenches, against central differences of ``inverse_dynamics``,
against SymPy's Jacobian of the closed-form ``tau`` of the worked examples and a symbolic 3-DoF
arm, and the identities ``dtau/dqdd = M``, ``dtau/dqd = 2 C`` and ``dtau/dq = dg/dq`` at rest."""
import numpy as np
import pytest

import screwdyn
from helpers import central, erd_pair, pinocchio_velocity_order, random_model, random_state, rel, to_pin, to_pinocchio
from screwdyn.io.urdf import EXAMPLE_ROBOTS

pin = pytest.importorskip("pinocchio")

REL = 1e-9   # the bar against Pinocchio: max |ours - theirs| / max |theirs|


def pin_forces(F):
    """Wrenches ``(n, f)`` on our bodies as Pinocchio's forces ``(f, n)`` on its joints (same order)."""
    return [pin.Force.Zero()] + [pin.Force(np.concatenate([f[3:], f[:3]])) for f in F]


@pytest.mark.parametrize("name", sorted(EXAMPLE_ROBOTS))
def test_matches_pinocchio_on_example_robot_data(name, rng):
    """Each URDF both libraries load (fixed base; Pinocchio's continuous joints take (cos, sin)):
    the three matrices at two random states equal Pinocchio's to 1e-9 relative."""
    pair = erd_pair(name)
    if pair is None:
        pytest.skip(f"{name}: not loaded by both libraries as the same fixed-base tree")
    model, pm, idx, q_to_pin = pair
    pd = pm.createData()
    P = np.ix_(idx, idx)
    for _ in range(2):
        q, qd, qdd = random_state(rng, model.n)
        ours = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd)
        dq, dv, da = pin.computeRNEADerivatives(pm, pd, q_to_pin(q), to_pin(qd, idx), to_pin(qdd, idx))
        da = np.triu(da) + np.triu(da, 1).T                     # Pinocchio fills the upper triangle
        for mine, theirs in zip(ours, (dq, dv, da)):
            assert rel(mine, theirs[P]) < REL


def test_matches_pinocchio_on_random_trees_with_armature_and_wrenches():
    """Random trees (prismatic joints, arbitrary axes, branching, armature, any gravity) with a
    wrench on every body: Pinocchio's derivatives to 1e-12 relative."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        model = random_model(rng, n=int(rng.integers(1, 12)), fixed=int(rng.integers(0, 3)), armature=True,
                             gravity=rng.normal(size=3) * 5)
        pm = to_pinocchio(model)
        q, qd, qdd = random_state(rng, model.n)
        F = rng.normal(size=(model.n, 6)) * 3
        ours = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, F)
        pd = pm.createData()   # (the results are views of its arrays: keep it alive)
        dq, dv, da = pin.computeRNEADerivatives(pm, pd, q, qd, qdd, pin_forces(F))
        for mine, theirs in zip(ours, (dq, dv, np.triu(da) + np.triu(da, 1).T)):
            assert rel(mine, theirs) < 1e-12


@pytest.mark.parametrize("seed", range(2))
def test_free_flyer_and_spherical_joints_match_pinocchio_and_tangent_differences(seed):
    """Random trees with spherical joints, hanging from a free-flyer (seed 0) or fixed (seed 1), with
    armature and wrenches: Pinocchio's JointModelFreeFlyer / JointModelSpherical derivatives (its
    free-flyer velocity linear first) to 1e-11, and central differences along the tangent
    directions of the configuration (screwdyn.integrate: T exp([e_c] eps), docs/theory.md (4.9))."""
    rng = np.random.default_rng(seed)
    model = random_model(rng, n=6, fixed=1, spherical=0.4, floating=seed == 0, armature=True)
    assert not model._one_dof
    pm = to_pinocchio(model)
    pd = pm.createData()
    P = pinocchio_velocity_order(model)
    Pinv = np.argsort(P)
    q = screwdyn.random_configuration(model, rng)
    qd, qdd = rng.normal(size=model.nv), rng.normal(size=model.nv)
    F = rng.normal(size=(model.nbodies, 6))
    ours = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, F)
    dq, dv, da = pin.computeRNEADerivatives(pm, pd, q, qd[Pinv], qdd[Pinv], pin_forces(F))
    for mine, theirs in zip(ours, (dq, dv, np.triu(da) + np.triu(da, 1).T)):
        assert rel(mine, theirs[np.ix_(P, P)]) < 1e-11
    tangent = central(lambda e: screwdyn.inverse_dynamics(model, screwdyn.integrate(model, q, e), qd, qdd, F),
                      np.zeros(model.nv))
    assert rel(ours[0], tangent) < 1e-7


@pytest.mark.parametrize("name", ["solo12", "talos_full_v2"])
def test_floating_base_robots_match_pinocchio(name, rng):
    """example-robot-data robots on a free-flyer (load_urdf(floating_base=True) and
    JointModelFreeFlyer): the three matrices to 1e-9 relative."""
    import warnings

    from screwdyn.io.urdf import example_robot_data_path
    path = example_robot_data_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = screwdyn.load_urdf(path, floating_base=True)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    pd = pm.createData()
    P = screwdyn.from_pinocchio(model, v=np.arange(model.nv, dtype=float), pin_model=pm)[1].astype(int)
    q = screwdyn.random_configuration(model, rng)
    qd, qdd = rng.normal(size=model.nv), rng.normal(size=model.nv)
    qp, vp = screwdyn.to_pinocchio(model, q, qd, pin_model=pm)
    ap = screwdyn.to_pinocchio(model, None, qdd, pin_model=pm)[1]
    dq, dv, da = pin.computeRNEADerivatives(pm, pd, qp, vp, ap)
    for mine, theirs in zip(screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd),
                            (dq, dv, np.triu(da) + np.triu(da, 1).T)):
        assert rel(mine, theirs[np.ix_(P, P)]) < REL


def test_central_differences_of_inverse_dynamics(rng):
    """d/dq and d/dqd of inverse_dynamics (wrenches held in the bodies' frames, friction on) by
    central differences, and dtau/dqdd (tau is linear in qdd) exactly: 1e-7 relative."""
    model = random_model(rng, n=7, fixed=2, armature=True)
    q, qd, qdd = random_state(rng, model.n)
    F = rng.normal(size=(model.n, 6))
    dq, dv, da = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, F, friction=True)

    def tau(q=q, qd=qd, qdd=qdd):
        return screwdyn.inverse_dynamics(model, q, qd, qdd, F, friction=True)
    assert rel(dq, central(lambda x: tau(q=x), q)) < 1e-7
    assert rel(dv, central(lambda x: tau(qd=x), qd)) < 1e-7
    assert rel(da, central(lambda x: tau(qdd=x), qdd, eps=1.0)) < 1e-12


def test_friction_adds_the_viscous_damping_only(rng):
    """friction=True adds diag(damping) to dtau/dqd (the Coulomb term has no derivative off qd = 0)."""
    model = random_model(rng, n=5, fixed=1)
    assert np.all(model.friction > 0)
    q, qd, qdd = random_state(rng, model.n)
    plain = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd)
    rubbed = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, friction=True)
    assert np.array_equal(rubbed[0], plain[0]) and np.array_equal(rubbed[2], plain[2])
    assert np.array_equal(rubbed[1], plain[1] + np.diag(model.damping))


def test_identities_with_the_other_kernels(rng):
    """dtau/dqdd is the CRBA mass matrix, dtau/dqd twice the Christoffel Coriolis matrix
    (docs/theory.md eq. (14.10)), and at qd = qdd = 0, dtau/dq is the derivative of the gravity
    torques: Pinocchio's computeGeneralizedGravityDerivatives and central differences."""
    model = random_model(rng, n=9, fixed=2, armature=True)
    q, qd, qdd = random_state(rng, model.n)
    _, dv, da = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd)
    assert rel(da, screwdyn.mass_matrix(model, q)) < 1e-14
    assert rel(dv, 2.0 * screwdyn.coriolis_matrix(model, q, qd)) < 1e-13
    zero = np.zeros(model.n)
    dg = screwdyn.inverse_dynamics_derivatives(model, q, zero, zero)[0]
    pm = to_pinocchio(model)
    pd = pm.createData()
    assert rel(dg, pin.computeGeneralizedGravityDerivatives(pm, pd, q)) < 1e-12
    assert rel(dg, central(lambda x: screwdyn.gravity_torques(model, x), q)) < 1e-7


@pytest.mark.parametrize("name", ["planar_2r", "planar_rp", "pr_robot", "pendulum", "bent_link", "spatial_rrr"])
def test_sympy_jacobian_of_the_closed_form(name, rng):
    """The closed-form tau of the symbolic layer's worked examples (docs/theory.md §7.5) and of a
    symbolic 3-DoF spatial arm, its parameters given numbers, differentiated by SymPy and
    evaluated at a state, equals the numeric derivatives (friction included)."""
    sp = pytest.importorskip("sympy")
    from screwdyn.symbolic import Dynamics
    from screwdyn.symbolic.examples import WORKED_EXAMPLES

    symbolic, _ = WORKED_EXAMPLES[name]()
    values = {s: rng.uniform(0.5, 2.0) for s in symbolic.parameters}
    symbolic = symbolic.subs(values)
    dyn = Dynamics(symbolic)
    n = symbolic.n
    x = list(dyn.q) + list(dyn.qd) + list(dyn.qdd)
    jac = sp.lambdify(x, dyn.tau.jacobian(sp.Matrix(x)), "numpy")
    q, qd, qdd = random_state(rng, n)
    ref = np.array(jac(*q, *qd, *qdd), dtype=float)
    model = symbolic.to_model()
    ours = np.concatenate(screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, friction=True), axis=1)
    assert rel(ours, ref) < 1e-12


def test_batches_equal_single_states_and_report_the_bad_one(rng):
    """A batch of states in lanes (partial groups too), with and without wrenches, and a (2, 3)
    batch broadcast against one state: each equals its single-state call bit for bit. A NaN is
    reported at its batch index."""
    from screwdyn.algorithms.rnea_derivatives import LANES
    model = random_model(rng, n=8, fixed=1)
    B = 3 * LANES + 1
    Q, QD, QDD = random_state(rng, model.n, (B,))
    FE = rng.normal(size=(B, model.n, 6))
    for fe in (None, FE):
        batch = screwdyn.inverse_dynamics_derivatives(model, Q, QD, QDD, fe)
        for k in range(B):
            one = screwdyn.inverse_dynamics_derivatives(model, Q[k], QD[k], QDD[k], None if fe is None else fe[k])
            for a, b in zip(batch, one):
                assert np.array_equal(a[k], b)
    grid = screwdyn.inverse_dynamics_derivatives(model, Q[:6].reshape(2, 3, -1), QD[0], QDD[0])
    assert grid[0].shape == (2, 3, model.n, model.n)
    assert np.array_equal(grid[1][1, 2], screwdyn.inverse_dynamics_derivatives(model, Q[5], QD[0], QDD[0])[1])
    QDD[5, 2] = np.inf
    with pytest.raises(screwdyn.InputError, match=r"qdd contains NaN or inf \(batch index \(5,\)\)"):
        screwdyn.inverse_dynamics_derivatives(model, Q, QD, QDD)


@pytest.mark.parametrize("joints", [40, 41])
def test_a_batch_past_the_cache_is_streamed_and_equals_single_states(joints, rng):
    """An output larger than work.STREAM_BYTES is copied from work by non-temporal stores (the
    kernel's solve 3): into an out= whose start is not on a cache line (an 8-byte offset), with a
    partial last group, it equals each state's own call bit for bit (zeros where two joints are on
    different branches included), and a NaN is still reported at its batch index. 40 joints: the
    states' lines start at the same entry (3 n^2 a multiple of 8), copied four lanes at once; 41:
    a state at a time."""
    from screwdyn.algorithms.work import STREAM_BYTES
    model = random_model(rng, n=joints, fixed=2, branching=0.7)
    n = model.n
    B = (STREAM_BYTES // (24 * n * n) // 4 + 1) * 4 + 3   # (a partial last group of LANES = 4)
    assert 24 * n * n * B > STREAM_BYTES and B % 4 == 3
    Q, QD, QDD = random_state(rng, n, (B,))
    buf = np.full(B * 3 * n * n + 1, np.nan)
    out = buf[1:].reshape(B, 3, n, n)
    batch = screwdyn.inverse_dynamics_derivatives(model, Q, QD, QDD, out=out)
    for k in sorted({0, 1, 3, 4, 5, 127, 128, B // 2, B - 4, B - 3, B - 2, B - 1}):
        for a, b in zip(batch, screwdyn.inverse_dynamics_derivatives(model, Q[k], QD[k], QDD[k])):
            assert np.array_equal(a[k], b)
    assert np.isnan(buf[0])
    QD[B - 2, 1] = np.nan
    with pytest.raises(screwdyn.InputError, match=rf"qd contains NaN or inf \(batch index \({B - 2},\)\)"):
        screwdyn.inverse_dynamics_derivatives(model, Q, QD, QDD, out=out)


def test_finite_states_whose_derivatives_overflow_are_refused_by_batch_index(rng):
    """Finite velocities so large that the derivatives leave float64 (``dtau/dqd`` grows as ``qd``,
    ``dtau/dq`` as ``qd^2``): an InputError saying so at the state's batch index, for one state and in
    a batch (lanes) of otherwise fine states, never an inf in an answer."""
    model = screwdyn.models.load("ur5")
    Q, QD, QDD = random_state(rng, model.n, (9,))
    QD[4] = 1e200
    with pytest.raises(screwdyn.InputError, match=r"overflow.*\(batch index \(4,\)\)|\(batch index \(4,\)\).*overflow"):
        screwdyn.inverse_dynamics_derivatives(model, Q, QD, QDD)
    with pytest.raises(screwdyn.InputError, match="overflow"):
        screwdyn.inverse_dynamics_derivatives(model, Q[4], QD[4], QDD[4])
    fine = screwdyn.inverse_dynamics_derivatives(model, Q[:4], QD[:4], QDD[:4])
    assert all(np.all(np.isfinite(x)) for x in fine)


def test_out_and_wrench_dicts(rng):
    """out= receives the three matrices (the results are views of it); a wrench given as a dict by
    frame name equals the same wrench as an array; a wrong out is refused."""
    model = screwdyn.models.load("panda")
    n = model.n
    q, qd, qdd = random_state(rng, n)
    out = np.empty((3, n, n))
    res = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, out=out)
    assert all(np.shares_memory(r, out) for r in res)
    assert rel(out[2], screwdyn.mass_matrix(model, q)) < 1e-14
    w = rng.normal(size=6)
    body = model.link_names[-1]
    F = np.zeros((n, 6))
    F[-1] = w
    by_dict = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, {body: w})
    by_array = screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, F)
    for a, b in zip(by_dict, by_array):
        assert np.array_equal(a, b)
    with pytest.raises(screwdyn.InputError, match="out must be"):
        screwdyn.inverse_dynamics_derivatives(model, q, qd, qdd, out=np.empty((n, n)))
