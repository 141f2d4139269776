"""The constraint model (screwdyn.constraints): construction, validation with errors naming what is
wrong, immutability, a model carrying constraints through pickling and replace, and the packed
layout the kernels read (algorithms/constraint_layout.py). No kernel is compiled here."""
import pickle

import numpy as np
import pytest

import screwdyn
from screwdyn.algorithms.constraint_layout import (
    CANCHORED, CBODY_A, CBODY_B, CKIND, CNTERMS, COFFSET, CPOSE_A, CPOSE_B, CREF, CROW, CSIZE, CTERMS, FRAME, JOINT, LOCAL, POINT,
    WORLD,
)
from screwdyn.constraints import constraint_set, pack
from screwdyn.errors import InputError, ModelError


@pytest.fixture(scope="module")
def solo():
    return screwdyn.models.load("solo12")


def test_each_kind_holds_its_frames_and_placements(solo):
    c = screwdyn.PointContact(solo, "FL_FOOT", offset=(0.0, 0.0, -0.01), reference="world")
    k = solo.frame_index("FL_FOOT")
    assert (c.kind, c.size, c.reference, c.frame_a, c.body_a, c.body_b) == (
        "point", 3, "world", "FL_FOOT", solo.frame_body[k], -1)
    assert np.allclose(c.pose_a[:3, 3], solo.frame_pose[k][:3, 3] + solo.frame_pose[k][:3, :3] @ [0, 0, -0.01])
    f = screwdyn.FrameContact(solo, "HR_FOOT", reference="local_world_aligned")
    assert (f.size, f.reference) == (6, "world")
    T = screwdyn.spatial.transform(p=(0.0, 0.1, 0.0))
    loop = screwdyn.FrameLoop(solo, "FL_FOOT", "FR_FOOT", T_a_b=T, baumgarte=(10.0, 2.0))
    assert loop.size == 6 and (loop.Kp, loop.Kd) == (10.0, 2.0)
    assert np.allclose(loop.pose_a, solo.frame_pose[k] @ T)
    p = screwdyn.PointLoop(solo, "FL_FOOT", "world", offset_b=(1.0, 0.0, 0.0))
    assert p.body_b == -1 and np.allclose(p.pose_b[:3, 3], (1.0, 0.0, 0.0))
    j = screwdyn.JointCoupling(solo, {"FL_KFE": 1.0, "FR_KFE": -0.5}, offset=0.2)
    assert j.size == 1 and j.joints == ("FL_KFE", "FR_KFE") and j.offset == 0.2
    assert j.coefficients[solo.idx_qs[solo.joint_index("FR_KFE")]] == -0.5


@pytest.mark.parametrize("make, error, words", [
    (lambda m: screwdyn.PointContact(m, "no_such_frame"), ModelError, "unknown frame 'no_such_frame'"),
    (lambda m: screwdyn.PointContact(m, "world"), ModelError, "is on the fixed base"),
    (lambda m: screwdyn.PointContact(m, "FL_FOOT", (1.0, 2.0)), InputError, "offset must have shape (3,)"),
    (lambda m: screwdyn.PointContact(m, "FL_FOOT", (0.0, np.nan, 0.0)), InputError, "offset has a NaN"),
    (lambda m: screwdyn.PointContact(m, "FL_FOOT", reference="space"), InputError, "reference must be"),
    (lambda m: screwdyn.PointContact(m, "FL_FOOT", baumgarte=(1.0,)), InputError, "baumgarte must be a pair"),
    (lambda m: screwdyn.PointContact(m, "FL_FOOT", baumgarte=(-1.0, 0.0)), InputError, "Kp must be"),
    (lambda m: screwdyn.PointContact(m, "FL_FOOT", baumgarte=(1.0, 0.0)), InputError, "give anchor"),
    (lambda m: screwdyn.FrameContact(m, "FL_FOOT", anchor=np.ones((4, 4))), InputError, "not a rigid transform"),
    (lambda m: screwdyn.PointLoop(m, "world", "world"), ModelError, "both ends"),
    (lambda m: screwdyn.PointLoop(m, "FL_FOOT", "FL_LOWER_LEG"), ModelError, "same body"),
    (lambda m: screwdyn.FrameLoop(m, "FL_FOOT", "FR_FOOT", T_a_b=np.eye(3)), InputError, "T_a_b must have shape"),
    (lambda m: screwdyn.JointCoupling(m, {"root_joint": 1.0}), ModelError, "not revolute or prismatic"),
    (lambda m: screwdyn.JointCoupling(m, {"nope": 1.0}), ModelError, "unknown joint 'nope'"),
    (lambda m: screwdyn.JointCoupling(m, np.zeros(m.nq)), InputError, "every coefficient is zero"),
    (lambda m: screwdyn.JointCoupling(m, np.ones(m.nq)), ModelError, "'root_joint' is not revolute"),
    (lambda m: screwdyn.JointCoupling(m, np.ones(3)), InputError, "shape (19,)"),
    (lambda m: screwdyn.JointCoupling(m, {"FL_KFE": 1.0}, offset=np.inf), InputError, "offset is NaN or inf"),
    (lambda m: screwdyn.PointContact("solo", "FL_FOOT"), InputError, "model must be a screwdyn.Model"),
])
def test_construction_errors_name_what_is_wrong(solo, make, error, words):
    with pytest.raises(error) as e:
        make(solo)
    assert words in str(e.value)


def test_constraints_are_immutable_values(solo):
    c = screwdyn.PointContact(solo, "FL_FOOT")
    with pytest.raises(AttributeError):
        c.Kp = 1.0
    with pytest.raises(ValueError):
        c.pose_a[0, 0] = 2.0
    c2 = pickle.loads(pickle.dumps(c))
    assert c2.frame_a == "FL_FOOT" and not c2.pose_a.flags.writeable and c2.compatible(solo)


def test_a_model_carries_its_constraints_through_replace_and_pickle(solo):
    loop = screwdyn.PointLoop(solo, "FL_FOOT", "FR_FOOT")
    m = solo.replace(constraints=[loop])
    assert m.constraints == (loop,) and solo.constraints == ()
    m2 = pickle.loads(pickle.dumps(m))
    assert len(m2.constraints) == 1 and m2.constraints[0].frame_b == "FR_FOOT"
    m3 = m2.with_gravity((0.0, 0.0, -1.0))
    assert m3.constraints == m2.constraints and loop.compatible(m3)
    with pytest.raises(ModelError, match="not a screwdyn constraint"):
        solo.replace(constraints=("FL_FOOT",))
    other = screwdyn.models.load("ur5")
    with pytest.raises(ModelError, match="another tree"):
        other.replace(constraints=(loop,))
    with pytest.raises(InputError, match="made for another model"):
        pack(other, (loop,))


def test_packed_rows_follow_the_layout(solo):
    loop = screwdyn.FrameLoop(solo, "FL_FOOT", "FR_FOOT", reference="world")
    m = solo.replace(constraints=(loop,))
    c = screwdyn.PointContact(m, "HL_FOOT")
    j = screwdyn.JointCoupling(m, {"FL_KFE": 1.0, "FR_KFE": -2.0}, 0.3)
    cd, rows, every = pack(m, (c, j))
    assert every == (loop, c, j) and rows == 10 and constraint_set(m, (c, j)) == every
    assert pack(m, (c, j))[0] is cd                                  # packed once
    assert list(cd[:, CKIND]) == [FRAME, POINT, JOINT] and list(cd[:, CREF]) == [WORLD, LOCAL, LOCAL]
    assert list(cd[:, CROW]) == [0, 6, 9] and list(cd[:, CSIZE]) == [6, 3, 1]
    rows_of = m._body_row
    assert cd[0, CBODY_A] == rows_of[loop.body_a] and cd[0, CBODY_B] == rows_of[loop.body_b]
    assert cd[1, CBODY_B] == -1 and cd[2, CBODY_A] == -1
    assert np.allclose(cd[1, CPOSE_A:CPOSE_A + 9], c.pose_a[:3, :3].ravel())
    assert np.allclose(cd[1, CPOSE_A + 9:CPOSE_A + 12], c.pose_a[:3, 3])
    assert np.allclose(cd[0, CPOSE_B + 9:CPOSE_B + 12], loop.pose_b[:3, 3])
    assert cd[2, COFFSET] == 0.3 and cd[2, CNTERMS] == 2
    assert list(cd[:, CANCHORED]) == [1, 0, 1]                       # a contact without anchor has no error
    fl, fr = m.joint_index("FL_KFE"), m.joint_index("FR_KFE")
    assert list(cd[2, CTERMS:CTERMS + 6]) == [m.idx_qs[fl], m.idx_vs[fl], 1.0, m.idx_qs[fr], m.idx_vs[fr], -2.0]
    empty, none, _ = pack(solo, ())
    assert empty.shape[0] == 0 and none == 0
