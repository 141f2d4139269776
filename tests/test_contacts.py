"""Contact simulation (screwdyn.sim.contacts, docs/theory.md §18) against closed forms and physical
invariants: a box on a slope, a bouncing ball, a rolling ball, a box at rest; energy, penetration,
batches, joint limits, joint dry friction and bilateral constraints in the same problem."""
import numpy as np
import pytest

import screwdyn
from screwdyn.errors import InputError
from screwdyn.geometry import Collision
from screwdyn.sim.contacts import ContactSettings, StepResult, step

G = 9.81
BOX_SIZE = (0.2, 0.1, 0.05)


def free_body(name, kind, size, mass, inertia):
    b = screwdyn.ModelBuilder(name)
    b.add_body(name, "base", "free", "free_flyer", mass=mass, inertia=inertia)
    return b.build().replace(collisions=(Collision(name, kind, np.eye(4), size),))


def box_model():
    a, b, c = BOX_SIZE
    return free_body("box", "box", BOX_SIZE, 1.0, np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 12)


def ball_model(r=0.1):
    return free_body("ball", "sphere", (r,), 1.0, np.eye(3) * 0.4 * r * r)


def rotation(q):
    """``R (..., 3, 3)`` of a free-flyer's unit quaternion ``q[..., 3:7]`` (x, y, z, w)."""
    x, y, z, w = np.moveaxis(q[..., 3:7], -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def world_twist(q, qd):
    """The world angular velocity and the origin's world velocity of a free body."""
    R = rotation(q)
    return np.einsum("...ij,...j->...i", R, qd[..., :3]), np.einsum("...ij,...j->...i", R, qd[..., 3:6])


@pytest.mark.parametrize("theta, mu", [(0.3, 0.5), (0.3, 0.2), (0.5, 0.3), (0.2, 0.0)])
def test_a_box_on_a_slope_sticks_below_the_friction_angle_and_slides_at_g_sin_minus_mu_cos(theta, mu):
    """On a slope of angle theta, a box sticks when tan(theta) < mu and otherwise slides down with
    a = g (sin theta - mu cos theta) (within 1 %; here to 1e-6), never lifting off the slope."""
    n, down = np.array([np.sin(theta), 0, np.cos(theta)]), np.array([np.cos(theta), 0, -np.sin(theta)])
    env = screwdyn.Environment(screwdyn.Ground(normal=n, friction=mu))
    q0 = np.r_[n * BOX_SIZE[2] / 2, 0, np.sin(theta / 2), 0, np.cos(theta / 2)]
    traj = screwdyn.simulate(box_model(), q0, None, 1.0, 1e-3, environment=env)
    p = traj.q[:, :3] - q0[:3]
    s = p @ down
    a = 2 * np.polyfit(traj.t, s, 2)[0]
    expected = G * (np.sin(theta) - mu * np.cos(theta))
    if np.tan(theta) < mu:
        assert np.abs(s).max() < 1e-9
    else:
        assert a == pytest.approx(expected, rel=1e-6)
    assert np.abs(p @ n).max() < 1e-9
    assert traj.solver["residual"].max() <= ContactSettings().tolerance


def test_a_dropped_ball_rebounds_to_e_squared_of_its_height():
    """A ball dropped from h onto ground of restitution e leaves at e times its impact speed and
    rises to e^2 h (within 1 %), without sinking into the ground."""
    e, h, r = 0.5, 1.0, 0.1
    env = screwdyn.Environment(screwdyn.Ground(restitution=e))
    traj = screwdyn.simulate(ball_model(r), [0, 0, h + r, 0, 0, 0, 1], None, 1.2, 1e-3, environment=env)
    z, vz = traj.q[:, 2] - r, traj.qd[:, 5]
    up = np.argmax(vz > 0)
    apex = up + np.argmax(vz[up:] <= 0)
    assert z[apex] == pytest.approx(e * e * h, rel=0.01)
    assert z.min() > -1e-9


def test_a_sliding_ball_rolls_without_slipping_once_friction_has_spun_it_up():
    """A ball launched sliding at v0 without spin slows under friction until omega r = v (after t =
    2 v0 / (7 mu g)), then rolls at 5/7 v0: both to 1e-6; its centre stays at its height."""
    r, v0, mu = 0.1, 1.0, 0.3
    env = screwdyn.Environment(screwdyn.Ground(friction=mu))
    traj = screwdyn.simulate(ball_model(r), [0, 0, r, 0, 0, 0, 1], [0, 0, 0, v0, 0, 0], 1.0, 1e-3, environment=env)
    w, v = world_twist(traj.q, traj.qd)
    rolling = traj.t > 2 * v0 / (7 * mu * G) + 2e-3
    assert np.abs(v[rolling, 0] - w[rolling, 1] * r).max() < 1e-6
    assert v[-1, 0] == pytest.approx(5 / 7 * v0, abs=1e-6)
    assert np.abs(traj.q[:, 2] - r).max() < 1e-9


def test_a_box_at_rest_carries_its_weight_and_does_not_creep():
    """A box set on the ground: its contacts carry its weight, mg, within 1e-6 at every step of
    10 s, and it moves less than 1e-6 m."""
    env = screwdyn.Environment(screwdyn.Ground(friction=0.8))
    q0 = [0.1, 0.2, BOX_SIZE[2] / 2, 0, 0, 0, 1]
    traj = screwdyn.simulate(box_model(), q0, None, 10.0, 1e-3, environment=env)
    F = traj.contacts.total_force()
    assert np.abs(F[:, 2] - G).max() < 1e-6 * G
    assert np.abs(F[:, :2]).max() < 1e-6 * G
    assert np.abs(traj.q[:, :3] - q0[:3]).max() < 1e-6
    assert (traj.contacts.count == 4).all()


def test_a_tumbling_box_gains_no_energy_and_comes_to_rest():
    """A box thrown spinning onto the ground, no actuation, 10 s at dt = 1 ms: its energy never
    rises above its start (nor, but for rounding, from one step to the next), it comes to rest, and
    it rests without sinking more than 1 mm."""
    env = screwdyn.Environment(screwdyn.Ground(friction=0.6))
    q0 = [0, 0, 0.3, 0.1, 0.2, 0.3, 0.927]
    q0 = np.r_[q0[:3], np.array(q0[3:]) / np.linalg.norm(q0[3:])]
    traj = screwdyn.simulate(box_model(), q0, [1.0, -2.0, 3.0, 0.5, 0.0, 0.0], 10.0, 1e-3, environment=env)
    E = traj.total_energy
    assert E.max() <= E[0] + 1e-9
    assert np.diff(E).max() < 1e-6
    assert np.abs(traj.qd[-1]).max() < 1e-9
    active = traj.contacts.active[-1]
    assert active.any() and traj.contacts.penetration[-1][active].max() < 1e-3


def test_batches_equal_single_rollouts_and_steps_bit_for_bit():
    """A batch of rollouts, each with its own contacts, gives each rollout's numbers bit for bit;
    and step() in a loop, warm-started from its last result, gives simulate()'s."""
    box = box_model()
    env = screwdyn.Environment(screwdyn.Ground(friction=0.5, restitution=0.3))
    Q0 = np.array([[0, 0, 0.025, 0, 0, 0, 1], [0, 0, 0.2, 0, 0, 0, 1], [0, 0, 0.4, 0.0, 0.38268343, 0, 0.92387953]])
    V0 = np.array([[0, 0, 0, 1.0, 0, 0], [0, 0, 0, 0, 0, 0], [2.0, 0, 0, 0, 0.5, 0]])
    batch = screwdyn.simulate(box, Q0, V0, 0.5, 1e-3, environment=env)
    for k in range(3):
        one = screwdyn.simulate(box, Q0[k], V0[k], 0.5, 1e-3, environment=env)
        assert np.array_equal(batch[k].q, one.q) and np.array_equal(batch[k].contacts.data, one.contacts.data)
    q, qd, last = Q0[2], V0[2], None
    for k in range(100):
        last = step(box, q, qd, None, 1e-3, env, warm_start=last)
        q, qd = last.q, last.qd
        assert np.array_equal(q, batch[2].q[k + 1]) and np.array_equal(last.contacts.data, batch[2].contacts.data[k])
    many = step(box, batch.q[:, 50], batch.qd[:, 50], None, 1e-3, env)
    assert isinstance(many, StepResult) and many.q.shape == (3, 7) and many.contacts.data.shape[0] == 3


def test_hard_joint_limits_and_joint_dry_friction_are_rows_of_the_problem():
    """A pendulum swung into hard limits stays within them (rigid rows: no soft spring); a wheel
    with dry friction f_c sticks under a torque below f_c and accelerates at (tau - f_c) / I above it."""
    pend = screwdyn.models.load("pendulum")
    limited = pend.replace(q_lower=np.array([-0.5]), q_upper=np.array([0.5]), damping=np.array([0.0]))
    traj = screwdyn.simulate(limited, [0.3], [3.0], 2.0, 1e-3, joint_limits="hard")
    assert traj.q.max() <= 0.5 + 1e-12 and traj.q.min() >= -0.5 - 1e-12
    assert traj.q.max() > 0.5 - 1e-9 and np.abs(traj.solver["joint_torques"][:, 0]).max() > 0
    wheel = pend.replace(gravity=np.zeros(3), damping=np.array([0.0]), friction=np.array([1.0]))
    inertia = screwdyn.mass_matrix(wheel, [0.0])[0, 0]
    for tau in (0.5, 2.0):
        traj = screwdyn.simulate(wheel, [0.0], [0.0], 0.5, 1e-3, tau=tau, joint_limits="hard")
        assert traj.qdd[5, 0] == pytest.approx(max(tau - 1.0, 0.0) / inertia, abs=1e-9)
        assert traj.solver["joint_torques"][5, 1, 0] == pytest.approx(-min(tau, 1.0))


def four_bar():
    """Three links in the x-z plane (hinges about y, 0.4 m each); the tip is joined to the base by
    a PointLoop: a four-bar linkage of one degree of freedom."""
    b = screwdyn.ModelBuilder("fourbar")
    parent = "base"
    for i in range(3):
        T = np.eye(4)
        T[0, 3] = 0.4 if i else 0.0
        b.add_body(f"l{i}", parent, f"j{i}", "revolute", axis=(0, 1, 0), origin=T, mass=1.0, com=(0.2, 0, 0),
                   inertia=np.diag([1e-3, 0.0143, 0.0143]))
        parent = f"l{i}"
    T = np.eye(4)
    T[0, 3] = 0.4
    b.add_frame("tip", "l2", T)
    return b.build()


def test_a_closed_loop_holds_in_the_same_problem():
    """A four-bar (a PointLoop between its tip and the base) stepped as a contact problem (its
    bilateral rows with the contacts'; without contacts simulate takes the constrained rollouts of
    tests/test_constrained.py), swinging under gravity for 2 s: the
    velocity-level rows with their position correction keep the loop closed to 0.1 mm at dt = 1 ms
    (1e-6 m at 0.1 ms: first order in dt), and the energy, conserved by the linkage, stays within
    3 % of the kinetic energy it trades at 1 ms, 0.3 % at 0.1 ms (semi-implicit Euler's bounded
    oscillation, first order in dt)."""
    model = four_bar()
    q0 = np.array([0.5, -1.2, -1.4])
    tip0 = screwdyn.frame_pose(model, q0, "tip")[:3, 3]
    loop = screwdyn.PointLoop(model, "tip", "base", offset_b=tip0)
    for dt, closure in ((1e-3, 1e-4), (1e-4, 1e-6)):
        traj = screwdyn.simulate(model, q0, None, 2.0, dt, constraints=[loop], contact_settings=ContactSettings())
        assert traj.solver is not None                             # (the contact step, not the constrained rollouts)
        tips = screwdyn.frame_pose(model, traj.q, "tip")[:, :3, 3]
        assert np.abs(tips - tip0).max() < closure
        assert np.ptp(traj.q[:, 0]) > 0.5                         # it swings
        E = traj.total_energy
        assert np.abs(E - E[0]).max() < 0.03 * traj.kinetic_energy.max() * (dt / 1e-3)


def test_without_an_environment_simulate_is_unchanged_and_wrong_uses_are_named():
    """No environment, hard limit or contact settings: the smooth integrators as before, no contact
    records. Contacts with another integrator, a wrong warm start, wrong settings: InputErrors
    that say what to do."""
    arm = screwdyn.models.load("planar_2r")
    traj = screwdyn.simulate(arm, [0.1, 0.2], None, 0.05, 1e-3)
    assert traj.integrator == "rk4" and traj.contacts is None and traj.solver is None
    env = screwdyn.Environment(screwdyn.Ground())
    with pytest.raises(InputError, match="semi_implicit_euler"):
        screwdyn.simulate(ball_model(), [0, 0, 0.1, 0, 0, 0, 1], None, 0.01, 1e-3, environment=env, integrator="rk4")
    with pytest.raises(InputError, match="tolerance"):
        step(ball_model(), [0, 0, 0.1, 0, 0, 0, 1], np.zeros(6), None, 1e-3, env,
             contact_settings=ContactSettings(tolerance=-1.0))
    with pytest.raises(InputError, match="warm_start"):
        step(ball_model(), [0, 0, 0.1, 0, 0, 0, 1], np.zeros(6), None, 1e-3, env, warm_start=np.zeros(3))


def test_a_compliant_contact_rests_at_its_static_deflection():
    """Compliance (stiffness k, damping c per unit of the contact's effective mass, 1/m for a ball):
    a ball rests g / k deep, its weight carried; MuJoCo's solref (0.02 s, 1) with solimp's dmax
    0.95 is k = 1 / (0.95 * 0.02)^2."""
    env = screwdyn.Environment(screwdyn.Ground())
    for compliance, k in (((1e4, 200.0), 1e4), ("solref", 1 / (0.95 * 0.02) ** 2)):
        traj = screwdyn.simulate(ball_model(), [0, 0, 0.1, 0, 0, 0, 1], None, 2.0, 1e-3, environment=env,
                                 contact_settings=ContactSettings(compliance=compliance))
        assert 0.1 - traj.q[-1, 2] == pytest.approx(G / k, rel=1e-6)
        assert traj.contacts.total_force()[-1, 2] == pytest.approx(G, rel=1e-9)
