"""Spatial-inertia operators for the compiled kernels, written out component-wise.

A rigid body's (or a composite's) spatial inertia is held as 10 numbers, in the order of the
packed model row (columns ``MASS:MASS + 10`` of :mod:`.layout`)::

    I10 = (m, h_x, h_y, h_z, Ixx, Ixy, Ixz, Iyy, Iyz, Izz)

with ``h = m c`` the first moment and ``I_o = I_c + m [c]^T [c]`` the rotational inertia about
the frame origin. As a 6x6 matrix in ``(omega, v)`` order (note 001, ``G``)::

    G = [[I_o, [h]], [[h]^T, m 1]],      G V = (I_o w + h x v, m v - h x w)

Articulated inertias are not rigid-body inertias, so they are held as full 6x6 matrices.
For a body ``i`` whose pose in its parent is ``T_{p,i} = (R, p)`` the motion transform
parent -> child is ``X = [Ad_{T_{i,p}}] = [[R^T, 0], [-R^T [p], R^T]]`` and an inertia moves
to the parent as ``X^T G X`` (a congruence, so symmetry and 10-parameter form are kept):

* :func:`inertia10_times`          ``out = G V``
* :func:`inertia10_apply6`         ``G V`` returned as six numbers, ``V`` given as six numbers
  (:func:`inertia_apply`: the same with ``G`` given as its ten numbers too)
* :func:`inertia10_apply`          the same for ``V`` a row of an array
* :func:`inertia_transform`        ``I10' = X^T I10 X`` in plain numbers, with ``(R, p)`` the pose of
  the inertia's frame in the target frame (world inertias)
* :func:`inertia10_rotate`          ``I10' = X^T I10 X`` for a pure rotation ``X`` (``R`` as nine numbers;
  :func:`inertia_rotate`: in plain numbers)

The row-wise functions read and write rows of 2-D arrays in place, by index.
* :func:`inertia10_shift_add`      ``I10' += X^T I10 X`` for a pure translation ``X``
* :func:`inertia10_to_matrix`      the 6x6 matrix ``G``
* :func:`matrix6_to_parent_add`    ``IA_p += X^T IA X`` for a full symmetric 6x6 matrix
* :func:`matrix6_shift_add`        the same for a pure translation ``X`` (no rotation;
  :func:`matrix6_shift`: the 21 numbers of the upper triangle in and out)

The plain-number forms serve the kernels that run many states side by side (one lane per
state), where each body's arithmetic must be free of arrays of its own; the array forms call them.

and the frame operations of the kinematics kernels, which work in world axes (the Coriolis
kernels do the same in plain numbers, :func:`.coriolis.world_body`; CRBA and ABA work in
world-aligned frames at each body's origin, :func:`.spatial_kernels.aligned_body`):

* :func:`pose_to_world`            ``T_{0,i} = T_{0,p} T_{p,i}``
* :func:`twist_to_world`           ``[Ad_T] S = (R w, R v + p x R w)``: a body's screw axis in {0}
"""
from numba import njit

from .fma import dot3, fma, matmul3


@njit(cache=True, inline="always")
def inertia10_times(I, V, out):
    """``out = G V = (I_o w + h x v, m v - h x w)`` for ``I = (m, h, I_o)`` (10 numbers)."""
    m = I[0]
    h0, h1, h2 = I[1], I[2], I[3]
    ixx, ixy, ixz, iyy, iyz, izz = I[4], I[5], I[6], I[7], I[8], I[9]
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    out[0] = ixx * w0 + ixy * w1 + ixz * w2 + h1 * v2 - h2 * v1
    out[1] = ixy * w0 + iyy * w1 + iyz * w2 + h2 * v0 - h0 * v2
    out[2] = ixz * w0 + iyz * w1 + izz * w2 + h0 * v1 - h1 * v0
    out[3] = m * v0 - (h1 * w2 - h2 * w1)
    out[4] = m * v1 - (h2 * w0 - h0 * w2)
    out[5] = m * v2 - (h0 * w1 - h1 * w0)


@njit(cache=True, inline="always")
def inertia10_apply6(A, r, c, w0, w1, w2, v0, v1, v2):
    """``G (w, v) = (I_o w + h x v, m v - h x w)`` as six numbers, for the inertia
    ``I = (m, h, I_o) = A[r, c: c + 10]`` (a row of a 2-D array, read in place: a row view passed
    into an inlined function costs a reference count each time)."""
    return inertia_apply(A[r, c], A[r, c + 1], A[r, c + 2], A[r, c + 3], A[r, c + 4], A[r, c + 5], A[r, c + 6],
                         A[r, c + 7], A[r, c + 8], A[r, c + 9], w0, w1, w2, v0, v1, v2)


@njit(cache=True, inline="always")
def inertia_apply(m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz, w0, w1, w2, v0, v1, v2):
    """``G (w, v) = (I_o w + h x v, m v - h x w)``, all in plain numbers."""
    return (fma(-h2, v1, fma(h1, v2, dot3(ixx, ixy, ixz, w0, w1, w2))),
            fma(-h0, v2, fma(h2, v0, dot3(ixy, iyy, iyz, w0, w1, w2))),
            fma(-h1, v0, fma(h0, v1, dot3(ixz, iyz, izz, w0, w1, w2))),
            fma(m, v0, -fma(h1, w2, -h2 * w1)),
            fma(m, v1, -fma(h2, w0, -h0 * w2)),
            fma(m, v2, -fma(h0, w1, -h1 * w0)))


@njit(cache=True, inline="always")
def inertia10_apply(A, r, V, s):
    """``G V`` for the inertia ``A[r, 0:10]`` and the 6-vector ``V[s]``, as six numbers."""
    return inertia10_apply6(A, r, 0, V[s, 0], V[s, 1], V[s, 2], V[s, 3], V[s, 4], V[s, 5])


@njit(cache=True, inline="always")
def rotate_inertia3(R00, R01, R02, R10, R11, R12, R20, R21, R22, ixx, ixy, ixz, iyy, iyz, izz):
    """``R I R^T`` for a symmetric 3x3 ``I`` (six entries xx, xy, xz, yy, yz, zz, in and out),
    written out with ``T = R I`` (rows): ``(R I R^T)_ab = T_a . R_b``."""
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = matmul3((R00, R01, R02, R10, R11, R12, R20, R21, R22),
                                                          (ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz))
    return (dot3(t00, t01, t02, R00, R01, R02), dot3(t00, t01, t02, R10, R11, R12), dot3(t00, t01, t02, R20, R21, R22),
            dot3(t10, t11, t12, R10, R11, R12), dot3(t10, t11, t12, R20, R21, R22), dot3(t20, t21, t22, R20, R21, R22))


@njit(cache=True, inline="always")
def inertia_transform(R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2,
                      m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz):
    """``X^T I X`` in plain numbers (ten): the inertia ``I = (m, h, I_o)``, given in a frame whose
    pose in the target frame is ``(R, p)`` (row-major ``R``), expressed in the target frame. With
    ``c' = R h`` (Steiner, note 001)::

        m' = m,   h' = c' + m p,
        I_o' = R I_o R^T - (p h'^T + c' p^T) + (c'.p + h'.p) 1

    (``-sum m [R r + p]^2`` expanded; ``p h'^T = p c'^T + m p p^T``): the rotation
    (:func:`inertia_rotate`), then the translation by ``p`` (:func:`inertia_shift`)."""
    (m, c0, c1, c2, rxx, rxy, rxz, ryy, ryz, rzz) = inertia_rotate(R00, R01, R02, R10, R11, R12, R20, R21, R22,
                                                                    m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz)
    return inertia_shift(p0, p1, p2, m, c0, c1, c2, rxx, rxy, rxz, ryy, ryz, rzz)


@njit(cache=True, inline="always")
def inertia10_rotate(Rt, A, r, c, out, o):
    """``out[o, 0:10] = X^T I X`` for a pure rotation, ``Rt`` the nine numbers of ``R`` (row-major)
    and ``I = A[r, c: c + 10]``: ``m' = m``, ``h' = R h``, ``I_o' = R I_o R^T``
    (:func:`inertia_transform` with ``p = 0``)."""
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = Rt
    (out[o, 0], out[o, 1], out[o, 2], out[o, 3], out[o, 4], out[o, 5], out[o, 6], out[o, 7], out[o, 8],
     out[o, 9]) = inertia_rotate(R00, R01, R02, R10, R11, R12, R20, R21, R22, A[r, c], A[r, c + 1], A[r, c + 2],
                                 A[r, c + 3], A[r, c + 4], A[r, c + 5], A[r, c + 6], A[r, c + 7], A[r, c + 8],
                                 A[r, c + 9])


@njit(cache=True, inline="always")
def inertia_rotate(R00, R01, R02, R10, R11, R12, R20, R21, R22, m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz):
    """:func:`inertia10_rotate` in plain numbers: ``(m, R h, R I_o R^T)``, ten numbers."""
    rxx, rxy, rxz, ryy, ryz, rzz = rotate_inertia3(R00, R01, R02, R10, R11, R12, R20, R21, R22,
                                                   ixx, ixy, ixz, iyy, iyz, izz)
    return (m, dot3(R00, R01, R02, h0, h1, h2), dot3(R10, R11, R12, h0, h1, h2), dot3(R20, R21, R22, h0, h1, h2),
            rxx, rxy, rxz, ryy, ryz, rzz)


@njit(cache=True, inline="always")
def inertia10_to_matrix(I, G):
    """Write the 6x6 matrix ``G = [[I_o, [h]], [[h]^T, m 1]]`` of ``I`` into ``G``."""
    m = I[0]
    h0, h1, h2 = I[1], I[2], I[3]
    G[0, 0] = I[4]
    G[0, 1] = I[5]
    G[0, 2] = I[6]
    G[1, 0] = I[5]
    G[1, 1] = I[7]
    G[1, 2] = I[8]
    G[2, 0] = I[6]
    G[2, 1] = I[8]
    G[2, 2] = I[9]
    # [h] (top right) and [h]^T (bottom left)
    G[0, 3] = 0.0
    G[0, 4] = -h2
    G[0, 5] = h1
    G[1, 3] = h2
    G[1, 4] = 0.0
    G[1, 5] = -h0
    G[2, 3] = -h1
    G[2, 4] = h0
    G[2, 5] = 0.0
    for r in range(3):
        for c in range(3):
            G[3 + r, c] = G[c, 3 + r]
            G[3 + r, 3 + c] = m if r == c else 0.0


@njit(cache=True, inline="always")
def matrix6_to_parent_add(R, p, IA, IAp, W):
    """``IAp += X^T IA X`` for a symmetric 6x6 ``IA`` in the child frame, ``T_{p,i} = (R, p)``.

    Rotate the blocks ``IA = [[A, B], [B^T, C]]`` to parent axes, ``A' = R A R^T`` (same for
    ``B``, ``C``), then shift the origin with ``P = [p]``; with ``D = B' + P C'``::

        X^T IA X = [[A' - D P + P B'^T,  D ],
                    [D^T,                C']]

    (``A' - B' P + P B'^T - P C' P`` written with ``D``). ``W (4, 3, 3)`` is scratch space.
    """
    # W[0] = A', W[1] = B', W[2] = C': T = M R^T, then R T
    for blk in range(3):
        r0 = 3 if blk == 2 else 0
        c0 = 0 if blk == 0 else 3
        for a in range(3):
            for b in range(3):
                s = 0.0
                for k in range(3):
                    t = IA[r0 + k, c0] * R[b, 0] + IA[r0 + k, c0 + 1] * R[b, 1] + IA[r0 + k, c0 + 2] * R[b, 2]
                    s += R[a, k] * t
                W[blk, a, b] = s
    p0, p1, p2 = p[0], p[1], p[2]
    # W[3] = D = B' + P C'  (column b of P C' is p x C'[:, b])
    for b in range(3):
        Cb0, Cb1, Cb2 = W[2, 0, b], W[2, 1, b], W[2, 2, b]
        W[3, 0, b] = W[1, 0, b] + p1 * Cb2 - p2 * Cb1
        W[3, 1, b] = W[1, 1, b] + p2 * Cb0 - p0 * Cb2
        W[3, 2, b] = W[1, 2, b] + p0 * Cb1 - p1 * Cb0
    for a in range(3):
        # (D P)[a, :] = row a of D times [p]; (P B'^T)[:, b] = p x B'[b, :]
        Da0, Da1, Da2 = W[3, a, 0], W[3, a, 1], W[3, a, 2]
        DP0 = Da1 * p2 - Da2 * p1
        DP1 = Da2 * p0 - Da0 * p2
        DP2 = Da0 * p1 - Da1 * p0
        for b in range(3):
            DPab = DP0 if b == 0 else (DP1 if b == 1 else DP2)
            if a == 0:
                PBab = p1 * W[1, b, 2] - p2 * W[1, b, 1]
            elif a == 1:
                PBab = p2 * W[1, b, 0] - p0 * W[1, b, 2]
            else:
                PBab = p0 * W[1, b, 1] - p1 * W[1, b, 0]
            IAp[a, b] += W[0, a, b] - DPab + PBab
            IAp[a, 3 + b] += W[3, a, b]
            IAp[3 + b, a] += W[3, a, b]
            IAp[3 + a, 3 + b] += W[2, a, b]


@njit(cache=True, inline="always")
def pose_to_world(Rw, pw, R, p, Rwi, pwi):
    """``T_{0,i} = T_{0,p} T_{p,i}``: ``R_0i = R_0p R``, ``p_0i = R_0p p + p_0p``."""
    for a in range(3):
        Ra0, Ra1, Ra2 = Rw[a, 0], Rw[a, 1], Rw[a, 2]
        Rwi[a, 0] = Ra0 * R[0, 0] + Ra1 * R[1, 0] + Ra2 * R[2, 0]
        Rwi[a, 1] = Ra0 * R[0, 1] + Ra1 * R[1, 1] + Ra2 * R[2, 1]
        Rwi[a, 2] = Ra0 * R[0, 2] + Ra1 * R[1, 2] + Ra2 * R[2, 2]
        pwi[a] = Ra0 * p[0] + Ra1 * p[1] + Ra2 * p[2] + pw[a]


@njit(cache=True, inline="always")
def twist_to_world(R, p, S, out):
    """``out = [Ad_T] S = (R w, R v + p x R w)`` for ``T = (R, p)``."""
    w0 = R[0, 0] * S[0] + R[0, 1] * S[1] + R[0, 2] * S[2]
    w1 = R[1, 0] * S[0] + R[1, 1] * S[1] + R[1, 2] * S[2]
    w2 = R[2, 0] * S[0] + R[2, 1] * S[1] + R[2, 2] * S[2]
    out[0] = w0
    out[1] = w1
    out[2] = w2
    out[3] = R[0, 0] * S[3] + R[0, 1] * S[4] + R[0, 2] * S[5] + (p[1] * w2 - p[2] * w1)
    out[4] = R[1, 0] * S[3] + R[1, 1] * S[4] + R[1, 2] * S[5] + (p[2] * w0 - p[0] * w2)
    out[5] = R[2, 0] * S[3] + R[2, 1] * S[4] + R[2, 2] * S[5] + (p[0] * w1 - p[1] * w0)


@njit(cache=True, inline="always")
def matrix6_shift_add(r0, r1, r2, IA, IAp):
    """``IAp += X^T IA X`` for a symmetric 6x6 ``IA`` and a pure translation ``X = [[1, 0], [-P, 1]]``,
    ``P = [r]``: the frame moves by ``-r`` without turning (world-aligned frames, :mod:`.aba`).
    With ``IA = [[A, B], [B^T, C]]`` and ``D = B + P C``::

        X^T IA X = [[A + P B^T - D P,  D ],
                    [D^T,              C ]]

    (``(P B^T)_ab = (r x B_b)_a``, ``(D P)_ab = (D_a x r)_b`` with ``B_b``, ``D_a`` rows).
    Reads the upper triangles of ``A`` and ``C``; writes the result exactly symmetric.
    """
    (A00, A01, A02, A11, A12, A22, D00, D01, D02, D10, D11, D12, D20, D21, D22,
     C00, C01, C02, C11, C12, C22) = matrix6_shift(
        r0, r1, r2, IA[0, 0], IA[0, 1], IA[0, 2], IA[1, 1], IA[1, 2], IA[2, 2], IA[0, 3], IA[0, 4], IA[0, 5],
        IA[1, 3], IA[1, 4], IA[1, 5], IA[2, 3], IA[2, 4], IA[2, 5],
        IA[3, 3], IA[3, 4], IA[3, 5], IA[4, 4], IA[4, 5], IA[5, 5])
    IAp[0, 0] += A00
    IAp[0, 1] += A01
    IAp[0, 2] += A02
    IAp[1, 0] += A01
    IAp[1, 1] += A11
    IAp[1, 2] += A12
    IAp[2, 0] += A02
    IAp[2, 1] += A12
    IAp[2, 2] += A22
    IAp[0, 3] += D00
    IAp[3, 0] += D00
    IAp[0, 4] += D01
    IAp[4, 0] += D01
    IAp[0, 5] += D02
    IAp[5, 0] += D02
    IAp[1, 3] += D10
    IAp[3, 1] += D10
    IAp[1, 4] += D11
    IAp[4, 1] += D11
    IAp[1, 5] += D12
    IAp[5, 1] += D12
    IAp[2, 3] += D20
    IAp[3, 2] += D20
    IAp[2, 4] += D21
    IAp[4, 2] += D21
    IAp[2, 5] += D22
    IAp[5, 2] += D22
    IAp[3, 3] += C00
    IAp[3, 4] += C01
    IAp[3, 5] += C02
    IAp[4, 3] += C01
    IAp[4, 4] += C11
    IAp[4, 5] += C12
    IAp[5, 3] += C02
    IAp[5, 4] += C12
    IAp[5, 5] += C22


@njit(cache=True, inline="always")
def matrix6_shift(r0, r1, r2, A00, A01, A02, A11, A12, A22, B00, B01, B02, B10, B11, B12, B20, B21, B22,
                  C00, C01, C02, C11, C12, C22):
    """:func:`matrix6_shift_add` in plain numbers: the 21 entries of ``X^T IA X`` from those of
    ``IA`` (the upper triangles of ``A`` and ``C``, all of ``B``), returned as
    ``A' (00, 01, 02, 11, 12, 22), D (row-major), C``."""
    # D = B + P C: column b is B[:, b] + r x C[:, b]
    D00 = B00 + (r1 * C02 - r2 * C01)
    D10 = B10 + (r2 * C00 - r0 * C02)
    D20 = B20 + (r0 * C01 - r1 * C00)
    D01 = B01 + (r1 * C12 - r2 * C11)
    D11 = B11 + (r2 * C01 - r0 * C12)
    D21 = B21 + (r0 * C11 - r1 * C01)
    D02 = B02 + (r1 * C22 - r2 * C12)
    D12 = B12 + (r2 * C02 - r0 * C22)
    D22 = B22 + (r0 * C12 - r1 * C02)
    # A' = A + P B^T - D P (upper triangle)
    return (A00 + (r1 * B02 - r2 * B01) - (D01 * r2 - D02 * r1),
            A01 + (r1 * B12 - r2 * B11) - (D02 * r0 - D00 * r2),
            A02 + (r1 * B22 - r2 * B21) - (D00 * r1 - D01 * r0),
            A11 + (r2 * B10 - r0 * B12) - (D12 * r0 - D10 * r2),
            A12 + (r2 * B20 - r0 * B22) - (D10 * r1 - D11 * r0),
            A22 + (r0 * B21 - r1 * B20) - (D20 * r1 - D21 * r0),
            D00, D01, D02, D10, D11, D12, D20, D21, D22, C00, C01, C02, C11, C12, C22)


@njit(cache=True, inline="always")
def inertia10_shift_add(r0, r1, r2, I, out):
    """``out += X^T I X`` for a pure translation (:func:`inertia_transform` with ``R = 1``,
    ``p = r``): ``h' = h + m r``, ``I_o' = I_o - (r h'^T + h r^T) + (h.r + h'.r) 1``."""
    (d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) = inertia_shift(r0, r1, r2, I[0], I[1], I[2], I[3], I[4], I[5], I[6],
                                                             I[7], I[8], I[9])
    out[0] += d0
    out[1] += d1
    out[2] += d2
    out[3] += d3
    out[4] += d4
    out[5] += d5
    out[6] += d6
    out[7] += d7
    out[8] += d8
    out[9] += d9


@njit(cache=True, inline="always")
def inertia_shift(r0, r1, r2, m, h0, h1, h2, ixx, ixy, ixz, iyy, iyz, izz):
    """:func:`inertia10_shift_add`'s ``X^T I X`` in plain numbers (ten)."""
    g0 = fma(m, r0, h0)
    g1 = fma(m, r1, h1)
    g2 = fma(m, r2, h2)
    d = dot3(h0, h1, h2, r0, r1, r2) + dot3(g0, g1, g2, r0, r1, r2)
    return (m, g0, g1, g2,
            ixx - fma(r0, g0, h0 * r0) + d, ixy - fma(r0, g1, h0 * r1), ixz - fma(r0, g2, h0 * r2),
            iyy - fma(r1, g1, h1 * r1) + d, iyz - fma(r1, g2, h1 * r2), izz - fma(r2, g2, h2 * r2) + d)
