"""simulate under constraints (screwdyn.sim with constraints=, model.constraints;
algorithms/constrained_rollout.py; docs/theory.md §15.9): a frictionless closed four-bar keeps its
energy and its loop over 10 s, a floating robot with a welded foot keeps the foot in place, batches
equal single rollouts, and what the constrained rollouts do not do is refused by name.
About 1 min cold (the constrained rollout kernel compiles), 2 s warm."""
import runpy
from pathlib import Path

import numpy as np
import pytest

import screwdyn
from screwdyn.errors import InputError
from screwdyn.symbolic.examples import four_bar

EXAMPLES = runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "symbolic_worked_examples.py"))


@pytest.fixture(scope="module")
def bar():
    """The worked example's four-bar, numeric, closed by a PointLoop on model.constraints; an
    assembled state moving along its one freedom."""
    model, s = four_bar()
    numbers = {s.L1: 0.3, s.L2: 1.0, s.L3: 0.8, s.d: 1.0, s.m1: 1.0, s.m2: 2.0, s.m3: 1.5, s.g: 9.81}
    numeric = model.subs(numbers).to_model()
    loop = screwdyn.PointLoop(numeric, "tip", "base", offset_b=(1.0, 0.0, 0.0))
    closed = numeric.replace(constraints=(loop,))
    Q0 = np.array([EXAMPLES["assembled_four_bar"](0.3, 1.0, 0.8, 1.0, a) for a in (0.7, 1.5, 2.6)])
    QD0 = np.array([np.linalg.svd(screwdyn.constraint_jacobian(closed, q))[2][-1] * 3.0 for q in Q0])
    return numeric, loop, closed, Q0, QD0


def test_a_frictionless_four_bar_keeps_its_energy_and_its_loop(bar):
    numeric, loop, closed, Q0, QD0 = bar
    traj = screwdyn.simulate(closed, Q0[0], QD0[0], duration=10.0, dt=1e-3, friction=False)
    E = screwdyn.mechanical_energy(closed, traj.q, traj.qd)
    assert np.abs(E - E[0]).max() < 1e-6 * abs(E[0])
    assert np.abs(screwdyn.constraint_error(closed, traj.q)).max() < 1e-8
    info = traj.info["constraints"]
    assert info["rows"] == 3 and info["position"] < 1e-8 and info["velocity"] < 1e-8
    assert np.ptp(traj.q[:, 0]) > 1.0                      # it moved: the crank swung through a wide arc
    again = screwdyn.simulate(numeric, Q0[0], QD0[0], duration=0.5, dt=1e-3, friction=False, constraints=[loop])
    assert np.array_equal(again.q, traj.q[:501])           # model.constraints and constraints= alike


def test_batches_equal_single_rollouts(bar):
    _, _, closed, Q0, QD0 = bar
    tau = np.array([0.5, -0.2, 0.1])
    batch = screwdyn.simulate(closed, Q0, QD0, duration=0.3, dt=1e-3, tau=tau, integrator="semi_implicit_euler")
    assert batch.q.shape == (3, 301, 3) and batch.info["constraints"]["position"].shape == (3,)
    for k in range(3):
        one = screwdyn.simulate(closed, Q0[k], QD0[k], duration=0.3, dt=1e-3, tau=tau,
                                integrator="semi_implicit_euler")
        assert np.array_equal(one.q, batch.q[k]) and np.array_equal(one.qdd, batch.qdd[k])
    assert np.all(batch.info["constraints"]["position"] < 1e-8)


@pytest.mark.parametrize("anchored", [True, False])
def test_a_floating_robot_with_a_welded_foot_keeps_it_in_place(anchored):
    """A foot welded where it stands (its anchor: the pose held, corrected by the projection), or
    without an anchor (its velocity held: the pose drifts by the integrator's error only)."""
    solo = screwdyn.models.load("solo12")
    q0 = screwdyn.models.home("solo12")
    held = screwdyn.frame_pose(solo, q0, "FL_FOOT")
    weld = screwdyn.FrameContact(solo, "FL_FOOT", reference="world", anchor=held if anchored else None)
    traj = screwdyn.simulate(solo, q0, None, duration=0.5, dt=1e-3, joint_limits=False, constraints=weld)
    poses = screwdyn.frame_pose(solo, traj.q, "FL_FOOT")
    assert np.abs(poses - held).max() < (1e-12 if anchored else 1e-7)    # the foot stays welded
    assert np.abs(traj.q[-1, :3] - q0[:3]).max() > 1e-3                   # while the body falls about it
    assert traj.info["constraints"]["velocity"] < 1e-10


def test_what_the_constrained_rollouts_do_not_do_is_refused(bar):
    numeric, loop, closed, Q0, QD0 = bar
    run = lambda model=closed, **kw: screwdyn.simulate(model, Q0[0], QD0[0], duration=0.01, dt=1e-3, **kw)
    with pytest.raises(InputError, match="integrator 'RK45'"):
        run(integrator="RK45")
    with pytest.raises(InputError, match="method 'crba'"):
        run(method="crba")
    with pytest.raises(InputError, match="hold=True"):
        run(tau=lambda t, q, qd: np.zeros_like(qd))
    limited = closed.replace(q_lower=np.full(3, -4.0), q_upper=np.full(3, 4.0))
    with pytest.raises(InputError, match="joint_limits=False"):
        run(limited)
    assert run(limited, joint_limits=False).q.shape == (11, 3)
    assert run(tau=lambda t, q, qd: np.zeros_like(qd), hold=True).q.shape == (11, 3)
    with pytest.raises(InputError, match="at most 6 constraint rows"):
        run(numeric, constraints=[screwdyn.FrameLoop(numeric, "tip", "base")] * 2)
