"""Tests of the MJCF loader (screwdyn.io.mjcf) against MuJoCo itself.

MuJoCo computes, on models no one here wrote (gymnasium's, dm_control's, MuJoCo's own test
model) and on hand-written ones: the mass matrix (``mj_fullM``, armature included), the bias
forces ``qfrc_bias = C qd + g``, inverse dynamics (``mj_inverse``, with and without joint
damping), forward dynamics (``qacc``), kinetic and potential energy, the centre of mass, the
centroidal momentum (``mj_subtreeVel``) and every body's and site's pose; screwdyn's, through
the documented layout conversion, must agree to 1e-10 relative. Contacts, constraints, springs,
fluid forces and actuators are switched off in MuJoCo for the comparison: screwdyn does not model
them (the loader warns about springs and fluid forces)."""
from __future__ import annotations

import doctest
import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import screwdyn
from screwdyn import models
from screwdyn.errors import InputError, ModelError
from screwdyn.io import mjcf
from screwdyn.io.mjcf import (
    MJCFWarning,
    from_mujoco_acceleration,
    load_mjcf,
    to_mujoco_acceleration,
)

mujoco = pytest.importorskip("mujoco", reason="the MJCF loader needs MuJoCo: pip install 'screwdyn[mjcf]'")

TOL = 1e-10


@pytest.fixture(autouse=True)
def _mujoco_logs_elsewhere(tmp_path, monkeypatch):
    """MuJoCo appends its compiler warnings to MUJOCO_LOG.TXT in the working directory."""
    monkeypatch.chdir(tmp_path)


# ---------------------------------------------------------------------------- MuJoCo's side
def _off(m, damper):
    """Switch off in ``m`` what screwdyn does not model; record energies."""
    flags = mujoco.mjtDisableBit
    m.opt.disableflags |= (flags.mjDSBL_CONTACT | flags.mjDSBL_CONSTRAINT | flags.mjDSBL_SPRING | flags.mjDSBL_DAMPER
                           | flags.mjDSBL_ACTUATION)   # servos push even at ctrl = 0
    if damper:
        m.opt.disableflags &= ~int(flags.mjDSBL_DAMPER)
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    m.opt.density, m.opt.viscosity = 0.0, 0.0
    m.opt.wind[:] = 0.0
    m.body_gravcomp[:] = 0.0


def mujoco_terms(m, qpos, qvel, qacc, qfrc_applied, damper=False):
    """MuJoCo's M, qfrc_bias, qfrc_inverse, qacc (forward dynamics under ``qfrc_applied``),
    energies, body and site poses at one state."""
    _off(m, damper)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc_applied
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    out = {"M": M, "bias": d.qfrc_bias.copy(), "qacc": d.qacc.copy(), "energy": d.energy.copy(),
           "xpos": d.xpos.copy(), "xmat": d.xmat.reshape(-1, 3, 3).copy(), "xipos": d.xipos.copy(),
           "site_xpos": d.site_xpos.copy(), "site_xmat": d.site_xmat.reshape(-1, 3, 3).copy()}
    mujoco.mj_subtreeVel(m, d)   # momentum of the world's subtree about its centre of mass (welded bodies in)
    out.update(com=d.subtree_com[0].copy(), linear=m.body_subtreemass[0] * d.subtree_linvel[0],
               angular=d.subtree_angmom[0].copy())
    d.qacc[:] = qacc
    mujoco.mj_inverse(m, d)
    out["inverse"] = d.qfrc_inverse.copy()
    return out


def rel(a, b):
    """Largest entry of ``a - b`` relative to the largest of ``b``."""
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def random_state(m, rng):
    """A random state of MuJoCo model ``m``: joint angles about ``qpos0``, quaternions not of unit
    length (both sides normalise them), velocities, accelerations and forces."""
    qpos = m.qpos0 + 0.6 * rng.standard_normal(m.nq)
    return qpos, rng.standard_normal(m.nv), rng.standard_normal(m.nv), rng.standard_normal(m.nv)


def to_mujoco_force(model, q, tau):
    return screwdyn.to_mujoco(model, q, force=tau)[2]


def check_against_mujoco(model, m, rng, states=3):
    """The worst relative disagreement per quantity over a few random states of the MjModel ``m``
    and the screwdyn ``model`` loaded from it."""
    worst = dict.fromkeys(("M", "bias", "inverse", "inverse_damped", "qacc", "kinetic", "potential", "poses",
                           "com", "momentum"), 0.0)
    static = None   # potential energy of the bodies welded to the world (not part of the screwdyn model)
    for _ in range(states):
        qpos, qvel, qacc, qfrc = random_state(m, rng)
        ref = mujoco_terms(m, qpos, qvel, qacc, qfrc)
        q, v, _ = screwdyn.from_mujoco(model, qpos, qvel)
        qdd = from_mujoco_acceleration(model, qpos, qvel, qacc)
        A = screwdyn.from_mujoco(model, qpos, np.eye(m.nv))[1].T   # v = A qvel
        worst["M"] = max(worst["M"], rel(A.T @ screwdyn.mass_matrix(model, q) @ A, ref["M"]))
        qdd_0 = from_mujoco_acceleration(model, qpos, qvel, np.zeros(m.nv))   # qacc = 0 is not qdd = 0
        bias = to_mujoco_force(model, q, screwdyn.inverse_dynamics(model, q, v, qdd_0))
        worst["bias"] = max(worst["bias"], rel(bias, ref["bias"]))
        tau = screwdyn.inverse_dynamics(model, q, v, qdd)
        worst["inverse"] = max(worst["inverse"], rel(to_mujoco_force(model, q, tau), ref["inverse"]))
        tau_fd = screwdyn.from_mujoco(model, qpos, qfrc=qfrc)[2]
        qacc_sd = to_mujoco_acceleration(model, q, v, screwdyn.forward_dynamics(model, q, v, tau_fd))
        worst["qacc"] = max(worst["qacc"], rel(qacc_sd, ref["qacc"]))
        if static is None:
            static = sum(-m.body_mass[b] * m.opt.gravity @ ref["xipos"][b] for b in range(1, m.nbody)
                         if m.body_weldid[b] == 0)
        kinetic, potential = ref["energy"][1], ref["energy"][0]
        worst["kinetic"] = max(worst["kinetic"], abs(screwdyn.kinetic_energy(model, q, v) - kinetic) / abs(kinetic))
        worst["potential"] = max(worst["potential"], abs(screwdyn.potential_energy(model, q) + static - potential)
                                 / max(abs(potential), abs(static), 1e-300))
        poses = [(name, ref["xpos"][b], ref["xmat"][b]) for b, name in enumerate(body_names(m))]
        poses += [(name, ref["site_xpos"][s], ref["site_xmat"][s]) for s, name in site_frames(m)]
        size = max(1.0, np.max(np.abs(ref["xpos"])))
        for name, p, R in poses:
            T = screwdyn.frame_pose(model, q, name)
            worst["poses"] = max(worst["poses"], np.max(np.abs(T[:3, 3] - p)) / size, np.max(np.abs(T[:3, :3] - R)))
        if model.total_mass > 0:   # MuJoCo's centre of mass counts the bodies welded to the world too
            moving = [b for b in range(1, m.nbody) if m.body_weldid[b] != 0]
            com = sum(m.body_mass[b] * ref["xipos"][b] for b in moving) / m.body_mass[moving].sum()
            worst["com"] = max(worst["com"], rel(screwdyn.center_of_mass(model, q), com))
            h = screwdyn.centroidal_momentum(model, q, v)                # about the moving bodies' CoM
            angular = h[:3] + np.cross(screwdyn.center_of_mass(model, q) - ref["com"], h[3:])
            worst["momentum"] = max(worst["momentum"], rel(np.concatenate([angular, h[3:]]),
                                                           np.concatenate([ref["angular"], ref["linear"]])))
        # joint damping: MuJoCo's passive -D qvel, screwdyn's damping * qd (isotropic on a free joint);
        # frictionloss is a constraint in MuJoCo, switched off here
        if np.any(m.dof_damping != 0) or np.any(m.actuator_damping != 0):
            ref = mujoco_terms(m, qpos, qvel, qacc, qfrc, damper=True)
            tau = tau + model.damping * v
            worst["inverse_damped"] = max(worst["inverse_damped"], rel(to_mujoco_force(model, q, tau), ref["inverse"]))
    return worst


def body_names(m):
    return [m.body(b).name or f"body{b}" for b in range(m.nbody)]


def site_frames(m):
    """``(site id, frame name)`` of the named sites: the site's name, ``"<name>:site"`` when a body has it."""
    bodies = set(body_names(m))
    return [(s, m.site(s).name + (":site" if m.site(s).name in bodies else "")) for s in range(m.nsite) if m.site(s).name]


def load_quietly(source, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MJCFWarning)
        return load_mjcf(source, **kwargs)


# ---------------------------------------------------------------------------- models no one here wrote
def _gymnasium_assets():
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or spec.origin is None:
        return []
    return sorted((Path(spec.origin).parent / "envs" / "mujoco" / "assets").glob("*.xml"))


GYM = _gymnasium_assets()


@pytest.mark.skipif(not GYM, reason="gymnasium (its MuJoCo models) is not installed: pip install gymnasium==1.4.0")
@pytest.mark.parametrize("path", GYM, ids=[p.stem for p in GYM])
def test_gymnasium_models_agree_with_mujoco(path, rng):
    m = mujoco.MjModel.from_xml_path(str(path))
    model = load_quietly(path)
    assert model.nq == m.nq and model.nv == m.nv
    assert model.joint_names == tuple(m.joint(j).name for j in range(m.njnt))
    assert np.allclose(model.gravity, m.opt.gravity)
    worst = check_against_mujoco(model, m, rng)
    assert max(worst.values()) < TOL, worst


def test_gymnasium_models_load_with_the_warnings_they_deserve():
    if not GYM:
        pytest.skip("gymnasium (its MuJoCo models) is not installed: pip install gymnasium==1.4.0")
    assets = GYM[0].parent
    with warnings.catch_warnings():
        warnings.simplefilter("error", MJCFWarning)
        ant = load_mjcf(assets / "ant.xml")        # nothing dropped
        hopper = load_mjcf(assets / "hopper.xml")
    assert (ant.nq, ant.nv, ant.joint_type[0]) == (15, 14, screwdyn.model.FREE_FLYER)
    assert np.all(ant.effort_limit[6:] == 150.0)    # ctrlrange 1 x gear 150
    assert np.all(ant.effort_limit[:6] == np.inf)
    assert hopper.joint_names[:3] == ("rootx", "rootz", "rooty")
    with pytest.warns(MJCFWarning, match=r"tendon 'left_hipknee' \(the actuators and sensors on it dropped\)"):
        load_mjcf(assets / "humanoid.xml")
    with pytest.warns(MJCFWarning, match=r"the springs \(stiffness\) of joints \['bthigh'"):
        load_mjcf(assets / "half_cheetah.xml")
    with pytest.raises(ModelError, match="strict=True refuses .* fluid forces"):
        load_mjcf(assets / "swimmer.xml", strict=True)


def _dm_control_suite():
    spec = importlib.util.find_spec("dm_control")
    if spec is None or spec.origin is None:
        return []
    return sorted((Path(spec.origin).parent / "suite").glob("*.xml"))


DMC = _dm_control_suite()
# Their tendon couplings (equality constraints, tests/test_mjcf_equality.py) are switched off: the tree is checked.
DMC_EQUALITY = {"manipulator", "quadruped", "stacker"}


@pytest.mark.skipif(not DMC, reason="dm_control (its suite models) is not installed")
@pytest.mark.parametrize("path", DMC, ids=[p.stem for p in DMC])
def test_dm_control_suite_models_agree_with_mujoco(path, rng):
    m = mujoco.MjModel.from_xml_path(str(path))
    if m.nv == 0:
        pytest.skip(f"{path.name} has no joints (its tasks build them)")
    if path.stem in DMC_EQUALITY:
        m.eq_active0[:] = 0
    model = load_quietly(m)
    worst = check_against_mujoco(model, m, rng)
    assert max(worst.values()) < TOL, worst


def _mujoco_test_model():
    return mujoco.MjModel.from_xml_path(str(Path(mujoco.__file__).parent / "testdata" / "model.xml"))


def test_mujoco_own_test_model(rng):
    """MuJoCo's test model: three free bodies, a ball, unnamed bodies and joints, a site named as
    its body, springs, tendons, gravcomp, fluid forces and a weld."""
    m = _mujoco_test_model()
    with pytest.warns(MJCFWarning):
        welded = load_mjcf(m)
    assert [type(c).__name__ for c in welded.constraints] == ["FrameLoop"]   # (tests/test_mjcf_equality.py)
    m.eq_active0[:] = 0
    with pytest.warns(MJCFWarning) as record:
        model = load_mjcf(m)
    (w,) = [r for r in record if r.category is MJCFWarning]   # (and the geoms left out of the collisions)
    for dropped in ("weld equality constraint number 0 (inactive", "tendon 'spatial' (length limit",
                    "tendon 'fixed' (the actuators", "actuator number 7 (drives a site", "springs (stiffness) of joints",
                    "fluid forces (<option density=1.225", "gravity compensation (gravcomp) of bodies ['head']"):
        assert dropped in str(w.message)
    assert "".join("RPFS"[t] for t in model.joint_type) == "FRRSRRRRRRPRFFFF"
    assert "body2" in model.frame_names and "joint0" in model.joint_names   # unnamed: MuJoCo's ids
    assert "head:site" in model.frame_names                                  # site 'head' on body 'head'
    worst = check_against_mujoco(model, m, rng)
    assert max(worst.values()) < TOL, worst
    with pytest.raises(ModelError, match="strict=True refuses"):
        load_mjcf(m, strict=True)


# ---------------------------------------------------------------------------- hand-written models
CHAIN = """
<mujoco model="chain">
  <compiler angle="degree" eulerseq="zyx"/>
  <option gravity="0.5 -1 -9"/>
  <default>
    <joint damping="0.3" armature="0.02"/>
    <default class="wheel"><joint damping="0.05" armature="0.5" frictionloss="0.2"/></default>
  </default>
  <worldbody>
    <site name="origin"/>
    <body name="base" pos="0.1 0.2 0.3" euler="10 20 30">
      <geom type="box" size="0.2 0.1 0.05" mass="3"/>
      <body name="upper" pos="0 0 0.2" quat="0.9 0.1 0.3 -0.2">
        <joint name="yaw" axis="0 0 1" pos="0.05 0.02 0.1" ref="20" range="-90 120"/>
        <joint name="lift" type="slide" axis="1 1 0" ref="0.1" range="-0.2 0.3"/>
        <joint name="pitch" axis="0 1 0.2" pos="0 0 -0.1"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0.1" size="0.04" density="900"/>
        <site name="upper_tip" pos="0.4 0 0.1" euler="0 90 0"/>
        <body name="lower" pos="0.4 0 0.1">
          <joint name="elbow" axis="1 0 0" ref="-35"/>
          <geom type="ellipsoid" size="0.1 0.05 0.03" pos="0.1 0 0" euler="30 0 10" mass="0.7"/>
          <body name="wheel" pos="0.2 0 0">
            <joint name="spin" class="wheel" axis="0 0.6 0.8" pos="0.05 0 0"/>
            <geom type="cylinder" size="0.08 0.02" pos="0.05 0 0" mass="0.4"/>
          </body>
          <body name="tip" pos="0.25 0.1 0"><geom type="sphere" size="0.03" mass="0.1"/></body>
        </body>
      </body>
      <body name="ball_link" pos="0 0.3 0">
        <joint name="shoulder" type="ball" pos="0.02 -0.05 0.1" damping="0.4"/>
        <geom type="box" size="0.1 0.03 0.02" pos="0.1 0 0" mass="0.5"/>
        <body name="forearm" pos="0.2 0 0">
          <joint name="wrist" type="ball" pos="0.03 0 0"/>
          <geom type="capsule" fromto="0 0 0 0 0.2 0" size="0.02" mass="0.3"/>
        </body>
      </body>
    </body>
    <body name="flyer" pos="1 2 3" quat="0 0.6 0 0.8">
      <freejoint name="flyer_root"/>
      <geom type="box" size="0.1 0.2 0.3" mass="2"/>
      <body name="flap" pos="0.1 0 0.3">
        <joint name="flap_hinge" axis="0 1 0" pos="0 0 0.05"/>
        <geom type="box" size="0.1 0.01 0.1" pos="0.1 0 0" mass="0.2"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="yaw" gear="50" ctrlrange="-2 2"/>
    <motor joint="yaw" gear="-10" ctrlrange="-1 3"/>
    <motor joint="elbow" gear="3" armature="0.1" damping="0.2"/>
    <position joint="pitch" kp="10" forcerange="-4 4" gear="2"/>
    <velocity joint="spin" kv="1"/>
  </actuator>
</mujoco>
"""


def test_hand_written_chain_agrees_with_mujoco(rng):
    """Several joints in one body with anchors, refs in degrees, a slide, ball joints off their
    body origin, a free body with a child, default classes, fromto and geom inertias."""
    model = load_mjcf(CHAIN)
    m = mujoco.MjModel.from_xml_string(CHAIN)
    worst = check_against_mujoco(model, m, rng, states=4)
    assert max(worst.values()) < TOL, worst


def test_hinge_and_slide_coordinates_are_mujoco_qpos_ref_included():
    model = load_mjcf(CHAIN)
    m = mujoco.MjModel.from_xml_string(CHAIN)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)   # at qpos0 = ref: the pose the file draws
    q = screwdyn.from_mujoco(model, m.qpos0)[0]
    k = model.joint_index("yaw")
    assert q[model.idx_qs[k]] == pytest.approx(np.deg2rad(20), abs=1e-15)   # the ref, not 0
    assert q[model.idx_qs[model.joint_index("lift")]] == pytest.approx(0.1, abs=1e-15)
    for b, name in enumerate(body_names(m)):
        T = screwdyn.frame_pose(model, q, name)
        assert np.allclose(T[:3, 3], d.xpos[b], atol=1e-14, rtol=0) and np.allclose(T[:3, :3], d.xmat[b].reshape(3, 3), atol=1e-14)


def test_names_links_and_frames():
    model = load_mjcf(CHAIN)
    # a body's link carries its name when the body origin is on its last joint's axis
    assert model.link_names == ("upper:yaw", "upper:lift", "upper:pitch", "lower", "wheel:spin", "ball_link:shoulder",
                                "forearm:wrist", "flyer", "flap:flap_hinge")
    assert model.joint_names == ("yaw", "lift", "pitch", "elbow", "spin", "shoulder", "wrist", "flyer_root", "flap_hinge")
    for frame in ("world", "base", "upper", "lower", "wheel", "tip", "ball_link", "forearm", "flyer", "flap",
                  "origin", "upper_tip"):
        assert frame in model.frame_names
    assert model.base_name == "world"
    assert model.name == "chain"
    assert (model.nq, model.nv) == (5 + 4 + 4 + 7 + 1, 5 + 3 + 3 + 6 + 1)


def test_joint_terms_armature_damping_friction_limits_efforts():
    model = load_mjcf(CHAIN)
    m = mujoco.MjModel.from_xml_string(CHAIN)
    dof = {name: int(model.idx_vs[model.joint_index(name)]) for name in model.joint_names}
    assert model.rotor_inertia[dof["yaw"]] == pytest.approx(0.02)
    assert model.rotor_inertia[dof["elbow"]] == pytest.approx(0.02 + 9 * 0.1)    # + gear^2 x actuator armature
    assert model.damping[dof["elbow"]] == pytest.approx(0.3 + 9 * 0.2)
    assert (model.rotor_inertia[dof["spin"]], model.damping[dof["spin"]], model.friction[dof["spin"]]) == (0.5, 0.05, 0.2)
    assert np.all(model.damping[dof["shoulder"]:dof["shoulder"] + 3] == 0.4)
    assert np.all(model.gear_ratio == 1.0)
    assert np.allclose(model.armature, m.dof_armature + np.bincount(
        m.actuator_trnid[:, 0], m.actuator_gear[:, 0] ** 2 * m.actuator_armature, minlength=m.njnt)[m.dof_jntid])
    iq = model.idx_qs[model.joint_index("yaw")]
    assert (model.q_lower[iq], model.q_upper[iq]) == pytest.approx((-np.pi / 2, 2 * np.pi / 3))
    iq = model.idx_qs[model.joint_index("lift")]
    assert (model.q_lower[iq], model.q_upper[iq]) == (-0.2, 0.3)
    assert model.effort_limit[dof["yaw"]] == pytest.approx(50 * 2 + 10 * 3)    # two motors: |gear| x |ctrl| summed
    assert model.effort_limit[dof["pitch"]] == pytest.approx(2 * 4)            # a servo: its forcerange x gear
    assert model.effort_limit[dof["elbow"]] == np.inf                          # a motor without ctrlrange
    assert model.effort_limit[dof["spin"]] == np.inf                           # a velocity servo
    assert np.array_equal(model.gravity, [0.5, -1, -9])


def test_actuatorfrcrange_and_disabled_gravity():
    xml = """<mujoco><option><flag gravity="disable"/></option><worldbody><body>
      <joint name="j" actuatorfrcrange="-7 5"/><geom size="0.1" pos="0.2 0 0"/></body></worldbody>
      <actuator><motor joint="j" gear="100" ctrlrange="-1 1"/></actuator></mujoco>"""
    model = load_mjcf(xml)
    assert model.effort_limit[0] == 7.0
    assert np.array_equal(model.gravity, np.zeros(3))


def test_a_joint_through_the_body_origin_off_its_anchor_keeps_the_body_name():
    # the hinge's axis passes through the body origin (anchor on the axis): the link is the body
    xml = """<mujoco><worldbody><body name="b"><joint name="j" axis="0 0 1" pos="0 0 0.3"/>
      <geom size="0.1" pos="0.2 0 0"/></body></worldbody></mujoco>"""
    model = load_mjcf(xml)
    assert model.link_names == ("b",)
    assert np.allclose(model.com[0], [0.2, 0, 0])


# ---------------------------------------------------------------------------- refused and dropped
BODY = '<body name="b"><joint name="j"/><geom size="0.1" pos="0.2 0 0"/></body>'
BODY2 = '<body name="c" pos="0 1 0"><joint name="k"/><geom size="0.1" pos="0.2 0 0"/></body>'


def doc(inner, extra=""):
    return f"<mujoco><worldbody>{BODY}{BODY2}{inner}</worldbody>{extra}</mujoco>"


@pytest.mark.parametrize("xml, message", [
    (doc("", '<tendon><fixed name="t" armature="0.1"><joint joint="j" coef="1"/></fixed></tendon>'),
     "tendon 't': its armature couples the joints in the mass matrix"),
    (doc("", '<tendon><fixed name="t"><joint joint="j" coef="1"/></fixed></tendon>'
             '<actuator><motor name="a" tendon="t" armature="0.2"/></actuator>'),
     "actuator 'a': its armature couples the joints"),
    (doc('<body name="f"><freejoint name="fj"/><geom size="0.1"/></body>',
         '<actuator><motor name="a" joint="fj" gear="1 0 0 0 0 0" armature="0.2"/></actuator>'),
     "actuator 'a': armature or damping on the free joint 'fj'"),
    (doc('<flexcomp name="cloth" type="grid" count="3 3 1" spacing="0.1 0.1 0.1" mass="0.1" dim="2"/>'),
     "flex 'cloth' \\(a deformable body"),
])
def test_what_a_tree_cannot_express_is_refused(xml, message):
    for strict in (False, True):
        with pytest.raises(ModelError, match=message):
            load_mjcf(xml, strict=strict)


@pytest.mark.parametrize("xml, message", [
    (doc("", '<tendon><fixed name="t" stiffness="3" damping="1" limited="true" range="-1 1">'
             '<joint joint="j" coef="1"/><joint joint="k" coef="-1"/></fixed></tendon>'),
     "tendon 't' \\(stiffness, damping, length limit and the actuators and sensors on it dropped\\)"),
    (doc("", '<equality><connect body1="b" body2="c" anchor="0 0 0" active="false"/></equality>'),
     "connect equality constraint number 0 \\(inactive at the start; dropped\\)"),
    (doc("").replace('<joint name="j"/>', '<joint name="j" stiffness="5"/>'),
     "the springs \\(stiffness\\) of joints \\['j'\\]"),
    (doc("").replace('<joint name="j"/>', '<joint name="j" damping="1 0.5"/>'),
     "the polynomial damping of joints \\['j'\\]"),
    ("<mujoco><option density='1.2'/>" + doc("")[len("<mujoco>"):], "fluid forces \\(<option density=1.2"),
    (doc("").replace('<body name="b">', '<body name="b" gravcomp="1">'), "gravity compensation \\(gravcomp\\) of bodies \\['b'\\]"),
    (doc('<site name="s" pos="1 0 0"/>', '<actuator><motor name="push" site="s" gear="1 0 0 0 0 0"/></actuator>'),
     "actuator 'push' \\(drives a site, body or slider-crank"),
])
def test_what_the_tree_drops_is_a_warning_or_refused_when_strict(xml, message):
    with pytest.warns(MJCFWarning, match=message):
        model = load_mjcf(xml)
    assert model.joint_names == ("j", "k")
    with pytest.raises(ModelError, match="strict=True refuses what the screwdyn model would leave out: .*" + message):
        load_mjcf(xml, strict=True)


def test_bad_sources_give_clear_errors(tmp_path):
    with pytest.raises(ModelError, match="MJCF file '.*nope.xml' does not exist"):
        load_mjcf(tmp_path / "nope.xml")
    with pytest.raises(ModelError, match="is a directory"):
        load_mjcf(tmp_path)
    with pytest.raises(ModelError, match="empty MJCF document"):
        load_mjcf("  ")
    with pytest.raises(ModelError, match="MJCF string: MuJoCo cannot compile it: .*"):
        load_mjcf("<mujoco><worldbody><body><joint type='twist'/></body></worldbody></mujoco>")
    with pytest.raises(ModelError, match="MuJoCo cannot compile it"):
        load_mjcf("<mujoco><worldbody>")
    with pytest.raises(TypeError, match="source must be a path, MJCF text or a mujoco.MjModel, got int"):
        load_mjcf(3)


def test_missing_mujoco_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)   # import mujoco raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'screwdyn\[mjcf\]'"):
        load_mjcf(doc(""))


def test_includes_paths_bytes_and_the_model_resolver(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "arm.xml").write_text(f"<mujoco><worldbody>{BODY}</worldbody></mujoco>")
    main = tmp_path / "robot.xml"
    main.write_text('<mujoco model="inc"><include file="parts/arm.xml"/></mujoco>')
    for source in (main, str(main)):
        assert load_mjcf(source).joint_names == ("j",)
    assert load_mjcf(doc("").encode()).joint_names == ("j", "k")
    source = models.resolve(main)
    assert (source.kind, source.path) == ("mjcf", main)
    assert models.load(str(main)).name == "inc"
    with pytest.raises(ModelError, match="an MJCF file, whose <freejoint> elements say which bodies float"):
        models.load(main, floating_base=True)
    urdf = tmp_path / "robot_urdf.xml"   # a URDF in a .xml file is still a URDF
    urdf.write_text('<?xml version="1.0"?>\n<!-- a comment --><robot name="r"><link name="a"/></robot>')
    assert models.resolve(urdf).kind == "urdf"
    with pytest.raises(ModelError, match=r"not an MJCF file \(its root element is <robot>, not <mujoco>\)"):
        models.resolve(urdf, kinds=("mjcf",))


def test_screwdyn_exports_load_mjcf():
    assert screwdyn.load_mjcf is load_mjcf
    assert screwdyn.io.load_mjcf is load_mjcf


def test_doctests_of_the_module():
    failed, attempted = doctest.testmod(mjcf, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted >= 3 and failed == 0


# ---------------------------------------------------------------------------- layout conversions
def test_acceleration_conversions_are_inverse_and_take_batches(rng):
    model = load_mjcf(CHAIN)
    m = mujoco.MjModel.from_xml_string(CHAIN)
    qpos = m.qpos0 + 0.5 * rng.standard_normal((4, 2, m.nq))
    qvel, qacc = rng.standard_normal((4, 2, m.nv)), rng.standard_normal((4, 2, m.nv))
    q, v, _ = screwdyn.from_mujoco(model, qpos, qvel)
    qdd = from_mujoco_acceleration(model, qpos, qvel, qacc)
    assert qdd.shape == (4, 2, model.nv)
    assert np.allclose(to_mujoco_acceleration(model, q, v, qdd), qacc, rtol=0, atol=1e-13)
    assert np.array_equal(from_mujoco_acceleration(model, qpos[2, 1], qvel[2, 1], qacc[2, 1]), qdd[2, 1])
    # the free joint's block: (a_world, omega_dot) -> (omega_dot, R^T a_world - omega x v_body)
    k = model.joint_index("flyer_root")
    iv = model.idx_vs[k]
    j = m.joint("flyer_root").id
    qa, qm = m.jnt_qposadr[j], m.jnt_dofadr[j]
    quat = qpos[0, 0, qa + 3:qa + 7] / np.linalg.norm(qpos[0, 0, qa + 3:qa + 7])
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, quat)
    R = R.reshape(3, 3)
    omega, v_body = qvel[0, 0, qm + 3:qm + 6], R.T @ qvel[0, 0, qm:qm + 3]
    assert np.allclose(qdd[0, 0, iv:iv + 3], qacc[0, 0, qm + 3:qm + 6], rtol=0, atol=1e-15)
    assert np.allclose(qdd[0, 0, iv + 3:iv + 6], R.T @ qacc[0, 0, qm:qm + 3] - np.cross(omega, v_body), atol=1e-14)
    with pytest.raises(InputError, match="must have shape"):
        from_mujoco_acceleration(model, m.qpos0, np.zeros(m.nv), np.zeros(m.nv - 1))
    with pytest.raises(InputError, match="must have shape"):
        to_mujoco_acceleration(model, q[0, 0], v[0, 0], np.zeros(m.nv - 1))


def test_free_joint_terms_are_reordered_angular_first():
    xml = """<mujoco><worldbody><body name="f"><freejoint name="fj"/><geom size="0.1"/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    m.dof_damping[:] = [1, 1, 1, 4, 5, 6]   # MuJoCo: linear (world axes), then angular (body axes)
    m.dof_armature[:] = [0.5, 0.5, 0.5, 0.1, 0.2, 0.3]
    model = load_mjcf(m)
    assert np.array_equal(model.damping, [4, 5, 6, 1, 1, 1])
    assert np.array_equal(model.armature, [0.1, 0.2, 0.3, 0.5, 0.5, 0.5])
    m.dof_damping[:3] = [1, 2, 3]
    with pytest.raises(ModelError, match=r"free joint 'fj': its linear dofs have different damping \[1. 2. 3.\]"):
        load_mjcf(m)
