"""Contact simulation against independent solvers and simulators: Pinocchio 4.1's
ADMMConstraintSolver on the same contact problems (assembled here in NumPy from screwdyn's public
functions), and MuJoCo on the same scenes (gymnasium's ant and humanoid, with MuJoCo's stiffest
stable contacts)."""
from pathlib import Path

import numpy as np
import pytest

import screwdyn
from contact_problems import pinocchio_admm, problem
from screwdyn.algorithms.cone import NORMAL, TANGENT
from screwdyn.algorithms.ncp import WORK_ROWS, admm
from screwdyn.algorithms.target import ONE, njit
from screwdyn.geometry import Collision

pin = pytest.importorskip("pinocchio")


@njit(cache=False, **ONE)
def _admm(G, R, g, kind, param, m, tol, max_iter, rho, lam, C, A, W):
    return admm(G, R, g, kind, param, m, tol, max_iter, rho, lam, C, A, W)


def solve_ours(G, g, mu, tol=1e-12):
    m = len(g)
    kind = np.tile([NORMAL, TANGENT, TANGENT], m // 3).astype(float)
    param = np.repeat(mu, 3) * np.tile([1.0, 0.0, 0.0], m // 3)
    lam = np.zeros(m)
    it, res, _ = _admm(G, np.zeros(m), g, kind, param, m, tol, 5000, 0.0, lam, np.empty((m, m)), np.empty((m, m)),
                       np.empty((WORK_ROWS, m)))
    return lam, res


def test_the_solver_matches_pinocchio_admm_on_random_cone_problems(rng):
    """Random Delassus matrices (full rank) and free velocities, one to five contacts: the same
    impulses as Pinocchio's ADMMConstraintSolver to 1e-8 (both solved to a residual of 1e-12)."""
    for _ in range(6):
        nc = int(rng.integers(1, 6))
        m = 3 * nc
        A = rng.normal(size=(m, m + 4))
        G, g, mu = A @ A.T / m, rng.normal(size=m), rng.uniform(0.2, 1.2, nc)
        ours, res = solve_ours(G, g, mu)
        theirs, converged = pinocchio_admm(G, g, mu)
        assert converged and res <= 1e-12
        assert np.abs(ours - theirs).max() < 1e-8 * max(1.0, np.abs(theirs).max())


def quadruped_on_balls():
    """Solo12 whose feet are balls of 2 cm (four contacts, twelve rows on eighteen degrees of
    freedom: a problem of unique solution)."""
    solo = screwdyn.models.load("solo12")
    feet = tuple(Collision(f"{leg}_FOOT", "sphere", np.eye(4), (0.02,)) for leg in ("FL", "FR", "HL", "HR"))
    return solo.replace(collisions=feet)


@pytest.mark.parametrize("push", [0.0, 3.0])
def test_a_steps_forces_match_pinocchio_on_the_same_problem(push):
    """Solo12 on ball feet touching the ground, its joints driven (and, for push, its base
    shoved sideways so that feet slide): the contact problem assembled in NumPy from screwdyn's
    mass matrix, bias torques and Jacobians, solved by Pinocchio's ADMM, gives the forces step()
    reports (solved to 1e-10 m/s), to 1e-6 of the largest; feet slide (on the cone's edge), some lift."""
    solo = quadruped_on_balls()
    env = screwdyn.Environment(screwdyn.Ground(friction=0.7))
    home = np.array([0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6])
    q = np.r_[0, 0, 0.0, 0, 0, 0, 1, home]
    feet = [screwdyn.frame_pose(solo, q, f"{leg}_FOOT")[2, 3] for leg in ("FL", "FR", "HL", "HR")]
    q[2] = 0.02 - min(feet)
    qd = np.zeros(18)
    qd[4] = push
    tau = np.r_[np.zeros(6), np.tile([0.5, -1.0, 0.8], 4)]
    ours = screwdyn.step(solo, q, qd, tau, 1e-3, env, contact_settings=screwdyn.ContactSettings(tolerance=1e-10))
    G, g, mu, rows = problem(solo, q, qd, tau, 1e-3, env)
    theirs, converged = pinocchio_admm(G, g, mu)
    assert converged and len(rows) == 4
    F = ours.contacts.local_force[ours.contacts.active].reshape(-1)
    assert np.abs(F - theirs / 1e-3).max() < 1e-6 * np.abs(F).max()
    lam = theirs.reshape(4, 3)
    sliding = np.linalg.norm(lam[:, 1:], axis=1) >= 0.7 * lam[:, 0] * (1 - 1e-9)
    assert sliding.any() and (lam[:, 0] > 0).sum() >= 2


GYM = Path(__import__("gymnasium").__file__).parent / "envs/mujoco/assets" if pytest.importorskip("gymnasium") else None


def mujoco_rest(xml, qpos, seconds, dt=1e-3):
    """MuJoCo from ``qpos`` for ``seconds`` with its stiffest stable contacts and joint limits at
    ``dt`` (solref (2 dt, 1), solimp (0.99, 0.99, 1 mm): screwdyn's default joint limits are this
    solref's), elliptic cones and Euler steps as screwdyn's: the final ``qpos``, its contacts' total
    normal force, the robot's weight and the largest joint speed."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(str(xml))
    m.opt.timestep, m.opt.cone, m.opt.integrator = dt, mujoco.mjtCone.mjCONE_ELLIPTIC, mujoco.mjtIntegrator.mjINT_EULER
    m.geom_solref[:] = m.jnt_solref[:] = [2 * dt, 1.0]
    m.geom_solimp[:] = m.jnt_solimp[:] = [0.99, 0.99, 0.001, 0.5, 2.0]
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    for _ in range(int(round(seconds / dt))):
        mujoco.mj_step(m, d)
    f, total = np.zeros(6), 0.0
    for i in range(d.ncon):
        mujoco.mj_contactForce(m, d, i, f)
        total += f[0] * d.contact[i].frame[2]
    return d.qpos.copy(), total, m.body_mass.sum() * 9.81, np.abs(d.qvel).max()


ANT_DROP = [0, 0, 0.75, 1, 0, 0, 0, 0, 1, 0, -1, 0, -1, 0, 1]      # gymnasium's init_qpos, MuJoCo's layout
HUMANOID_LYING = [0, 0, 0.15, np.cos(np.pi / 4), 0, -np.sin(np.pi / 4), 0]   # on its back, 5 cm up


@pytest.mark.parametrize("name, seconds", [("ant", 3.0), ("humanoid", 8.0)])
def test_gymnasiums_ant_and_humanoid_come_to_rest_where_mujoco_does(name, seconds):
    """Gymnasium's ant (a quadruped) dropped from its start pose and its humanoid dropped limp on
    its back, on their own floor (model.environment from the MJCF): screwdyn's rigid contacts and
    MuJoCo's stiffest bring them to rest at the same base height (within 1 cm: ant 0.1 mm,
    humanoid 1.1 mm; dropped from higher its limbs settle differently, and the torso's rest
    height with them: 1.2 cm apart from 15 cm up), and at rest the contacts of both carry the
    robot's weight to 0.1 %."""
    import warnings

    import mujoco

    xml = GYM / f"{name}.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = screwdyn.load_mjcf(xml)
    qpos = mujoco.MjModel.from_xml_path(str(xml)).qpos0.copy()
    start = ANT_DROP if name == "ant" else HUMANOID_LYING
    qpos[:len(start)] = start
    traj = screwdyn.simulate(model, screwdyn.from_mujoco(model, qpos)[0], None, seconds, 1e-3)
    theirs, their_force, weight, their_speed = mujoco_rest(xml, qpos, seconds)
    assert their_speed < 1e-2 and np.abs(traj.qd[-1]).max() < 1e-3            # both at rest
    assert abs(traj.q[-1, 2] - theirs[2]) < 0.01
    assert abs(their_force - weight) < 1e-3 * weight
    assert abs(traj.contacts.total_force()[-1, 2] - weight) < 1e-3 * weight
    assert traj.solver["residual"].max() <= screwdyn.ContactSettings().tolerance * 1000
