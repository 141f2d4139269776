"""Tests of the SDFormat loader (screwdyn.io.sdf).

Cassie (example-robot-data's SDF files, written by Agility Robotics) against a Pinocchio model
built from the same file by the rules of Pinocchio's own SDF parser (pinocchio/parsers/sdf,
rebuilt here because the ``pin`` wheels are built without SDFormat): masses, inertias, joint
placements and axes through RNEA, CRBA and every frame's pose at random states, to 1e-10. Pinocchio's
own parallelogram test (its hand-built model of an SDF 1.6 four-bar) for the split of a link
closed by a revolute joint. Hand-written SDFormat 1.7+ documents for the frame semantics
(``relative_to``, ``<frame>``, ``expressed_in``), the joint types and the errors."""
from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import screwdyn
from screwdyn.errors import SDFError, SDFWarning
from screwdyn.io.sdf import load_sdf
from screwdyn.io.urdf import _example_robot_data_dir

pin = pytest.importorskip("pinocchio")
ROBOTS = _example_robot_data_dir()
CASSIE = None if ROBOTS is None else ROBOTS / "cassie_description" / "robots"
needs_cassie = pytest.mark.skipif(CASSIE is None or not CASSIE.is_dir(), reason="example-robot-data is not installed")
needs_constrained = pytest.mark.skipif(not hasattr(screwdyn, "constrained_forward_dynamics"),
                                       reason="the constrained dynamics (branch constraints) are not merged yet")


def load_quietly(source, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SDFWarning)     # Cassie's controller plugin and its springs
        warnings.simplefilter("ignore", screwdyn.errors.InertiaWarning)
        return load_sdf(source, **kw)


# ---------------------------------------------------------------------------- Pinocchio's rules
def _se3(el):
    p = None if el is None else el.find("pose")
    v = np.zeros(6) if p is None or not (p.text or "").strip() else np.array(p.text.split(), dtype=float)
    return pin.SE3(pin.rpy.rpyToMatrix(*v[3:]), v[:3])


def _pin_inertia(link):
    el = link.find("inertial")
    X, I_el = _se3(el), el.find("inertia")
    g = {k: float(I_el.find(k).text) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    I = np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]])
    return pin.Inertia(float(el.find("mass").text), X.translation, X.rotation @ I @ X.rotation.T)


def pinocchio_from_sdf16(path, root):
    """Pinocchio's ``buildModelFromSdf`` of an SDFormat 1.6 file with a free-flyer, on its spanning tree
    (the first parent joint of each link): ``pMj = oMp^-1 oMc cMj``, the axis written in the model
    frame turned into the child's, each link's inertia appended at ``cMj^-1``."""
    m = ET.parse(path).getroot().find("model")
    links = {el.get("name"): el for el in m.findall("link")}
    joints = [j for j in m.findall("joint") if j.get("type") != "gearbox"]
    tree = {}
    for j in joints:
        tree.setdefault(j.find("child").text.strip(), j)
    pm = pin.Model()
    root_id = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    pm.appendBodyToJoint(root_id, _pin_inertia(links[root]), pin.SE3.Identity())
    pm.addBodyFrame(root, root_id, pin.SE3.Identity(), 0)
    ids = {root: root_id}

    def fill(parent):
        for j in joints:
            child = j.find("child").text.strip()
            if j.find("parent").text.strip() != parent or tree[child] is not j:
                continue
            oMp, oMc, cMj = _se3(links[parent]), _se3(links[child]), _se3(j)
            axis = np.array(j.find("axis").find("xyz").text.split(), dtype=float)
            if (j.find("axis").findtext("use_parent_model_frame") or "0").strip() in ("1", "true"):
                axis = oMc.rotation.T @ axis
            jm = {"revolute": lambda: pin.JointModelRevoluteUnaligned(axis),
                  "prismatic": lambda: pin.JointModelPrismaticUnaligned(axis),
                  "ball": pin.JointModelSpherical}[j.get("type")]()
            k = pm.addJoint(ids[parent], jm, oMp.inverse() * oMc * cMj, j.get("name"))
            pm.appendBodyToJoint(k, _pin_inertia(links[child]), cMj.inverse())
            pm.addBodyFrame(child, k, cMj.inverse(), 0)
            ids[child] = k
            fill(child)

    fill(root)
    return pm


def layouts(model, pm):
    """Pinocchio's q and v indices of screwdyn's q and v entries (by joint name)."""
    iq, iv = [], []
    for jn in model.joint_names:
        J = pm.joints[pm.getJointId(jn)]
        iq += range(J.idx_q, J.idx_q + J.nq)
        v = list(range(J.idx_v, J.idx_v + J.nv))
        iv += v[3:] + v[:3] if J.nv == 6 else v   # Pinocchio's free-flyer twist is (v, omega)
    return np.array(iq), np.array(iv)


def random_q(model, rng):
    q = rng.uniform(-1, 1, model.nq)
    for j in np.flatnonzero(model.joint_type >= screwdyn.FREE_FLYER):
        a = model.idx_qs[j] + (3 if model.joint_type[j] == screwdyn.FREE_FLYER else 0)
        q[a:a + 4] /= np.linalg.norm(q[a:a + 4])
    return q


# ---------------------------------------------------------------------------- Cassie
@needs_cassie
def test_cassie_tree_agrees_with_pinocchios_rules(rng):
    path = CASSIE / "cassie_v2.sdf"
    model = load_quietly(path, floating_base=True)
    pm = pinocchio_from_sdf16(path, "pelvis")
    assert (model.nq, model.nv) == (pm.nq, pm.nv) == (29, 28)
    iq, iv = layouts(model, pm)
    frames = [(k, f.name) for k, f in enumerate(pm.frames) if f.name in model.frame_names and f.name != "universe"]
    assert len(frames) == 23   # every link
    worst = 0.0
    for _ in range(3):
        q, v, a = random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
        qp, vp, ap = np.empty(pm.nq), np.empty(pm.nv), np.empty(pm.nv)
        qp[iq], vp[iv], ap[iv] = q, v, a
        tau = pin.rnea(pm, pm.createData(), qp, vp, ap)
        M = pin.crba(pm, pm.createData(), qp)
        M = np.triu(M) + np.triu(M, 1).T
        worst = max(worst, np.abs(screwdyn.inverse_dynamics(model, q, v, a) - tau[iv]).max() / np.abs(tau).max(),
                    np.abs(screwdyn.mass_matrix(model, q) - M[np.ix_(iv, iv)]).max() / np.abs(M).max())
        d = pm.createData()
        pin.framesForwardKinematics(pm, d, qp)
        for k, name in frames:
            T = screwdyn.frame_pose(model, q, name)
            worst = max(worst, np.abs(T[:3, :3] - d.oMf[k].rotation).max(), np.abs(T[:3, 3] - d.oMf[k].translation).max())
    assert worst < 1e-10


def loop_errors(model, q):
    """The largest position error of each constraint (world axes), from its frames' poses."""
    out = []
    for c in model.constraints:
        if c.kind == "joint":
            out.append(abs(c.coefficients @ q - c.offset))
            continue
        Ta, Tb = screwdyn.frame_pose(model, q, c.frame_a), screwdyn.frame_pose(model, q, c.frame_b)
        out.append(np.abs(Ta[:3, 3] - Tb[:3, 3]).max() if c.size == 3 else np.abs(Ta - Tb).max())
    return np.array(out)


@needs_cassie
def test_cassie_loads_with_its_four_loops_as_point_loops():
    model = load_quietly(CASSIE / "cassie_v2.sdf", floating_base=True)
    names = ["left-pitch-rod-joint", "right-pitch-rod-joint", "right-plantar-foot-joint", "left-plantar-foot-joint"]
    assert [(type(c).__name__, c.name) for c in model.constraints] == [("PointLoop", n) for n in names]
    assert [(c.frame_a, c.frame_b) for c in model.constraints] == [(f"{n}:parent", n) for n in names]
    # the ball joint's frame on its parent link (the rod's end) and on its child link
    body = lambda frame: model.frame_body[model.frame_index(frame)]
    assert body("left-pitch-rod-joint:parent") == body("left-achilles-rod") != body("left-hip-pitch")
    assert body("left-pitch-rod-joint") == body("left-hip-pitch") == model.body_index("left-hip-pitch")
    assert loop_errors(model, screwdyn.neutral(model)).max() < 1e-14   # the file's pose is assembled
    assert len(model.visuals) == 23 and all(v.path for v in model.visuals if v.kind == "mesh")


@needs_cassie
@pytest.mark.filterwarnings("ignore::screwdyn.errors.InertiaWarning")   # the file's foot-reference inertias
def test_cassie_with_gearboxes_and_springs():
    """cassie.sdf: ten gearboxes (motor and output joints coupled), the knee and heel springs closed
    by revolute and prismatic joints (their links split, as Pinocchio does), the feet by balls."""
    with pytest.warns(SDFWarning, match="plugin 'CassiePlugin'.*the springs"):
        model = load_sdf(CASSIE / "cassie.sdf")
    kinds = [type(c).__name__ for c in model.constraints]
    assert kinds.count("JointCoupling") == 10 and kinds.count("FrameLoop") == 4 and kinds.count("PointLoop") == 2
    roll = next(c for c in model.constraints if c.name == "left-roll-joint")   # theta_out = -0.04 theta_motor
    k = dict(zip(roll.joints, roll.coefficients[roll.coefficients != 0]))
    assert k == {"left-roll-ip": 0.04, "left-roll-op": 1.0} and roll.offset == 0.0
    spring = next(c for c in model.constraints if c.name == "left-shin-spring-joint")
    assert (spring.frame_a, spring.frame_b) == ("left-knee-spring", "left-knee-spring_left-shin-spring-joint")
    halves = [model.frame_body[model.frame_index(f)] for f in (spring.frame_a, spring.frame_b)]
    mass = float(ET.parse(CASSIE / "cassie.sdf").getroot().find("model/link[@name='left-knee-spring']/inertial/mass").text)
    np.testing.assert_allclose(model.mass[halves], mass / 2)
    assert loop_errors(model, screwdyn.neutral(model)).max() < 1e-14


@needs_cassie
@pytest.mark.parametrize("name", ["cassie_simple.sdf", "cassie_reduced.sdf", "cassie_wo_gearbox_spring.sdf"])
def test_other_cassie_files_load(name):
    model = load_quietly(CASSIE / name)
    assert model.base_name == "world" and model.joint_names[0] == "static"   # joined to the world by a slide
    assert len(model.constraints) == 4


def pinocchio_loops(path, pm, model):
    """Pinocchio's CONTACT_3D constraint models of the ball loop joints of an SDFormat 1.6 file
    (joint1 the parent link's, joint2 the child's, each at the joint frame ``oMc cMj``; LOCAL)."""
    m = ET.parse(path).getroot().find("model")
    links = {el.get("name"): el for el in m.findall("link")}
    out = []
    for c in model.constraints:
        j = m.find(f"joint[@name='{c.name}']")
        parent, child = j.find("parent").text.strip(), j.find("child").text.strip()
        oMj = _se3(links[child]) * _se3(j)
        places = []
        for link in (parent, child):
            f = pm.frames[pm.getFrameId(link)]
            places.append((f.parentJoint, f.placement * _se3(links[link]).inverse() * oMj))
        (j1, p1), (j2, p2) = places
        out.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, j1, p1, j2, p2, pin.ReferenceFrame.LOCAL))
    return out


def assembled(model, rng, spread=0.3):
    """A configuration that closes every loop: the file's pose with its joints moved at random, then
    Gauss-Newton on the constraint error (minimum-norm steps, the redundant directions dropped), as
    Pinocchio's Cassie example does. The plantar four-bars' joint axes are parallel only to the
    digits the file writes, so about 1e-10 m stays open across them whatever the joints do."""
    q = screwdyn.neutral(model)
    q[7:] += rng.uniform(-spread, spread, model.nq - 7)
    for _ in range(12):
        e = screwdyn.constraint_error(model, q)
        q = screwdyn.integrate(model, q, -np.linalg.lstsq(screwdyn.constraint_jacobian(model, q), e, rcond=1e-6)[0])
    e = np.abs(screwdyn.constraint_error(model, q)).max()
    assert e < 1e-9, f"Gauss-Newton did not close the loops: |e| = {e}"
    return q


@needs_cassie
@needs_constrained
def test_cassie_constrained_dynamics_agree_with_pinocchio(rng):
    """At the file's (assembled) joint pose, the pelvis anywhere, velocities along the loops: qdd,
    and the joint-space constraint force J^T lam, are Pinocchio's constraintDynamics (its proximal
    solver, mu 1e-8) to 1e-9; lam is, along the directions J determines. Each plantar rod is a
    planar four-bar, so the row of its ball loop along the common axis is redundant (J has rank 10
    of 12) and lam has no unique value there. Away from the file's pose (``assembled`` with a
    spread) the file's rounded axes make those rows nearly, not exactly, redundant, and the two
    solvers' regularizations then give qdd differing by about 1e-4."""
    path = CASSIE / "cassie_v2.sdf"
    model = load_quietly(path, floating_base=True)
    pm = pinocchio_from_sdf16(path, "pelvis")
    iq, iv = layouts(model, pm)
    loops = pinocchio_loops(path, pm, model)
    q = assembled(model, rng, spread=0.0)
    q[:3], q[3:7] = rng.normal(size=3), rng.normal(size=4) / 2   # the pelvis anywhere
    q = screwdyn.normalize(model, q)
    J = screwdyn.constraint_jacobian(model, q)
    U, S, Vt = np.linalg.svd(J)
    rank = int(np.sum(S > 1e-6 * S[0]))   # the redundant rows: singular values below 1e-8 here
    assert J.shape == (12, 28) and rank == 10
    qd = Vt[rank:].T @ rng.normal(size=model.nv - rank)   # along the loops
    tau = rng.normal(size=model.nv) * 5
    qdd, lam = screwdyn.constrained_forward_dynamics(model, q, qd, tau)
    qp, vp, tp = np.empty(pm.nq), np.empty(pm.nv), np.empty(pm.nv)
    qp[iq], vp[iv], tp[iv] = q, qd, tau
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for c in loops:
        cms.append(c)
        cds.append(c.createData())
    data = pm.createData()
    pin.initConstraintDynamics(pm, data, cms, cds)
    a = pin.constraintDynamics(pm, data, qp, vp, tp, cms, cds, pin.ProximalSettings(1e-13, 1e-8, 200))
    lam_pin = data.lambda_c.copy()
    assert np.abs(qdd - a[iv]).max() < 1e-9 * np.abs(a).max()
    assert np.abs(J.T @ (lam - lam_pin)).max() < 1e-9 * np.abs(J.T @ lam_pin).max()
    determined = U[:, :rank].T   # the directions of lam that J^T lam fixes
    assert np.abs(determined @ (lam - lam_pin)).max() < 1e-9 * np.abs(lam_pin).max()
    assert np.abs(lam[:6] - lam_pin[:6]).max() < 1e-9 * np.abs(lam_pin).max()   # the achilles rods' loops


# ---------------------------------------------------------------------------- Pinocchio's parallelogram
PARALLELOGRAM = """<sdf version="1.6"><model name="parallelogram">{links}
  <joint name="joint_B1" type="revolute"><pose>-0.3 0 0 0 0 0</pose><child>link_B1</child><parent>link_A1</parent>
    <axis><xyz>0 1 0</xyz><use_parent_model_frame>1</use_parent_model_frame></axis></joint>
  <joint name="joint_A2" type="revolute"><pose>-0.5 0 0 0 0 0</pose><child>link_A2</child><parent>link_B1</parent>
    <axis><xyz>0 1 0</xyz><use_parent_model_frame>1</use_parent_model_frame></axis></joint>
  <joint name="joint_B2" type="revolute"><pose>-0.3 0 0 0 0 0</pose><child>link_B2</child><parent>link_A1</parent>
    <axis><xyz>0 1 0</xyz><use_parent_model_frame>1</use_parent_model_frame></axis></joint>
  <joint name="joint_B3" type="revolute"><pose>0.5 0 0 0 0 0</pose><child>link_A2</child><parent>link_B2</parent>
    <axis><xyz>0 1 0</xyz><use_parent_model_frame>1</use_parent_model_frame></axis></joint>
</model></sdf>"""
BOX = ("<link name='{}'><pose>{} 0 0 0 0 0</pose><inertial><mass>{}</mass><inertia><ixx>{}</ixx><iyy>{}</iyy>"
       "<izz>{}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial></link>")


def test_pinocchios_parallelogram():
    """Pinocchio's unit test (unittest/sdf.cpp, compare_model_in_version_1_6): link_A2 is closed by
    joint_B3, so it is split in two bodies of half its inertia, welded at its frame."""
    box = lambda m, a, b, c: (m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12)
    links = "".join(BOX.format(n, x, m, *box(m, length, 0.01, 0.1)) for n, x, m, length in (
        ("link_A1", 0.0, 10.0, 1.0), ("link_B1", -0.2, 5.0, 0.6), ("link_A2", 0.6, 10.0, 1.0), ("link_B2", 0.8, 5.0, 0.6)))
    model = load_sdf(PARALLELOGRAM.format(links=links))
    assert model.joint_names == ("joint_B1", "joint_A2", "joint_B2", "joint_B3")
    assert model.link_names == model.joint_names   # each body at its joint frame, off its link's frame
    (weld,) = model.constraints
    assert (type(weld).__name__, weld.frame_a, weld.frame_b) == ("FrameLoop", "link_A2", "link_A2_joint_B3")
    # Pinocchio's hand-built model: joint placements and the half inertias at the joints
    np.testing.assert_allclose(model.T_parent_body[:, :3, 3], [[-0.5, 0, 0], [0.6, 0, 0], [0.5, 0, 0], [0.6, 0, 0]],
                               atol=1e-15)
    np.testing.assert_allclose(model.mass, [5.0, 5.0, 5.0, 5.0])
    np.testing.assert_allclose(model.com, [[0.3, 0, 0], [0.5, 0, 0], [0.3, 0, 0], [-0.5, 0, 0]], atol=1e-15)
    half_A = pin.Inertia.FromBox(5.0, 1.0, 0.01, 0.1)
    np.testing.assert_allclose(model.inertia_com[1], half_A.inertia, atol=1e-15)
    assert loop_errors(model, np.zeros(4)).max() < 1e-15


# ---------------------------------------------------------------------------- SDFormat 1.7+ semantics
def sdf(body, version="1.9"):
    return f'<sdf version="{version}"><model name="m">{body}</model></sdf>'


INERTIAL = "<inertial><mass>2</mass><inertia><ixx>1</ixx><iyy>2</iyy><izz>3</izz></inertia></inertial>"


def test_relative_to_frames_expressed_in_and_pose_formats():
    doc = sdf(f"""<link name="base"/>
      <frame name="mount" attached_to="base"><pose degrees="true">0 0 1 0 0 90</pose></frame>
      <joint name="j" type="revolute"><pose relative_to="mount">0.5 0 0 0 0 0</pose><parent>base</parent>
        <child>arm</child><axis><xyz expressed_in="__model__">1 0 0</xyz>
        <limit><lower>-1</lower><upper>2</upper><effort>30</effort><velocity>-1</velocity></limit>
        <dynamics><damping>0.3</damping><friction>0.1</friction></dynamics></axis></joint>
      <link name="arm"><pose relative_to="j" rotation_format="quat_xyzw">0 0 0.2 0 0 0 1</pose>{INERTIAL}</link>
      <frame name="tip" attached_to="arm"><pose>0 0 0.4 0 0 0</pose></frame>""")
    model = load_sdf(doc)
    # the joint frame: mount (z = 1, yawed 90 degrees) then 0.5 along mount's x, i.e. the model's y
    np.testing.assert_allclose(model.T_parent_body[0][:3, 3], [0, 0.5, 1], atol=1e-15)
    np.testing.assert_allclose(model.T_parent_body[0][:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(model.joint_axis[0], [0, -1, 0], atol=1e-15)   # the model's x in the joint frame
    np.testing.assert_allclose(model.com[0], [0, 0, 0.2])                     # the link 0.2 above its joint
    assert (model.q_lower[0], model.q_upper[0], model.effort_limit[0], model.velocity_limit[0]) == (-1, 2, 30, np.inf)
    assert (model.damping[0], model.friction[0]) == (0.3, 0.1)
    np.testing.assert_allclose(screwdyn.frame_pose(model, [0.0], "tip")[:3, 3], [0, 0.5, 1.6], atol=1e-15)
    assert "arm" in model.frame_names and model.link_names == ("j",)   # the body is the joint frame


def test_joint_types_world_and_defaults():
    doc = sdf(f"""<link name="a">{INERTIAL}</link><link name="b"/><link name="c">{INERTIAL}</link>
      <joint name="rail" type="prismatic"><parent>world</parent><child>a</child><axis><xyz>0 0 2</xyz></axis></joint>
      <joint name="u" type="universal"><parent>a</parent><child>b</child><axis><xyz>1 0 0</xyz></axis>
        <axis2><xyz>0 1 0</xyz></axis2></joint>
      <joint name="weld" type="fixed"><parent>b</parent><child>c</child></joint>""")
    model = load_sdf(doc)
    assert model.base_name == "world" and model.joint_names == ("rail", "u", "u:axis2")
    assert "".join("RPFS"[t] for t in model.joint_type) == "PRR"
    np.testing.assert_allclose(model.joint_axis, [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    np.testing.assert_allclose(model.mass, [2.0, 0.0, 1.0 + 2.0])   # b has SDFormat's default inertia, c is welded to it


@pytest.mark.parametrize("doc, message", [
    ("<robot name='r'/>", "the root element is <robot>, expected <sdf>"),
    (sdf('<link name="a"><pose>0 0 x 0 0 0</pose></link>'), "link 'a' <pose>: 'x' is not a number"),
    (sdf('<link name="a"><pose relative_to="nowhere"/></link>'), "relative_to='nowhere' names no link"),
    (sdf('<link name="a"><pose relative_to="b"/></link><link name="b"><pose relative_to="a"/></link>'), "in a cycle"),
    (sdf('<link name="a"/><link name="b"/><joint name="s" type="screw"><parent>a</parent><child>b</child></joint>'),
     "joint 's': screw joints are not supported"),
    (sdf('<link name="a"/><model name="inner"/>'), "nests a <model>"),
    (sdf('<link name="a"/><link name="b"/>'), "links \\['a', 'b'\\] have no parent joint; name the base with root="),
    (sdf('<static>true</static><link name="a"/>'), "is <static>"),
    (sdf('<link name="a"><pose frame="b"/></link>', version="1.6"), "the frame attribute 'b'"),
    ('<!DOCTYPE sdf [<!ENTITY x "y">]><sdf version="1.9"/>', "declares a DTD"),
])
def test_malformed_or_unsupported_documents_name_the_element(doc, message):
    with pytest.raises(SDFError, match=message):
        load_sdf(doc)


def test_plugins_and_springs_warn_or_are_refused_when_strict():
    doc = sdf("""<link name="a"/><link name="b"/><plugin name="ctl" filename="libctl.so"/>
      <joint name="j" type="revolute"><parent>a</parent><child>b</child>
        <axis><xyz>0 0 1</xyz><dynamics><spring_stiffness>5</spring_stiffness></dynamics></axis></joint>""")
    with pytest.warns(SDFWarning, match="plugin 'ctl' \\(libctl.so\\); the springs \\(spring_stiffness\\) of joints \\['j'\\]"):
        load_sdf(doc)
    with pytest.raises(SDFError, match="strict=True refuses"):
        load_sdf(doc, strict=True)


def test_load_sdf_is_exported_and_its_doctest_runs():
    import doctest

    import screwdyn.io.sdf as module
    assert screwdyn.load_sdf is load_sdf
    assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
