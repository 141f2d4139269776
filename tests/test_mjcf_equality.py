"""MuJoCo's ``<equality>`` constraints as screwdyn constraints (screwdyn.io.mjcf_equality).

The position error of each constraint, computed from the frames and numbers the loader put on
``model.constraints``, must be MuJoCo's own ``efc_pos`` of that equality at random states (the
MuJoCo semantics of each kind: anchors, ``relpose`` and the pose at ``qpos0``, ``qpos0`` offsets
of joint couplings, fixed-tendon lengths), on a hand-written model with every kind and on
MuJoCo's own test model."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import screwdyn
from screwdyn.errors import ModelError
from screwdyn.io.mjcf import MJCFWarning, from_mujoco_acceleration, load_mjcf

mujoco = pytest.importorskip("mujoco", reason="the MJCF loader needs MuJoCo: pip install 'screwdyn[mjcf]'")

EVERY_KIND = """<mujoco><worldbody>
  <site name="ws" pos="0.3 0.2 1" euler="10 20 30"/>
  <body name="a" pos="0 0 1"><joint name="ja" axis="0 1 0" ref="0.2"/>
    <geom type="capsule" size=".05" fromto="0 0 0 .5 0 0" mass="1"/><site name="sa" pos="0.5 0 0" euler="0 30 0"/>
    <body name="b" pos=".5 0 0"><joint name="jb" axis="0 1 0"/>
      <geom type="capsule" size=".05" fromto="0 0 0 .5 0 0" mass="1"/><site name="sb" pos="0.5 0 0"/></body></body>
  <body name="c" pos="1 0 1" euler="0 0 20"><joint name="jc" type="slide" axis="1 0 0" ref="0.1"/>
    <joint name="jd" axis="0 1 0"/><geom size=".05" mass="1"/><site name="sc" pos="0 0.1 0"/></body>
  <body name="f" pos="0 1 1"><freejoint name="ff"/><geom size=".1" mass="2"/><site name="sf" pos=".1 0 0" euler="5 0 0"/></body>
</worldbody>
<tendon><fixed name="t1"><joint joint="ja" coef="1"/><joint joint="jb" coef="-0.5"/></fixed>
  <fixed name="t2"><joint joint="jd" coef="2"/><joint joint="ja" coef="0.3"/></fixed></tendon>
<equality>
  <connect name="c_body" body1="b" body2="c" anchor="0.5 0 0"/>
  <connect name="c_site" site1="sb" site2="sc"/>
  <weld name="w_body" body1="a" body2="f" anchor="0 0.1 0"/>
  <weld name="w_rel" body1="world" body2="f" relpose="0 1 1 0.9 0.1 0.2 0.3"/>
  <weld name="w_site" site1="ws" site2="sf"/>
  <weld name="w_free" body1="c" body2="f" anchor="0.1 0 0" torquescale="0"/>
  <joint name="j_lin" joint1="jd" joint2="ja" polycoef="0.1 -2 0 0 0"/>
  <joint name="j_lock" joint1="jc" polycoef="0.05 0 0 0 0"/>
  <tendon name="t_lin" tendon1="t1" tendon2="t2" polycoef="0.2 0.5 0 0 0"/>
</equality></mujoco>"""


@pytest.fixture(autouse=True)
def _mujoco_logs_elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _quat_vector(R):
    q = np.empty(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R).reshape(9))
    return q[1:] * np.sign(q[0] or 1.0)


def screwdyn_errors(model, q):
    """Each constraint's position error as MuJoCo writes ``efc_pos``: world position differences,
    a weld's rotation as the vector part of its error quaternion (up to sign), a coupling's
    ``k . q - offset``; from the constraint's documented fields and screwdyn's frame poses."""
    out = []
    for c in model.constraints:
        if isinstance(c, screwdyn.JointCoupling):
            out.append(np.array([c.coefficients @ q - c.offset]))
            continue
        fa, fb = c.frame_a, c.frame_b
        Ta, Tb = screwdyn.frame_pose(model, q, fa), screwdyn.frame_pose(model, q, fb)
        if isinstance(c, screwdyn.PointLoop):
            out.append(Ta[:3, :3] @ c.offset_a + Ta[:3, 3] - Tb[:3, :3] @ c.offset_b - Tb[:3, 3])
        else:
            Tc = Ta @ c.T_a_b
            out.append(np.concatenate([Tc[:3, 3] - Tb[:3, 3], _quat_vector(Tb[:3, :3].T @ Tc[:3, :3])]))
    return out


def mujoco_errors(m, qpos):
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    rows = np.flatnonzero(d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
    return [d.efc_pos[rows[d.efc_id[rows] == i]] for i in range(m.neq) if m.eq_active0[i]]


def random_qpos(m, rng):
    qpos = m.qpos0 + rng.uniform(-1, 1, m.nq)
    for j in range(m.njnt):
        if m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            a = m.jnt_qposadr[j] + (3 if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 0)
            qpos[a:a + 4] = rng.normal(size=4)
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    return qpos


def check_errors(model, m, rng, states=4):
    worst = 0.0
    for _ in range(states):
        qpos = random_qpos(m, rng)
        q = screwdyn.from_mujoco(model, qpos)[0]
        for c, ours, theirs in zip(model.constraints, screwdyn_errors(model, q), mujoco_errors(m, qpos)):
            if ours.size == 3 and theirs.size == 6:   # a weld of torquescale 0: MuJoCo's rotation rows are zero
                assert not theirs[3:].any()
                theirs = theirs[:3]
            assert ours.shape == theirs.shape, c
            if ours.size == 6:   # a quaternion's vector part is defined up to its sign
                theirs = np.concatenate([theirs[:3], theirs[3:] * np.sign(theirs[3:] @ ours[3:] or 1.0)])
            worst = max(worst, np.abs(ours - theirs).max())
    return worst


def test_every_kind_maps_to_a_constraint_with_mujocos_error(rng):
    m = mujoco.MjModel.from_xml_string(EVERY_KIND)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MJCFWarning)
        model = load_mjcf(EVERY_KIND)
    kinds = [(c.name, type(c).__name__, c.size) for c in model.constraints]
    assert kinds == [("c_body", "PointLoop", 3), ("c_site", "PointLoop", 3), ("w_body", "FrameLoop", 6),
                     ("w_rel", "FrameLoop", 6), ("w_site", "FrameLoop", 6), ("w_free", "PointLoop", 3),
                     ("j_lin", "JointCoupling", 1), ("j_lock", "JointCoupling", 1), ("t_lin", "JointCoupling", 1)]
    assert check_errors(model, m, rng) < 1e-12
    j_lin = model.constraints[6]   # jd - (-2) ja = 0.1 + qpos0_jd - (-2) qpos0_ja (ja's ref is 0.2 degrees)
    assert j_lin.coefficients[model.joint_index("jd")] == 1.0 and j_lin.coefficients[model.joint_index("ja")] == 2.0
    assert j_lin.offset == pytest.approx(0.1 + 2 * np.radians(0.2), abs=1e-15)


def test_mujoco_own_test_model_weld(rng):
    m = mujoco.MjModel.from_xml_path(str(Path(mujoco.__file__).parent / "testdata" / "model.xml"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MJCFWarning)   # springs, tendons, fluid forces: test_mjcf.py checks them
        model = load_mjcf(m)
    (weld,) = model.constraints
    assert isinstance(weld, screwdyn.FrameLoop) and weld.name == "equality0"
    assert check_errors(model, m, rng) < 1e-12


def test_a_spatial_tendon_coupling_is_refused():
    extra = ('<tendon><spatial name="s"><site site="s1"/><site site="s2"/></spatial></tendon>'
             '<equality><tendon tendon1="s"/></equality>')
    message = "tendon coupling equality constraint number 0: tendon 's' is a spatial tendon"
    xml = EVERY_KIND.split("<tendon>")[0].replace('<freejoint name="ff"/>', '<freejoint name="fj"/><site name="s1"/>')
    xml = xml.replace('<site name="sc"', '<site name="s2"/><site name="sc"') + extra + "</mujoco>"
    for strict in (False, True):
        with pytest.raises(ModelError, match=message):
            load_mjcf(xml, strict=strict)


def test_a_coupling_of_degree_two_is_dropped_with_a_warning_or_refused():
    xml = EVERY_KIND.split("<tendon>")[0] + ('<equality><joint name="quad" joint1="jd" joint2="ja" polycoef="0 1 0.5 0 0"/>'
                                             '<joint name="lin" joint1="jd" joint2="ja"/></equality></mujoco>')
    with pytest.warns(MJCFWarning, match="joint coupling equality constraint 'quad': a polynomial of degree above one"):
        model = load_mjcf(xml)
    assert [c.name for c in model.constraints] == ["lin"]
    with pytest.raises(ModelError, match="strict=True refuses .*'quad'"):
        load_mjcf(xml, strict=True)


STIFF = """<mujoco><option timestep="1e-4"><flag contact="disable"/></option>
<default><equality solref="0.0002 1" solimp="0.9999 0.9999 0.001 0.5 2"/></default>
<worldbody>
  <body name="l1"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
    <body name="l2" pos="0.3 0 0" euler="0 -60 0"><joint name="j2" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1"/></body></body>
  <body name="l3" pos="0.6 0 0"><joint name="j3" type="ball"/>
    <geom type="capsule" fromto="0 0 0 0 0.1 0.4" size="0.02" mass="1"/></body>
  <body name="l4" pos="0 0 -1"><joint name="j4" type="slide" axis="0 0 1"/><geom size="0.05" mass="0.5"/>
    <body name="l5" pos="0.2 0 0"><joint name="j5" axis="1 0 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" mass="0.3"/></body></body>
</worldbody>
<equality><connect name="loop" body1="l2" body2="l3" anchor="0.5 0 0"/>
  <joint name="gear" joint1="j5" joint2="j1" polycoef="0 -0.5 0 0 0"/>
  <weld name="hold" body1="world" body2="l4" torquescale="0"/></equality></mujoco>"""


@pytest.mark.skipif(not hasattr(screwdyn, "constrained_forward_dynamics"),
                    reason="the constrained dynamics (branch constraints) are not merged yet")
def test_stiff_mujoco_moves_as_the_exact_constraints(rng):
    """MuJoCo's equalities made stiff (solref 2e-4 s, solimp 0.9999) at an assembled state with
    velocities along the constraints: its qacc is screwdyn's constrained forward dynamics to the
    accuracy of its soft constraints (their impedance 0.9999 leaves ~1e-4 of the constraint force;
    measured 2e-5 to 5e-5 relative). The weld of torquescale 0 holds a slider's point, so two of its
    rows are redundant (J has rank 5 of 7)."""
    m = mujoco.MjModel.from_xml_string(STIFF)
    model = load_mjcf(STIFF)
    assert [type(c).__name__ for c in model.constraints] == ["PointLoop", "JointCoupling", "PointLoop"]
    q = screwdyn.from_mujoco(model, m.qpos0)[0]
    assert np.abs(screwdyn.constraint_error(model, q)).max() < 1e-14
    J = screwdyn.constraint_jacobian(model, q)
    rank = np.linalg.matrix_rank(J)
    assert J.shape == (7, 7) and rank == 5
    qd = np.linalg.svd(J)[2][rank:].T @ rng.normal(size=model.nv - rank)
    tau = rng.normal(size=model.nv)
    qdd, lam = screwdyn.constrained_forward_dynamics(model, q, qd, tau)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = screwdyn.to_mujoco(model, q, qd, tau)
    mujoco.mj_forward(m, d)
    theirs = from_mujoco_acceleration(model, d.qpos, d.qvel, d.qacc)
    assert np.abs(qdd - theirs).max() < 2e-4 * np.abs(qdd).max()
