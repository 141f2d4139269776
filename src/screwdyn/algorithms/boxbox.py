"""Box-box contacts by separating axes and face clipping (docs/theory.md §16.4; MuJoCo's ``mjc_BoxBox``).

Stage 1, separating axes: the separation of the boxes along each of the 15 candidate axes (the
three face normals of each box, the nine cross products of an edge of one with an edge of the
other) is ``|c . a| - r_1(a) - r_2(a)`` with ``c`` the offset of the centres and
``r(a) = sum_i h_i |e_i . a|`` a box's support radius along ``a``. Any separation above the margin
(plus a rounding slack of ``1e-13`` times the summed half sizes) means no contact; otherwise the
largest separation wins, a face axis preferred on near-ties (an edge axis must beat the best face
by ``1e-6`` of its size, and one within 8 degrees of the best face gives way to it unless 5 % deeper).

Stage 2: an edge axis gives one contact, at the midpoint of the closest points of the two
supporting edges, the distance along the axis. A face axis makes its box the reference: the face
of the other (incident) box most opposed to the reference normal is clipped against the four
side planes of the reference face (Sutherland-Hodgman), and each clipped vertex within the margin
of the reference plane is a contact, midway between the plane and the incident face. screwdyn
keeps at most four of them (:func:`reduce_patch`): the deepest, the farthest from it, and the
farthest on either side of their line.
"""
import math

from .narrowphase import MINVAL, emit
from .target import HELPER, INLINE, KERNEL, njit

SEPEPS = 1e-13
PAREPS = 1e-16
SGNEPS = 1e-9
DUPEPS = 1e-14
EDGEBIAS = 1e-6
MAXVERT = 12


@njit(**INLINE)
def clip_half_plane(src, nin, dst, coord, sign, limit):
    """Clip the polygon ``src[:nin]`` (rows ``(x, y, z)``) against ``sign * v[coord] <= limit`` into
    ``dst``; returns the vertex count (``-1``: every vertex inside, ``dst`` untouched)."""
    inside = True
    for q in range(nin):
        if sign * src[q, coord] - limit > 0:
            inside = False
    if inside:
        return -1
    nout = 0
    for q in range(nin):
        q1 = 0 if q + 1 == nin else q + 1
        dp = sign * src[q, coord] - limit
        dq = sign * src[q1, coord] - limit
        if dp <= 0 and nout < MAXVERT:
            dst[nout, 0], dst[nout, 1], dst[nout, 2] = src[q, 0], src[q, 1], src[q, 2]
            nout += 1
        if ((dp < 0 and dq > 0) or (dp > 0 and dq < 0)) and nout < MAXVERT:
            t = dp / (dp - dq)
            for c in range(3):
                dst[nout, c] = src[q, c] + t * (src[q1, c] - src[q, c])
            nout += 1
    return nout


@njit(**INLINE)
def reduce_patch(P, n):
    """Which rows of ``P[:n]`` (``(x, y, z)``: in-plane coordinates and distance) to keep: the
    deepest, the farthest from it, and the farthest on either side of their line, or, with all on
    one side, the farthest there and the one beyond the triangle's edges that adds the most area
    (``-1`` for none); all of them (the first four) when there are at most four."""
    if n <= 4:
        return 0, 1 if n > 1 else -1, 2 if n > 2 else -1, 3 if n > 3 else -1
    i0 = 0
    for q in range(1, n):
        if P[q, 2] < P[i0, 2]:
            i0 = q
    i1, far = -1, 0.0
    for q in range(n):
        d = (P[q, 0] - P[i0, 0]) ** 2 + (P[q, 1] - P[i0, 1]) ** 2
        if d > far:
            i1, far = q, d
    if i1 < 0:
        return i0, -1, -1, -1
    ex, ey = P[i1, 0] - P[i0, 0], P[i1, 1] - P[i0, 1]
    i2, hi, i3, lo = -1, 0.0, -1, 0.0
    for q in range(n):
        a = ex * (P[q, 1] - P[i0, 1]) - ey * (P[q, 0] - P[i0, 0])
        if a > hi:
            i2, hi = q, a
        if a < lo:
            i3, lo = q, a
    if i2 < 0 or i3 < 0:               # all on one side: the point beyond an edge of the triangle that
        i2 = i2 if i2 >= 0 else i3      # adds the most area
        s = 1.0 if i2 == i3 or hi == 0.0 else -1.0
        i3, best = -1, 0.0
        for q in range(n):
            added = 0.0
            for e in range(3):
                a, b = (i0, i1) if e == 0 else (i1, i2) if e == 1 else (i2, i0)
                added = max(added, s * ((P[b, 0] - P[a, 0]) * (P[q, 1] - P[a, 1])
                                        - (P[b, 1] - P[a, 1]) * (P[q, 0] - P[a, 0])))
            if added > best:
                i3, best = q, added
    return i0, i1, i2, i3


# rows of the scratch array box_box works in (W (BOX_WORK, 3))
_ROT, _ABS, _P21, _P12, _S1, _S2, _POLY, _SPARE, _KEPT = 0, 3, 6, 7, 8, 9, 12, 12 + MAXVERT, 12 + 2 * MAXVERT
BOX_WORK = 12 + 3 * MAXVERT


@njit(**KERNEL)
def box_box(G1, s1, G2, s2, margin, pc, k, W):
    """Contacts of two boxes (poses ``G1``, ``G2``, half sizes ``s1``, ``s2``), the normal from box 1
    into box 2; ``W`` a scratch array ``(BOX_WORK, 3)``. Returns the number written (at most 4)."""
    for r in range(3):
        for c in range(3):
            W[_ROT + r, c] = G1[r] * G2[c] + G1[3 + r] * G2[3 + c] + G1[6 + r] * G2[6 + c]   # R1^T R2
            W[_ABS + r, c] = abs(W[_ROT + r, c])
    d0, d1, d2 = G2[9] - G1[9], G2[10] - G1[10], G2[11] - G1[11]
    for r in range(3):
        W[_P21, r] = G1[r] * d0 + G1[3 + r] * d1 + G1[6 + r] * d2      # centre 2 in frame 1
        W[_P12, r] = -(G2[r] * d0 + G2[3 + r] * d1 + G2[6 + r] * d2)   # centre 1 in frame 2
        W[_S1, r], W[_S2, r] = s1[r], s2[r]
    septol = margin + SEPEPS * (s1[0] + s1[1] + s1[2] + s2[0] + s2[1] + s2[2])

    # ---- stage 1: separating axes
    sep_best, code = -math.inf, -1
    for i in range(3):                                    # faces of box 1
        r2 = W[_ABS + i, 0] * s2[0] + W[_ABS + i, 1] * s2[1] + W[_ABS + i, 2] * s2[2]
        sep = abs(W[_P21, i]) - W[_S1, i] - r2
        if sep > septol:
            return 0
        if sep > sep_best:
            sep_best, code = sep, i
    for j in range(3):                                    # faces of box 2
        r1 = W[_ABS + 0, j] * s1[0] + W[_ABS + 1, j] * s1[1] + W[_ABS + 2, j] * s1[2]
        sep = abs(W[_P12, j]) - W[_S2, j] - r1
        if sep > septol:
            return 0
        if sep > sep_best:
            sep_best, code = sep, 3 + j
    sep_face, code_face = sep_best, code
    for i in range(3):                                    # edge i of box 1 x edge j of box 2
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            ax1, ax2 = -W[_ROT + i2, j], W[_ROT + i1, j]
            norm2 = ax1 * ax1 + ax2 * ax2
            if norm2 < PAREPS:
                continue
            inv = 1 / math.sqrt(norm2)
            ax1 *= inv
            ax2 *= inv
            r1 = W[_S1, i1] * abs(ax1) + W[_S1, i2] * abs(ax2)
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            a21 = ax1 * W[_ROT + i1, j1] + ax2 * W[_ROT + i2, j1]
            a22 = ax1 * W[_ROT + i1, j2] + ax2 * W[_ROT + i2, j2]
            r2 = W[_S2, j1] * abs(a21) + W[_S2, j2] * abs(a22)
            sep = abs(ax1 * W[_P21, i1] + ax2 * W[_P21, i2]) - r1 - r2
            if sep > septol:
                return 0
            if sep - EDGEBIAS * abs(sep) > sep_best and sep > sep_face:
                sep_best, code = sep, 6 + 3 * i + j
    if code >= 6:                                         # an edge axis near the best face axis gives way
        i, j = (code - 6) // 3, (code - 6) % 3
        axis = _edge_axis(W, i, j)
        if code_face < 3:
            face_dot = abs(axis[code_face])
        else:
            f = code_face - 3
            face_dot = abs(axis[0] * W[_ROT + 0, f] + axis[1] * W[_ROT + 1, f] + axis[2] * W[_ROT + 2, f])
        if face_dot > 0.99 and sep_best < sep_face + 0.05 * abs(sep_face) + MINVAL:
            code, sep_best = code_face, sep_face
    if code >= 6:
        return _edge_contact(G1, s1, s2, W, code, septol, pc, k)
    return _face_contacts(G1, G2, s1, s2, W, code, margin, pc, k)


@njit(**HELPER)
def _edge_axis(W, i, j):
    """The unit axis e_i x (column j of R1^T R2), in box 1's frame."""
    i1, i2 = (i + 1) % 3, (i + 2) % 3
    return _unit3(i, i1, i2, -W[_ROT + i2, j], W[_ROT + i1, j])


@njit(**HELPER)
def _unit3(i, i1, i2, x1, x2):
    """The unit vector with components ``x1`` at ``i1``, ``x2`` at ``i2``, 0 at ``i`` (``(1, 0, 0)``
    when it is shorter than MINVAL, as MuJoCo's ``mju_normalize3``)."""
    n = math.sqrt(x1 * x1 + x2 * x2)
    if n < MINVAL:
        return 1.0, 0.0, 0.0
    x1, x2 = x1 / n, x2 / n
    return (0.0 if i == 0 else x1 if i1 == 0 else x2, 0.0 if i == 1 else x1 if i1 == 1 else x2,
            0.0 if i == 2 else x1 if i1 == 2 else x2)


@njit(**HELPER)
def _comp(v, i):
    """Component ``i`` of the 3-tuple ``v`` (a run-time index, without indexing the tuple)."""
    return v[0] if i == 0 else v[1] if i == 1 else v[2]


@njit(**HELPER)
def _with(v, i, x):
    """``v`` with component ``i`` set to ``x``."""
    return x if i == 0 else v[0], x if i == 1 else v[1], x if i == 2 else v[2]


@njit(**HELPER)
def _frame_point(G, v):
    """``R v + p`` of the pose ``G``."""
    return (G[0] * v[0] + G[1] * v[1] + G[2] * v[2] + G[9], G[3] * v[0] + G[4] * v[1] + G[5] * v[2] + G[10],
            G[6] * v[0] + G[7] * v[1] + G[8] * v[2] + G[11])


@njit(**HELPER)
def _frame_vector(G, v):
    return G[0] * v[0] + G[1] * v[1] + G[2] * v[2], G[3] * v[0] + G[4] * v[1] + G[5] * v[2], \
        G[6] * v[0] + G[7] * v[1] + G[8] * v[2]


@njit(**INLINE)
def _edge_contact(G1, s1, s2, W, code, septol, pc, k):
    """Stage 2a: the midpoint of the closest points of the two supporting edges (box 1's frame)."""
    i, j = (code - 6) // 3, (code - 6) % 3
    i1, i2 = (i + 1) % 3, (i + 2) % 3
    j1, j2 = (j + 1) % 3, (j + 2) % 3
    axis = _edge_axis(W, i, j)
    p21 = (W[_P21, 0], W[_P21, 1], W[_P21, 2])
    if axis[0] * p21[0] + axis[1] * p21[1] + axis[2] * p21[2] < 0:
        axis = (-axis[0], -axis[1], -axis[2])
    a2 = (axis[0] * W[_ROT, 0] + axis[1] * W[_ROT + 1, 0] + axis[2] * W[_ROT + 2, 0],
          axis[0] * W[_ROT, 1] + axis[1] * W[_ROT + 1, 1] + axis[2] * W[_ROT + 2, 1],
          axis[0] * W[_ROT, 2] + axis[1] * W[_ROT + 1, 2] + axis[2] * W[_ROT + 2, 2])
    amb1 = i1 if abs(_comp(axis, i1)) < SGNEPS else i2 if abs(_comp(axis, i2)) < SGNEPS else -1
    amb2 = j1 if abs(_comp(a2, j1)) < SGNEPS else j2 if abs(_comp(a2, j2)) < SGNEPS else -1
    d2 = (W[_ROT, j], W[_ROT + 1, j], W[_ROT + 2, j])
    b = _comp(d2, i)
    denom = 1 - b * b
    h1, h2 = _comp(s1, i), _comp(s2, j)
    best = math.inf
    w1 = w2 = (0.0, 0.0, 0.0)
    for v1 in range(2 if amb1 >= 0 else 1):
        for v2 in range(2 if amb2 >= 0 else 1):
            c1 = (0.0, 0.0, 0.0)
            c1 = _with(c1, i1, _comp(s1, i1) if _comp(axis, i1) >= 0 else -_comp(s1, i1))
            c1 = _with(c1, i2, _comp(s1, i2) if _comp(axis, i2) >= 0 else -_comp(s1, i2))
            if amb1 >= 0 and v1:
                c1 = _with(c1, amb1, -_comp(c1, amb1))
            cc = (0.0, 0.0, 0.0)
            cc = _with(cc, j1, -_comp(s2, j1) if _comp(a2, j1) >= 0 else _comp(s2, j1))
            cc = _with(cc, j2, -_comp(s2, j2) if _comp(a2, j2) >= 0 else _comp(s2, j2))
            if amb2 >= 0 and v2:
                cc = _with(cc, amb2, -_comp(cc, amb2))
            c2 = (W[_ROT, 0] * cc[0] + W[_ROT, 1] * cc[1] + W[_ROT, 2] * cc[2] + p21[0],
                  W[_ROT + 1, 0] * cc[0] + W[_ROT + 1, 1] * cc[1] + W[_ROT + 1, 2] * cc[2] + p21[1],
                  W[_ROT + 2, 0] * cc[0] + W[_ROT + 2, 1] * cc[1] + W[_ROT + 2, 2] * cc[2] + p21[2])
            e = (c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2])
            d1e = _comp(e, i)
            d2e = d2[0] * e[0] + d2[1] * e[1] + d2[2] * e[2]
            sp = 0.0 if denom < MINVAL else (d1e - b * d2e) / denom
            sp = min(max(sp, -h1), h1)
            t = min(max(b * sp - d2e, -h2), h2)
            sp = min(max(d1e + b * t, -h1), h1)
            p1 = _with(c1, i, _comp(c1, i) + sp)
            p2 = (c2[0] + d2[0] * t, c2[1] + d2[1] * t, c2[2] + d2[2] * t)
            gap2 = (p2[0] - p1[0]) ** 2 + (p2[1] - p1[1]) ** 2 + (p2[2] - p1[2]) ** 2
            if gap2 < best:
                best, w1, w2 = gap2, p1, p2
    dist = (w2[0] - w1[0]) * axis[0] + (w2[1] - w1[1]) * axis[1] + (w2[2] - w1[2]) * axis[2]
    if dist > septol:
        return 0
    mid = (0.5 * (w1[0] + w2[0]), 0.5 * (w1[1] + w2[1]), 0.5 * (w1[2] + w2[2]))
    emit(pc, k, _frame_point(G1, mid), _frame_vector(G1, axis), dist)
    return 1


@njit(**HELPER)
def _rinc(W, ref1, r, c):
    """Component ``r`` of the incident box's axis ``c``, in the reference box's frame."""
    return W[_ROT + r, c] if ref1 else W[_ROT + c, r]


@njit(**INLINE)
def _face_contacts(G1, G2, s1, s2, W, code, margin, pc, k):
    """Stage 2b: the incident face clipped against the reference face (its frame: ``x, y`` along
    the reference face, ``z`` the distance above it)."""
    ref1 = code < 3
    a = code if ref1 else code - 3
    sref, sinc = (s1, s2) if ref1 else (s2, s1)
    Gref = G1 if ref1 else G2
    po = _P21 if ref1 else _P12                   # the incident centre in the reference frame
    sgn = 1.0 if W[po, a] >= 0 else -1.0
    binc = 0
    for q in range(1, 3):
        if abs(_rinc(W, ref1, a, q)) > abs(_rinc(W, ref1, a, binc)):
            binc = q
    tinc = -1.0 if sgn * _rinc(W, ref1, a, binc) > 0 else 1.0
    ax, ay = (a + 1) % 3, (a + 2) % 3
    bu, bv = (binc + 1) % 3, (binc + 2) % 3
    hb, hu, hv = _comp(sinc, binc), _comp(sinc, bu), _comp(sinc, bv)
    for r in range(3):
        c = ax if r == 0 else ay if r == 1 else a
        W[_KEPT, r] = W[po, c] + tinc * hb * _rinc(W, ref1, c, binc)   # (cx, du, dv in the kept rows)
        W[_KEPT + 1, r] = hu * _rinc(W, ref1, c, bu)
        W[_KEPT + 2, r] = hv * _rinc(W, ref1, c, bv)
    W[_KEPT, 2] = sgn * W[_KEPT, 2] - _comp(sref, a)
    W[_KEPT + 1, 2] *= sgn
    W[_KEPT + 2, 2] *= sgn
    for q in range(4):
        su = 1.0 if q == 0 or q == 3 else -1.0
        sv = 1.0 if q < 2 else -1.0
        for r in range(3):
            W[_POLY + q, r] = W[_KEPT, r] + su * W[_KEPT + 1, r] + sv * W[_KEPT + 2, r]
    cur, spare, n = _POLY, _SPARE, 4
    for step in range(4):
        coord = 0 if step < 2 else 1
        sign = 1.0 if step % 2 == 0 else -1.0
        limit = _comp(sref, ax) if step < 2 else _comp(sref, ay)
        m = clip_half_plane(W[cur:cur + MAXVERT], n, W[spare:spare + MAXVERT], coord, sign, limit)
        if m >= 0:
            n = m
            cur, spare = spare, cur
    dupe2 = DUPEPS * (_comp(sref, ax) ** 2 + _comp(sref, ay) ** 2)
    kept = 0
    for q in range(n):
        if W[cur + q, 2] > margin:
            continue
        dupe = False
        for t in range(kept):
            if (W[_KEPT + t, 0] - W[cur + q, 0]) ** 2 + (W[_KEPT + t, 1] - W[cur + q, 1]) ** 2 < dupe2:
                dupe = True
        if not dupe:
            for r in range(3):
                W[_KEPT + kept, r] = W[cur + q, r]
            kept += 1
    if kept == 0:
        return 0
    nsign = sgn if ref1 else -sgn
    normal = (nsign * Gref[a], nsign * Gref[3 + a], nsign * Gref[6 + a])
    choice = reduce_patch(W[_KEPT:_KEPT + MAXVERT], kept)
    m = 0
    for q in choice:
        if q < 0:
            continue
        x, y, z = W[_KEPT + q, 0], W[_KEPT + q, 1], W[_KEPT + q, 2]
        posc = _with(_with(_with((0.0, 0.0, 0.0), ax, x), ay, y), a, sgn * (_comp(sref, a) + 0.5 * z))
        emit(pc, k + m, _frame_point(Gref, posc), normal, z)
        m += 1
    return m
