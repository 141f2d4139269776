"""The compiled spatial-inertia operators against the 6x6 matrices of screwdyn.spatial and
screwdyn.inertia: G V, the congruence X^T G X of rigid and articulated inertias."""
import numpy as np
from numba import njit

from helpers import random_body, random_rotation
from screwdyn.algorithms import inertia_kernels as ik
from screwdyn.spatial import Ad, inverse_transform, transform


@njit
def _times(I, V, out):
    ik.inertia10_times(I, V, out)


@njit
def _transform(R, p, I, out):
    out[:] = ik.inertia_transform(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2],
                                  p[0], p[1], p[2], I[0], I[1], I[2], I[3], I[4], I[5], I[6], I[7], I[8], I[9])


@njit
def _matrix(I, G):
    ik.inertia10_to_matrix(I, G)


@njit
def _matrix6(R, p, IA, IAp, W):
    ik.matrix6_to_parent_add(R, p, IA, IAp, W)


def ten(body):
    """The 10 numbers (m, m c, I_o upper triangle) of a rigid body."""
    c, m = body.com, body.mass
    Io = body.inertia + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.concatenate([[m], m * c, Io[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]])


def test_rigid_inertia_operators_match_the_6x6_matrices(rng):
    for _ in range(5):
        body = random_body(rng)
        G = body.spatial_inertia()
        I10 = ten(body)
        Gm = np.empty((6, 6))
        _matrix(I10, Gm)
        assert np.allclose(Gm, G, atol=1e-14)
        V = rng.normal(size=6)
        out = np.empty(6)
        _times(I10, V, out)
        assert np.allclose(out, G @ V, atol=1e-13)
        T = transform(random_rotation(rng), rng.normal(size=3))          # pose of the body frame in the target
        X = Ad(inverse_transform(T))                                      # target twists -> body twists
        moved = np.empty(10)
        _transform(T[:3, :3], T[:3, 3], I10, moved)
        _matrix(moved, Gm)
        assert np.allclose(Gm, X.T @ G @ X, atol=1e-12)


def test_articulated_inertia_congruence(rng):
    for _ in range(5):
        A = rng.normal(size=(6, 6))
        IA = A @ A.T                                                      # any symmetric 6x6
        T = transform(random_rotation(rng), rng.normal(size=3))
        X = Ad(inverse_transform(T))
        IAp = np.eye(6)
        _matrix6(T[:3, :3], T[:3, 3], IA, IAp, np.empty((4, 3, 3)))
        assert np.allclose(IAp, np.eye(6) + X.T @ IA @ X, atol=1e-12)
