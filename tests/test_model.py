"""The model and its builder: tree checks, merging of fixed joints, screw-list models."""
import numpy as np
import pytest

import screwdyn
from helpers import random_model, random_state
from screwdyn.errors import ModelError
from screwdyn.inertia import RigidBody, box, point_mass
from screwdyn.spatial import exp_so3, transform


def chain(*joints):
    b = screwdyn.ModelBuilder("chain")
    parent = "base"
    for k, jt in enumerate(joints):
        b.add_body(f"l{k}", parent, f"j{k}", jt, origin=transform(None, [0.1, 0, 0]), inertial=point_mass(1.0, [0.1, 0, 0]))
        parent = f"l{k}"
    return b


def test_fixed_joint_is_merged_and_kept_as_a_frame():
    b = chain("revolute")
    T = transform(exp_so3([0.2, 0.1, -0.3]), [0.3, 0.1, 0.0])
    tool = box(0.5, 0.1, 0.1, 0.2, com=[0, 0, 0.05])
    b.add_body("tool", "l0", "tool_joint", "fixed", origin=T, inertial=tool)
    model = b.build()
    assert model.n == 1
    k = model.frame_index("tool")
    assert model.frame_body[k] == 0 and np.allclose(model.frame_pose[k], T)
    lumped = point_mass(1.0, [0.1, 0, 0]) + tool.transformed(T)
    assert np.isclose(model.mass[0], 1.5)
    assert np.allclose(model.com[0], lumped.com) and np.allclose(model.inertia_com[0], lumped.inertia)


def test_merging_preserves_dynamics(rng):
    """A fixed joint between two moving joints gives the same torques as the lumped model."""
    body2 = RigidBody(0.8, [0.05, 0.02, 0.1], box(0.8, 0.1, 0.2, 0.3).inertia)
    T1, T2 = transform(exp_so3([0.3, 0, 0]), [0, 0, 0.4]), transform(exp_so3([0, 0.5, 0]), [0.2, 0, 0])
    a = screwdyn.ModelBuilder("a")
    a.add_body("l1", "base", "j1", "revolute", axis=(0, 1, 0), inertial=point_mass(1.0, [0, 0, 0.2]))
    a.add_body("mid", "l1", "fix", "fixed", origin=T1, inertial=body2)
    a.add_body("l2", "mid", "j2", "revolute", axis=(1, 0, 0), origin=T2, inertial=point_mass(0.5, [0.1, 0, 0]))
    b = screwdyn.ModelBuilder("b")
    b.add_body("l1", "base", "j1", "revolute", axis=(0, 1, 0), inertial=point_mass(1.0, [0, 0, 0.2]) + body2.transformed(T1))
    b.add_body("l2", "l1", "j2", "revolute", axis=(1, 0, 0), origin=T1 @ T2, inertial=point_mass(0.5, [0.1, 0, 0]))
    ma, mb = a.build(), b.build()
    q, qd, qdd = random_state(rng, 2)
    assert np.allclose(screwdyn.inverse_dynamics(ma, q, qd, qdd), screwdyn.inverse_dynamics(mb, q, qd, qdd))


def test_bodies_are_ordered_parents_first(rng):
    for _ in range(20):
        model = random_model(rng, n=int(rng.integers(1, 20)), fixed=3, branching=0.8)
        assert np.all(model.parent < np.arange(model.n))
        assert len(set(model.joint_names)) == model.n


def test_attributes_and_defaults():
    model = chain("revolute", "prismatic", "continuous").build()
    assert model.n == 3 and model.joint_names == ("j0", "j1", "j2")
    assert list(model.joint_type) == [screwdyn.REVOLUTE, screwdyn.PRISMATIC, screwdyn.REVOLUTE]
    assert np.allclose(model.gravity, [0, 0, -9.81])
    assert model.q_lower[2] == -np.inf and model.q_upper[2] == np.inf
    assert model.link_names == ("l0", "l1", "l2") and model.frame_names[0] == "base"
    assert np.allclose(model.armature, 0) and model.total_mass == 3.0
    with pytest.raises(ValueError):
        model.mass[0] = 2.0   # immutable
    assert "RPR" in repr(model)


def test_armature_is_gear_ratio_squared_times_rotor_inertia():
    b = screwdyn.ModelBuilder()
    b.add_body("l", "base", "j", "revolute", inertial=point_mass(1.0, [1, 0, 0]), rotor_inertia=2e-5, gear_ratio=100)
    model = b.build()
    assert np.isclose(model.armature[0], 0.2)
    # docs/theory.md eq. (4.5): the rotor adds n_r^2 I_m to the inertia seen at the joint
    assert np.isclose(screwdyn.inverse_dynamics(model.with_gravity([0, 0, 0]), [0.0], [0.0], [1.0])[0], 1.0 + 0.2)


@pytest.mark.parametrize("build, match", [
    (lambda b: b.add_body("l0", "base", "j9", "revolute"), "link 'l0' is defined twice"),
    (lambda b: b.add_joint("j0", "revolute", "base", "l0"), "joint 'j0' is defined twice"),
    (lambda b: b.add_body("x", "nowhere", "jx", "revolute"), "joint 'jx': parent link 'nowhere' is not defined"),
    (lambda b: b.add_body("x", "l0", "jx", "planar"), "joint 'jx': unsupported joint type 'planar'"),
    (lambda b: b.add_body("x", "l0", "jx", "revolute", axis=(0, 0, 0)), "joint 'jx': axis"),
    (lambda b: b.add_body("x", "l0", "jx", "revolute", lower=1.0, upper=0.0), "joint 'jx': lower limit"),
    (lambda b: b.add_body("x", "l0", "jx", "revolute", damping=-1.0), "joint 'jx': damping"),
    (lambda b: b.add_body("x", "l0", "jx", "revolute", origin=np.diag([2.0, 1, 1, 1])), "joint 'jx': origin rotation"),
    (lambda b: b.add_body("x", "l0", "jx", "revolute", mass=-2.0), "link 'x': negative mass"),
])
def test_builder_errors_name_the_element(build, match):
    b = chain("revolute")
    with pytest.raises(ModelError, match=match):
        build(b)
        b.build()


def test_topology_errors():
    b = chain("revolute", "revolute")
    b.add_joint("second_parent", "revolute", "base", "l1")
    with pytest.raises(ModelError, match="link 'l1' has two parents"):
        b.build()
    b = chain("revolute")
    b.add_link("orphan")
    with pytest.raises(ModelError, match="several roots.*orphan"):
        b.build()
    b = chain("revolute")
    b.add_link("a").add_link("c")
    b.add_joint("ja", "revolute", "c", "a").add_joint("jc", "revolute", "a", "c")
    with pytest.raises(ModelError, match="loop"):
        b.build()
    b = chain("revolute")
    b.add_joint("jb", "revolute", "l0", "base")
    with pytest.raises(ModelError, match="base link"):
        b.build()


def test_from_screws_rejects_pitched_screws_and_bad_shapes():
    Ms = [np.eye(4), np.eye(4)]
    Gs = [np.diag([1, 1, 1, 1, 1, 1.0])]
    with pytest.raises(ModelError, match="S_list\\[0\\]"):
        screwdyn.Model.from_screws(Ms, Gs, np.array([[0, 0, 1, 0, 0, 1.0]]).T)   # pitch 1
    with pytest.raises(ModelError, match="\\(6, n\\)"):
        screwdyn.Model.from_screws(Ms, Gs, np.zeros((3, 1)))
    with pytest.raises(ModelError, match="G_list\\[0\\]"):
        screwdyn.Model.from_screws(Ms, [np.full((6, 6), np.nan)], [np.array([0, 0, 1, 0, 0, 0.0])])


def test_replace_repacks(rng):
    model = random_model(rng, n=4)
    q, qd, qdd = random_state(rng, 4)
    heavier = model.replace(mass=model.mass * 2, inertia_com=model.inertia_com * 2)
    g0 = model.with_gravity([0, 0, 0])
    assert np.allclose(screwdyn.inverse_dynamics(heavier, q, qd, qdd), 2 * screwdyn.inverse_dynamics(model, q, qd, qdd))
    assert not np.allclose(screwdyn.inverse_dynamics(g0, q, qd, qdd), screwdyn.inverse_dynamics(model, q, qd, qdd))
    with pytest.raises(ModelError, match="gravity"):
        model.with_gravity([0, np.nan, 0])
