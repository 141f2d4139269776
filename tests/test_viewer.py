"""The browser viewer (screwdyn.viz.viewer, viser): the scene from the server side (a node per
visual, poses from forward_kinematics, the time slider and play), the CLI's 'view', and, where a
Chromium is installed, the page itself in a real headless browser."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import warnings

import numpy as np
import pytest

viser = pytest.importorskip("viser", reason="the browser viewer needs viser (pip install 'screwdyn[viewer]')")
pytest.importorskip("trimesh", reason="the browser viewer sends meshes through trimesh (screwdyn[viewer])")

import screwdyn
from screwdyn.errors import InputError
from screwdyn.geometry import VisualWarning
from screwdyn.viz import view
from screwdyn.viz.scene import parts

INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
URDF = f"""<robot name="two_link">
  <material name="blue"><color rgba="0.2 0.3 0.9 1"/></material>
  <link name="base"><visual><geometry><cylinder radius="0.1" length="0.05"/></geometry></visual></link>
  <link name="upper">{INERTIAL}
    <visual><origin xyz="0 0 0.2"/><geometry><box size="0.05 0.05 0.4"/></geometry><material name="blue"/></visual>
    <visual><geometry><mesh filename="package://not_installed/upper.stl"/></geometry></visual>
    <visual><geometry><mesh filename="broken.stl"/></geometry></visual>
    <visual><origin xyz="0 0 0.4"/><geometry><mesh filename="tetra.stl" scale="0.1 0.1 0.1"/></geometry></visual></link>
  <link name="lower">{INERTIAL}
    <visual><origin xyz="0 0 0.15"/><geometry><cylinder radius="0.03" length="0.3"/></geometry></visual></link>
  <link name="hand"><visual><geometry><sphere radius="0.04"/></geometry></visual></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/></joint>
  <joint name="wrist" type="fixed"><parent link="lower"/><child link="hand"/><origin xyz="0 0 0.3"/></joint>
</robot>"""


TETRA = "solid t\n" + "".join(
    "facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in tri) + "endloop\nendfacet\n"
    for tri in [((0, 0, 0), (0, 1, 0), (1, 0, 0)), ((0, 0, 0), (1, 0, 0), (0, 0, 1)),
                ((0, 0, 0), (0, 0, 1), (0, 1, 0)), ((1, 0, 0), (0, 1, 0), (0, 0, 1))]) + "endsolid t\n"


@pytest.fixture
def two_link(tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    (tmp_path / "broken.stl").write_bytes(b"\x00 not a mesh" * 4)
    (tmp_path / "tetra.stl").write_text(TETRA)
    (tmp_path / "two_link.urdf").write_text(URDF)
    with pytest.warns(VisualWarning, match="not_installed"):
        return screwdyn.load_urdf(tmp_path / "two_link.urdf")


def assert_frames_at(v, q):
    """The frame nodes that carry geometry (every frame while the link frames are shown) are where
    forward_kinematics puts the frames at ``q``."""
    from viser.transforms import SO3

    T = screwdyn.forward_kinematics(v.model, q)
    frames = v.frame_nodes if v.show_frames.value else sorted({p.frame for p in v.parts})
    for k in frames:
        h = v.frame_nodes[k]
        np.testing.assert_allclose(SO3(np.asarray(h.wxyz)).as_matrix(), T[k, :3, :3], atol=1e-6)
        np.testing.assert_allclose(h.position, T[k, :3, 3], atol=1e-6)


def port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_one_node_per_visual_that_can_be_drawn(two_link):
    """Five of the seven visuals can be drawn (a mesh not found, one unreadable: warnings): five mesh
    nodes, each under its link's frame node, whose pose is forward_kinematics at q."""
    q = np.array([0.4, -0.9])
    with pytest.warns(VisualWarning, match="broken.stl' cannot be read"):
        v = view(two_link, q, port=0)
    try:
        assert v.url == f"http://127.0.0.1:{v.port}" and v.port > 0
        assert sorted(v.nodes) == ["base/visual_0", "hand/visual_0", "lower/visual_0", "upper/visual_0",
                                   "upper/visual_3"]
        registry = v.server.scene._handle_from_node_name   # viser's own scene tree (private, read only)
        for name, h in v.nodes.items():
            assert isinstance(h, viser.MeshHandle) and registry[f"/robot/{name}"] is h
        assert_frames_at(v, q)
        np.testing.assert_allclose(v.com_node.position, screwdyn.center_of_mass(two_link, q), atol=1e-6)
        box = v.nodes["upper/visual_0"]
        np.testing.assert_allclose(box.position, [0, 0, 0.2])   # its URDF origin in the link frame
        q2 = np.array([-1.0, 0.5])
        v.show(q2)
        assert_frames_at(v, q2)
        assert v.joint_sliders["shoulder"].value == pytest.approx(-1.0)
        v.joint_sliders["elbow"].value = 0.25       # as a move in the page: the robot follows
        np.testing.assert_allclose(v.q, [-1.0, 0.25])
        v.show_frames.value = True          # the axes of every frame, each frame where it is
        assert all(h.show_axes for h in v.frame_nodes.values())
        assert_frames_at(v, np.array([-1.0, 0.25]))
    finally:
        v.close()
    v.close()
    assert port_is_free(v.port)


def test_trajectory_time_slider_and_play(two_link):
    t = np.linspace(0.0, 2.0, 41)
    Q = np.stack([np.sin(t), 0.5 * t], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VisualWarning)
        v = view(two_link, (t, Q), port=0)
    try:
        s = v.time_slider
        assert (s.min, s.max, s.value) == (0.0, 2.0, 0.0)
        assert_frames_at(v, Q[0])
        s.value = 1.0                       # the slider moved: the robot is at the sample of t = 1
        assert_frames_at(v, Q[20])
        v.seek(0.0)
        v.play()
        time.sleep(0.6)
        v.pause()
        reached = s.value
        assert 0.2 < reached < 2.0 and v.play_button.label == "Play"
        time.sleep(0.3)
        assert s.value == reached           # paused
        k = int(np.searchsorted(t, reached - 1e-9))
        assert_frames_at(v, Q[k])
        with pytest.raises(InputError, match="trajectory"), warnings.catch_warnings():
            warnings.simplefilter("ignore", VisualWarning)
            view(two_link, (t, Q[:, :1]), port=0)
    finally:
        v.close()


def test_floating_base_robot_sliders_for_its_joints_only():
    """solo12 floats (a free-flyer: 7 entries of q, a quaternion among them): a slider for each of its
    12 joints, none for the base; the frames where forward_kinematics puts them at its home pose."""
    model, q = screwdyn.models.load("solo12"), screwdyn.models.home("solo12")
    v = view(model, q, port=0)
    try:
        assert model.nq == 19 and len(v.joint_sliders) == 12 and "root_joint" not in v.joint_sliders
        assert_frames_at(v, q)
        v.joint_sliders["FL_KFE"].value = -1.0
        i = model.idx_qs[model.joint_index("FL_KFE")]
        assert v.q[i] == -1.0 and np.array_equal(np.delete(v.q, i), np.delete(q, i))
    finally:
        v.close()


def test_trajectory_view_of_a_simulation():
    """Trajectory.view() knows the model it was simulated with; a bundled robot without visuals
    shows its stick figure."""
    model = screwdyn.models.load("planar_2r")
    traj = screwdyn.simulate(model, np.array([0.3, 0.2]), np.zeros(2), duration=0.05, dt=0.01)
    v = traj.view(port=0, com=False)
    try:
        assert len(v.nodes) == len(parts(model)) and not v.com_node.visible
        assert v.time_slider.max == pytest.approx(0.05)
    finally:
        v.close()
    bare = screwdyn.Trajectory(t=traj.t, q=traj.q, qd=traj.qd, qdd=traj.qdd, tau=traj.tau,
                               kinetic_energy=traj.kinetic_energy, potential_energy=traj.potential_energy)
    with pytest.raises(InputError, match="pass it"):
        bare.view()


@pytest.mark.parametrize("command", [("view", "planar_2r", "--q", "0.5", "-0.5"),
                                     ("simulate", "pendulum", "--duration", "0.1", "--quiet", "--view")])
def test_cli_prints_the_url_and_serves_until_interrupted(command):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "screwdyn", *command, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("screwdyn: viewer at http://127.0.0.1:"), (line, proc.stderr.read())
        assert "ssh -L" in line
        url = line.split()[3]
        with urllib.request.urlopen(url, timeout=20) as r:
            assert r.status == 200 and b"<html" in r.read().lower()
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "viewer stopped" in err


# ---------------------------------------------------------------------------- a real browser
def test_in_a_headless_browser():
    """The page loads and connects, the scene holds a node per URDF visual (the UR5's 7 meshes), and
    moving the time slider in the page (its End key) moves the robot: the server's time follows and
    the picture in the page changes."""
    from browser import Browser, find_chromium

    exe, why = find_chromium()
    if exe is None:
        pytest.skip(why)
    pytest.importorskip("collada", reason="the UR5's meshes are COLLADA: pycollada")
    from screwdyn.io import example_robot_data_path

    model = screwdyn.load_urdf(example_robot_data_path("ur5"))
    t = np.array([0.0, 1.0])
    Q = np.array([[0.0, -1.2, 1.0, 0.0, 0.0, 0.0], [1.5, -0.4, 0.2, 0.0, 1.0, 0.0]])
    v = view(model, (t, Q), port=0, com=False)
    browser = Browser(exe, width=800, height=600, timeout=90)
    deadline = time.monotonic() + 240      # software WebGL on a busy machine is slow

    def until(condition, what):
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.1)

    def scene(img):   # the 3D view, left of the GUI panel and below the software-WebGL notice
        return img[160:, :440]

    try:
        assert len(v.nodes) == len(model.visuals) == 7
        browser.goto(v.url)
        until(v.server.get_clients, "the page did not connect")
        assert browser.js("document.querySelectorAll('canvas').length") >= 1
        v.show_geometry.value = False
        empty = scene(browser.settled_screenshot())
        v.show_geometry.value = True      # the robot appears once the page has its meshes
        until(lambda: np.any(scene(browser.screenshot()) != empty), "the robot never appeared in the page")
        before = scene(browser.settled_screenshot())
        thumb = ".mantine-Slider-root [role=slider]"       # the time slider, the first of the panel
        assert browser.js(f"document.querySelector('{thumb}').getAttribute('aria-valuenow')") == "0"
        browser.press(thumb, "End", 35)                   # the slider to its end in the page: t = 1
        until(lambda: v.time_slider.value == 1.0, "moving the time slider in the page did not reach the server")
        assert_frames_at(v, Q[1])
        after = scene(browser.settled_screenshot())
        changed = np.any(before != after, axis=2).mean()
        assert changed > 0.01, changed
    finally:
        browser.close()
        v.close()


def test_environment_collision_geometry_and_contacts(two_link):
    """The environment's obstacles under /environment, its ground as a grid in its plane, the
    collision geometry hidden until its box is ticked, and a trajectory's contacts (markers and
    force arrows) following the time slider."""
    from screwdyn.environment import Box, Environment, Ground

    env = Environment(Ground(height=-0.1), Box((0.65, 0, 0.15), (0.3, 0.3, 0.3)))
    model = two_link.replace(collisions=(screwdyn.Collision("hand", "sphere", np.eye(4), (0.05,)),))
    t = np.linspace(0.0, 1.0, 5)
    Q = np.stack([np.linspace(0, 1.4, 5), np.zeros(5)], axis=1)
    contacts = screwdyn.detect(model, Q, env)
    assert contacts.count.tolist() == [0, 0, 0, 0, 1]     # the hand reaches into the box
    forces = np.zeros(contacts.data.shape[:2] + (3,))
    forces[4, 0] = [-8.0, 0.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VisualWarning)
        v = view(model, (t, Q), port=0, environment=env, contacts=contacts, forces=forces)
    try:
        registry = v.server.scene._handle_from_node_name
        assert "/environment/box_1" in registry
        np.testing.assert_allclose(registry["/floor"].position[2], -0.1)
        hand = v.nodes["hand/collision_0"]
        assert not hand.visible
        v.show_collision.value = True
        assert hand.visible
        assert "/contacts/points" not in registry
        v.seek(1.0)
        np.testing.assert_allclose(registry["/contacts/points"].points, contacts.pos[4, :1], atol=1e-6)
        arrow = registry["/contacts/forces"].points
        np.testing.assert_allclose(arrow[0, 1] - arrow[0, 0], forces[4, 0] * v.force_scale, atol=1e-6)
        v.seek(0.0)
        assert "/contacts/points" not in registry
    finally:
        v.close()
