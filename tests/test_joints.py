"""The joint interface (src/screwdyn/algorithms/joints.py): sine and cosine as polynomials, the
same numbers for one state and for states side by side, and joint poses against the library's
sin and cos."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from screwdyn.algorithms import joints
from helpers import kernel_jit, random_model

LIMIT = joints.SINCOS_LIMIT


@kernel_jit
def _sincos_many(x):
    out = np.empty((2, x.shape[0]))
    for k in range(x.shape[0]):
        out[0, k], out[1, k] = joints.sincos(x[k])
    return out


@kernel_jit
def _poses_lanes(kd, i, q):
    SC = np.empty((2, q.shape[1]))
    W = np.empty((12, q.shape[1]))
    joints.joint_poses(kd, i, q, SC, W, q.shape[1])
    return SC, W


@kernel_jit
def _poses(kd, q):
    out = np.empty((q.shape[0], 12))
    for i in range(q.shape[0]):
        T = joints.joint_pose(kd, i, q)
        for c in range(12):
            out[i, c] = T[c]
    return out


def _arguments(rng):
    """Arguments where a reduction goes wrong first: near multiples of pi/4 and pi/2, tiny, large."""
    k = np.arange(-400, 401)
    near = np.concatenate([k * np.pi / 4 + d for d in (0.0, 1e-12, -1e-12, 1e-7)])
    return np.concatenate([near, rng.uniform(-4, 4, 20000), rng.uniform(-1e4, 1e4, 20000),
                           rng.uniform(-LIMIT, LIMIT, 20000), [0.0, -0.0, 5e-324, 1e-300, LIMIT, -LIMIT]])


def test_sincos_is_within_two_ulp_of_the_library(rng):
    x = _arguments(rng)
    s, c = _sincos_many(x)
    # errors in units of the spacing of doubles at 1 (the argument itself is exact; the values
    # are bounded by 1, so this is the accuracy that the dynamics can see)
    assert np.abs(s - np.sin(x)).max() <= 2 * np.spacing(1.0)
    assert np.abs(c - np.cos(x)).max() <= 2 * np.spacing(1.0)
    small = np.abs(x) < 1e-8                    # sin x = x to the last bit there
    np.testing.assert_array_equal(s[small], x[small])
    np.testing.assert_array_equal(c[small], 1.0)
    assert np.all(np.abs(s) <= 1.0) and np.all(np.abs(c) <= 1.0)


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False))
def test_sincos_identity(x):
    s, c = _sincos_many(np.array([x]))[:, 0]
    assert abs(s * s + c * c - 1.0) <= 4 * np.spacing(1.0)
    assert abs(s - math.sin(x)) <= 2 * np.spacing(1.0) and abs(c - math.cos(x)) <= 2 * np.spacing(1.0)


def test_beyond_the_limit_the_library_answers():
    x = np.array([1.5 * LIMIT, -3e9, 1e300, -1e17])
    s, c = _sincos_many(x)
    np.testing.assert_array_equal(s, np.sin(x))
    np.testing.assert_array_equal(c, np.cos(x))


@pytest.mark.parametrize("m", [1, 5, 16])
def test_lanes_give_the_numbers_of_one_state(rng, m):
    """joint_poses fills the lanes exactly as joint_pose computes sin, cos and the pose for one
    state, arguments beyond SINCOS_LIMIT included (scaled joints too), every joint kind."""
    model = random_model(rng, n=6, fixed=0, prismatic=0.3, aligned=bool(m % 2))
    kd = model._kd.copy()
    kd[2, joints.JSCALE] = 2.5                  # a screw-list joint with a non-unit axis
    q = rng.uniform(-10, 10, (model.n, m))
    q[1, 0] = 3 * LIMIT
    q[2, m - 1] = -0.6 * LIMIT                  # scaled beyond the limit
    for i in range(model.n):
        SC, W = _poses_lanes(kd, i, q)
        if kd[i, joints.JTYPE] != joints.PRISMATIC:
            np.testing.assert_array_equal(SC, _sincos_many(q[i] * kd[i, joints.JSCALE]))
        for lane in range(m):
            np.testing.assert_array_equal(W[:, lane], _poses(kd, q[:, lane])[i])


def test_joint_pose_against_the_library(rng):
    """joint_pose with the polynomial sine and cosine agrees with Rodrigues' formula written with
    numpy's sin and cos, for coordinate and arbitrary axes, revolute and prismatic."""
    for aligned in (True, False):
        model = random_model(rng, n=8, fixed=0, prismatic=0.3, aligned=aligned)
        kd = model._kd
        q = rng.uniform(-7, 7, model.n)
        got = _poses(kd, q)
        for i in range(model.n):
            R0 = kd[i, joints.ROT:joints.ROT + 9].reshape(3, 3)
            p0 = kd[i, joints.POS:joints.POS + 3]
            a = kd[i, joints.AXIS:joints.AXIS + 3]
            x = q[i] * kd[i, joints.JSCALE]
            if kd[i, joints.JTYPE] == joints.PRISMATIC:
                R, p = R0, p0 + R0 @ a * x
            else:
                K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
                R, p = R0 @ (np.eye(3) + np.sin(x) * K + (1 - np.cos(x)) * K @ K), p0
            np.testing.assert_allclose(got[i, :9], R.ravel(), rtol=0, atol=1e-15)
            np.testing.assert_allclose(got[i, 9:], p, rtol=0, atol=1e-15)
