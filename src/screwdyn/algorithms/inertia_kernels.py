"""Spatial-inertia operators for the compiled kernels, on tuples of plain numbers.

A rigid body's (or a composite's) spatial inertia is ten numbers, in the order of the packed model
row (columns ``MASS:MASS + 10`` of :mod:`.layout`; docs/theory.md §3)::

    I = (m, h_x, h_y, h_z, Ixx, Ixy, Ixz, Iyy, Iyz, Izz)

with ``h = m c`` the first moment and ``I_o`` the rotational inertia about the frame's origin. As
a 6x6 matrix in ``(omega, v)`` order::

    G = [[I_o, [h]], [[h]^T, m 1]],      G V = (I_o w + h x v, m v - h x w)

An articulated inertia (ABA) is no rigid-body inertia: it is held as the 21 numbers of the upper
triangle of a symmetric 6x6 matrix, row by row (:data:`UPPER`). A frame change ``X`` moves an
inertia as ``X^T G X`` (a congruence: symmetry and the ten-number form are kept):

* :func:`inertia_apply`      ``G V``
* :func:`inertia_rotate`     ``X^T G X`` for a rotation ``R``: ``(m, R h, R I_o R^T)``
* :func:`inertia_shift`      ``X^T G X`` for a translation of the origin by ``-r``
* :func:`inertia_transform`  both: an inertia given in a frame at pose ``(R, p)``, in the outer frame
* :func:`articulated`        the 21 numbers of ``G``
* :func:`articulated_shift`  ``X^T IA X`` of an articulated inertia for a translation
"""

from .internals import dot3, fma, matmul3
from .layout import MASS
from .target import HELPER, njit

# Where entry (a, b), a <= b, of a symmetric 6x6 matrix sits among its 21 upper-triangle numbers.
UPPER = ((0, 1, 2, 3, 4, 5), (1, 6, 7, 8, 9, 10), (2, 7, 11, 12, 13, 14), (3, 8, 12, 15, 16, 17),
         (4, 9, 13, 16, 18, 19), (5, 10, 14, 17, 19, 20))


@njit(**HELPER)
def body_inertia(kd, i):
    """Body ``i``'s inertia in its own frame: ten numbers from the packed model row."""
    return (kd[i, MASS], kd[i, MASS + 1], kd[i, MASS + 2], kd[i, MASS + 3], kd[i, MASS + 4], kd[i, MASS + 5],
            kd[i, MASS + 6], kd[i, MASS + 7], kd[i, MASS + 8], kd[i, MASS + 9])


@njit(**HELPER)
def massless(kd, i):
    """Whether body ``i`` has no inertia at all (all ten numbers zero: a URDF link without
    ``<inertial>``, the massless rows of a free-flyer or spherical joint): its own wrench, ``G_i``
    applied to anything, is zero."""
    for c in range(10):
        if kd[i, MASS + c] != 0.0:
            return False
    return True


@njit(**HELPER)
def inertia_apply(I, V):
    """``G V = (I_o w + h x v, m v - h x w)``."""
    m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz = I
    w0, w1, w2, v0, v1, v2 = V
    return (fma(-h2, v1, fma(h1, v2, dot3(ixx, ixy, ixz, w0, w1, w2))),
            fma(-h0, v2, fma(h2, v0, dot3(ixy, iyy, iyz, w0, w1, w2))),
            fma(-h1, v0, fma(h0, v1, dot3(ixz, iyz, izz, w0, w1, w2))),
            fma(m, v0, -fma(h1, w2, -h2 * w1)),
            fma(m, v1, -fma(h2, w0, -h0 * w2)),
            fma(m, v2, -fma(h0, w1, -h1 * w0)))


@njit(**HELPER)
def inertia_rotate(R, I):
    """``X^T G X`` for a pure rotation: ``(m, R h, R I_o R^T)``, ``R`` row-major (nine numbers).
    ``R I_o R^T`` is written with ``T = R I_o`` (rows): entry ``(a, b)`` is ``T_a . R_b``."""
    m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz = I
    t = matmul3(R, (ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz))
    return (m, dot3(R[0], R[1], R[2], h0, h1, h2), dot3(R[3], R[4], R[5], h0, h1, h2),
            dot3(R[6], R[7], R[8], h0, h1, h2),
            dot3(t[0], t[1], t[2], R[0], R[1], R[2]), dot3(t[0], t[1], t[2], R[3], R[4], R[5]),
            dot3(t[0], t[1], t[2], R[6], R[7], R[8]), dot3(t[3], t[4], t[5], R[3], R[4], R[5]),
            dot3(t[3], t[4], t[5], R[6], R[7], R[8]), dot3(t[6], t[7], t[8], R[6], R[7], R[8]))


@njit(**HELPER)
def inertia_shift(r, I):
    """``X^T G X`` for a pure translation (the origin moves to ``-r``; Steiner):
    ``h' = h + m r``, ``I_o' = I_o - (r h'^T + h r^T) + (h.r + h'.r) 1``."""
    m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz = I
    r0, r1, r2 = r
    g0 = fma(m, r0, h0)
    g1 = fma(m, r1, h1)
    g2 = fma(m, r2, h2)
    d = dot3(h0, h1, h2, r0, r1, r2) + dot3(g0, g1, g2, r0, r1, r2)
    return (m, g0, g1, g2,
            ixx - fma(r0, g0, h0 * r0) + d, ixy - fma(r0, g1, h0 * r1), ixz - fma(r0, g2, h0 * r2),
            iyy - fma(r1, g1, h1 * r1) + d, iyz - fma(r1, g2, h1 * r2), izz - fma(r2, g2, h2 * r2) + d)


@njit(**HELPER)
def inertia_transform(R, p, I):
    """``X^T G X``: the inertia ``I``, given in a frame whose pose in the outer frame is ``(R, p)``,
    in the outer frame: :func:`inertia_rotate`, then :func:`inertia_shift` by ``p``."""
    return inertia_shift(p, inertia_rotate(R, I))


@njit(**HELPER)
def articulated(I):
    """The 21 upper-triangle numbers of ``G = [[I_o, [h]], [[h]^T, m 1]]`` (:data:`UPPER`)."""
    m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz = I
    return (ixx, ixy, ixz, 0.0, -h2, h1,
            iyy, iyz, h2, 0.0, -h0,
            izz, -h1, h0, 0.0,
            m, 0.0, 0.0,
            m, 0.0,
            m)


@njit(**HELPER)
def articulated_shift(r, IA):
    """``X^T IA X`` for a symmetric ``IA = [[A, B], [B^T, C]]`` (21 numbers, :data:`UPPER`) and a
    translation ``X = [[1, 0], [-P, 1]]``, ``P = [r]``. With ``D = B + P C``::

        X^T IA X = [[A + P B^T - D P,  D],
                    [D^T,              C]]

    (``(P B^T)_ab = (r x B_b)_a``, ``(D P)_ab = (D_a x r)_b`` with ``B_b``, ``D_a`` rows)."""
    r0, r1, r2 = r
    (A00, A01, A02, B00, B01, B02, A11, A12, B10, B11, B12, A22, B20, B21, B22,
     C00, C01, C02, C11, C12, C22) = IA
    D00 = B00 + (r1 * C02 - r2 * C01)       # column b of D: B[:, b] + r x C[:, b]
    D10 = B10 + (r2 * C00 - r0 * C02)
    D20 = B20 + (r0 * C01 - r1 * C00)
    D01 = B01 + (r1 * C12 - r2 * C11)
    D11 = B11 + (r2 * C01 - r0 * C12)
    D21 = B21 + (r0 * C11 - r1 * C01)
    D02 = B02 + (r1 * C22 - r2 * C12)
    D12 = B12 + (r2 * C02 - r0 * C22)
    D22 = B22 + (r0 * C12 - r1 * C02)
    return (A00 + (r1 * B02 - r2 * B01) - (D01 * r2 - D02 * r1),
            A01 + (r1 * B12 - r2 * B11) - (D02 * r0 - D00 * r2),
            A02 + (r1 * B22 - r2 * B21) - (D00 * r1 - D01 * r0),
            D00, D01, D02,
            A11 + (r2 * B10 - r0 * B12) - (D12 * r0 - D10 * r2),
            A12 + (r2 * B20 - r0 * B22) - (D10 * r1 - D11 * r0),
            D10, D11, D12,
            A22 + (r0 * B21 - r1 * B20) - (D20 * r1 - D21 * r0),
            D20, D21, D22,
            C00, C01, C02, C11, C12, C22)
