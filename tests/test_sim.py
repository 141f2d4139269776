"""Simulation: order of convergence of each integrator, energy conservation and dissipation,
the work-energy balance, external wrenches, input kinds, exports, errors."""
import numpy as np
import pytest

import screwdyn
from screwdyn import models
from screwdyn.errors import InputError
from screwdyn.sim import INTEGRATORS, SimulationError, Trajectory, simulate

# Robots falling freely exceed their velocity limits (and, without joint limits, their ranges): said
# by a LimitWarning, which the tests of other things do not need to see.
pytestmark = pytest.mark.filterwarnings("ignore::screwdyn.sim.LimitWarning")

Q0_2R = np.array([0.3, 0.2])


@pytest.fixture(scope="module")
def arm():
    return models.load("planar_2r")


@pytest.fixture(scope="module")
def reference_2r(arm):
    """The 2R arm released from Q0_2R, at t = 1 s, by DOP853 at rtol 1e-13."""
    tr = simulate(arm, Q0_2R, None, 1.0, 1.0, integrator="DOP853", rtol=1e-13, atol=1e-14, friction=False)
    return np.concatenate([tr.q[-1], tr.qd[-1]])


def _error_at_1s(arm, ref, integrator, h):
    if integrator in ("euler", "semi_implicit_euler", "rk4"):
        tr = simulate(arm, Q0_2R, None, 1.0, h, integrator=integrator, friction=False)
    else:  # the adaptive methods with their step forced to h (tolerances too loose to reject a step)
        tr = simulate(arm, Q0_2R, None, 1.0, 1.0, integrator=integrator, rtol=1e3, atol=1e3,
                      ivp_options=dict(first_step=h, max_step=h), friction=False)
    return np.abs(np.concatenate([tr.q[-1], tr.qd[-1]]) - ref).max()


# (integrator, two step sizes in the asymptotic range, expected order, tolerance)
ORDERS = [("euler", 1 / 1600, 1 / 3200, 1, 0.1), ("semi_implicit_euler", 1 / 1600, 1 / 3200, 1, 0.1),
          ("rk4", 1 / 200, 1 / 400, 4, 0.1), ("RK45", 1 / 320, 1 / 640, 5, 0.35),
          ("DOP853", 1 / 40, 1 / 60, 8, 0.5), ("Radau", 1 / 320, 1 / 640, 5, 0.35)]


@pytest.mark.parametrize("integrator, h1, h2, order, tol", ORDERS, ids=[o[0] for o in ORDERS])
def test_order_of_convergence_on_the_2r_arm(arm, reference_2r, integrator, h1, h2, order, tol):
    e1 = _error_at_1s(arm, reference_2r, integrator, h1)
    e2 = _error_at_1s(arm, reference_2r, integrator, h2)
    measured = np.log(e1 / e2) / np.log(h1 / h2)
    assert abs(measured - order) < tol, f"{integrator}: errors {e1:.3e}, {e2:.3e}, order {measured:.3f}"


@pytest.mark.parametrize("integrator", ["RK45", "DOP853", "Radau"])
def test_adaptive_error_follows_the_tolerance(arm, reference_2r, integrator):
    errors = []
    for rtol in (1e-6, 1e-9):
        tr = simulate(arm, Q0_2R, None, 1.0, 0.1, integrator=integrator, rtol=rtol, atol=rtol * 1e-2, friction=False)
        errors.append(np.abs(np.concatenate([tr.q[-1], tr.qd[-1]]) - reference_2r).max())
        assert errors[-1] < 100 * rtol
    assert errors[1] < errors[0] / 30


def test_explicit_euler_is_modern_robotics_euler_step():
    """Our "euler" reproduces mr.ForwardDynamicsTrajectory (EulerStep, intRes = 1) on an MR chain."""
    mr = pytest.importorskip("modern_robotics")
    Ms = [np.array([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])] * 2 + \
         [np.array([[1, 0, 0, 0.5], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])]
    Gs = [np.diag([0.01, 0.02, 0.03, 2.0, 2.0, 2.0]), np.diag([0.02, 0.01, 0.02, 1.0, 1.0, 1.0])]
    S = np.array([[0, 0, 1, 0, 0, 0], [0, 0, 1, 0, -1, 0]], dtype=float).T
    g = np.array([0, -9.81, 0])
    model = screwdyn.Model.from_screws(Ms, Gs, S, gravity=g)
    N, dt = 60, 0.01
    taumat = np.column_stack([np.sin(np.arange(N) * 0.1), 0.5 * np.cos(np.arange(N) * 0.2)])
    th, dth = mr.ForwardDynamicsTrajectory(np.array([0.1, 0.6]), np.array([0.2, -0.3]), taumat, g,
                                           np.zeros((N, 6)), Ms, Gs, S, dt, 1)
    tr = simulate(model, [0.1, 0.6], [0.2, -0.3], (N - 1) * dt, dt, tau=taumat, integrator="euler")
    np.testing.assert_allclose(tr.q, th, atol=1e-11)
    np.testing.assert_allclose(tr.qd, dth, atol=1e-10)
    np.testing.assert_allclose(tr.tau, taumat)


@pytest.fixture(scope="module")
def panda():
    return models.load("panda")


def test_frictionless_panda_conserves_energy_rk4_5s(panda):
    """Passive frictionless panda, dt = 1 ms over 5 s, without joint limits (a conservative
    system): RK4 drift below 1e-6 of the energy."""
    tr = simulate(panda, models.home("panda"), None, 5.0, 1e-3, integrator="rk4", friction=False,
                  joint_limits=False)
    E = tr.total_energy
    drift = np.abs(E - E[0]).max()
    assert drift < 1e-6 * abs(E[0])
    assert drift < 1e-6 * tr.kinetic_energy.max()
    assert tr.energy_drift() == pytest.approx(drift / tr.kinetic_energy.max())
    assert tr.kinetic_energy.max() > 50       # it did fall: tens of joules moved between K and U


@pytest.mark.parametrize("integrator, bound", [("DOP853", 1e-8), ("RK45", 1e-7)])
def test_frictionless_panda_adaptive_energy(panda, integrator, bound):
    tr = simulate(panda, models.home("panda"), None, 1.0, 1e-3, integrator=integrator, friction=False,
                  joint_limits=False)
    assert tr.energy_drift() < bound


def test_explicit_euler_gains_energy_symplectic_euler_stays_bounded():
    """First-order methods on the frictionless pendulum over 10 s at dt = 1 ms: explicit Euler's
    energy grows steadily (by about (1 + w^2 dt^2) per step); symplectic Euler's oscillates
    within O(w dt) of the truth, without a trend."""
    pend = models.load("pendulum")
    kw = dict(q0=[1.0], duration=10.0, dt=1e-3, friction=False)
    swing = 2.45 * (1 - np.cos(1.0))                                   # m g d (1 - cos q0) [J]
    E_euler = simulate(pend, integrator="euler", **kw).total_energy
    E_symp = simulate(pend, integrator="semi_implicit_euler", **kw).total_energy
    assert np.all(np.diff(E_euler[::500]) > 0)                          # monotone growth
    assert E_euler[-1] - E_euler[0] > 0.1 * swing
    err = np.abs(E_symp - E_symp[0])
    assert err.max() < 0.01 * swing
    assert err[5000:].max() < 1.5 * err[:5000].max()                   # bounded: no secular drift


def test_damping_makes_energy_decrease_monotonically():
    pend = models.load("pendulum")                         # viscous 0.02 N m s/rad
    tr = simulate(pend, [2.5], None, 5.0, 1e-3)
    E = tr.total_energy
    assert np.all(np.diff(E) <= 1e-12)
    assert E[-1] < E[0] - 0.5
    # E(t) - E(0) = -integral of b qd^2 (the power balance of docs/theory.md eq. (7.11) with
    # tau = 0 and tau_f = b qd)
    p = 0.02 * tr.qd[:, 0]**2
    dissipated = np.concatenate([[0], np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(tr.t))])
    np.testing.assert_allclose(E - E[0], -dissipated, atol=1e-6)


def test_damped_panda_energy_decreases_monotonically(panda):
    """(Without joint limits: a joint pushed back from beyond its limit gets back some energy.)"""
    damped = panda.replace(damping=np.full(7, 0.5), friction=np.zeros(7))
    tr = simulate(damped, models.home("panda"), None, 1.0, 1e-3, joint_limits=False)
    assert np.all(np.diff(tr.total_energy) <= 1e-10)
    assert tr.total_energy[-1] < tr.total_energy[0] - 1.0


def test_work_energy_balance_with_torques_and_friction():
    """E(T) - E(0) = integral of qd . (tau - tau_friction) dt (docs/theory.md eq. (7.11))."""
    puma = models.load("puma560").replace(friction=np.zeros(6))        # viscous only: a smooth vector field
    tau = lambda t, q, qd: np.array([30 * np.sin(3 * t), 20.0, 5 * np.cos(t), 1.0, -0.5, 0.2])  # noqa: E731
    tr = simulate(puma, models.home("puma560"), None, 1.0, 1e-3, tau=tau, joint_limits=False)
    power = np.einsum("ij,ij->i", tr.qd, tr.tau - puma.damping * tr.qd)
    work = np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(tr.t))
    E = tr.total_energy
    assert E[-1] - E[0] == pytest.approx(work, abs=1e-5 * np.abs(E - E[0]).max() + 1e-9)


def test_external_wrench_kinds_agree():
    """A constant tip force, as a dict, an (n, 6) array, per step, and a callable: same motion;
    and the same as the equivalent joint torque J^T F."""
    pend = models.load("pendulum")
    F_tip = np.array([0, 0, 0, 2.0, 0, 0])           # 2 N along the tip frame's x
    steps = 200
    kw = dict(q0=[0.4], duration=0.2, dt=1e-3, friction=False)
    runs = [simulate(pend, f_ext={"tip": F_tip}, **kw),
            simulate(pend, f_ext=screwdyn.external_wrenches(pend, {"tip": F_tip}), **kw),
            simulate(pend, f_ext=np.repeat(screwdyn.external_wrenches(pend, {"tip": F_tip})[None], steps, 0), **kw),
            simulate(pend, f_ext=lambda t, q, qd: {"tip": F_tip}, **kw)]
    for r in runs[1:]:
        np.testing.assert_allclose(r.q, runs[0].q, atol=1e-14)
    # a force along the tip frame's x is perpendicular to the rod: torque l * F about the joint
    # axis (-y), the same as a joint torque of 0.5 * 2 = 1 N m
    same = simulate(pend, tau=[1.0], **kw)
    np.testing.assert_allclose(runs[0].q, same.q, atol=1e-13)


def test_tau_kinds_agree(arm):
    kw = dict(q0=Q0_2R, duration=0.1, dt=1e-3)
    const = simulate(arm, tau=[1.0, -2.0], **kw)
    per_step = simulate(arm, tau=np.tile([1.0, -2.0], (100, 1)), **kw)
    call = simulate(arm, tau=lambda t, q, qd: np.array([1.0, -2.0]), **kw)
    for r in (per_step, call):
        np.testing.assert_allclose(r.q, const.q, atol=1e-15)
        np.testing.assert_allclose(r.tau, const.tau)
    scalar = simulate(arm, tau=0.5, **kw)
    np.testing.assert_allclose(scalar.tau, 0.5)
    # a zero-order hold that switches every step: the adaptive solvers integrate step by step
    switching = np.where(np.arange(100)[:, None] % 2 == 0, [3.0, 1.0], [-3.0, -1.0])
    a = simulate(arm, tau=switching, integrator="rk4", **kw)
    b = simulate(arm, tau=switching, integrator="DOP853", **kw)
    np.testing.assert_allclose(a.q, b.q, atol=1e-11)


def test_qdd_and_energies_are_those_of_the_samples(arm):
    tr = simulate(arm, Q0_2R, [0.1, -0.2], 0.05, 1e-2, tau=lambda t, q, qd: -qd)
    assert tr.t[-1] == 0.05 and len(tr) == 6
    np.testing.assert_allclose(tr.tau, -tr.qd)
    np.testing.assert_allclose(tr.qdd, screwdyn.forward_dynamics(arm, tr.q, tr.qd, tr.tau), atol=1e-12)
    np.testing.assert_allclose(tr.kinetic_energy, screwdyn.kinetic_energy(arm, tr.q, tr.qd))
    np.testing.assert_allclose(tr.potential_energy, screwdyn.potential_energy(arm, tr.q))


def test_uneven_duration_has_a_shorter_last_step(arm):
    tr = simulate(arm, Q0_2R, None, 1.0, 0.3)
    np.testing.assert_allclose(tr.t, [0, 0.3, 0.6, 0.9, 1.0])
    assert set(INTEGRATORS) == {"euler", "semi_implicit_euler", "rk4", "RK45", "DOP853", "Radau"}


def test_exports_roundtrip(arm, tmp_path):
    tr = simulate(arm, Q0_2R, None, 0.02, 1e-2, tau=[0.1, 0.2])
    tr.to_csv(tmp_path / "t.csv")
    data = np.genfromtxt(tmp_path / "t.csv", delimiter=",", names=True)
    assert data.dtype.names[:3] == ("t", "q_joint1", "q_joint2")
    np.testing.assert_allclose(data["qd_joint2"], tr.qd[:, 1], rtol=1e-15)
    np.testing.assert_allclose(data["total_energy"], tr.total_energy, rtol=1e-15)
    tr.to_npz(tmp_path / "t.npz")
    back = Trajectory.from_npz(tmp_path / "t.npz")
    np.testing.assert_array_equal(back.q, tr.q)
    assert back.joint_names == ("joint1", "joint2") and back.integrator == "rk4" and back.dt == 1e-2
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            tr.to_dataframe()
    else:
        df = tr.to_dataframe()
        assert list(df.columns[:2]) == ["q_joint1", "q_joint2"] and len(df) == 3


def test_input_errors(arm):
    with pytest.raises(InputError, match="unknown integrator"):
        simulate(arm, integrator="leapfrog")
    with pytest.raises(InputError, match="q0"):
        simulate(arm, q0=[0, 0, 0])
    with pytest.raises(InputError, match="dt"):
        simulate(arm, dt=0)
    with pytest.raises(InputError, match="tau"):
        simulate(arm, tau=np.zeros((7, 2)), duration=0.1, dt=1e-2)
    with pytest.raises(InputError, match="returned shape"):
        simulate(arm, tau=lambda t, q, qd: np.zeros(3), duration=0.01)
    with pytest.raises(InputError, match="f_ext"):
        simulate(arm, f_ext=np.zeros((3, 6)), duration=0.01)


def test_divergence_is_reported():
    stiff = models.load("pendulum").replace(damping=[1000.0])     # dt b / I = 75 >> 2: Euler explodes
    with pytest.raises(SimulationError, match="diverged at t"):
        simulate(stiff, [1.0], None, 3.0, 1e-2, integrator="euler")
    # Radau, built for stiff problems, takes it in its stride
    tr = simulate(stiff, [1.0], None, 0.5, 1e-2, integrator="Radau")
    assert np.all(np.diff(tr.total_energy) <= 1e-12)


def test_progress_callback(arm):
    seen = []
    simulate(arm, Q0_2R, None, 0.5, 1e-3, progress=seen.append)
    assert seen and seen[-1] == pytest.approx(1.0, abs=0.01) and all(0 <= s <= 1 for s in seen)


# ---------------------------------------------------------------------------- joint limits
@pytest.fixture(scope="module")
def stopped_pendulum():
    """The pendulum (I = 0.1225 kg m^2 about its joint, m g d = 2.45 N m) with a range [0.3, 2]:
    released horizontally, it swings down onto its lower limit and comes to rest against it."""
    return models.load("pendulum").replace(q_lower=np.array([0.3]), q_upper=np.array([2.0]))


def test_a_joint_beyond_its_limit_gets_the_reference_acceleration(stopped_pendulum):
    """docs/theory.md (13.7): beyond its limit (here one joint) qdd = max(a_u, -k x - c qd), a_u the
    acceleration without the limit, k = 1 / tc^2, c = 2 / tc; so the pendulum, met at 6 rad/s,
    goes at most 6 tc / e beyond and comes to rest at the limit itself."""
    p = stopped_pendulum
    tr = simulate(p, [np.pi / 2], None, 1.0, 1e-3, friction=False)
    tc = 0.002
    q, qd = tr.q[:, 0], tr.qd[:, 0]
    beyond = q < 0.3
    assert beyond.sum() > 100
    free = screwdyn.forward_dynamics(p, tr.q, tr.qd, np.zeros_like(tr.q))[:, 0]
    reference = -(q - 0.3) / tc**2 - 2 / tc * qd
    np.testing.assert_allclose(tr.qdd[beyond, 0], np.maximum(free, reference)[beyond], rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(tr.qdd[~beyond, 0], free[~beyond])
    speed = np.abs(qd[np.argmax(beyond) - 1])
    assert 5.0 < speed < 7.0
    assert 0.3 - q.min() < speed * tc / np.e * 1.05
    assert q[-1] == pytest.approx(0.3, abs=1e-9) and abs(qd[-1]) < 1e-9


def test_limit_constants_are_settable_and_the_limits_can_be_switched_off(stopped_pendulum):
    from screwdyn.sim import JointLimits

    p = stopped_pendulum
    given = simulate(p, [np.pi / 2], None, 1.0, 1e-3, friction=False,
                     joint_limits=JointLimits(stiffness=1e4, damping=150.0))
    q, qd = given.q[:, 0], given.qd[:, 0]
    on = (q < 0.3) & (given.qdd[:, 0] > screwdyn.forward_dynamics(p, given.q, given.qd, 0 * given.q)[:, 0])
    assert on.sum() > 10
    np.testing.assert_allclose(given.qdd[on, 0], -1e4 * (q[on] - 0.3) - 150.0 * qd[on], rtol=1e-12, atol=1e-9)
    soft = simulate(p, [np.pi / 2], None, 1.0, 1e-3, joint_limits=JointLimits(timeconst=0.05))
    default = simulate(p, [np.pi / 2], None, 1.0, 1e-3)
    assert soft.info["limits"]["position"]["joint"]["max"] > 5 * default.info["limits"]["position"]["joint"]["max"]
    with pytest.warns(screwdyn.sim.LimitWarning, match=r"position limits exceeded by joint \(up to 1\.\d+ rad\)"):
        free = simulate(p, [np.pi / 2], None, 1.0, 1e-3, joint_limits=False)
    assert free.q.min() < -1.0                                          # swung through, as without limits
    with pytest.raises(InputError, match="JointLimits.timeconst"):
        simulate(p, joint_limits=JointLimits(timeconst=-1.0))
    with pytest.raises(InputError, match="joint_limits must be"):
        simulate(p, joint_limits="on")


def test_falling_against_the_limits_never_gains_energy(panda):
    """64 passive Pandas released from random poses fall against their limits (several joints at
    once) with their friction: none ever has more energy than it started with, none goes beyond a
    limit by more than 0.1 rad, at dt = 1 ms and at half of it (a stable contact, not one that dt
    happens to hold)."""
    rng = np.random.default_rng(5)
    q0 = rng.uniform(panda.q_lower, panda.q_upper, (64, 7))
    runs = [simulate(panda, q0, None, 1.0, dt) for dt in (1e-3, 5e-4)]
    for tr in runs:
        E = tr.total_energy
        assert np.all(E.max(axis=1) <= E[:, 0] + 1e-9)
        beyond = np.maximum(tr.q - panda.q_upper, panda.q_lower - tr.q)
        assert 0.0 < beyond.max() < 0.1


def test_velocity_and_effort_excess_are_reported_and_saturate_clips(arm):
    """The pendulum (effort limit 5 N m, velocity 10 rad/s) driven by 8 N m: the warning names the
    joint, the limit and when; with saturate=True the applied torque is 5 N m, the same motion."""
    pend = models.load("pendulum")
    with pytest.warns(screwdyn.sim.LimitWarning, match=r"effort limit exceeded by joint \(\|tau\| up to 8 N m, limit 5\)"):
        free = simulate(pend, [0.0], None, 0.5, 1e-3, tau=8.0)
    assert "joint: |tau| commanded up to 8 N m > effort limit 5, from t = 0 s" in free.limit_report()
    sat = simulate(pend, [0.0], None, 0.5, 1e-3, tau=8.0, saturate=True)
    five = simulate(pend, [0.0], None, 0.5, 1e-3, tau=5.0)
    np.testing.assert_array_equal(sat.q, five.q)
    assert np.all(sat.tau == 5.0) and sat.info["limits"]["effort"]["joint"]["saturated"]
    assert free.q[-1, 0] > sat.q[-1, 0]
    with pytest.warns(screwdyn.sim.LimitWarning, match=r"velocity limit exceeded by joint \(\|qd\| up to \d+(\.\d+)? rad/s, limit 10\)"):
        fast = simulate(pend, [0.0], [9.0], 0.5, 1e-3, tau=lambda t, q, qd: np.array([4.0]), friction=False)
    e = fast.info["limits"]["velocity"]["joint"]
    assert e["t"] == fast.t[np.argmax(np.abs(fast.qd[:, 0]) > 10)] and e["max"] == np.abs(fast.qd).max()



def test_a_limit_warning_is_one_line_and_the_details_are_on_the_trajectory():
    """Ten passive Pandas from q = 0 (joint 4 beyond its range [-3.07, -0.07]) fall past six velocity
    limits: the warning says so in one short line (which kinds, how many joints, the worst, how many
    rollouts); every joint's figures are in info["limits"], limit_report() and the warning's report."""
    panda = models.load("panda")
    with pytest.warns(screwdyn.sim.LimitWarning) as caught:
        tr = simulate(panda, np.zeros((10, 7)), None, 0.3)
    (w,) = [c.message for c in caught if isinstance(c.message, screwdyn.sim.LimitWarning)]
    text = str(w)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith("panda: velocity limit exceeded by ") and "in 10 of 10 rollouts" in text
    assert "panda_joint4 beyond its position limits from t = 0 s (up to 0.0698 rad)" in text
    report = tr.info["limits"]
    assert w.report is report and report["position"]["panda_joint4"]["t"] == 0.0
    velocity = report["velocity"]
    assert f"velocity limit exceeded by {len(velocity)} joints, worst " in text and len(velocity) > 3
    worst = max(velocity, key=lambda j: velocity[j]["max"] / velocity[j]["limit"])
    e = velocity[worst]
    assert f"worst {worst} (|qd| up to {e['max']:.3g} rad/s, limit {e['limit']:.3g})" in text
    assert e["max"] == np.abs(tr.qd[..., panda.v_names.index(worst)]).max() and e["rollouts"] == list(range(10))
    lines = tr.limit_report()
    assert len(lines) == len(velocity) + len(report["position"])
    assert all(line.count(" in 10 of 10 rollouts (0, 1, 2, 3, 4, 5, 6, 7, ...)") == 1 for line in lines)

# ---------------------------------------------------------------------------- batches
def test_a_batch_keeps_its_axes_and_gives_its_members(arm, tmp_path):
    q0 = np.array([[[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], [[0.7, 0.8], [0.9, 1.0], [1.1, 1.2]]])   # (2, 3, n)
    tr = simulate(arm, q0, [0.0, 0.5], 0.05, 1e-2, tau=[0.5, -0.5])
    assert tr.batch_shape == (2, 3) and tr.q.shape == (2, 3, 6, 2) and tr.kinetic_energy.shape == (2, 3, 6)
    one = simulate(arm, q0[1, 2], [0.0, 0.5], 0.05, 1e-2, tau=[0.5, -0.5])
    member = tr[1, 2]
    np.testing.assert_array_equal(member.q, one.q)
    np.testing.assert_array_equal(member.total_energy, one.total_energy)
    assert np.shape(tr.energy_drift()) == (2, 3) and tr.energy_drift()[1, 2] == one.energy_drift()
    tr.to_npz(tmp_path / "b.npz")
    back = Trajectory.from_npz(tmp_path / "b.npz")
    np.testing.assert_array_equal(back.q, tr.q)
    np.testing.assert_array_equal(back.limits["q_upper"], arm.q_upper)
    tr.to_csv(tmp_path / "b.csv")
    data = np.genfromtxt(tmp_path / "b.csv", delimiter=",", names=True)
    assert data.dtype.names[:3] == ("rollout", "t", "q_joint1") and len(data) == 6 * 6
    np.testing.assert_array_equal(data["q_joint2"][data["rollout"] == 5], one.q[:, 1])
    with pytest.raises(InputError, match="one rollout"):
        one[0]


def test_per_rollout_torques_and_their_shapes(arm):
    q0 = np.zeros((3, 2))
    per_rollout = simulate(arm, q0, None, 0.02, 1e-2, tau=np.array([[[1.0, 0.0]], [[2.0, 0.0]], [[3.0, 0.0]]]))
    np.testing.assert_array_equal(per_rollout.tau[:, 0, 0], [1.0, 2.0, 3.0])
    shared = simulate(arm, q0, None, 0.02, 1e-2, tau=np.array([[1.0, 0.0], [2.0, 0.0]]))   # (steps, n)
    np.testing.assert_array_equal(shared.tau[:, :, 0], [[1.0, 2.0, 2.0]] * 3)
    with pytest.raises(InputError, match=r"\(3, 5, 2\) per rollout"):
        simulate(arm, q0, None, 0.05, 1e-2, tau=np.ones((3, 2)))          # (B, n): ambiguous, refused
    with pytest.raises(InputError, match="do not broadcast"):
        simulate(arm, np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(InputError, match=r"q0 contains NaN or inf \(rollout \(1,\)\)"):
        simulate(arm, [[0, 0], [np.nan, 0]])
    with pytest.raises(InputError, match=r"returned shape \(2, 2\), expected \(2,\) or \(3, 2\)"):
        simulate(arm, q0, None, 0.02, 1e-2, tau=lambda t, q, qd: np.zeros((2, 2)))


def test_diverged_rollouts_are_named_and_the_others_run_on():
    """Explicit Euler on a stiffly damped pendulum: the rollouts that move blow up; the one at rest
    at the bottom stays there exactly."""
    stiff = models.load("pendulum").replace(damping=[1000.0])
    with pytest.warns(screwdyn.sim.SimulationWarning, match=r"2 of 3 rollouts diverged .*: 1 at t = .* s, 2 at t"):
        tr = simulate(stiff, [[0.0], [1.0], [0.5]], None, 3.0, 1e-2, integrator="euler")
    assert tr.info["diverged"] == [1, 2]
    assert np.all(tr.q[0] == 0.0) and np.isnan(tr.q[1, -1]).all() and np.isnan(tr.kinetic_energy[2, -1])
    assert np.isfinite(tr.kinetic_energy[0]).all()


def test_an_adaptive_batch_is_a_loop_of_single_rollouts(arm):
    q0 = np.array([[0.3, 0.2], [-0.5, 1.0]])
    tr = simulate(arm, q0, None, 0.3, 1e-2, integrator="DOP853", tau=lambda t, q, qd: -qd)
    for b in range(2):
        one = simulate(arm, q0[b], None, 0.3, 1e-2, integrator="DOP853", tau=lambda t, q, qd: -qd)
        np.testing.assert_array_equal(tr.q[b], one.q)
        np.testing.assert_array_equal(tr.qdd[b], one.qdd)


def test_a_controller_steers_a_batch(panda):
    """Computed torque with full-matrix gains on four rollouts at once: each tracks its set point."""
    from screwdyn.control import computed_torque_pd

    target = models.home("panda")
    ctrl = computed_torque_pd(panda, target, np.diag(np.full(7, 100.0)), np.diag(np.full(7, 20.0)))
    q0 = target + np.linspace(-0.2, 0.2, 4)[:, None]
    tr = simulate(panda, q0, None, 1.0, 1e-3, tau=ctrl)
    np.testing.assert_allclose(tr.q[:, -1], np.broadcast_to(target, (4, 7)), atol=2e-3)
    one = simulate(panda, q0[2], None, 1.0, 1e-3, tau=ctrl)
    np.testing.assert_allclose(tr.q[2], one.q, atol=1e-12)
