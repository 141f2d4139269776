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
* :func:`inertia10_transform`      ``I10' = X^T I10 X`` written (``add``) or added, with ``(R, p)``
  the pose of the inertia's frame in the target frame (composite inertias, world inertias)
* :func:`inertia10_to_matrix`      the 6x6 matrix ``G``
* :func:`matrix6_to_parent_add`    ``IA_p += X^T IA X`` for a full symmetric 6x6 matrix
"""
from numba import njit


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
def inertia10_transform(R, p, I, out, add):
    """``out (+)= X^T I X``: the inertia ``I``, given in a frame whose pose in the target frame
    is ``(R, p)``, expressed in the target frame. With ``c' = R h`` (Steiner, note 001)::

        m' = m,   h' = c' + m p,
        I_o' = R I_o R^T - (p c'^T + c' p^T) + 2 (c'.p) 1 - m (p p^T - |p|^2 1)

    (``-sum m [R r + p]^2`` expanded). ``add`` false: write; true: accumulate.
    """
    m = I[0]
    c0 = R[0, 0] * I[1] + R[0, 1] * I[2] + R[0, 2] * I[3]
    c1 = R[1, 0] * I[1] + R[1, 1] * I[2] + R[1, 2] * I[3]
    c2 = R[2, 0] * I[1] + R[2, 1] * I[2] + R[2, 2] * I[3]
    p0, p1, p2 = p[0], p[1], p[2]
    # A = I_o R^T (rows of I_o times rows of R)
    ixx, ixy, ixz, iyy, iyz, izz = I[4], I[5], I[6], I[7], I[8], I[9]
    d = 2.0 * (c0 * p0 + c1 * p1 + c2 * p2) + m * (p0 * p0 + p1 * p1 + p2 * p2)
    cs = (c0, c1, c2)
    ps = (p0, p1, p2)
    k = 4
    for a in range(3):
        Ra0, Ra1, Ra2 = R[a, 0], R[a, 1], R[a, 2]
        # row a of R I_o
        t0 = Ra0 * ixx + Ra1 * ixy + Ra2 * ixz
        t1 = Ra0 * ixy + Ra1 * iyy + Ra2 * iyz
        t2 = Ra0 * ixz + Ra1 * iyz + Ra2 * izz
        for b in range(a, 3):
            v = t0 * R[b, 0] + t1 * R[b, 1] + t2 * R[b, 2]
            v -= ps[a] * cs[b] + cs[a] * ps[b] + m * ps[a] * ps[b]
            if a == b:
                v += d
            if add:
                out[k] += v
            else:
                out[k] = v
            k += 1
    if add:
        out[0] += m
        out[1] += c0 + m * p0
        out[2] += c1 + m * p1
        out[3] += c2 + m * p2
    else:
        out[0] = m
        out[1] = c0 + m * p0
        out[2] = c1 + m * p1
        out[3] = c2 + m * p2


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
