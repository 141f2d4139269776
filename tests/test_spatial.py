"""Identities of the Lie algebra on SE(3) (docs/theory.md §2), checked on random inputs."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from screwdyn.spatial import (
    Ad, ad, ad_dual, exp_se3, exp_so3, inverse_transform, log_se3, log_so3, rotation_from_rpy,
    rpy_from_rotation, skew, transform, twist_matrix, unskew,
)

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
vec3 = arrays(float, 3, elements=finite)
vec6 = arrays(float, 6, elements=finite)
small_angle = arrays(float, 3, elements=st.floats(-3.0, 3.0))


def pose(w, p):
    return transform(exp_so3(w), p)


@given(vec3, vec3)
def test_skew_is_cross_product(a, b):
    assert np.allclose(skew(a) @ b, np.cross(a, b), atol=1e-9)
    assert np.allclose(skew(a), -skew(a).T)
    assert np.allclose(unskew(skew(a)), a)


@given(vec3, vec3)
def test_skew_product_identity(a, b):
    # [a][b] = b a^T - (a^T b) I
    assert np.allclose(skew(a) @ skew(b), np.outer(b, a) - a @ b * np.eye(3), atol=1e-9)


@given(small_angle, vec3)
def test_rotation_conjugates_skew(w, a):
    # [R a] = R [a] R^T
    R = exp_so3(w)
    assert np.allclose(skew(R @ a), R @ skew(a) @ R.T, atol=1e-9)


@given(vec3, vec3, vec3)
def test_triple_product_is_cyclic(a, b, c):
    # a^T [b] c = c^T [a] b = b^T [c] a
    x = a @ skew(b) @ c
    assert np.isclose(x, c @ skew(a) @ b, atol=1e-8 * (1 + abs(x)))
    assert np.isclose(x, b @ skew(c) @ a, atol=1e-8 * (1 + abs(x)))


@given(small_angle, vec3, small_angle, vec3)
def test_adjoint_is_a_homomorphism(w1, p1, w2, p2):
    T1, T2 = pose(w1, p1), pose(w2, p2)
    assert np.allclose(Ad(T1 @ T2), Ad(T1) @ Ad(T2), atol=1e-9)


@given(small_angle, vec3)
def test_adjoint_of_inverse_is_inverse(w, p):
    T = pose(w, p)
    assert np.allclose(Ad(inverse_transform(T)), np.linalg.inv(Ad(T)), atol=1e-9)
    assert np.allclose(inverse_transform(T) @ T, np.eye(4), atol=1e-12)


@given(small_angle, vec3, vec6)
def test_adjoint_matches_matrix_conjugation(w, p, V):
    # [Ad_T V] = T [V] T^-1
    T = pose(w, p)
    assert np.allclose(twist_matrix(Ad(T) @ V), T @ twist_matrix(V) @ inverse_transform(T), atol=1e-8)


@given(vec6, vec6)
def test_ad_is_the_lie_bracket(V, W):
    # [ad_V] W = [V][W] - [W][V] in matrix form
    bracket = twist_matrix(V) @ twist_matrix(W) - twist_matrix(W) @ twist_matrix(V)
    assert np.allclose(twist_matrix(ad(V) @ W), bracket, atol=1e-8)


@given(vec6, vec6)
def test_ad_dual_is_ad_transpose(V, F):
    assert np.allclose(ad_dual(V, F), ad(V).T @ F, atol=1e-8)


@given(small_angle, vec3, vec6, vec6)
def test_power_is_frame_invariant(w, p, V, F):
    # F_b^T V_b = F_a^T V_a with V_a = Ad V_b and F_b = Ad^T F_a
    A = Ad(pose(w, p))
    assert np.isclose((A.T @ F) @ V, F @ (A @ V), atol=1e-7 * (1 + np.abs(F).sum() * np.abs(V).sum()))


@given(small_angle, vec3)
def test_exp_log_se3_roundtrip(w, p):
    T = pose(w, p)
    assert np.allclose(exp_se3(log_se3(T)), T, atol=1e-9)


@given(arrays(float, 6, elements=st.floats(-1.8, 1.8)))
def test_log_exp_se3_roundtrip(V):
    # the log is the inverse of exp only for rotation angles below pi (|omega| <= 1.8 sqrt 3 < pi)
    assert np.allclose(log_se3(exp_se3(V)), V, atol=1e-8)


def test_exp_se3_is_matrix_exponential(rng):
    from scipy.linalg import expm
    for _ in range(20):
        V = rng.normal(size=6)
        assert np.allclose(exp_se3(V), expm(twist_matrix(V)), atol=1e-10)
    assert np.allclose(exp_se3(np.array([0, 0, 0, 1.0, 2.0, 3.0]))[:3, 3], [1, 2, 3])


@pytest.mark.parametrize("angle", [0.0, 1e-10, 1e-5, 1.0, np.pi - 1e-7, np.pi])
def test_log_so3_edge_angles(angle):
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    R = exp_so3(axis * angle)
    assert np.allclose(exp_so3(log_so3(R)), R, atol=1e-9)
    assert np.isclose(np.linalg.norm(log_so3(R)), angle, atol=1e-6)


@given(arrays(float, 3, elements=st.floats(-3.1, 3.1)))
@settings(max_examples=50)
def test_rpy_roundtrip(rpy):
    R = rotation_from_rpy(rpy)
    assert np.allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.allclose(rotation_from_rpy(rpy_from_rotation(R)), R, atol=1e-9)


def test_rpy_is_fixed_axis_xyz():
    r, p, y = 0.3, -0.2, 1.1
    assert np.allclose(rotation_from_rpy([r, p, y]), exp_so3([0, 0, y]) @ exp_so3([0, p, 0]) @ exp_so3([r, 0, 0]))
