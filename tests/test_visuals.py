"""Visual geometry read from URDF (screwdyn.io.visuals, screwdyn.geometry): placements against
Pinocchio's visual model on real robots, the URDF conventions on hand-written documents, mesh
paths (package://, file://, relative) and the warnings for what cannot be drawn."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers import urdf_robot

import screwdyn
from screwdyn.geometry import Visual, VisualWarning
from screwdyn.io import example_robot_data_path, load_urdf
from screwdyn.io.visuals import resolve_mesh


def Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'


def robot(links_xml, joints_xml="", extra=""):
    return f'<robot name="r">{extra}{links_xml}{joints_xml}</robot>'


# ---------------------------------------------------------------------------- against Pinocchio
def test_visual_placements_match_pinocchio(rng):
    """Every <visual> of Talos (53: meshes, boxes, cylinders, on dozens of fixed-joint-merged links),
    in the base frame at a random q, where Pinocchio's visual model puts it
    (updateGeometryPlacements), with the same mesh file and scale."""
    name = "talos_full_v2"
    pin = pytest.importorskip("pinocchio")
    model, pm, idx = urdf_robot(name)
    path = example_robot_data_path(name)
    from screwdyn.io.urdf import _example_robot_data_dir

    gm = pin.buildGeomFromUrdf(pm, str(path), pin.GeometryType.VISUAL,
                               package_dirs=[str(_example_robot_data_dir().parent.parent)])
    assert gm.ngeoms == len(model.visuals)
    q = rng.uniform(-1, 1, model.n)
    pd, gd = pm.createData(), gm.createData()
    qp = np.empty(model.n)
    qp[idx] = q
    pin.updateGeometryPlacements(pm, pd, gm, gd, qp)
    by_frame = {}
    for k, go in enumerate(gm.geometryObjects):
        by_frame.setdefault(pm.frames[go.parentFrame].name, []).append(k)
    seen = {}
    for v in model.visuals:
        k = by_frame[v.link][seen.get(v.link, 0)]
        seen[v.link] = seen.get(v.link, 0) + 1
        go = gm.geometryObjects[k]
        T = screwdyn.frame_pose(model, q, v.link) @ v.origin
        np.testing.assert_allclose(T, gd.oMg[k].homogeneous, atol=1e-10, err_msg=f"{v.link} {v.filename}")
        if v.kind == "mesh":
            assert os.path.normpath(v.path) == os.path.normpath(go.meshPath)
            np.testing.assert_allclose(v.size, go.meshScale)
        else:
            g = go.geometry
            expect = {"Box": ("box", 2 * g.halfSide if hasattr(g, "halfSide") else None),
                      "Cylinder": ("cylinder", (getattr(g, "radius", 0), 2 * getattr(g, "halfLength", 0))),
                      "Sphere": ("sphere", (getattr(g, "radius", 0),))}[type(g).__name__]
            assert v.kind == expect[0]
            np.testing.assert_allclose(v.size, expect[1])
    assert {v.kind for v in model.visuals} >= {"mesh", "box", "cylinder"}


# ---------------------------------------------------------------------------- URDF conventions
def test_primitives_origin_material_and_fixed_merge():
    """Box, cylinder, sphere with their sizes; <origin> rpy as Rz Ry Rx; a material by name from
    the robot level and an inline colour; a visual on a link welded by a fixed joint follows it."""
    doc = robot(
        '<link name="base"/>'
        f'<link name="arm">{INERTIAL}'
        '<visual name="v0"><origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 1.1"/>'
        '<geometry><box size="0.1 0.2 0.3"/></geometry><material name="steel"/></visual>'
        '<visual><geometry><cylinder radius="0.05" length="0.4"/></geometry>'
        '<material name="x"><color rgba="1 0 0 0.5"/></material></visual></link>'
        '<link name="tool"><visual><origin xyz="0 0 0.05"/>'
        '<geometry><sphere radius="0.02"/></geometry></visual></link>',
        '<joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.5"/>'
        '<axis xyz="0 1 0"/></joint>'
        '<joint name="weld" type="fixed"><parent link="arm"/><child link="tool"/>'
        '<origin xyz="0.3 0 0" rpy="0 0 1.5"/></joint>',
        extra='<material name="steel"><color rgba="0.5 0.5 0.6 1"/></material>')
    m = load_urdf(doc)
    assert [(v.link, v.kind, v.size) for v in m.visuals] == [
        ("arm", "box", (0.1, 0.2, 0.3)), ("arm", "cylinder", (0.05, 0.4)), ("tool", "sphere", (0.02,))]
    box, cyl, ball = m.visuals
    np.testing.assert_allclose(box.origin[:3, :3], Rz(1.1) @ Ry(-0.2) @ Rx(0.3), atol=1e-15)
    np.testing.assert_allclose(box.origin[:3, 3], [0.1, 0.2, 0.3])
    assert box.color == (0.5, 0.5, 0.6, 1.0) and cyl.color == (1.0, 0.0, 0.0, 0.5) and ball.color is None
    assert box.name == "v0" and cyl.name == ""
    q = np.array([0.7])
    # the welded tool: base -> arm (0, 0, 0.5) rotated about y by q, then (0.3, 0, 0), then (0, 0, 0.05)
    expect = np.array([0, 0, 0.5]) + Ry(0.7) @ (np.array([0.3, 0, 0]) + Rz(1.5) @ np.array([0, 0, 0.05]))
    np.testing.assert_allclose((screwdyn.frame_pose(m, q, "tool") @ ball.origin)[:3, 3], expect, atol=1e-14)
    assert "tool" not in m.link_names        # merged: a frame, not a body
    assert not box.origin.flags.writeable


def test_no_visuals_is_an_empty_tuple_and_model_copies_keep_them():
    assert screwdyn.models.load("panda").visuals == ()
    m = load_urdf(robot(f'<link name="b"/><link name="a">{INERTIAL}<visual><geometry><sphere radius="0.1"/>'
                        f'</geometry></visual></link>',
                        '<joint name="j" type="revolute"><parent link="b"/><child link="a"/></joint>'))
    assert len(m.visuals) == 1
    assert m.with_gravity((0, 0, -1)).visuals == m.visuals
    assert m.replace(damping=np.ones(1)).visuals == m.visuals


def test_bad_visuals_warn_and_the_model_still_loads():
    """The dynamics never need the geometry: a malformed or unknown one is a VisualWarning."""
    doc = robot(f'<link name="b"/><link name="a">{INERTIAL}'
                '<visual><geometry><box size="1 2"/></geometry></visual>'
                '<visual><geometry><capsule radius="0.1" length="0.2"/></geometry></visual>'
                '<visual><geometry/></visual>'
                '<visual><geometry><sphere radius="-1"/></geometry></visual>'
                '<visual><geometry><sphere radius="0.1"/></geometry></visual></link>',
                '<joint name="j" type="revolute"><parent link="b"/><child link="a"/></joint>')
    with pytest.warns(VisualWarning) as rec:
        m = load_urdf(doc)
    messages = [str(w.message) for w in rec]
    assert len(messages) == 4
    assert "expected 3 numbers" in messages[0] and "<capsule>" in messages[1]
    assert "missing <geometry>" in messages[2] and "negative" in messages[3]
    assert [v.kind for v in m.visuals] == ["sphere"] and m.n == 1


# ---------------------------------------------------------------------------- mesh paths
def _mesh_doc(filename):
    return robot(f'<link name="b"/><link name="a">{INERTIAL}<visual><geometry><mesh filename="{filename}" '
                 f'scale="2 2 2"/></geometry></visual></link>',
                 '<joint name="j" type="revolute"><parent link="b"/><child link="a"/></joint>')


@pytest.fixture
def package_tree(tmp_path):
    """ws/src/my_robot/{urdf/r.urdf, meshes/part.stl}"""
    pkg = tmp_path / "ws" / "src" / "my_robot"
    (pkg / "urdf").mkdir(parents=True)
    (pkg / "meshes").mkdir()
    (pkg / "meshes" / "part.stl").write_text("solid x\nendsolid x\n")
    return pkg


def test_package_path_found_above_the_urdf(package_tree, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    urdf = package_tree / "urdf" / "r.urdf"
    urdf.write_text(_mesh_doc("package://my_robot/meshes/part.stl"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_urdf(urdf)
    (v,) = m.visuals
    assert Path(v.path) == package_tree / "meshes" / "part.stl" and v.size == (2.0, 2.0, 2.0)
    assert v.filename == "package://my_robot/meshes/part.stl"


def test_package_path_from_ros_package_path_and_file_urls(package_tree, tmp_path, monkeypatch):
    part = package_tree / "meshes" / "part.stl"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("ROS_PACKAGE_PATH", os.pathsep.join([str(tmp_path / "nothing"), str(tmp_path / "ws")]))
    assert resolve_mesh("package://my_robot/meshes/part.stl", elsewhere) == part      # ENTRY/*/PKG
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(package_tree))
    assert resolve_mesh("package:///my_robot/meshes/part.stl", None) == part          # the entry itself
    assert resolve_mesh(f"file://{part}") == part
    assert resolve_mesh(str(part)) == part
    assert resolve_mesh("../meshes/part.stl", package_tree / "urdf") == part          # relative to the URDF
    assert resolve_mesh("file://meshes/part.stl", package_tree) == part
    assert resolve_mesh("package://my_robot/meshes/none.stl", elsewhere) is None


def test_example_robot_data_package_found_without_ros(monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    p = resolve_mesh("package://example-robot-data/robots/solo_description/meshes/obj/with_foot/solo_body.obj",
                     Path("/nonexistent"))
    assert p is not None and p.is_file()


def test_missing_meshes_warn_once_each_and_are_kept_unresolved(tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    doc = robot(f'<link name="b"/><link name="a">{INERTIAL}'
                '<visual><geometry><mesh filename="package://no_such_pkg/m.stl"/></geometry></visual>'
                '<visual><geometry><mesh filename="meshes/gone.dae"/></geometry></visual>'
                '<visual><geometry><box size="1 1 1"/></geometry></visual></link>',
                '<joint name="j" type="revolute"><parent link="b"/><child link="a"/></joint>')
    (tmp_path / "r.urdf").write_text(doc)
    with pytest.warns(VisualWarning) as rec:
        m = load_urdf(tmp_path / "r.urdf")
    assert len(rec) == 2
    assert "'package://no_such_pkg/m.stl' not found" in str(rec[0].message)
    assert "no package 'no_such_pkg'" in str(rec[0].message) and "link 'a'" in str(rec[0].message)
    assert str(tmp_path / "meshes" / "gone.dae") in str(rec[1].message)
    assert [v.path for v in m.visuals[:2]] == [None, None] and m.visuals[2].kind == "box"
    assert rec[0].filename == __file__    # the warning points at the caller of load_urdf


def test_visual_checks_its_fields():
    with pytest.raises(ValueError, match="kind"):
        Visual("a", "cone", np.eye(4), (1.0,))
    v = Visual("a", "sphere", np.eye(4), [0.1], color=[1, 0, 0, 1])
    assert v.size == (0.1,) and v.color == (1.0, 0.0, 0.0, 1.0) and "sphere" in repr(v)


# ---------------------------------------------------------------------------- MJCF geoms
MJCF = """<mujoco model="shapes">
  <asset>
    <material name="red" rgba="0.9 0.1 0.1 1"/>
    <mesh name="wedge" vertex="0 0 0  0.2 0 0  0 0.1 0  0 0 0.3" face="0 2 1  0 1 3  0 3 2  1 2 3" scale="1 2 1"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="torso" pos="0.1 0 1" quat="0.9 0.1 0.3 0">
      <freejoint name="root"/>
      <geom name="box" type="box" size="0.1 0.2 0.05" pos="0 0 0.1" euler="10 20 30"/>
      <geom name="hidden" type="sphere" size="0.1" group="3"/>
      <geom name="clear" type="sphere" size="0.1" rgba="1 1 1 0"/>
      <body name="arm" pos="0.3 0 0">
        <joint name="shoulder" type="hinge" axis="0 1 0" pos="0 0 0.05"/>
        <geom name="upper" type="capsule" fromto="0 0 0 0.4 0 0.1" size="0.03" material="red"/>
        <geom name="blob" type="ellipsoid" size="0.05 0.03 0.02" pos="0.4 0 0"/>
        <body name="hand" pos="0.4 0 0">
          <joint name="wrist" type="ball"/>
          <geom name="palm" type="cylinder" size="0.02 0.04" euler="0 90 0"/>
          <geom name="wedge" type="mesh" mesh="wedge" pos="0.05 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_mjcf_geoms_are_where_mujoco_puts_them(rng):
    """load_mjcf keeps the geoms MuJoCo's viewer shows (not the plane, group 3, transparent ones):
    at a random state, frame_pose(body) @ origin is MuJoCo's geom_xpos / geom_xmat; sizes as MuJoCo's
    (capsule and cylinder lengths are twice its half-lengths); a mesh as MuJoCo compiled it."""
    mujoco = pytest.importorskip("mujoco", reason="MJCF needs MuJoCo (pip install 'screwdyn[mjcf]')")
    model = screwdyn.load_mjcf(MJCF)
    m = mujoco.MjModel.from_xml_string(MJCF)
    d = mujoco.MjData(m)
    assert [v.name for v in model.visuals] == ["box", "upper", "blob", "palm", "wedge"]
    qpos = m.qpos0 + rng.normal(size=m.nq) * 0.5
    for a in (3, m.jnt_qposadr[2]):      # the free and the ball joint's quaternions
        qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    q = screwdyn.from_mujoco(model, qpos)[0]
    for v in model.visuals:
        g = m.geom(v.name).id
        T = screwdyn.frame_pose(model, q, v.link) @ v.origin
        np.testing.assert_allclose(T[:3, 3], d.geom_xpos[g], atol=1e-12, err_msg=v.name)
        np.testing.assert_allclose(T[:3, :3], d.geom_xmat[g].reshape(3, 3), atol=1e-12, err_msg=v.name)
    by = {v.name: v for v in model.visuals}
    assert by["upper"].kind == "capsule" and by["upper"].size == pytest.approx((0.03, np.hypot(0.4, 0.1)))
    assert by["upper"].color == pytest.approx((0.9, 0.1, 0.1, 1.0))
    assert by["palm"].size == pytest.approx((0.02, 0.08)) and by["box"].size == pytest.approx((0.2, 0.4, 0.1))
    assert by["blob"].kind == "ellipsoid" and by["blob"].size == pytest.approx((0.05, 0.03, 0.02))
    w = by["wedge"]
    i = m.geom_dataid[m.geom("wedge").id]
    np.testing.assert_array_equal(w.vertices, m.mesh_vert[m.mesh_vertadr[i]:m.mesh_vertadr[i] + 4])
    assert w.faces.shape == (4, 3) and w.path is None
