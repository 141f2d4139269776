"""The compiled spatial-inertia and spatial operators (algorithms/inertia_kernels.py and
algorithms/spatial_kernels.py, on tuples of numbers) against the 6x6 matrices of screwdyn.spatial
and screwdyn.inertia: G V, the congruence X^T G X of rigid and articulated inertias, Ad, ad, ad^T."""
import numpy as np

from helpers import kernel_jit, random_body, random_rotation
from screwdyn.algorithms import inertia_kernels as ik
from screwdyn.algorithms import spatial_kernels as sk
from screwdyn.spatial import Ad, ad, inverse_transform, skew, transform


def ten(body):
    """The 10 numbers (m, m c, I_o upper triangle) of a rigid body."""
    c, m = body.com, body.mass
    Io = body.inertia + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.concatenate([[m], m * c, Io[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]])


def matrix(I10):
    m, h, (xx, xy, xz, yy, yz, zz) = I10[0], I10[1:4], I10[4:]
    return np.block([[np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]), skew(h)], [skew(h).T, m * np.eye(3)]])


def upper(M):
    return np.array([M[a, b] for a in range(6) for b in range(a, 6)])


def symmetric(u):
    M = np.empty((6, 6))
    for a in range(6):
        for b in range(a, 6):
            M[a, b] = M[b, a] = u[ik.UPPER[a][b]]
    return M


@kernel_jit
def _apply(I, V):
    return ik.inertia_apply((I[0], I[1], I[2], I[3], I[4], I[5], I[6], I[7], I[8], I[9]),
                            (V[0], V[1], V[2], V[3], V[4], V[5]))


@kernel_jit
def _transform(T, I):
    return ik.inertia_transform((T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2]),
                                (T[0, 3], T[1, 3], T[2, 3]),
                                (I[0], I[1], I[2], I[3], I[4], I[5], I[6], I[7], I[8], I[9]))


@kernel_jit
def _articulated(I):
    return ik.articulated((I[0], I[1], I[2], I[3], I[4], I[5], I[6], I[7], I[8], I[9]))


@kernel_jit
def _articulated_shift(r, u):
    return ik.articulated_shift((r[0], r[1], r[2]), (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
                                                     u[10], u[11], u[12], u[13], u[14], u[15], u[16], u[17], u[18],
                                                     u[19], u[20]))


@kernel_jit
def _pose(T):
    return (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2], T[0, 3], T[1, 3], T[2, 3])


@kernel_jit
def _spatial(T, V, F):
    P = _pose(T)
    V6 = (V[0], V[1], V[2], V[3], V[4], V[5])
    F6 = (F[0], F[1], F[2], F[3], F[4], F[5])
    return (sk.twist_to_child(P, V6), sk.wrench_to_parent(P, F6), sk.ad(V6, F6), sk.cross_force(V6, F6),
            sk.twist_to_world(P, V6))


def test_rigid_inertia_operators_match_the_6x6_matrices(rng):
    for _ in range(5):
        body = random_body(rng)
        G = body.spatial_inertia()
        I10 = ten(body)
        assert np.allclose(matrix(I10), G, atol=1e-14)
        V = rng.normal(size=6)
        assert np.allclose(_apply(I10, V), G @ V, atol=1e-13)
        T = transform(random_rotation(rng), rng.normal(size=3))          # pose of the body frame in the target
        X = Ad(inverse_transform(T))                                      # target twists -> body twists
        assert np.allclose(matrix(np.array(_transform(T, I10))), X.T @ G @ X, atol=1e-12)
        assert np.array_equal(symmetric(np.array(_articulated(I10))), matrix(I10))


def test_articulated_inertia_congruence(rng):
    for _ in range(5):
        A = rng.normal(size=(6, 6))
        IA = A @ A.T                                                      # any symmetric 6x6
        r = rng.normal(size=3)
        X = np.block([[np.eye(3), np.zeros((3, 3))], [-skew(r), np.eye(3)]])   # X V = (w, v + w x r)
        moved = symmetric(np.array(_articulated_shift(r, upper(IA))))
        assert np.allclose(moved, X.T @ IA @ X, atol=1e-12)


def test_spatial_operators_match_the_6x6_matrices(rng):
    for _ in range(5):
        T = transform(random_rotation(rng), rng.normal(size=3))          # T_{p,i}
        V, F = rng.normal(size=6), rng.normal(size=6)
        child, parent, bracket, dual, world = (np.array(x) for x in _spatial(T, V, F))
        assert np.allclose(child, Ad(inverse_transform(T)) @ V, atol=1e-13)
        assert np.allclose(parent, Ad(inverse_transform(T)).T @ F, atol=1e-13)
        assert np.allclose(bracket, ad(V) @ F, atol=1e-13)
        assert np.allclose(dual, -ad(V).T @ F, atol=1e-13)
        assert np.allclose(world, Ad(T) @ V, atol=1e-13)
