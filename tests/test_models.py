"""Bundled robots: each against the closed form or the published numbers it comes from."""
import re
import warnings

import numpy as np
import pytest

import screwdyn
from screwdyn import models
from screwdyn.errors import ModelError

G = 9.81


def _tau(model, q, qd, qdd):
    return screwdyn.inverse_dynamics(model, q, qd, qdd)


def _M(model, q):
    return screwdyn.mass_matrix(model, q)


def test_names_and_loading():
    assert models.names() == ("planar_2r", "planar_rp", "pr", "cartesian_ppp", "pendulum", "puma560", "ur5", "panda",
                              "solo12", "talos_reduced")
    dofs = {"planar_2r": "RR", "planar_rp": "RP", "pr": "PR", "cartesian_ppp": "PPP", "pendulum": "R",
            "puma560": "RRRRRR", "ur5": "RRRRRR", "panda": "RRRRRRR", "solo12": "F" + "R" * 12,
            "talos_reduced": "F" + "R" * 32}
    upstream = {"solo12": "solo", "talos_reduced": "talos"}   # the robots' own names, files unmodified
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no bundled robot warns
        for name in models.names():
            m = models.load(name)
            assert "".join("RPFS"[t] for t in m.joint_type) == dofs[name]
            assert m.name == upstream.get(name, name)
            assert models.home(name).shape == (m.nq,)
            assert models.load(name) is m    # cached (models are immutable)
    with pytest.raises(ModelError, match="bundled robots are"):
        models.load("nope")


@pytest.mark.parametrize("name", models.names())
def test_every_file_cites_its_sources(name):
    text = models.path(name).read_text()
    comments = " ".join(re.findall(r"<!--(.*?)-->", text, flags=re.S))
    assert "Source" in comments or "source" in comments
    # the file is plain URDF that the loader reads as it is
    m = (screwdyn.load_urdf(models.path(name), floating_base=name in ("solo12", "talos_reduced"))
         if name != "puma560" else None)
    if m is not None:
        assert m.n == models.load(name).n


def test_planar_2r_is_the_textbook_arm(rng):
    """docs/theory.md §7.5, eqs. (7.13)-(7.15) / Modern Robotics 8.1.1 with m1 = m2 = L1 = L2 = 1."""
    arm = models.load("planar_2r")
    m1 = m2 = L1 = L2 = 1.0
    for _ in range(5):
        q, qd, qdd = rng.uniform(-3, 3, (3, 2))
        c1, c2, c12, s2 = np.cos(q[0]), np.cos(q[1]), np.cos(q.sum()), np.sin(q[1])
        M = np.array([[m1 * L1**2 + m2 * (L1**2 + 2 * L1 * L2 * c2 + L2**2), m2 * (L1 * L2 * c2 + L2**2)],
                      [m2 * (L1 * L2 * c2 + L2**2), m2 * L2**2]])
        c = np.array([-m2 * L1 * L2 * s2 * (2 * qd[0] * qd[1] + qd[1]**2), m2 * L1 * L2 * qd[0]**2 * s2])
        g = np.array([(m1 + m2) * L1 * G * c1 + m2 * G * L2 * c12, m2 * G * L2 * c12])
        np.testing.assert_allclose(_M(arm, q), M, atol=1e-12)
        np.testing.assert_allclose(_tau(arm, q, qd, qdd), M @ qdd + c + g, atol=1e-11)
    # the tip is at (L1 c1 + L2 c12, 0, L1 s1 + L2 s12)
    q = np.array([0.3, 0.4])
    T = screwdyn.frame_pose(arm, q, "tip")
    np.testing.assert_allclose(T[:3, 3], [np.cos(0.3) + np.cos(0.7), 0, np.sin(0.3) + np.sin(0.7)], atol=1e-14)


def test_planar_rp_closed_form(rng):
    arm = models.load("planar_rp")
    m1, L1, m2 = 1.0, 0.5, 0.5
    for _ in range(5):
        (th, r), (thd, rd), qdd = rng.uniform(0.2, 1.2, 2), rng.normal(size=2), rng.normal(size=2)
        M = np.diag([m1 * L1**2 + m2 * r**2, m2])
        c = np.array([2 * m2 * r * rd * thd, -m2 * r * thd**2])
        g = np.array([(m1 * L1 + m2 * r) * G * np.cos(th), m2 * G * np.sin(th)])
        np.testing.assert_allclose(_tau(arm, [th, r], [thd, rd], qdd), M @ qdd + c + g, atol=1e-12)


def test_pr_robot_of_note_004(rng):
    robot = models.load("pr")
    m1, m2, dc2, Ic2 = 5.0, 2.0, 0.3, 0.06
    for _ in range(5):
        q, qd, qdd = rng.normal(size=(3, 2))
        M = np.array([[m1 + m2, -m2 * dc2 * np.sin(q[1])], [-m2 * dc2 * np.sin(q[1]), Ic2 + m2 * dc2**2]])
        c = np.array([-m2 * dc2 * np.cos(q[1]) * qd[1]**2, 0.0])
        np.testing.assert_allclose(_tau(robot, q, qd, qdd), M @ qdd + c, atol=1e-12)   # g(q) = 0
    # the CoM of link 1 is at q1 - dc1
    assert screwdyn.center_of_mass(models.load("pr"), [0.4, 0.0])[0] == pytest.approx((5 * 0.15 + 2 * 0.7) / 7)


def test_cartesian_ppp_closed_form(rng):
    robot = models.load("cartesian_ppp")
    m1, m2, m3 = 4.0, 2.5, 1.5
    q, qd, qdd = rng.normal(size=(3, 3))
    np.testing.assert_allclose(_M(robot, q), np.diag([m1 + m2 + m3, m2 + m3, m3]), atol=1e-12)
    np.testing.assert_allclose(_tau(robot, q, qd, qdd), [(m1 + m2 + m3) * (qdd[0] + G), (m2 + m3) * qdd[1], m3 * qdd[2]],
                               atol=1e-12)


def test_pendulum_of_note_004(rng):
    """I thetadd + m g0 d sin(theta) = tau - (b_l + b_m n_r^2) thetadot + l cos(theta) F_x."""
    p = models.load("pendulum")
    m, d, l, Il, Im, nr, b = 1.0, 0.25, 0.5, 0.02083333333, 2e-5, 50.0, 0.02   # Il = m l^2 / 12 as written
    assert p.gear_ratio[0] == nr and p.rotor_inertia[0] == Im
    I = Il + m * d**2 + Im * nr**2
    assert I == pytest.approx(0.1333333333, abs=1e-10)
    for _ in range(5):
        th, thd, tau, Fx = rng.normal(size=4)
        # a horizontal (world x) force at the tip, expressed in the tip frame
        R = screwdyn.frame_pose(p, [th], "tip")[:3, :3]
        F_tip = np.concatenate([np.zeros(3), R.T @ [Fx, 0, 0]])
        qdd = screwdyn.forward_dynamics(p, [th], [thd], [tau], {"tip": F_tip}, friction=True)
        expected = (tau - b * thd + l * np.cos(th) * Fx - m * G * d * np.sin(th)) / I
        assert qdd[0] == pytest.approx(expected, abs=1e-12)


def test_puma560_matches_corkes_published_numbers():
    """Corke, Robotics, Vision and Control: p560.gravload(qn) and p560.inertia(qn) (armature included)."""
    puma = models.load("puma560")
    qn = models.home("puma560")
    np.testing.assert_allclose(qn, [0, np.pi / 4, np.pi, 0, np.pi / 4, 0])
    np.testing.assert_allclose(screwdyn.gravity_torques(puma, qn), [0, 31.6399, 6.0351, 0, 0.0283, 0], atol=5e-5)
    M_corke = np.array([
        [3.6594, -0.4044, 0.1006, -0.0025, 0.0000, -0.0000],
        [-0.4044, 4.4138, 0.3509, 0.0000, 0.0024, 0.0000],
        [0.1006, 0.3509, 0.9378, 0.0000, 0.0015, 0.0000],
        [-0.0025, 0.0000, 0.0000, 0.1925, 0.0000, 0.0000],
        [0.0000, 0.0024, 0.0015, 0.0000, 0.1713, 0.0000],
        [-0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.1941]])
    np.testing.assert_allclose(_M(puma, qn), M_corke, atol=1.5e-4)
    # drive trains: reflected rotor inertia Jm G^2 and link-side viscous friction B G^2
    G_ratio = np.array([62.6111, 107.815, 53.7063, 76.0364, 71.923, 76.686])
    Jm = np.array([200e-6] * 3 + [33e-6] * 3)
    np.testing.assert_allclose(puma.armature, Jm * G_ratio**2)
    np.testing.assert_allclose(puma.damping, np.array([1.48e-3, .817e-3, 1.38e-3, 71.2e-6, 82.6e-6, 36.7e-6]) * G_ratio**2,
                               rtol=1e-9)


def _erd(name):
    from screwdyn.io.urdf import example_robot_data_path
    try:
        path = example_robot_data_path(name)
    except Exception as e:  # noqa: BLE001 - not installed
        pytest.skip(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return screwdyn.load_urdf(path)


def test_ur5_is_ur_description_with_the_wrist_radius_corrected(rng):
    ours, erd = models.load("ur5"), _erd("ur5")
    assert ours.joint_names == erd.joint_names
    np.testing.assert_allclose(ours.T_parent_body, erd.T_parent_body, atol=1e-12)
    np.testing.assert_allclose(ours.mass, erd.mass)
    np.testing.assert_allclose(ours.com, erd.com, atol=1e-12)
    np.testing.assert_allclose(ours.inertia_com[:3], erd.inertia_com[:3], rtol=1e-9)
    # ur_description's wrist cylinders have radius 0.6 m; ours 0.06 m
    r, L, m = 0.06, 0.12, ours.mass[3:]
    np.testing.assert_allclose(ours.inertia_com[3:, 0, 0], 0.0833333 * m * (3 * r**2 + L**2), rtol=1e-9)
    np.testing.assert_allclose(ours.inertia_com[3:, 2, 2], 0.5 * m * r**2, rtol=1e-9)
    np.testing.assert_allclose(erd.inertia_com[3:, 2, 2], 0.5 * m * 0.6**2, rtol=1e-9)
    # with ur_description's wrist inertias the dynamics are the same
    patched = ours.replace(inertia_com=erd.inertia_com)
    q, qd, qdd = rng.normal(size=(3, 6))
    np.testing.assert_allclose(_tau(patched, q, qd, qdd), _tau(erd, q, qd, qdd), atol=1e-10)
    for f in ("tool0", "ee_link", "base"):
        np.testing.assert_allclose(screwdyn.frame_pose(ours, q, f), screwdyn.frame_pose(erd, q, f), atol=1e-12)


def test_panda_is_franka_description_arm_with_gaz_friction(rng):
    ours, erd = models.load("panda"), _erd("panda")
    n = 7
    assert ours.joint_names == erd.joint_names[:n]
    np.testing.assert_allclose(ours.mass[:6], erd.mass[:6])
    # body 7 carries link 7, the hand and both fingers (the finger joints are fixed here)
    assert ours.mass[6] == pytest.approx(erd.mass[6] + erd.mass[7] + erd.mass[8])
    np.testing.assert_allclose(ours.inertia_com[:6], erd.inertia_com[:6], atol=1e-12)
    q = rng.normal(size=n)
    q_erd = np.concatenate([q, [0.0, 0.0]])
    for f in ("panda_link1", "panda_link4", "panda_link7", "panda_hand", "panda_hand_tcp"):
        np.testing.assert_allclose(screwdyn.frame_pose(ours, q, f), screwdyn.frame_pose(erd, q_erd, f), atol=1e-12)
    # Gaz et al. 2019: masses of the identified model, and Coulomb level A / 2
    np.testing.assert_allclose(ours.mass[:6], [4.970684, 0.646926, 3.228604, 3.587895, 1.225946, 1.666555])
    A = np.array([0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489])
    np.testing.assert_allclose(ours.friction, A / 2)
    assert not ours.damping.any() and not ours.armature.any()


# ---------------------------------------------------------------------------- model specs
ONE_LINK = """<?xml version="1.0"?>
<robot name="one_link">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 -0.2"/><mass value="1.5"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="5"/></joint>
</robot>
"""


def test_resolve_a_bundled_name():
    source = models.resolve("pendulum")
    assert (source.spec, source.kind, source.path) == ("pendulum", "bundled", models.path("pendulum"))
    assert models.load(source) is models.load("pendulum")        # the same cached model
    assert models.resolve("ur5").kind == "bundled"                 # before example-robot-data's ur5


def test_resolve_and_load_a_urdf_path(tmp_path):
    p = tmp_path / "one_link.urdf"
    p.write_text(ONE_LINK)
    for spec in (p, str(p)):
        source = models.resolve(spec)
        assert (source.kind, source.path) == ("urdf", p)
    m = models.load(str(p))
    assert (m.name, m.joint_names, m.mass[0]) == ("one_link", ("shoulder",), 1.5)
    p.write_text(ONE_LINK.replace('<mass value="1.5"/>', '<mass value="2.5"/>'))
    assert models.load(p).mass[0] == 2.5                           # a user's file is read again


def test_resolve_an_example_robot_data_name():
    from screwdyn.io.urdf import example_robot_data_path

    try:
        expected = example_robot_data_path("double_pendulum")
    except FileNotFoundError as e:
        pytest.skip(str(e))
    source = models.resolve("double_pendulum")
    assert (source.kind, source.path) == ("example-robot-data", expected)
    assert models.load("double_pendulum").n == 2
    # kinds narrows and orders the search: example-robot-data's ur5, not the bundled one
    source = models.resolve("ur5", kinds=("example-robot-data", "urdf"))
    assert (source.kind, source.path) == ("example-robot-data", example_robot_data_path("ur5"))


def test_unknown_model_says_what_was_tried(tmp_path):
    with pytest.raises(ModelError) as e:
        models.resolve("no_such_robot")
    msg = str(e.value)
    assert msg.startswith("unknown model 'no_such_robot': not a bundled robot (bundled robots are planar_2r, ")
    assert "; not a URDF file (no such file); not an example-robot-data robot (" in msg
    assert "\n" not in msg                                          # one line for the command line
    with pytest.raises(ModelError, match=r"not a URDF file \(a directory\)"):
        models.load(tmp_path)
    with pytest.raises(ModelError) as e:
        models.resolve("no_such_robot", kinds=("bundled",))
    assert "URDF" not in str(e.value) and "example-robot-data" not in str(e.value)
    with pytest.raises(ValueError, match="unknown kind 'zip'"):
        models.resolve("panda", kinds=("zip",))
